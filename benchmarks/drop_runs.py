"""Remove stored runs by their log's path, as a new snapshot of the store (maintenance).

    python benchmarks/drop_runs.py --store runs/warehouse [--issues-of FILE]... LOG_PATH...

The store adds a log once per path and never replaces it: a local run measured again with
changed code, kept at the same path in its campaign folder, needs its old rows removed
first, then `collector ingest` stores the new file. Every row of the runs named (in the tables
keyed by `run_id`) goes; the rest of the snapshot is written unchanged, under the writer
lock. A path that names no stored run is an error, and nothing is written. `--issues-of`
also removes the problems recorded for an input file that is read again with changed code (a
system description), so that only its new reading's stand.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from collector.store import snapshot  # noqa: E402


def drop(store: Path, log_paths: list[str], issues_of: tuple[str, ...] = ()) -> dict[str, int]:
    """Write a snapshot without the runs of `log_paths` and the ingest issues of the files
    `issues_of`; returns the rows removed per table."""
    with snapshot.writing(store):
        snap = snapshot.read(store)
        runs = snap["runs"]
        chosen = pc.is_in(runs["log_path"], pa.array(log_paths, pa.string()))
        found = set(runs.filter(chosen)["log_path"].to_pylist())
        if missing := [p for p in log_paths if p not in found]:
            raise SystemExit(f"no stored run has the log {missing[0]}")
        ids = runs.filter(chosen)["run_id"]
        removed, tables = {}, dict(snap.tables)
        for name, table in snap.tables.items():
            if "run_id" in table.column_names:
                keep = pc.invert(pc.is_in(table["run_id"], ids))
                tables[name] = table.filter(pc.fill_null(keep, True))
                removed[name] = table.num_rows - tables[name].num_rows
        if issues_of and "ingest_issues" in tables:
            table = tables["ingest_issues"]
            tables["ingest_issues"] = table.filter(
                pc.invert(pc.is_in(table["path"], pa.array(list(issues_of), pa.string())))
            )
            removed["ingest_issues"] = table.num_rows - tables["ingest_issues"].num_rows
        snapshot.write(store, snapshot.Snapshot(tables))
    return removed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", type=Path, required=True)
    ap.add_argument("--issues-of", action="append", default=[], metavar="FILE",
                    help="an input file whose recorded problems go too (as stored in "
                    "store.ingest_issues.path)")  # fmt: skip
    ap.add_argument("log_paths", nargs="+", help="log paths as stored (store.runs.log_path)")
    args = ap.parse_args()
    for name, rows in drop(args.store, args.log_paths, tuple(args.issues_of)).items():
        print(f"{name}: {rows} rows removed")


if __name__ == "__main__":
    main()
