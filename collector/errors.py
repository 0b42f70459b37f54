"""The one error hierarchy of collector; the CLI turns these into one line and exit status 1."""


class CollectorError(Exception):
    """Base class for every error collector reports to a user."""


class InputError(CollectorError):
    """A path or argument given by the user is wrong (missing file, unknown name)."""


class LogError(CollectorError):
    """A log file cannot be read or parsed; carries the file and, where known, the line."""

    def __init__(self, path: str, message: str, line: int | None = None) -> None:
        self.path = path
        self.line = line
        self.message = message
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {message}")


class StoreError(CollectorError):
    """The Parquet store is missing, unreadable or of an unknown schema version."""


class SchemaError(CollectorError):
    """A table does not match its schema file."""


class QueryError(CollectorError):
    """A derived query or ad-hoc SQL failed."""


class RunError(CollectorError):
    """A benchmark run could not be planned or executed."""
