"""benchmarks/throughput_summary.py on the committed H200 full-size logs."""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import throughput_summary  # noqa: E402

RUNS = ROOT / "runs" / "local" / "h200-x1-full"
LOG = RUNS / "results" / "vm_1xh200_bf16_default" / "resnet" / "result_0.txt"


def test_a_row_is_the_median_window_and_its_share_of_the_measured_ceiling():
    row = throughput_summary.row(LOG)
    recs = [json.loads(ln[len(":::MLLOG ") :]) for ln in LOG.read_text().splitlines()]
    rates = [r["value"]["throughput"] for r in recs if r["key"] == "tracked_stats"]
    assert row["samples_per_s"] == statistics.median(rates)
    assert (row["min"], row["max"]) == (min(rates), max(rates))
    ceilings = json.loads((RUNS / "systems" / "vm_1xh200_bf16_default.ceilings.json").read_text())
    assert row["ceiling_fraction"] == pytest.approx(
        row["tflops"] / ceilings["matmul_tflops"]["bf16"]
    )
    # the counted FLOPs per image times images/s give the same TFLOP/s
    facts = next(r["value"] for r in recs if r["key"] == "collector_run")["throughput"]
    per_image = facts["step_flops_per_accelerator"] / 256
    assert row["tflops"] == pytest.approx(per_image * row["samples_per_s"] / 1e12, rel=0.03)


def test_logs_of_other_scales_have_no_row(tmp_path):
    log = tmp_path / "result_0.txt"
    value = {"scale": "tiny", "benchmark": "ncf"}
    log.write_text(':::MLLOG {"key": "collector_run", "value": ' + json.dumps(value) + "}\n")
    assert throughput_summary.row(log) is None
