"""Summarise `collector run --scale throughput` results as a Markdown table.

    python benchmarks/throughput_summary.py runs/local/h200-x1-full [more folders...]

One row per run log (``results/<config>/<benchmark>/result_*.txt``) of a throughput run:
median samples/s over the timed windows and their spread (min..max), the median step time,
the achieved TFLOP/s (the step's counted FLOPs x steps/s) as a fraction of the configuration's
measured dense matmul ceiling (``systems/<config>.ceilings.json``: bf16 for bf16/fp16 runs,
fp32 with TF32 off for fp32 runs), peak GPU memory, and the GPUs' median power and SM clock
during the timed windows (``.telemetry.csv``, one sample a second). Compute throughput on
synthetic data, data loading not included.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from collector.ingest.telemetry import read_telemetry  # noqa: E402

CEILING_DTYPE = {"bf16": "bf16", "fp16": "bf16", "fp32": "fp32"}


def read_log(
    log: Path,
) -> tuple[dict[str, Any], list[dict[str, float]], str | None, tuple[float, float] | None]:
    """The ``collector_run`` value, the windows' ``tracked_stats`` values, the run_stop status
    and the unix seconds from the first window's start to the last window's end."""
    run: dict[str, Any] = {}
    windows: list[dict[str, float]] = []
    status = None
    starts: list[float] = []
    stops: list[float] = []
    for line in log.read_text(errors="replace").splitlines():
        if not line.startswith(":::MLLOG"):
            continue
        rec = json.loads(line.split(":::MLLOG", 1)[1])
        if rec["key"] == "collector_run":
            run = rec["value"]
        elif rec["key"] == "tracked_stats":
            windows.append(rec["value"])
        elif rec["key"] == "run_stop":
            status = (rec.get("metadata") or {}).get("status")
        elif rec["key"] in ("epoch_start", "epoch_stop"):
            (starts if rec["key"] == "epoch_start" else stops).append(rec["time_ms"] / 1000)
    span = (min(starts), max(stops)) if starts and stops else None
    return run, windows, status, span


def gpu_medians(
    telemetry: Path, span: tuple[float, float] | None
) -> tuple[float | None, float | None]:
    """Median power (W, summed over GPUs) and SM clock (MHz) over the samples taken during the
    timed windows (``span``, unix seconds; all samples when None)."""
    if not telemetry.is_file():
        return None, None
    rows = read_telemetry(telemetry.read_bytes(), telemetry.stem)[0]
    if span is not None:
        rows = [r for r in rows if r.get("unix_s") and span[0] <= r["unix_s"] <= span[1]]
    by_time: dict[Any, float] = {}
    clocks = []
    for r in rows:
        if r.get("gpu_power_w") is not None:
            by_time[r.get("time_s")] = by_time.get(r.get("time_s"), 0.0) + r["gpu_power_w"]
        if r.get("gpu_sm_clock_mhz") is not None:
            clocks.append(r["gpu_sm_clock_mhz"])
    power = statistics.median(by_time.values()) if by_time else None
    return power, (statistics.median(clocks) if clocks else None)


def row(log: Path) -> dict[str, Any] | None:
    """The summary of one throughput log, or None for logs of other scales."""
    run, windows, status, span = read_log(log)
    if run.get("scale") != "throughput":
        return None
    facts = run.get("throughput", {})
    rates = [w["throughput"] for w in windows]
    out: dict[str, Any] = {
        "benchmark": run["benchmark"],
        "config": run["config"],
        "precision": run["precision"],
        "accelerators": run["accelerators"],
        "status": status,
        "windows": len(rates),
    }
    if not rates:
        return out
    median = statistics.median(rates)
    out |= {
        "samples_per_s": median,
        "min": min(rates),
        "max": max(rates),
        "step_ms": statistics.median(w["step_time_ms"] for w in windows),
        "memory_gib": facts.get("peak_memory_gib"),
    }
    ceilings = log.parents[2].parent / "systems" / f"{run['config']}.ceilings.json"
    flops = facts.get("step_flops_per_accelerator")
    if flops:  # per accelerator: its FLOPs per step over the step time
        out["tflops"] = flops / out["step_ms"] / 1e9
    if flops and ceilings.is_file():
        dtype = CEILING_DTYPE.get(run["precision"])
        peak = json.loads(ceilings.read_text()).get("matmul_tflops", {}).get(dtype)
        if peak:
            out["ceiling_fraction"] = out["tflops"] / peak
    telemetry = log.with_name(log.stem + ".telemetry.csv")
    out["power_w"], out["sm_clock_mhz"] = gpu_medians(telemetry, span)
    return out


def fmt(v: Any, spec: str = ",.0f") -> str:
    return "-" if v is None else format(v, spec)


def markdown(rows: list[dict[str, Any]], columns: list[tuple[str, Any]]) -> str:
    """A Markdown table: one column per (header, cell function of a row); the first two
    columns are text, the others numbers (right-aligned)."""
    head = "| " + " | ".join(h for h, _ in columns) + " |"
    rule = "|" + "|".join("---" if i < 2 else "---:" for i in range(len(columns))) + "|"
    body = ["| " + " | ".join(cell(r) for _, cell in columns) + " |" for r in rows]
    return "\n".join([head, rule, *body])


def pct(v: float | None) -> str:
    return "-" if v is None else f"{v:.0%}"


def table(rows: list[dict[str, Any]]) -> str:
    """The Markdown table of ``rows``."""
    return markdown(
        rows,
        [
            ("config", lambda r: r["config"]),
            ("benchmark", lambda r: r["benchmark"]),
            ("samples/s (median)", lambda r: fmt(r.get("samples_per_s"))),
            ("min..max", lambda r: f"{fmt(r.get('min'))}..{fmt(r.get('max'))}"),
            ("step ms", lambda r: fmt(r.get("step_ms"), ".1f")),
            ("TFLOP/s", lambda r: fmt(r.get("tflops"), ".1f")),
            ("of matmul ceiling", lambda r: pct(r.get("ceiling_fraction"))),
            ("memory GiB", lambda r: fmt(r.get("memory_gib"), ".1f")),
            ("power W", lambda r: fmt(r.get("power_w"))),
            ("SM MHz", lambda r: fmt(r.get("sm_clock_mhz"))),
        ],
    )


def main() -> None:
    rows = []
    for root in map(Path, sys.argv[1:] or ["."]):
        for log in sorted(root.rglob("result_*.txt")):
            r = row(log)
            if r is not None:
                rows.append(r)
    print(table(rows))


if __name__ == "__main__":
    main()
