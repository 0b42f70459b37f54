import os
import shutil
from pathlib import Path

import pytest

import collector
from collector.errors import InputError, QueryError
from collector.ingest.pipeline import ingest
from collector.queries import query
from collector.store import snapshot
from tests.conftest import LOGS, REPO, sql, table


@pytest.fixture
def empty(store):
    """A store with one snapshot, every table empty."""
    snapshot.write(store, snapshot.empty())
    return store


def test_every_derived_table_has_a_contract_matching_its_columns(empty):
    assert {"runs", "scores", "systems", "issues"} <= set(query.names())
    assert collector.open(empty).check_contracts() == []
    for contract in query.contracts().values():
        assert contract.grain.startswith("one row per")
        for column in contract.columns:
            assert column.get("description")


def test_public_csv_columns(store):
    ingest([LOGS / "v05_resnet.txt"], store=store)
    runs = table(store, "runs").column_names
    assert runs[:16] == [
        "source",
        "round",
        "submitter",
        "division",
        "system_id",
        "system",
        "benchmark",
        "run",
        "status",
        "minutes",
        "accelerator",
        "accelerators",
        "nodes",
        "precision",
        "interconnect",
        "scale",
    ]
    scores = table(store, "scores").column_names
    for name in (
        "round",
        "submitter",
        "system",
        "benchmark",
        "runs_total",
        "runs_used",
        "score_minutes",
    ):
        assert name in scores


def test_adhoc_sql_sees_store_and_derived_tables(store):
    ingest([LOGS / "v05_resnet.txt"], store=store)
    table = sql(store, "SELECT count(*) AS n FROM store.events")
    assert table.column("n").to_pylist() == [14]
    assert sql(store, "SELECT status FROM runs").column("status").to_pylist() == ["success"]


def test_unknown_table_and_bad_sql_are_errors(empty):
    with pytest.raises(InputError, match="unknown table 'nope'"):
        table(empty, "nope")
    with pytest.raises(QueryError):
        sql(empty, "SELEC 1")


@pytest.mark.parametrize("name", query.names())
def test_each_table_builds_alone_with_the_tables_its_sql_reads(empty, name):
    # a fresh connection per table: the tables it reads come from its SQL, not from an order
    with collector.open(empty) as wh:
        assert query.build(wh.connection, name) == 0
        found = wh.connection.execute("SELECT table_name FROM duckdb_tables()").fetchall()
    built = {r[0] for r in found}
    assert name in built and built <= set(query.names()) | parameter_tables()


def parameter_tables() -> set[str]:
    return {"score_rules", *query.parameters.tables()}


@pytest.mark.slow
def test_shipped_store_meets_every_contract():
    # every round of official results: RCP-normalised scores, absent logs, local full-size runs
    assert collector.open(REPO / "runs" / "warehouse").check_contracts() == []


def _computing(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """The connections that compute a derived table from here on (each makes its functions
    first): none where every table asked for comes from the cache."""
    computing: list[object] = []
    define = query._define_functions
    monkeypatch.setattr(
        query, "_define_functions", lambda con: (computing.append(con), define(con))
    )
    return computing


def test_a_derived_table_is_computed_once_then_read_from_the_cache(store, monkeypatch):
    ingest([LOGS / "v05_resnet.txt"], store=store)
    computing = _computing(monkeypatch)
    first = table(store, "scores")
    assert computing
    computing.clear()
    assert table(store, "scores") == first
    assert computing == []


def test_a_new_snapshot_or_new_query_code_computes_the_tables_again(store, monkeypatch):
    ingest([LOGS / "v05_resnet.txt"], store=store)
    assert table(store, "runs").column("benchmark").to_pylist() == ["resnet"]
    ingest([LOGS / "v06_ssd.txt"], store=store)  # a new snapshot
    assert sorted(table(store, "runs").column("benchmark").to_pylist()) == ["resnet", "ssd"]
    shutil.rmtree(store)  # another store at the same path, with a snapshot of the same name
    ingest([LOGS / "v06_ssd.txt"], store=store)
    with collector.open(store) as wh:
        assert wh.snapshot == "snap-000001"
        assert wh.table("runs").fetchall() == wh.sql("FROM runs").fetchall()
        assert [r[0] for r in wh.sql("SELECT benchmark FROM runs").fetchall()] == ["ssd"]
    computing = _computing(monkeypatch)
    table(store, "runs")
    assert computing == []
    monkeypatch.setattr(query, "_code", lambda root: "the query code, changed")
    table(store, "runs")
    assert computing


def test_the_cache_key_follows_the_query_code_and_the_version(tmp_path):
    root = Path(query.__file__).parents[1]
    copy = tmp_path / "collector"
    for package in ("queries", "store", "ingest"):
        shutil.copytree(root / package, copy / package, ignore=shutil.ignore_patterns("__py*"))
    shutil.copy(root / "__init__.py", copy)
    digests = {query._code(root), query._code(copy)}
    for changed in ("queries/scores.sql", "__init__.py"):
        query._code.cache_clear()
        path = copy / changed
        path.write_text(path.read_text() + "\n")
        digests.add(query._code(copy))
    assert len(digests) == 3


def test_every_table_reads_back_from_the_cache_as_computed(store):
    ingest([LOGS / "v05_resnet.txt", LOGS / "v06_ssd.txt"], store=store)
    computed = {}
    with collector.open(store) as wh:
        for name in query.names():
            relation = wh.table(name)
            computed[name] = (relation.columns, relation.types, repr(relation.fetchall()))
    with collector.open(store) as wh:
        for name in query.names():
            relation = wh.table(name)
            assert (relation.columns, relation.types, repr(relation.fetchall())) == computed[name]


def test_a_table_parquet_would_change_is_not_cached(store, monkeypatch, tmp_path):
    snapshot.write(store, snapshot.empty())
    monkeypatch.setenv("COLLECTOR_CACHE", str(tmp_path / "cache"))
    with collector.open(store) as wh:
        assert "HUGEINT" in map(str, wh.table("site_scores").types)  # a sum of integers
        wh.table("scores")
    (folder,) = (tmp_path / "cache").iterdir()
    assert (folder / "scores.parquet").is_file()
    assert not (folder / "site_scores.parquet").exists()


def test_an_unusable_cache_folder_is_passed_over(store, monkeypatch, tmp_path):
    ingest([LOGS / "v05_resnet.txt"], store=store)
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("COLLECTOR_CACHE", str(tmp_path / "file" / "cache"))
    assert table(store, "runs").num_rows == 1


def test_only_the_most_recently_used_cache_folders_are_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("COLLECTOR_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(query, "CACHES_KEPT", 2)
    first = query.cache_folder("a", None)
    query.cache_folder("b", None)
    os.utime(first, (1, 1))  # used long ago
    query.cache_folder("c", None)
    assert first is not None and not first.exists()
    assert len(list((tmp_path / "cache").iterdir())) == 2


def test_a_table_not_in_the_cache_is_computed_from_tables_computed(store, monkeypatch):
    ingest([LOGS / "v05_resnet.txt"], store=store)
    table(store, "scores")  # now in the cache
    asked = []
    read = query._read_cached
    monkeypatch.setattr(
        query, "_read_cached", lambda con, name, cache: asked.append(name) or read(con, name, cache)
    )
    table(store, "speedups")  # reads scores, computed again
    assert asked == ["speedups"]
