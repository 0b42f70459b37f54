"""Writing one run's MLPerf log with the official ``mlperf_logging.mllog`` writer.

Each run gets its own ``logging.Logger`` and file handler (the module-level mllog logger is a
process-wide singleton that only ever adds handlers). Every line is flushed as it is written,
so an interrupted run keeps everything logged before the interruption.
"""

from __future__ import annotations

import logging
import uuid
from pathlib import Path
from typing import Any

from mlperf_logging.mllog import constants as C
from mlperf_logging.mllog import mllog

EVAL_TARGET = "eval_target"
COLLECTOR_RUN = "collector_run"
TRACKED_STATS = "tracked_stats"


class RunLog:
    """An open ``result_<i>.txt``; ``start``/``end``/``event`` mirror :class:`mllog.MLLogger`."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._logger = logging.getLogger(f"collector.mllog.{uuid.uuid4().hex}")
        self._logger.propagate = False
        self._logger.setLevel(logging.INFO)
        self._handler = logging.FileHandler(path, mode="w", encoding="utf-8")
        self._handler.setFormatter(logging.Formatter("%(message)s"))
        self._logger.addHandler(self._handler)
        root = str(Path(__file__).resolve().parents[2])
        self._ml = mllog.MLLogger(self._logger, default_stack_offset=2, root_dir=root)

    def event(self, key: str, value: Any = None, metadata: dict | None = None) -> None:
        """A POINT_IN_TIME event."""
        self._ml.event(key=key, value=value, metadata=metadata)

    def start(self, key: str, value: Any = None, metadata: dict | None = None) -> None:
        """An INTERVAL_START event."""
        self._ml.start(key=key, value=value, metadata=metadata)

    def end(self, key: str, value: Any = None, metadata: dict | None = None) -> None:
        """An INTERVAL_END event."""
        self._ml.end(key=key, value=value, metadata=metadata)

    def close(self) -> None:
        """Flush and close the file."""
        self._handler.flush()
        self._handler.close()
        self._logger.removeHandler(self._handler)


__all__ = ["C", "COLLECTOR_RUN", "EVAL_TARGET", "TRACKED_STATS", "RunLog"]
