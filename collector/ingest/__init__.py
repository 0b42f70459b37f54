"""Ingest: find result trees, parse every log format, read system descriptions and published
studies, check compliance, and write it all into the store."""

from functools import cache
from importlib import resources
from typing import Any

import yaml


@cache
def data(name: str) -> Any:
    """A YAML file of this package (its rules and tables), parsed once."""
    return yaml.safe_load(resources.files(__name__).joinpath(name).read_text())
