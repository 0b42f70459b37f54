"""benchmarks/harness.py runs end to end in its CPU smoke configuration."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_harness_smoke_prints_both_rates_and_the_overhead():
    out = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "harness.py"),
            "--smoke",
        ],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr
    bare = re.search(r"bare loop: ([\d,.]+) img/s", out.stdout)
    harness = re.search(r"harness:\s+([\d,.]+) img/s", out.stdout)
    overhead = re.search(r"overhead:\s+([+-][\d.]+)%", out.stdout)
    assert bare and harness and overhead, out.stdout
    b, h = (float(m.group(1).replace(",", "")) for m in (bare, harness))
    assert b > 0 and h > 0
    expected = (b - h) / b * 100  # from the printed rates, each rounded to 0.005
    slack = 100 * 0.01 / min(b, h) + 0.01
    assert abs(float(overhead.group(1)) - expected) <= slack
