"""Derived tables: DuckDB SQL over the Parquet store, one .sql file and contract per table."""

from __future__ import annotations

import csv
import json
import weakref
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from collector import store as stores
from collector.errors import InputError, QueryError
from collector.queries import bootstrap, parameters
from collector.store.schemas import STORED_TABLES
from collector.store.schemas import load as load_schema
from collector.store.snapshot import Pin

QUERY_PACKAGE = "collector.queries"


@dataclass(frozen=True)
class Contract:
    """The YAML contract beside a derived table's SQL: grain, columns, invariant tests."""

    table: str
    grain: str
    description: str
    depends_on: tuple[str, ...]
    columns: tuple[dict[str, Any], ...]
    tests: tuple[dict[str, str], ...]
    sql: str
    display: tuple[str, ...] = ()  # the columns `collector query` prints by default


@cache
def contracts() -> dict[str, Contract]:
    """Every derived table, by name, in an order where dependencies come first."""
    folder = resources.files(QUERY_PACKAGE)
    found: dict[str, Contract] = {}
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".sql"):
            continue
        name = entry.name.removesuffix(".sql")
        doc = yaml.safe_load(folder.joinpath(f"{name}.yml").read_text())
        found[name] = Contract(
            table=doc["table"],
            grain=doc["grain"],
            description=doc.get("description", ""),
            depends_on=tuple(doc.get("depends_on", ())),
            columns=tuple(doc["columns"]),
            tests=tuple(doc.get("tests", ())),
            sql=entry.read_text(),
            display=tuple(doc.get("display", ())),
        )
    return _topological(found)


def _topological(found: dict[str, Contract]) -> dict[str, Contract]:
    ordered: dict[str, Contract] = {}

    def visit(name: str, path: tuple[str, ...]) -> None:
        if name in ordered:
            return
        if name in path:
            raise QueryError(f"derived tables depend on each other in a cycle: {path}")
        for dep in found[name].depends_on:
            visit(dep, (*path, name))
        ordered[name] = found[name]

    for name in found:
        visit(name, ())
    return ordered


RULE_FIELDS = (
    ("source", pa.string()),
    ("round", pa.string()),
    ("benchmark", pa.string()),
    ("runs_required", pa.int64()),
    ("runs_scored", pa.int64()),
    ("selection", pa.string()),
    ("dropped_each_end", pa.int64()),
    ("failed_allowed", pa.int64()),
    ("rcp_scaling", pa.bool_()),
    ("unparsable_log_fails", pa.bool_()),
    ("init_limit_closed_minutes", pa.float64()),
    ("init_limit_open_minutes", pa.float64()),
)


@cache
def score_rules() -> pa.Table:
    """The scoring rules, one YAML per round under rules/, as one row per source x round x
    benchmark ('*' where a rule holds for every round or benchmark)."""
    rows = []
    folder = resources.files(QUERY_PACKAGE).joinpath("rules")
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".yml"):
            continue
        doc = yaml.safe_load(entry.read_text())
        for benchmark, rule in doc["benchmarks"].items():
            merged = {**doc.get("defaults", {}), **rule}
            unknown = set(merged) - {name for name, _ in RULE_FIELDS}
            if unknown:
                raise QueryError(f"rules/{entry.name}: {benchmark}: unknown {sorted(unknown)}")
            rows.append(
                {"source": doc["source"], "round": doc["round"], "benchmark": benchmark, **merged}
            )
    return pa.Table.from_pylist(rows, schema=pa.schema(list(RULE_FIELDS)))


def sources() -> pa.Table:
    """Origins of the official result trees (runs/sources.csv): tree, repository, commit."""
    return _shipped_csv(("sources.csv",), ("tree", "repository", "commit", "description"))


def missing_logs() -> pa.Table:
    """Result logs the official repositories hold and the stored copies lack
    (runs/official/missing.csv): tree, path within it."""
    return _shipped_csv(("official", "missing.csv"), ("tree", "path"))


def _shipped_csv(parts: tuple[str, ...], columns: tuple[str, ...]) -> pa.Table:
    """A shipped CSV file as strings; no rows where the file is not there."""
    schema = pa.schema([(name, pa.string()) for name in columns])
    path = stores.shipped(*parts)
    if not path.exists():
        return pa.Table.from_pylist([], schema=schema)
    with path.open(newline="") as handle:
        return pa.Table.from_pylist(list(csv.DictReader(handle)), schema=schema)


def measured_ceilings() -> pa.Table:
    """The dense matmul ceilings (TFLOP/s per accelerator and precision) the runner measured
    beside the shipped local runs' system descriptions (runs/local/<host>/systems/
    <configuration>.ceilings.json), keyed by the description's path as the store holds it."""
    folder = stores.shipped("local")
    rows = []
    for path in sorted(folder.glob("*/systems/*.ceilings.json")):
        doc = json.loads(path.read_text())
        described = str(path.relative_to(folder)).removesuffix(".ceilings.json") + ".json"
        rows += [
            {
                "description_path": described,
                "precision": precision,
                "matmul_tflops": tflops,
                "measured_at": doc.get("measured_at"),
            }
            for precision, tflops in (doc.get("matmul_tflops") or {}).items()
        ]
    schema = pa.schema(
        [
            ("description_path", pa.string()),
            ("precision", pa.string()),
            ("matmul_tflops", pa.float64()),
            ("measured_at", pa.string()),
        ]
    )
    return pa.Table.from_pylist(rows, schema=schema)


