"""Writing one run's MLPerf log with the official ``mlperf_logging.mllog`` writer.

Each run gets its own ``logging.Logger`` and file handler (the module-level mllog logger is a
process-wide singleton that only ever adds handlers). Every line is flushed as it is written,
so an interrupted run keeps everything logged before the interruption.
"""

from __future__ import annotations

import logging
import uuid
from pathlib import Path

from mlperf_logging.mllog import constants as C
from mlperf_logging.mllog import mllog

EVAL_TARGET = "eval_target"
COLLECTOR_RUN = "collector_run"
TRACKED_STATS = "tracked_stats"


class RunLog:
    """An open ``result_<i>.txt``; ``start``/``end``/``event`` are :class:`mllog.MLLogger`'s
    (``INTERVAL_START``, ``INTERVAL_END`` and ``POINT_IN_TIME`` events)."""

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
        ml = mllog.MLLogger(self._logger, root_dir=root)
        self.event, self.start, self.end = ml.event, ml.start, ml.end

    def close(self) -> None:
        """Flush and close the file."""
        self._handler.flush()
        self._handler.close()
        self._logger.removeHandler(self._handler)


__all__ = ["C", "COLLECTOR_RUN", "EVAL_TARGET", "TRACKED_STATS", "RunLog"]
