"""SIGTERM or SIGINT to a running `collector run` ends every process it started within seconds,
leaves the current run logged as aborted and earlier runs intact; --resume then finishes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from collector.run.plan import run_finished

# The child handles SIGINT as an interactive shell's job does, whatever the test was started
# from: a process inherits an ignored SIGINT (a background job of a script, `nohup`), and
# Python then leaves it ignored, so Ctrl-C could never reach the run.
SCRIPT = """
import signal
import sys
signal.signal(signal.SIGINT, signal.default_int_handler)
from pathlib import Path
from collector.run.plan import Machine, Options
from collector.run.runner import run_suite
m = Machine(host="testhost", cpu="Test CPU", cores=2)
r = run_suite(Options(benchmarks=[sys.argv[4]], repeats=int(sys.argv[2]), gpus=[int(sys.argv[3])],
                      out=Path(sys.argv[1]), ingest=False, ceilings=False,
                      resume=len(sys.argv) > 5), m)
print("STATUS", [x.status for x in r.results], r.interrupted)
"""
REPO = Path(__file__).resolve().parents[2]


def env() -> dict[str, str]:
    """This environment (the test's cache folder included), with collector on the path."""
    return {**os.environ, "PYTHONPATH": str(REPO)}


def start(out: Path, repeats: int, workers: int, benchmark: str = "ncf") -> subprocess.Popen:
    """`run_suite` in a process of its own, in a session of its own (as a shell job is)."""
    argv = [sys.executable, "-c", SCRIPT, str(out), str(repeats), str(workers), benchmark]
    return subprocess.Popen(
        argv, env=env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True,
    )  # fmt: skip


def wait_for(log: Path, text: str, proc: subprocess.Popen, seconds: float = 120) -> None:
    deadline = time.time() + seconds
    while time.time() < deadline:
        if log.is_file() and text in log.read_text():
            return
        assert proc.poll() is None, proc.communicate()[0]
        time.sleep(0.05)
    pytest.fail(f"{log} never showed {text}")


def resume(out: Path, repeats: int, workers: int, benchmark: str = "ncf") -> str:
    argv = [sys.executable, "-c", SCRIPT, str(out), str(repeats), str(workers), benchmark, "resume"]
    done = subprocess.run(
        argv,
        env=env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    return done.stdout + done.stderr


@pytest.mark.slow
def test_sigterm_mid_run_then_resume(tmp_path: Path):
    proc = start(tmp_path, 1, 1)
    log = tmp_path / "results" / "testhost_1xcpu_fp32_none" / "ncf" / "result_0.txt"
    wait_for(log, '"epoch_start"', proc)
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=60)
    assert "STATUS ['aborted'] True" in out, out
    assert log.read_text().splitlines()[-1].endswith('"status": "aborted"}}')
    assert "STATUS ['success'] False" in resume(tmp_path, 1, 1)
    assert run_finished(log) == "success"


@pytest.mark.parametrize(
    "how",
    ["SIGTERM to the command", "SIGINT to its process group"],
)
@pytest.mark.slow
def test_a_signal_during_a_multi_process_run_ends_every_rank_within_30_s(tmp_path: Path, how):
    # Two data-parallel processes (gloo) per run, two runs; the signal comes during the second.
    # MiniGo: its tiny run trains for seconds after its first epoch starts, NCF's for one, which
    # a loaded machine's scheduling can take before the signal lands
    proc = start(tmp_path, 2, 2, "minigo")
    logs = [
        tmp_path / "results" / "testhost_2xcpu_fp32_none" / "minigo" / f"result_{i}.txt"
        for i in (0, 1)
    ]
    wait_for(logs[1], '"epoch_start"', proc, seconds=240)
    children = psutil.Process(proc.pid).children(recursive=True)
    ranks = [p for p in children if "spawn_main" in " ".join(p.cmdline())]
    assert len(ranks) == 2
    began = time.monotonic()
    if how == "SIGTERM to the command":
        proc.send_signal(signal.SIGTERM)
    else:  # as Ctrl-C in a terminal: every process of the job gets it
        os.killpg(proc.pid, signal.SIGINT)
    out, _ = proc.communicate(timeout=60)
    assert time.monotonic() - began < 30
    assert "STATUS ['success', 'aborted'] True" in out, out
    _, still = psutil.wait_procs(ranks, timeout=1)
    assert still == [], f"ranks left running: {still}"
    assert run_finished(logs[0]) == "success"
    last = logs[1].read_text().splitlines()[-1]
    assert '"key": "run_stop"' in last and last.endswith('"status": "aborted"}}')
    # --resume after an interrupt: test_sigterm_mid_run_then_resume (the same logs either way)