def connect(store: str | Path | None = None) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB with the store's tables in schema `store` and every derived view.

    The views read the snapshot live when the connection was made, which no writer removes
    while the connection is open."""
    store_path = stores.resolve(store)
    con = duckdb.connect()
    con.execute("CREATE SCHEMA store")
    pin = Pin(store_path)
    weakref.finalize(con, pin.close)
    snapshot = pin.name
    empty = stores.snapshot.empty()
    for table in STORED_TABLES:
        path = store_path / snapshot / f"{table}.parquet" if snapshot else None
        if path is not None and path.exists() and _older(path, table):
            # an older schema version: upgraded in memory by the store's migrations
            con.register(f"_upgraded_{table}", stores.snapshot.read(store_path, (table,))[table])
            con.execute(f"CREATE VIEW store.{table} AS SELECT * FROM _upgraded_{table}")
        elif path is not None and path.exists():
            literal = str(path.resolve()).replace("'", "''")
            con.execute(f"CREATE VIEW store.{table} AS SELECT * FROM read_parquet('{literal}')")
        else:
            con.register(f"_empty_{table}", empty.tables[table])
            con.execute(f"CREATE VIEW store.{table} AS SELECT * FROM _empty_{table}")
    con.register("score_rules", score_rules())
    con.register("sources", sources())
    con.register("missing_logs", missing_logs())
    con.register("measured_ceilings", measured_ceilings())
    for name, table in parameters.tables().items():
        con.register(name, table)
    bootstrap.register(con)
    # rounds order by their numbers (v10.0 after v9.1), as lists of integers
    con.execute(
        "CREATE MACRO round_key(r) AS "
        "list_transform(string_split(ltrim(r, 'v'), '.'), lambda x: TRY_CAST(x AS INTEGER))"
    )
    for name, contract in contracts().items():
        try:
            con.execute(f"CREATE VIEW {name} AS {contract.sql}")
        except duckdb.Error as exc:
            raise QueryError(f"{name}.sql: {_first_line(exc)}") from exc
    return con


def materialize(con: duckdb.DuckDBPyConnection, name: str) -> int:
    """Store the rows of derived table `name` in a temporary table and point its view at them,
    so that the tables computed after it read them instead of computing them again; returns
    the number of rows. Its dependencies are read as they are (materialise them first)."""
    stored = f"_m_{name}"
    # CREATE TABLE AS answers with the number of rows it stored
    rows = con.execute(f"CREATE TEMP TABLE {stored} AS SELECT * FROM {name}").fetchone()[0]
    con.execute(f"DROP VIEW {name}")
    con.execute(f"CREATE VIEW {name} AS SELECT * FROM {stored}")
    return rows


def _older(path: Path, table: str) -> bool:
    """Whether the stored table at `path` is at an older schema version than this collector's."""
    meta = pq.read_schema(path).metadata or {}
    stored = int(meta.get(b"schema_version", b"0"))
    return stored < load_schema(table).schema_version


def names() -> list[str]:
    """Names of the derived tables `query` knows."""
    return list(contracts())


def run(name: str, store: str | Path | None = None) -> pa.Table:
    """The rows of one derived table."""
    if name not in contracts():
        raise InputError(f"unknown table {name!r}; known: {', '.join(names())}")
    return sql(f"SELECT * FROM {name}", store)


def sql(text: str, store: str | Path | None = None) -> pa.Table:
    """Run ad-hoc SQL over the store (tables store.*) and the derived views."""
    con = connect(store)
    try:
        return con.sql(text).to_arrow_table()
    except duckdb.Error as exc:
        raise QueryError(_first_line(exc)) from exc


def check_contracts(store: str | Path | None = None) -> list[str]:
    """Run every contract's invariant tests; returns one line per violated invariant."""
    con = connect(store)
    failures = []
    for name, contract in contracts().items():
        got = [d[0] for d in con.execute(f"SELECT * FROM {name} LIMIT 0").description]
        want = [c["name"] for c in contract.columns]
        if got != want:
            failures.append(f"{name}: columns {got} differ from its contract {want}")
        for test in contract.tests:
            count = con.execute(f"SELECT count(*) FROM ({test['sql']})").fetchone()[0]
            if count:
                failures.append(f"{name}: {test['name']}: {count} violating rows")
    return failures


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0]


def to_json_rows(table: pa.Table) -> str:
    """JSON array of row objects (floats as JSON numbers, NaN/inf as null)."""
    rows = table.to_pylist()
    return json.dumps([{k: _json_safe(v) for k, v in row.items()} for row in rows], indent=1)


def _json_safe(value: Any) -> Any:
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return None
    return value
