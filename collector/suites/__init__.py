"""Suite definitions (YAML), loaded by collector.run.suite."""
