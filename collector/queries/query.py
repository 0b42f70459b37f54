"""Derived tables: DuckDB SQL over one store snapshot, one .sql file and contract per table.

`connect` opens a DuckDB connection over a snapshot's stored tables, confined to their files;
`build` computes a derived table (and those it reads) into it, once; `select` runs ad-hoc SQL.
`collector.warehouse` pins the snapshot and holds the connection.

A derived table computed once is kept as Parquet in a cache folder (`cache_folder`) named by
a digest of everything its rows come from: the snapshot's table files, collector's version
and the files of the packages that compute it, DuckDB's version and the threads. Another
connection over the same snapshot and code reads it there instead of computing it again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import shutil
import weakref
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb
import yaml

from collector.errors import InputError, QueryError
from collector.queries import parameters
from collector.store.schemas import REFERENCE_TABLES, STORED_TABLES
from collector.store.schemas import load as load_schema

if TYPE_CHECKING:
    import pyarrow as pa

QUERY_PACKAGE = "collector.queries"
CACHES_KEPT = 4  # cache folders kept, the most recently used; an older one is removed
# each connection's cache folder and derived tables made, and the connections whose functions
# are made
_CACHES: weakref.WeakKeyDictionary[duckdb.DuckDBPyConnection, Path] = weakref.WeakKeyDictionary()
_BUILT: weakref.WeakKeyDictionary[duckdb.DuckDBPyConnection, set[str]] = weakref.WeakKeyDictionary()
_DEFINED: weakref.WeakSet[duckdb.DuckDBPyConnection] = weakref.WeakSet()


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
    return _topological({name: contract(name) for name in sorted(_tables())})


@cache
def _tables() -> frozenset[str]:
    """The derived tables' names: one .sql file each."""
    entries = resources.files(QUERY_PACKAGE).iterdir()
    return frozenset(e.name.removesuffix(".sql") for e in entries if e.name.endswith(".sql"))


@cache
def contract(name: str) -> Contract:
    """The contract of derived table `name` (read alone: a query of one table parses one
    contract); an InputError naming the known tables if there is none."""
    if name not in _tables():
        raise InputError(f"unknown table {name!r}; known: {', '.join(names())}")
    folder = resources.files(QUERY_PACKAGE)
    doc = yaml.load(folder.joinpath(f"{name}.yml").read_text(), yaml.CSafeLoader)
    return Contract(
        table=doc["table"],
        grain=doc["grain"],
        description=doc.get("description", ""),
        depends_on=tuple(doc.get("depends_on", ())),
        columns=tuple(doc["columns"]),
        tests=tuple(doc.get("tests", ())),
        sql=folder.joinpath(f"{name}.sql").read_text(),
        display=tuple(doc.get("display", ())),
    )


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


RULE_FIELDS = {
    "source": "VARCHAR",
    "round": "VARCHAR",
    "benchmark": "VARCHAR",
    "runs_required": parameters.INT,
    "runs_scored": parameters.INT,
    "selection": "VARCHAR",
    "dropped_each_end": parameters.INT,
    "failed_allowed": parameters.INT,
    "rcp_scaling": parameters.BOOL,
    "unparsable_log_fails": parameters.BOOL,
    "init_limit_closed_minutes": parameters.FLOAT,
    "init_limit_open_minutes": parameters.FLOAT,
}


@cache
def score_rules() -> parameters.Table:
    """The scoring rules, one YAML per round under rules/, as one row per source x round x
    benchmark ('*' where a rule holds for every round or benchmark)."""
    rows = []
    folder = resources.files(QUERY_PACKAGE).joinpath("rules")
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".yml"):
            continue
        doc = yaml.load(entry.read_text(), yaml.CSafeLoader)
        for benchmark, rule in doc["benchmarks"].items():
            merged = {**doc.get("defaults", {}), **rule}
            unknown = set(merged) - RULE_FIELDS.keys()
            if unknown:
                raise QueryError(f"rules/{entry.name}: {benchmark}: unknown {sorted(unknown)}")
            rows.append(
                {"source": doc["source"], "round": doc["round"], "benchmark": benchmark, **merged}
            )
    return parameters.table(list(RULE_FIELDS), rows, RULE_FIELDS)


