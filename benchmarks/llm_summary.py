"""Summarise `collector run --suite v5.1 --scale throughput` results as a Markdown table.

    python benchmarks/llm_summary.py runs/local/h200-x4-llm [more folders...]

One row per language-model log: tokens/s per GPU (median over the timed windows, and their
spread), model TFLOP/s per GPU and MFU (model FLOPs, the workload's count, over the dense bf16
peak of an H100 or H200 SXM, 989 TFLOP/s by the datasheet, also for fp8 runs, as usual), peak
GPU memory, and the GPUs' median power and SM clock during the windows. Compute throughput on
synthetic tokens, data loading not included.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from throughput_summary import fmt, read_log, row  # noqa: E402

#: dense bf16 TFLOP/s of one H100 or H200 SXM (NVIDIA datasheet, without sparsity)
PEAK_BF16_TFLOPS = 989.4


def llm_row(log: Path) -> dict[str, Any] | None:
    """The summary of one language-model throughput log, None for other logs."""
    r = row(log)
    if r is None or not r.get("samples_per_s"):
        return r
    tokens = read_log(log)[0]["throughput"]["tokens_per_sample"]
    gpus = max(1, r["accelerators"])
    r["tokens_per_gpu"] = r["samples_per_s"] * tokens / gpus
    r["spread"] = (r["min"] * tokens / gpus, r["max"] * tokens / gpus)
    if r.get("tflops"):
        r["mfu"] = r["tflops"] / PEAK_BF16_TFLOPS
    return r


def table(rows: list[dict[str, Any]]) -> str:
    """The Markdown table of ``rows``."""
    lines = [
        "| config | benchmark | GPUs | tokens/s per GPU | min..max | step ms | TFLOP/s per GPU "
        "| MFU | memory GiB | power W | SM MHz | status |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        low, high = r.get("spread", (None, None))
        mfu = r.get("mfu")
        lines.append(
            f"| {r['config']} | {r['benchmark']} | {r['accelerators']} | "
            f"{fmt(r.get('tokens_per_gpu'))} | {fmt(low)}..{fmt(high)} | "
            f"{fmt(r.get('step_ms'), '.0f')} | {fmt(r.get('tflops'), '.0f')} | "
            f"{'-' if mfu is None else f'{mfu:.1%}'} | {fmt(r.get('memory_gib'), '.1f')} | "
            f"{fmt(r.get('power_w'))} | {fmt(r.get('sm_clock_mhz'))} | {r.get('status')} |"
        )
    return "\n".join(lines)


def main() -> None:
    rows = []
    for root in map(Path, sys.argv[1:] or ["."]):
        for log in sorted(root.rglob("result_*.txt")):
            if "llama" in log.parent.name and (r := llm_row(log)) is not None:
                rows.append(r)
    print(table(rows))


if __name__ == "__main__":
    main()
