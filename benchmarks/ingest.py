"""End-to-end ingest throughput on the official MLPerf Training trees, against mlperf-logging.

Measures, in one process and one run:
  * collector: `ingest()` of every round's tree (training_results_vX.Y under --trees) into
    one fresh store, round after round, as `benchmarks/build_store.sh` does (no per-event
    rows unless --events): walk, read, hash, parse, summarise, write Parquet. Per round:
    logs, runs, failed and aborted runs, MB, wall seconds and CPU seconds of this process
    (workers' CPU is not counted: they are not waited for);
  * mlperf-logging: `mlp_parser.parse_file(path, ruleset)` on the same result logs (every
    --baseline-every-th one, to bound its time), parse only, with each round's ruleset.

Usage: python benchmarks/ingest.py --trees DIR [--rounds v0.5,v5.1] [--workers N]
       [--baseline-every 1] [--events]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import tempfile
import time
from pathlib import Path

import duckdb

from collector.ingest.pipeline import ingest
from collector.ingest.trees import find_logs

ROUNDS = [
    "v0.5",
    "v0.6",
    "v0.7",
    "v1.0",
    "v1.1",
    "v2.0",
    "v2.1",
    "v3.0",
    "v3.1",
    "v4.0",
    "v4.1",
    "v5.0",
    "v5.1",
]


def _cpu() -> float:
    """CPU seconds of this process and of its finished children."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _counts(store: Path, round_: str) -> tuple[int, int, int]:
    """Runs, failed runs and aborted runs of a round in the store."""
    snap = store / (store / "CURRENT").read_text().strip()
    row = (
        duckdb.connect()
        .execute(
            "select count(*), count(*) filter (where status in ('failed', 'incomplete')),"
            " count(*) filter (where status = 'aborted')"
            f" from '{snap}/runs.parquet' where round = ? and source = 'official'",
            [round_],
        )
        .fetchone()
    )
    return row


def _baseline(paths: list[Path], round_: str) -> tuple[float, int]:
    """Seconds mlperf-logging's parser takes on the logs it can read, and their bytes."""
    from mlperf_logging.compliance_checker import mlp_parser

    ruleset = f"{round_[1:]}.0"
    start, size = time.perf_counter(), 0
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        for path in paths:
            with contextlib.suppress(Exception):  # it cannot read v0.5, v0.6 or broken logs
                mlp_parser.parse_file(str(path), ruleset=ruleset)
                size += path.stat().st_size
    return time.perf_counter() - start, size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trees", type=Path, required=True)
    parser.add_argument("--rounds", default=",".join(ROUNDS))
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--baseline-every", type=int, default=1)
    parser.add_argument(
        "--events", action="store_true", help="store per-event rows too (the build does not)"
    )
    args = parser.parse_args()
    rounds = args.rounds.split(",")
    rows, total = [], {"wall": 0.0, "cpu": 0.0, "bytes": 0, "theirs": 0.0, "their_bytes": 0}
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "store"
        for round_ in rounds:
            tree = args.trees / f"training_results_{round_}"
            cpu, wall = _cpu(), time.perf_counter()
            report = ingest([tree], store=store, workers=args.workers, events=args.events)
            wall, cpu = time.perf_counter() - wall, _cpu() - cpu
            runs, failed, aborted = _counts(store, round_)
            logs = [e.path for e in find_logs([tree])][:: args.baseline_every]
            theirs, their_bytes = _baseline(logs, round_) if round_ >= "v0.7" else (0.0, 0)
            rows.append((round_, report.files, runs, failed, aborted, report.bytes, wall, cpu))
            for key, value in (("wall", wall), ("cpu", cpu), ("bytes", report.bytes)):
                total[key] += value
            total["theirs"] += theirs
            total["their_bytes"] += their_bytes
            print(
                f"{round_}: {report.files} logs, {runs} runs ({failed} failed, {aborted} aborted),"
                f" {report.bytes / 1e6:.0f} MB, {wall:.1f} s wall, {cpu:.1f} s CPU"
                + (f"; mlperf-logging {their_bytes / 1e6 / theirs:.1f} MB/s" if theirs else ""),
                flush=True,
            )
    mb = total["bytes"] / 1e6
    print(
        f"all {len(rounds)} rounds: {mb:.0f} MB in {total['wall']:.1f} s wall"
        f" ({mb / total['wall']:.0f} MB/s), {total['cpu']:.1f} s CPU"
        f" ({mb / total['cpu']:.0f} MB per CPU second)"
    )
    if total["theirs"]:
        rate = total["their_bytes"] / 1e6 / total["theirs"]
        print(
            f"mlperf-logging parse_file (v0.7 on, every {args.baseline_every}th log): "
            f"{rate:.1f} MB/s, so {mb / rate:.0f} s for the same {mb:.0f} MB"
        )


if __name__ == "__main__":
    main()
