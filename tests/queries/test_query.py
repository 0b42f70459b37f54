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
