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

from throughput_summary import fmt, markdown, read_log, row  # noqa: E402

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
    spread = lambda r: "{}..{}".format(*map(fmt, r.get("spread", (None, None))))  # noqa: E731
    return markdown(
        rows,
        [
            ("config", lambda r: r["config"]),
            ("benchmark", lambda r: r["benchmark"]),
            ("GPUs", lambda r: str(r["accelerators"])),
            ("tokens/s per GPU", lambda r: fmt(r.get("tokens_per_gpu"))),
            ("min..max", spread),
            ("step ms", lambda r: fmt(r.get("step_ms"), ".0f")),
            ("TFLOP/s per GPU", lambda r: fmt(r.get("tflops"), ".0f")),
            ("MFU", lambda r: "-" if r.get("mfu") is None else f"{r['mfu']:.1%}"),
            ("memory GiB", lambda r: fmt(r.get("memory_gib"), ".1f")),
            ("power W", lambda r: fmt(r.get("power_w"))),
            ("SM MHz", lambda r: fmt(r.get("sm_clock_mhz"))),
            ("status", lambda r: str(r.get("status"))),
        ],
    )


def main() -> None:
    rows = []
    for root in map(Path, sys.argv[1:] or ["."]):
        for log in sorted(root.rglob("result_*.txt")):
            if "llama" in log.parent.name and (r := llm_row(log)) is not None:
                rows.append(r)
    print(table(rows))


if __name__ == "__main__":
    main()
