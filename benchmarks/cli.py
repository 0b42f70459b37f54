"""Time the commands a user waits on, end to end, beside a baseline in the same run.

    python benchmarks/cli.py [--checkout DIR] [--repeats 7]

Each command runs as a fresh process in the checkout's folder (DIR: another checkout of
collector, e.g. an older commit, run with this interpreter), reading its shipped store:
`collector --help` and `collector query scores`, which reads the table from the cache of
derived tables a first run filled (a temporary $COLLECTOR_CACHE), and again with an empty
cache each time, as a first query computes it. Baseline: a Python process that imports
DuckDB and pyarrow and nothing else. Medians of the repeats, wall and CPU seconds.
Goals: --help <= 0.3 s, query scores <= 0.5 s.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
COMMANDS = {
    "baseline: import duckdb, pyarrow": ["-c", "import duckdb, pyarrow"],
    "collector --help": ["-m", "collector.cli", "--help"],
    "collector query scores": ["-m", "collector.cli", "query", "scores"],
    "collector query scores, empty cache": ["-m", "collector.cli", "query", "scores"],
}


def timed(args: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of one process, which must succeed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, *args], cwd=cwd, env=env, check=True, capture_output=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--checkout", type=Path, default=REPO, help="collector checkout to time")
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    root = args.checkout.resolve()
    env = {**os.environ, "PYTHONPATH": str(root)}
    env.pop("COLLECTOR_STORE", None)
    if (root / ".collector" / "store").exists():
        sys.exit(f"{root}/.collector/store exists: the commands would read it, not the shipped one")
    print(f"checkout: {root}; load average {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as caches:
        env["COLLECTOR_CACHE"] = f"{caches}/filled"
        timed(COMMANDS["collector query scores"], root, env)  # files into the page cache
        for name, command in COMMANDS.items():
            runs = []
            for i in range(args.repeats):
                if name.endswith("empty cache"):
                    env["COLLECTOR_CACHE"] = f"{caches}/empty-{i}"
                runs.append(timed(command, root, env))
            wall = statistics.median(w for w, _ in runs)
            cpu = statistics.median(c for _, c in runs)
            print(f"{name:36} median {wall:.3f} s wall, {cpu:.3f} s CPU ({args.repeats} runs)")


if __name__ == "__main__":
    main()
