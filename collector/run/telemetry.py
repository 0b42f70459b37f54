"""Background sampling (~1 Hz) of GPU utilisation, memory, power, SM clock and temperature, and
host CPU utilisation."""

from __future__ import annotations

import csv
import threading
import time
from pathlib import Path
from types import TracebackType

import psutil

from collector.ingest.telemetry import COLUMNS
from collector.run.sysinfo import nvml, visible_gpus


class Telemetry:
    """Context manager writing ``result_<i>.telemetry.csv`` while a run is in progress.

    One row per device per sample (``collector.ingest.telemetry.COLUMNS``): ``time_s`` counts from
    the start of sampling, ``unix_s`` is the wall clock (to align samples with the log's
    events); ``device`` is the GPU index, or ``cpu`` on a machine without GPUs (then the GPU
    columns are empty). Rows are flushed as they are written.
    """

    def __init__(self, path: Path, gpu_indices: list[int], interval: float = 1.0) -> None:
        self.path = path
        self.interval = interval
        self.gpu_indices = gpu_indices
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="telemetry", daemon=True)
        # NVML numbers every GPU of the host, CUDA only those in CUDA_VISIBLE_DEVICES
        self._nv = nvml() if gpu_indices else None
        try:
            shown = visible_gpus() if self._nv else []
            nvml_ids = [shown[i]["index"] for i in gpu_indices] if self._nv else []
            self._handles = [self._nv.nvmlDeviceGetHandleByIndex(i) for i in nvml_ids]
        except Exception:  # a GPU that NVML does not show: sample the CPU only
            self._nv, self._handles = None, []

    def __enter__(self) -> Telemetry:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = open(self.path, "w", newline="", encoding="utf-8")  # noqa: SIM115
        self._csv = csv.writer(self._file)
        self._csv.writerow(COLUMNS)
        self._file.flush()
        psutil.cpu_percent(interval=None)  # prime the counter
        self._t0 = time.monotonic()
        self._thread.start()
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self.sample()  # a final sample, so even a short run has one
        self._file.close()

    def sample(self) -> None:
        """Write one row per device."""
        t = round(time.monotonic() - self._t0, 3)
        now = round(time.time(), 3)
        cpu = psutil.cpu_percent(interval=None)
        if self._nv is None:
            self._csv.writerow([t, now, "cpu", "", "", "", "", "", cpu])
        else:
            for idx, h in zip(self.gpu_indices, self._handles, strict=True):
                util = self._nv.nvmlDeviceGetUtilizationRates(h).gpu
                mem = self._nv.nvmlDeviceGetMemoryInfo(h).used / 2**20
                power = self._nv.nvmlDeviceGetPowerUsage(h) / 1000
                clock = self._nv.nvmlDeviceGetClockInfo(h, self._nv.NVML_CLOCK_SM)
                temp = self._nv.nvmlDeviceGetTemperature(h, self._nv.NVML_TEMPERATURE_GPU)
                self._csv.writerow(
                    [t, now, idx, util, round(mem, 1), round(power, 1), clock, temp, cpu]
                )
        self._file.flush()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self.sample()
