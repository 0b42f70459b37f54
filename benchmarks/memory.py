"""Peak memory of `collector ingest` and `collector check` of one large generated log.

Writes one MLLOG result log of about --mb MB (a run to its target: run_start, per-step
`tracked_stats`, an evaluation per epoch, run_stop, in mllog's own layout), then runs each
command on it in a child process, alone, into a fresh store, and reports the child's peak
resident memory (ru_maxrss) and its ratio to the log's size, beside the same for a tiny log
(the interpreter and libraries alone). The goal: peak at most about twice the largest file.

Usage: python benchmarks/memory.py [--mb 1024] [--dir DIR] [--commands ingest,check]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LINE = (
    ':::MLLOG {{"namespace": "", "time_ms": {ms}, "event_type": "POINT_IN_TIME", '
    '"key": "tracked_stats", "value": {{"throughput": {tput:.1f}, "loss": {loss:.5f}}}, '
    '"metadata": {{"file": "train.py", "lineno": 61, "epoch_num": {epoch}, "step": {step}}}}}\n'
)
HEAD = (
    ':::MLLOG {{"namespace": "", "time_ms": {ms}, "event_type": "POINT_IN_TIME", '
    '"key": "{key}", "value": {value}, "metadata": {{"file": "train.py", "lineno": 1}}}}\n'
)


def write_log(path: Path, size: int) -> int:
    """A log of about `size` bytes; returns its size."""
    start_ms = 1_763_700_000_000
    with path.open("w") as out:
        for key, value in (
            ("submission_benchmark", '"resnet"'),
            ("submission_org", '"memtest"'),
            ("submission_division", '"closed"'),
            ("submission_platform", '"memtest_8xH100"'),
            ("eval_target", "0.759"),
            ("run_start", "null"),
        ):
            out.write(HEAD.format(ms=start_ms, key=key, value=value))
        step, ms, written = 0, start_ms, 0
        per_epoch = 20_000
        while written < size:
            chunk = []
            for _ in range(per_epoch):
                step += 1
                ms += 7
                chunk.append(
                    LINE.format(
                        ms=ms,
                        tput=2500 + step % 97,
                        loss=1 / step,
                        epoch=step // per_epoch,
                        step=step,
                    )
                )
            accuracy = min(0.76, 0.5 + step / 40_000_000)
            chunk.append(HEAD.format(ms=ms, key="eval_accuracy", value=f"{accuracy:.4f}"))
            text = "".join(chunk)
            out.write(text)
            written += len(text)
        out.write(HEAD.format(ms=ms + 1, key="run_stop", value="null"))
    return path.stat().st_size


def peak_rss(args: list[str]) -> tuple[float, float, int]:
    """(peak RSS in MB, wall seconds, exit status) of `collector ARGS` run alone."""
    code = (
        "import resource, subprocess, sys\n"
        "p = subprocess.run([sys.executable, '-m', 'collector.cli', *sys.argv[1:]],"
        " stdout=subprocess.DEVNULL)\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, p.returncode)\n"
    )
    started = time.monotonic()
    out = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, check=True
    )
    kb, status = out.stdout.split()
    return int(kb) / 1024, time.monotonic() - started, int(status)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=1024)
    parser.add_argument("--dir", type=Path, default=None)
    parser.add_argument("--commands", default="ingest,check")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        root = Path(tmp)
        tiny, big = root / "tiny" / "result_0.txt", root / "big" / "result_0.txt"
        tiny.parent.mkdir()
        big.parent.mkdir()
        write_log(tiny, 1 << 16)
        size = write_log(big, args.mb << 20)
        print(f"log: {size / 2**20:.0f} MiB; python {sys.version.split()[0]}; pid {os.getpid()}")
        print(f"{'command':8} {'log':>9} {'peak MiB':>9} {'x log':>6} {'s':>6} status")
        for command in args.commands.split(","):
            for name, log in (("tiny", tiny), ("1 log", big)):
                store = root / f"store-{command}-{name.replace(' ', '')}"
                rss, wall, status = peak_rss([command, str(log), "--store", str(store)])
                ratio = rss * 2**20 / log.stat().st_size if name != "tiny" else float("nan")
                print(f"{command:8} {name:>9} {rss:9.0f} {ratio:6.2f} {wall:6.1f} {status}")


if __name__ == "__main__":
    main()
