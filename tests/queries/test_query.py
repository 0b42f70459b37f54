import pytest

from collector.errors import InputError, QueryError
from collector.ingest.pipeline import ingest
from collector.queries import query
from tests.conftest import LOGS, REPO


def test_every_derived_table_has_a_contract_matching_its_columns(store):
    assert {"runs", "scores", "systems", "issues"} <= set(query.names())
    assert query.check_contracts(store) == []
    for contract in query.contracts().values():
        assert contract.grain.startswith("one row per")
        for column in contract.columns:
            assert column.get("description")


def test_public_csv_columns(store):
    ingest([LOGS / "v05_resnet.txt"], store=store)
    runs = query.run("runs", store).column_names
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
    scores = query.run("scores", store).column_names
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
    table = query.sql("SELECT count(*) AS n FROM store.events", store)
    assert table.column("n").to_pylist() == [14]
    assert query.sql("SELECT status FROM runs", store).column("status").to_pylist() == ["success"]


def test_unknown_table_and_bad_sql_are_errors(store):
    with pytest.raises(InputError, match="unknown table 'nope'"):
        query.run("nope", store)
    with pytest.raises(QueryError):
        query.sql("SELEC 1", store)


def test_materialize_stores_rows_and_points_the_view_at_them(store):
    ingest([LOGS / "v05_resnet.txt"], store=store)
    con = query.connect(store)
    expected = query.run("runs", store)
    assert query.materialize(con, "runs") == 1
    assert con.sql("SELECT * FROM runs").to_arrow_table().equals(expected)
    view = con.execute("SELECT sql FROM duckdb_views() WHERE view_name = 'runs'").fetchone()[0]
    assert "_m_runs" in view


def test_shipped_store_meets_every_contract():
    # every round of official results: RCP-normalised scores, absent logs, local full-size runs
    assert query.check_contracts(REPO / "runs" / "warehouse") == []
