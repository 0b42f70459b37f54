"""Time every derived table over a synthetic store of 1,000,000 local runs.

Usage: python benchmarks/queries.py [--runs N] [--store DIR] [--views] [--repeats N] [--fresh]
                                    [--sql-only]

The store is generated with numpy: systems with one accelerator model, interconnect and
framework each, 7 benchmarks, 1/2/4/8 accelerators, fp32 and a reduced precision, 5 to 10 runs
per configuration, time to train falling with the accelerator count and throughput rising with
it. Each table is materialised in full (CREATE TABLE AS) so nothing is pruned away; the time per
table and the total are printed, and beside them a reference: DuckDB reading the store's runs
and materialising them sorted (the fastest of three tries around the tables), so that totals
taken at different machine speeds compare as multiples of it.

By default the tables are computed as the site computes them (collector.queries.query.materialize):
dependencies first, each table once, its view then reading the materialised rows, so a table's
time is its own work. --views times every view by itself instead, recomputing the tables it
depends on each time (what one `collector query` of that table costs). --repeats N computes
everything N times over the same store, each time on a fresh connection, and prints the
medians. --fresh computes each time in a newly started interpreter, as `collector query` and
the site do (this process has just built the store, and its memory allocator is warmed by it).
Beside each table's time and the total, the process's CPU time over them, and the cores it
kept busy on average: CPU time / cores is the least wall time the same work could take.
--sql-only replaces the interval functions by functions that answer zeros at once, so what is
timed is the SQL engine's work alone: the least any faster intervals could leave.
"""

from __future__ import annotations

import argparse
import multiprocessing
import resource
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa

from collector.queries import bootstrap, query
from collector.store import snapshot
from collector.store.schemas import load

BENCHMARKS = ("resnet", "ssd", "maskrcnn", "gnmt", "transformer", "ncf", "minigo")
BASE_MINUTES = (1300.0, 200.0, 2000.0, 200.0, 480.0, 2.0, 600.0)
MODELS = (
    ("Tesla V100-SXM2-16GB", "nvlink"),
    ("Tesla V100-PCIe-16GB", "pcie"),
    ("Tesla V100S-PCIe-32GB", "pcie"),
    ("A100-SXM4-40GB", "nvswitch"),
    ("A100-PCIe-40GB", "pcie"),
    ("H100-SXM5-80GB", "nvswitch"),
)
COUNTS = (1, 2, 4, 8)
PRECISIONS = ("fp32", "fp16", "bf16", "tf32")


def synthetic_runs(total: int, seed: int = 1) -> pa.Table:
    """About `total` runs of many systems, built column-wise."""
    rng = np.random.default_rng(seed)
    per_system = len(BENCHMARKS) * len(COUNTS) * 2 * 7.5
    systems = max(1, int(total / per_system))
    cfg_sys = np.repeat(np.arange(systems), len(BENCHMARKS) * len(COUNTS) * 2)
    cfg_bench = np.tile(np.repeat(np.arange(len(BENCHMARKS)), len(COUNTS) * 2), systems)
    cfg_count = np.tile(np.repeat(np.array(COUNTS), 2), systems * len(BENCHMARKS))
    reduced = 1 + (np.arange(systems) % 3)  # each system's reduced precision: fp16/bf16/tf32
    cfg_prec = np.tile(np.array([0, 1]), systems * len(BENCHMARKS) * len(COUNTS))
    cfg_prec = np.where(cfg_prec == 1, reduced[cfg_sys], 0)
    runs_per = rng.integers(5, 11, cfg_sys.size)
    idx = np.repeat(np.arange(cfg_sys.size), runs_per)
    n = idx.size
    run = np.arange(n) - np.repeat(np.cumsum(runs_per) - runs_per, runs_per)
    model = np.arange(systems) % len(MODELS)
    sys_of = cfg_sys[idx]
    count = cfg_count[idx]
    prec = cfg_prec[idx]
    speed = rng.uniform(0.8, 1.2, systems)[sys_of] * np.where(prec > 0, 2.0, 1.0)
    minutes = (
        np.array(BASE_MINUTES)[cfg_bench[idx]] / (count**0.9 * speed) * rng.lognormal(0, 0.05, n)
    )
    start = 1.6e9 + np.arange(n, dtype=np.float64) * 10
    names = np.array([m for m, _ in MODELS], dtype=object)
    links = np.array([i for _, i in MODELS], dtype=object)
    system = np.char.add("sys", np.arange(systems).astype(str)).astype(object)
    run_id = np.char.zfill(np.arange(n).astype(str), 16).astype(object)
    columns = {
        "run_id": run_id,
        "source": np.full(n, "local", dtype=object),
        "round": np.full(n, "v0.5", dtype=object),
        "submitter": np.full(n, "bench", dtype=object),
        "division": np.full(n, "local", dtype=object),
        "system_id": np.char.add("v0.5/bench/", system.astype(str)).astype(object)[sys_of],
        "system": system[sys_of],
        "benchmark": np.array(BENCHMARKS, dtype=object)[cfg_bench[idx]],
        "run": run,
        "status": np.full(n, "success", dtype=object),
        "run_start_unix_s": start,
        "run_stop_unix_s": start + minutes * 60,
        "time_to_train_s": minutes * 60,
        "throughput_samples_per_s": 1000.0 * count * speed * rng.lognormal(0, 0.03, n),
        "accelerator": names[model][sys_of],
        "accelerators": count,
        "nodes": np.ones(n, dtype=np.int64),
        "framework": np.full(n, "PyTorch", dtype=object),
        "precision": np.array(PRECISIONS, dtype=object)[prec],
        "interconnect": links[model][sys_of],
        "scale": np.full(n, "full", dtype=object),
        "log_format": np.full(n, "mllog", dtype=object),
        "log_path": run_id,
        "log_sha256": run_id,
        "log_bytes": np.ones(n, dtype=np.int64),
        "events": np.ones(n, dtype=np.int64),
    }
    schema = load("runs").arrow()
    arrays = [
        pa.array(columns[f.name], f.type) if f.name in columns else pa.nulls(n, f.type)
        for f in schema
    ]
    return pa.Table.from_arrays(arrays, schema=schema)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1_000_000)
    parser.add_argument("--store", type=Path, default=None)
    parser.add_argument("--views", action="store_true", help="time each view by itself")
    parser.add_argument("--repeats", type=int, default=1, help="compute everything N times")
    parser.add_argument("--fresh", action="store_true", help="each time in a new interpreter")
    parser.add_argument("--sql-only", action="store_true", help="intervals answered at once")
    args = parser.parse_args()
    store = args.store or Path(tempfile.mkdtemp(prefix="collector-bench-")) / "store"
    tables = snapshot.empty().tables
    tables["runs"] = synthetic_runs(args.runs)
    snapshot.write(store, snapshot.Snapshot(tables))
    print(f"store: {tables['runs'].num_rows} runs in {store}")
    repeats = range(max(1, args.repeats))
    if args.fresh:
        with multiprocessing.get_context("spawn").Pool(1, maxtasksperchild=1) as fresh:
            rounds = [fresh.apply(compute, (store, args.views, args.sql_only)) for _ in repeats]
    else:
        rounds = [compute(store, args.views, args.sql_only) for _ in repeats]
    for name in query.names():
        took = statistics.median(r.seconds[name] for r in rounds)
        busy = statistics.median(r.cpu_seconds[name] for r in rounds)
        print(f"{name:20s} {took:7.2f} s {busy:7.2f} s cpu {rounds[0].rows[name]:>10d} rows")
    total = statistics.median(r.total for r in rounds)
    cpu = statistics.median(r.cpu for r in rounds)
    reference = statistics.median(r.reference for r in rounds)
    kind = ("views" if args.views else "materialised") + (", fresh" if args.fresh else "")
    kind += ", SQL alone" if args.sql_only else ""
    median = f", median of {len(rounds)}" if len(rounds) > 1 else ""
    print(f"{'total':20s} {total:7.2f} s ({kind}{median})")
    print(f"{'cpu':20s} {cpu:7.2f} s: {cpu / total:.2f} cores busy on average")
    print(f"{'reference':20s} {reference:7.2f} s: the total is {total / reference:.1f} references")
    if len(rounds) > 1:
        print("totals: " + ", ".join(f"{r.total:.2f}" for r in rounds) + " s")


