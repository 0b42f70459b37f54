"""End-to-end ingest throughput on the shared MLPerf corpus, against mlperf-logging.

Measures, in one process and one run:
  * collector: `ingest()` of the v0.5 + v0.7 trees into a fresh store each time (read,
    hash, parse, summarise, write Parquet), median of --repeats runs, after one warm-up
    ingest of a small file so that imports are not timed;
  * collector on the v0.7 files alone, for a like-for-like ratio;
  * mlperf-logging: `mlp_parser.parse_file(path, ruleset="0.7.0")` on the v0.7 files (it
    cannot read v0.5), parse only, same repeats.

Usage: python benchmarks/ingest.py [--shared ../shared] [--repeats 5] [--workers N]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import itertools
import statistics
import tempfile
import time
from pathlib import Path

from collector.ingest.pipeline import ingest


def _timed(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _size(paths: list[Path]) -> int:
    return sum(p.stat().st_size for root in paths for p in root.rglob("result_*.txt"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--shared", type=Path, default=Path(__file__).resolve().parents[2] / "shared"
    )
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--workers", type=int, default=None)
    args = parser.parse_args()
    v05 = args.shared / "mlperf" / "training_results_v0.5"
    v07 = args.shared / "mlperf" / "training_results_v0.7"
    v07_logs = sorted(v07.rglob("result_*.txt"))

    with tempfile.TemporaryDirectory() as tmp:
        ingest([v07_logs[0]], store=Path(tmp) / "warm")  # imports, lazy modules
        stores = (Path(tmp) / f"s{n}" for n in itertools.count())  # a fresh store every time

        def ours(paths: list[Path]):
            return lambda: ingest(paths, store=next(stores), workers=args.workers)

        corpus_bytes = _size([v05, v07])
        v07_bytes = _size([v07])
        t_all = _timed(ours([v05, v07]), args.repeats)
        t_v07 = _timed(ours([v07]), args.repeats)

    from mlperf_logging.compliance_checker import mlp_parser

    def theirs() -> None:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            for path in v07_logs:
                mlp_parser.parse_file(str(path), ruleset="0.7.0")

    theirs()  # warm-up
    t_theirs = _timed(theirs, args.repeats)

    mbs = lambda size, t: size / 1e6 / t  # noqa: E731
    print(
        f"corpus: v0.5 + v0.7, {corpus_bytes / 1e6:.1f} MB; v0.7 alone {v07_bytes / 1e6:.1f} MB;"
        f" median of {args.repeats}"
    )
    print(
        f"collector ingest, v0.5 + v0.7, end to end: {t_all:.3f} s = "
        f"{mbs(corpus_bytes, t_all):.0f} MB/s"
    )
    print(
        f"collector ingest, v0.7, end to end:        {t_v07:.3f} s = "
        f"{mbs(v07_bytes, t_v07):.0f} MB/s"
    )
    print(
        f"mlperf-logging parse_file, v0.7:           {t_theirs:.3f} s = "
        f"{mbs(v07_bytes, t_theirs):.1f} MB/s"
    )
    print(
        f"ratio on v0.7 (collector end to end / mlperf-logging parse only): {t_theirs / t_v07:.1f}x"
    )


if __name__ == "__main__":
    main()
