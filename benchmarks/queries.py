"""Time every derived table over the shipped store and over a synthetic store of local runs.

Usage: python benchmarks/queries.py [--runs 50000] [--repeats 5]

The synthetic store is generated with numpy: systems with one accelerator model, interconnect and
framework each, 7 benchmarks, 1/2/4/8 accelerators, fp32 and a reduced precision, 5 to 10 runs
per configuration, time to train falling with the accelerator count and throughput rising with
it. Each repeat opens a fresh connection and materialises every table as the site does
(collector.queries.query.materialize: dependencies first, each table once). Beside the total, a
baseline measured in the same repeat: DuckDB reading the store's runs and storing them sorted,
engine work alone, so that totals taken while the machine runs at other speeds compare as
multiples of it; and the tables' CPU time, which a loaded machine stretches less. Medians of
the repeats are printed, with each store's slowest tables.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

import collector
from collector.queries import query
from collector.store import snapshot
from collector.store.schemas import load

SHIPPED = Path(__file__).resolve().parents[1] / "runs" / "warehouse"

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
    parser.add_argument("--runs", type=int, default=50_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    synthetic = Path(tempfile.mkdtemp(prefix="collector-bench-")) / "store"
    tables = snapshot.empty().tables
    tables["runs"] = synthetic_runs(args.runs)
    snapshot.write(synthetic, snapshot.Snapshot(tables))
    for label, store in (("shipped", SHIPPED), (f"{tables['runs'].num_rows} runs", synthetic)):
        rounds = [compute(store) for _ in range(max(1, args.repeats))]
        total = statistics.median(sum(r[0].values()) for r in rounds)
        baseline = statistics.median(r[1] for r in rounds)
        cpu = statistics.median(r[2] for r in rounds)
        slowest = sorted(rounds[0][0], key=lambda n: -statistics.median(r[0][n] for r in rounds))
        tops = ", ".join(
            f"{n} {statistics.median(r[0][n] for r in rounds):.2f} s" for n in slowest[:3]
        )
        print(
            f"{label}: all tables {total:.2f} s ({cpu:.2f} s CPU), baseline {baseline:.3f} s "
            f"({total / baseline:.0f}x), median of {len(rounds)}; slowest: {tops}"
        )
        print("  totals: " + ", ".join(f"{sum(r[0].values()):.2f}" for r in rounds) + " s")


def compute(store: Path) -> tuple[dict[str, float], float, float]:
    """Seconds per derived table, computed once on a fresh warehouse of `store`; the
    baseline's seconds, measured on the same connection first; the CPU seconds of the tables
    (all threads: on a loaded machine the least wall time the work could take is CPU / cores).
    The cache starts empty: every table is computed (and written to it)."""
    cache = tempfile.mkdtemp(prefix="collector-cache-")
    os.environ["COLLECTOR_CACHE"] = cache
    wh = collector.open(store)
    con = wh.connection
    began = time.perf_counter()
    con.execute("CREATE TEMP TABLE baseline AS SELECT * FROM store.runs ORDER BY run_id")
    baseline = time.perf_counter() - began
    seconds = {}
    used = cpu_seconds()
    for name in query.names():
        began = time.perf_counter()
        query.build(con, name)  # its dependencies came before it, in names()'s order
        seconds[name] = time.perf_counter() - began
    used = cpu_seconds() - used
    wh.close()
    shutil.rmtree(cache)
    return seconds, baseline, used


def cpu_seconds() -> float:
    """User and system CPU time of this process, all its threads together."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


if __name__ == "__main__":
    main()