@dataclass
class Round:
    """One computation of every table: seconds, CPU seconds and rows per table, total and CPU
    seconds, and the reference measured around it."""

    seconds: dict[str, float]
    cpu_seconds: dict[str, float]
    rows: dict[str, int]
    total: float
    cpu: float
    reference: float


def compute(store: Path, views: bool, sql_only: bool = False) -> Round:
    """Every derived table once, on a fresh connection to `store`."""
    con = query.connect(store)
    if sql_only:
        answer_intervals_at_once(con)
    # the reference is the fastest of three tries, two before the tables and one after
    before = min(reference_seconds(con) for _ in range(2))
    seconds: dict[str, float] = {}
    busy: dict[str, float] = {}
    rows: dict[str, int] = {}
    for name in query.names():
        used = cpu_seconds()
        began = time.perf_counter()
        if views:
            # CREATE TABLE AS answers with the number of rows it stored
            create = f"CREATE TEMP TABLE bench_{name} AS SELECT * FROM {name}"
            rows[name] = con.execute(create).fetchone()[0]
        else:
            rows[name] = query.materialize(con, name)
        seconds[name] = time.perf_counter() - began
        busy[name] = cpu_seconds() - used
    reference = min(before, reference_seconds(con))
    con.close()
    return Round(seconds, busy, rows, sum(seconds.values()), sum(busy.values()), reference)


def answer_intervals_at_once(con: duckdb.DuckDBPyConnection) -> None:
    """Replace bootstrap_mean and bootstrap_ratio on `con` by functions of the same types that
    answer an interval of zeros for every row without computing anything."""
    for name in ("bootstrap_mean", "bootstrap_ratio"):
        con.remove_function(name)
    bootstrap.register(con, boot=AtOnce(seed=0, resamples=1000, level=0.95))


class AtOnce(bootstrap.Bootstrap):
    """A bootstrap whose intervals are zeros, answered without resampling."""

    def mean_interval(
        self, offsets: np.ndarray, lengths: np.ndarray, values: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        return np.zeros(offsets.size), np.zeros(offsets.size)

    def ratio_interval(
        self, num: bootstrap.Groups, den: bootstrap.Groups
    ) -> tuple[np.ndarray, np.ndarray]:
        return np.zeros(num[0].size), np.zeros(num[0].size)


def cpu_seconds() -> float:
    """User and system CPU time of this process, all its threads together."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def reference_seconds(con: duckdb.DuckDBPyConnection) -> float:
    """Seconds DuckDB takes to read the store's runs and materialise them sorted by run_id: engine
    work alone, no collector logic, so that totals taken while the machine ran at different
    speeds can be compared as multiples of it."""
    began = time.perf_counter()
    con.execute("CREATE TEMP TABLE reference AS SELECT * FROM store.runs ORDER BY run_id")
    took = time.perf_counter() - began
    con.execute("DROP TABLE reference")
    return took


if __name__ == "__main__":
    main()
