"""Summarise ResNet-style probe runs: throughput per run and what the GPUs did meanwhile.

    python benchmarks/throughput_summary.py .out/variants

For every ``result_*.txt`` below the folder: the mean logged throughput (samples/s) over epochs
2 and later (epoch 1 includes warm-up), and from the run's ``.telemetry.csv`` each GPU's median
SM clock, power and temperature, and utilisation.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from collector.ingest.telemetry import read_telemetry  # noqa: E402


def throughput(log: Path) -> tuple[float | None, int]:
    """Mean throughput over epochs >= 2 (all epochs if only one), and the epochs counted."""
    per_epoch: dict[int, float] = {}
    for line in log.read_text(errors="replace").splitlines():
        if '"tracked_stats"' not in line:
            continue
        event = json.loads(line.split(":::MLLOG", 1)[1])
        per_epoch[int(event["metadata"]["epoch_num"])] = float(event["value"]["throughput"])
    later = [v for e, v in per_epoch.items() if e >= 2] or list(per_epoch.values())
    return (statistics.fmean(later) if later else None), len(later)


def gpus(telemetry: Path) -> list[str]:
    """One ``gpu:clock/power/temp/util`` summary per device (medians over the run)."""
    if not telemetry.is_file():
        return []
    by_dev: dict[str, list[dict[str, Any]]] = {}
    for row in read_telemetry(telemetry.read_bytes(), telemetry.stem)[0]:
        by_dev.setdefault(row["device"], []).append(row)
    out = []
    for dev, rows in sorted(by_dev.items()):

        def med(col: str, rows: list[dict[str, Any]] = rows) -> str:
            vals = [r[col] for r in rows if r.get(col) is not None]
            return f"{statistics.median(vals):.0f}" if vals else "-"

        out.append(
            f"gpu{dev}:{med('gpu_sm_clock_mhz')}MHz/{med('gpu_power_w')}W/"
            f"{med('gpu_temp_c')}C/{med('gpu_util_pct')}%"
        )
    return out


def main() -> None:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else ".out/variants")
    for log in sorted(root.rglob("result_*.txt")):
        rate, n = throughput(log)
        shown = f"{rate:,.0f}" if rate is not None else "-"
        tel = log.with_name(log.stem + ".telemetry.csv")
        print(f"{log.relative_to(root)}  {shown} samples/s ({n} epochs)  {' '.join(gpus(tel))}")


if __name__ == "__main__":
    main()
