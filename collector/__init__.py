"""collector: benchmark deep-learning training hardware and publish the answers."""

__version__ = "0.1.0"