def connect(
    tables: dict[str, Path | pa.Table], threads: int | None = None, cache: Path | None = None
) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB over one snapshot's stored tables, confined to them.

    Each stored table is a view in schema `store` over its Parquet file (or over the table
    given, one upgraded in memory from an older schema version); a table the snapshot lacks
    is empty; the reference tables are views by the names the derived SQL reads too. Then
    the connection is locked: DuckDB reads those Parquet files and the `cache` folder of
    their derived tables (see `cache_folder`) and nothing else (no other file, no network,
    no extension), and its settings cannot change. Derived tables are made by `build`, the
    parameter tables as the derived tables name them."""
    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")  # a long query would draw one on stdout
    if threads is not None:
        con.execute(f"SET threads TO {int(threads)}")
    con.execute("CREATE SCHEMA store")
    for table in STORED_TABLES:
        source = tables.get(table)
        if isinstance(source, Path):
            literal = str(source).replace("'", "''")
            con.execute(f"CREATE VIEW store.{table} AS SELECT * FROM read_parquet('{literal}')")
        elif source is not None:  # Arrow's way in loads pandas: only for these rare tables
            con.from_arrow(source).create_view(f"_upgraded_{table}")
            con.execute(f"CREATE VIEW store.{table} AS SELECT * FROM _upgraded_{table}")
        else:
            types = {c["name"]: _SQL_TYPES[c["type"]] for c in load_schema(table).columns}
            _load(con, f"store.{table}", parameters.Table(types, ()))  # none in this snapshot
    for table in REFERENCE_TABLES:
        con.execute(f"CREATE VIEW {table} AS SELECT * FROM store.{table}")
    files = [str(p) for p in tables.values() if isinstance(p, Path)]
    con.execute("SET allowed_paths = $files", {"files": files})
    if cache is not None:
        con.execute("SET allowed_directories = $dirs", {"dirs": [f"{cache}{os.sep}"]})
        _CACHES[con] = cache
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")
    return con


def _define_functions(con: duckdb.DuckDBPyConnection) -> None:
    """The functions the derived and ad-hoc SQL call, made when first needed (the interval
    functions load NumPy and pyarrow, which a table read from the cache does not need)."""
    if con in _DEFINED:
        return
    from collector.queries import bootstrap

    bootstrap.register(con)
    # rounds order by their numbers (v10.0 after v9.1), as lists of integers
    con.execute(
        "CREATE MACRO round_key(r) AS "
        "list_transform(string_split(ltrim(r, 'v'), '.'), lambda x: TRY_CAST(x AS INTEGER))"
    )
    # one rule for ties between two results (Home's model ratios, the Answers' pairs): within
    # the run-to-run variance MLPerf allows the benchmark, or an interval that holds 1
    con.execute(
        "CREATE MACRO tied(ratio, variance_pct, low, high) AS "
        "greatest(ratio, 1 / ratio) - 1 <= variance_pct / 100 "
        "OR coalesce(low <= 1 AND high >= 1, false)"
    )
    for macro in [*_evidence_macros(), _definition_macro(), _words_macro()]:
        con.execute(f"CREATE MACRO {macro}")
    _DEFINED.add(con)


def cache_folder(snapshot: str, threads: int | None) -> Path | None:
    """The cache folder of the derived tables of a snapshot whose table files have the digest
    `snapshot`, made if need be: under $COLLECTOR_CACHE, else $XDG_CACHE_HOME/collector (by
    default ~/.cache/collector), named by a digest of `snapshot`, `threads` and `_code`.
    None where it cannot be made: the tables are then computed every time. Making one removes
    all but the CACHES_KEPT most recently used."""
    root = os.environ.get("COLLECTOR_CACHE") or Path(
        os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache", "collector"
    )
    code = _code(Path(__file__).parents[1])
    key = hashlib.sha256(f"{snapshot} {threads} {code}".encode()).hexdigest()[:32]
    folder = Path(root, key)
    try:
        if folder.is_dir():
            os.utime(folder)  # used now
            return folder
        folder.mkdir(parents=True)
    except OSError:
        return None
    with contextlib.suppress(OSError):  # another process may be removing one
        kept = sorted(Path(root).iterdir(), key=lambda f: f.stat().st_mtime, reverse=True)
        for old in kept[CACHES_KEPT:]:
            shutil.rmtree(old, ignore_errors=True)
    return folder


@cache
def _code(root: Path) -> str:
    """A digest of DuckDB's version, collector's (its `__init__.py`) and every file of the
    packages of `root` (collector's folder) whose code or data a derived table's rows come
    from (queries, store, ingest)."""
    digest = duckdb.__version__ + (root / "__init__.py").read_text()
    for package in ("queries", "store", "ingest"):
        digest = files_digest(root / package, digest)
    return digest


def files_digest(folder: Path | None, start: str, skip: Path | None = None) -> str:
    """A digest of `start` and the files under `folder` (but `skip`), by their paths in it."""
    digest = hashlib.sha256(start.encode())
    for path in sorted(folder.rglob("*")) if folder else ():
        if path.is_file() and "__pycache__" not in path.parts and skip not in path.parents:
            digest.update(f"{path.relative_to(folder)}\0".encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def _evidence_macros() -> list[str]:
    """The kind of evidence of a row as SQL macros over evidence.yml: its key (a local run below
    full scale is a proxy), its label (a proxy's followed by its scale) and its place. Plain
    expressions, not lookups: a lookup per row made the site's largest tables slow."""
    rows = parameters.evidence_kinds().rows

    def case(column: str) -> str:
        whens = " ".join(f"WHEN {_literal(r['evidence'])} THEN {_literal(r[column])}" for r in rows)
        return f"CASE key {whens} END"

    return [
        "evidence_of(source, scale) AS CASE WHEN source = 'local' "
        "AND coalesce(scale, '') <> 'full' THEN 'proxy' ELSE source END",
        f"evidence_kind(key, scale) AS {case('kind')} || CASE WHEN key = 'proxy' "
        "THEN ' ' || coalesce(scale, 'unknown scale') ELSE '' END",
        f"evidence_rank(key) AS {case('rank')}",
    ]


def _definition_macro() -> str:
    """benchmark_definition(benchmark, round): the definition (definitions.yml) a benchmark name
    had in a round, null where none is known (a published study's round is not a round). A
    plain expression, as the evidence macros, so that any table can carry it without a join."""
    whens = []
    for row in parameters.definitions().rows:
        last = (
            f" AND round_key(r) <= round_key({_literal(row['last_round'])})"
            if row["last_round"]
            else ""
        )
        whens.append(
            f"WHEN b = {_literal(row['benchmark'])} AND round_key(r) >= "
            f"round_key({_literal(row['first_round'])}){last} THEN {_literal(row['definition'])}"
        )
    return f"benchmark_definition(b, r) AS CASE {' '.join(whens)} END"


def _words_macro() -> str:
    """benchmark_words(benchmark, round): the benchmark in words, the model of its definition
    in that round ('R-GAT' for v4.x's gnn and v5.x's rgat), a published study's workload by the
    names definitions.yml gives them, else the name itself."""
    models = {r["definition"]: r["model"] for r in parameters.definitions().rows}
    whens = [f"WHEN {_literal(d)} THEN {_literal(m)}" for d, m in models.items()]
    studies = [
        f"WHEN {_literal(r['benchmark'])} THEN {_literal(r['model'])}"
        for r in parameters.study_benchmarks().rows
    ]
    # a study's id in place of a round: not 'v<major>.<minor>'
    return (
        f"benchmark_words(b, r) AS coalesce(CASE benchmark_definition(b, r) {' '.join(whens)} "
        f"END, CASE WHEN r NOT LIKE 'v%' THEN CASE b {' '.join(studies)} END END, b)"
    )


def _literal(value: object) -> str:
    return str(value) if isinstance(value, int) else "'" + str(value).replace("'", "''") + "'"


# DuckDB's types of the stored tables' column types
_SQL_TYPES = {"string": "VARCHAR", "int64": "BIGINT", "float64": "DOUBLE", "bool": "BOOLEAN"}


def _load(con: duckdb.DuckDBPyConnection, name: str, table: parameters.Table) -> None:
    """A small table of plain values as a DuckDB table, its columns passed as lists."""
    columns = ", ".join(
        f'unnest($c{i}::{kind}[]) AS "{column}"'
        for i, (column, kind) in enumerate(table.types.items())
    )
    values = {f"c{i}": table.column(column) for i, column in enumerate(table.types)}
    con.execute(f"CREATE TABLE {name} AS SELECT {columns}", values).fetchall()


def build(con: duckdb.DuckDBPyConnection, name: str) -> int:
    """Compute derived table `name` into a temporary table of that name, with the tables it
    reads computed first (each once per connection), or read it whole from the connection's
    cache folder; returns its number of rows. The tables it reads are computed, not read from
    the cache: over the same rows laid out otherwise, DuckDB's threads may sum in another
    order, and a sum or an interval differ in its last digit."""
    contract(name)
    done, cache = _BUILT.setdefault(con, set()), _CACHES.get(con)

    def make(table: str, path: tuple[str, ...]) -> None:
        if table in path:
            raise QueryError(f"derived tables read each other in a cycle: {', '.join(path)}")
        if table in done:
            return
        for dep in sorted(reads(con, table) & _tables()):
            make(dep, (*path, table))
        _define_functions(con)
        _register_parameters(con, reads(con, table))
        try:
            con.execute(f"CREATE TEMP TABLE {table} AS {contract(table).sql}")
        except duckdb.Error as exc:
            raise QueryError(f"{table}.sql: {_first_line(exc)}") from exc
        done.add(table)
        if cache:
            _keep(con, table, cache / f"{table}.parquet")

    if name not in done and not _read_cached(con, name, cache):
        make(name, ())
    done.add(name)
    return _one(con, f"SELECT count(*) FROM {name}")


def _read_cached(con: duckdb.DuckDBPyConnection, table: str, cache: Path | None) -> bool:
    """Whether derived table `table` was read from the cache folder (False where it is not
    there, or unreadable: removed since, or damaged)."""
    path = cache / f"{table}.parquet" if cache else None
    if not (path and path.is_file()):
        return False
    try:
        con.execute(f"CREATE TEMP TABLE {table} AS FROM read_parquet({_literal(str(path))})")
    except duckdb.Error:
        con.execute(f"DROP TABLE IF EXISTS {table}")
        return False
    return True


def _keep(con: duckdb.DuckDBPyConnection, table: str, path: Path) -> None:
    """Write a derived table into the cache as a new file renamed into place; nothing where
    the folder cannot take it, or where Parquet would give a column back in another type
    (a HUGEINT as a DOUBLE)."""
    staging = path.with_name(f".{table}.{os.urandom(8).hex()}")
    try:
        con.execute(f"COPY {table} TO {_literal(str(staging))} (FORMAT parquet)")
        if con.sql(f"FROM read_parquet({_literal(str(staging))})").types == con.table(table).types:
            os.replace(staging, path)
    except (duckdb.Error, OSError):
        pass
    staging.unlink(missing_ok=True)


def _one(con: duckdb.DuckDBPyConnection, sql: str, **params: Any) -> Any:
    """The one value a query answers (DuckDB wants every result read to its end)."""
    ((value,),) = con.execute(sql, params or None).fetchall()
    return value


def names() -> list[str]:
    """Names of the derived tables, dependencies first."""
    return list(contracts())


_READS: dict[str, frozenset[str]] = {}


def reads(con: duckdb.DuckDBPyConnection, name: str) -> frozenset[str]:
    """The tables derived table `name` reads by name (derived, parameter and reference tables,
    and its own CTEs): those of its contract's depends_on and those its SQL names (parsed by
    `con` once per process)."""
    if name not in _READS:
        found = contract(name)
        _READS[name] = frozenset(found.depends_on) | (_named(con, found.sql) - {name})
    return _READS[name]


def _named(con: duckdb.DuckDBPyConnection, sql: str) -> frozenset[str]:
    """The unqualified table names in a SQL text, as DuckDB's parser reads it (no binding)."""
    tree = _one(con, "SELECT json_serialize_sql($text)", text=sql)
    found: set[str] = set()
    stack = [json.loads(tree)]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if node.get("type") == "BASE_TABLE" and not node.get("schema_name"):
                found.add(node["table_name"])
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return frozenset(found)


def _register_parameters(con: duckdb.DuckDBPyConnection, reads: frozenset[str]) -> None:
    """Load the parameter tables among `reads` that the connection lacks."""
    made = {"score_rules": score_rules, **parameters.tables()}
    wanted = reads & made.keys()
    if wanted:
        known = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
        for table in sorted(wanted - known):
            _load(con, table, made[table]())


def select(con: duckdb.DuckDBPyConnection, text: str) -> duckdb.DuckDBPyRelation:
    """Ad-hoc SQL: one SELECT statement (read-only) over the stored tables (store.*), the
    reference and parameter tables and the derived tables, which are computed as it names
    them."""
    try:
        statements = con.extract_statements(text)
    except duckdb.Error as exc:
        raise QueryError(_first_line(exc)) from exc
    if len(statements) != 1 or statements[0].type != duckdb.StatementType.SELECT:
        raise QueryError(
            "ad-hoc SQL is one read-only SELECT statement (no COPY, ATTACH, INSTALL, SET or writes)"
        )
    try:
        _prepare(con, text)
        return con.sql(text)
    except duckdb.Error as exc:
        raise QueryError(_first_line(exc)) from exc


def _prepare(con: duckdb.DuckDBPyConnection, sql: str) -> None:
    """Make the functions it may call, and the derived and parameter tables a SQL text
    names."""
    _define_functions(con)
    named = _named(con, sql)
    for name in sorted(named & _tables()):
        build(con, name)
    _register_parameters(con, named)


def check_contracts(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Run every contract's invariant tests; returns one line per violated invariant."""
    failures = []
    for name, found in contracts().items():
        build(con, name)
        got = con.table(name).columns
        want = [c["name"] for c in found.columns]
        if got != want:
            failures.append(f"{name}: columns {got} differ from its contract {want}")
        for test in found.tests:
            _prepare(con, test["sql"])
            count = _one(con, f"SELECT count(*) FROM ({test['sql']})")
            if count:
                failures.append(f"{name}: {test['name']}: {count} violating rows")
    return failures


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0]


def to_json_rows(rows: list[dict[str, Any]]) -> str:
    """JSON array of row objects (floats as JSON numbers, NaN/inf as null)."""
    safe = [
        {k: None if isinstance(v, float) and not math.isfinite(v) else v for k, v in row.items()}
        for row in rows
    ]
    return json.dumps(safe, indent=1, default=str)  # dates and decimals as text
