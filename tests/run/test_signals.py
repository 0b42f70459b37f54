"""SIGTERM to a running `collector run` leaves an aborted log; --resume then finishes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from collector.run.plan import run_finished

SCRIPT = """
import sys
from pathlib import Path
from collector.run.plan import Machine, Options
from collector.run.runner import run_suite
m = Machine(host="testhost", cpu="Test CPU", cores=2)
r = run_suite(Options(benchmarks=["ncf"], repeats=1, out=Path(sys.argv[1]), ingest=False,
                      ceilings=False, resume=len(sys.argv) > 2), m)
print("STATUS", [x.status for x in r.results], r.interrupted)
"""


def test_sigterm_mid_run_then_resume(tmp_path: Path):
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.Popen(
        [sys.executable, "-c", SCRIPT, str(tmp_path)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    log = tmp_path / "results" / "testhost_1xcpu_fp32_none" / "ncf" / "result_0.txt"
    deadline = time.time() + 60
    while time.time() < deadline:
        if log.is_file() and '"epoch_start"' in log.read_text():
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=60)
    assert "STATUS ['aborted'] True" in out, out
    assert log.read_text().splitlines()[-1].endswith('"status": "aborted"}}')
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path), "resume"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "STATUS ['success'] False" in done.stdout, done.stdout + done.stderr
    assert run_finished(log) == "success"
