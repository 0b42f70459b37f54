"""Derived tables: one DuckDB `.sql` file and YAML contract per table, and their engine."""
