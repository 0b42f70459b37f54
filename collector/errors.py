"""The one error hierarchy of collector; the CLI turns these into one line and exit status 1."""

import re


class CollectorError(Exception):
    """Base class for every error collector reports to a user."""


class InputError(CollectorError):
    """A path or argument given by the user is wrong (missing file, unknown name)."""


class StoreError(CollectorError):
    """The Parquet store is missing, unreadable or of an unknown schema version."""


class SchemaError(CollectorError):
    """A table does not match its schema file."""


class QueryError(CollectorError):
    """A derived query or ad-hoc SQL failed."""


class RunError(CollectorError):
    """A benchmark run could not be planned or executed."""


# what a terminal would act on rather than show: control characters, line and paragraph
# separators, and the bidirectional overrides that reorder the text around them
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def one_line(text: str) -> str:
    """Text as one printable line: the characters a terminal would act on escaped (a file
    named with a newline or an escape sequence cannot forge or hide lines)."""
    if text.isprintable():  # none of those characters (the common case, checked at C speed)
        return text
    return _UNPRINTABLE.sub(lambda m: repr(m.group())[1:-1], text)
