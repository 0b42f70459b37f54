"""How long a run's initialisation took: the compliance checkers limit it (v0.7 on)."""

from __future__ import annotations

from collector.ingest.scan import Events


def init_seconds(events: Events) -> float | None:
    """Seconds from the first init_start to the first init_stop, as the checkers measure the
    init phase; None where the log has either event missing."""
    keys = events.keys
    try:
        start = keys.index("init_start")
        stop = keys.index("init_stop")
    except ValueError:
        return None
    return float(events.time_s[stop]) - float(events.time_s[start])
