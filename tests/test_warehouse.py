"""The Warehouse as a notebook uses it: one store opened and pinned, tables computed once, ad-hoc
SQL that reads the pinned snapshot and nothing else, writes through the lock, input checks
shared with the CLI."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

import collector
from collector.cli import app
from collector.errors import InputError, QueryError, StoreError
from collector.ingest import pipeline
from collector.store import manifest
from collector.store.schemas import load
from collector.warehouse import Warehouse
from tests.conftest import LOGS, v05_tree


@pytest.fixture
def one_run(store: Path) -> Path:
    """A store holding one v0.5 ResNet run."""
    collector.open(store).ingest([LOGS / "v05_resnet.txt"])
    return store


def test_a_table_is_a_relation_for_pandas_and_arrow(one_run: Path) -> None:
    with collector.open(one_run) as wh:
        assert wh.snapshot == "snap-000001"
        frame = wh.table("runs").df()
        assert isinstance(frame, pd.DataFrame)
        assert list(frame["status"]) == ["success"]
        assert isinstance(wh.table("scores").to_arrow_table(), pa.Table)
        assert wh.table("store.events").fetchall()[0] is not None
        assert wh.sql("SELECT count(*) FROM store.events").fetchall() == [(14,)]


def test_a_relation_keeps_its_warehouse_open_and_close_ends_both(one_run: Path) -> None:
    # one line in a notebook: the warehouse is dropped before the relation is read
    assert list(collector.open(one_run).table("runs").df()["status"]) == ["success"]
    assert collector.open(one_run).sql("SELECT count(*) FROM store.runs").fetchall() == [(1,)]
    with collector.open(one_run) as wh:
        relation = wh.table("scores")
    with pytest.raises(Exception, match="closed"):
        relation.fetchall()


def test_derived_tables_are_computed_when_asked_for_and_once(one_run: Path) -> None:
    with collector.open(one_run) as wh:
        wh.table("runs")
        built = _built(wh)
        assert "runs" in built and "site_guide" not in built  # only what was asked for
        first = wh.table("scores").fetchall()
        assert wh.table("scores").fetchall() == first
        assert _built(wh) == built | {"scores"}  # scores reads no other derived table


def test_a_warehouse_keeps_its_snapshot_while_another_writer_ingests(
    one_run: Path, tmp_path: Path
) -> None:
    second = tmp_path / "second.txt"
    second.write_bytes((LOGS / "v05_resnet.txt").read_bytes() + b"another run\n")
    with collector.open(one_run) as reader:
        collector.open(one_run).ingest([second])
        assert reader.snapshot == "snap-000001"
        assert reader.table("runs").to_arrow_table().num_rows == 1  # computed after the ingest
    with collector.open(one_run) as later:
        assert (later.snapshot, later.table("runs").to_arrow_table().num_rows) == ("snap-000002", 2)


def test_a_warehouse_that_writes_leaves_only_the_snapshots_kept(
    one_run: Path, tmp_path: Path
) -> None:
    # its pin on the snapshot it opened kept other writers from removing it; its own write
    # must not keep it either
    logs = []
    for n in range(5):
        logs.append(tmp_path / f"run{n}.txt")
        logs[-1].write_bytes((LOGS / "v05_resnet.txt").read_bytes() + f"run {n}\n".encode())
    with collector.open(one_run) as writer:
        for log in logs[:4]:
            collector.open(one_run).ingest([log])  # the others skip snap-000001: pinned
        assert (one_run / "snap-000001").is_dir()
        writer.ingest([logs[4]])
        assert writer.snapshot == "snap-000006"
    left = sorted(p.name for p in one_run.iterdir() if p.name.startswith("snap-"))
    assert left == ["snap-000004", "snap-000005", "snap-000006"]


def test_ingest_and_check_write_through_the_lock_and_read_what_they_wrote(store: Path) -> None:
    wh = collector.open(store)
    assert wh.snapshot is None
    report = wh.ingest([LOGS / "v05_resnet.txt"])
    assert (report.runs_added, wh.snapshot) == (1, "snap-000001")
    assert wh.table("runs").to_arrow_table().num_rows == 1
    (verdict,) = wh.check([LOGS / "v05_resnet.txt"])
    assert (verdict.verdict, wh.snapshot) == ("pass", "snap-000002")
    assert wh.sql("SELECT verdict FROM store.compliance").fetchall() == [("pass",)]
    (judged,) = wh.table("compliance").to_arrow_table().to_pylist()
    assert (judged["verdict"], judged["source"]) == ("pass", "official")  # the run ingest stored


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"source": "remote"}, "--source must be one of official, local, published"),
        ({"round_": "4.1"}, "--round must name a round such as v4.1"),
        ({"wait_s": math.nan}, "--wait must be a finite number of seconds"),
        ({"wait_s": -1.0}, "--wait must be a finite number of seconds"),
    ],
)
def test_the_api_refuses_what_the_cli_refuses(store: Path, options: dict, message: str) -> None:
    with pytest.raises(InputError, match=message):
        collector.open(store).ingest([LOGS / "v05_resnet.txt"], **options)
    flags = {"source": "--source", "round_": "--round", "wait_s": "--wait"}
    ((key, value),) = options.items()
    result = CliRunner().invoke(
        app, ["ingest", "--store", str(store), flags[key], str(value), str(LOGS / "v05_resnet.txt")]
    )
    assert result.exit_code == 1 and message in str(result.exception)


def test_an_empty_store_says_so_on_every_reading_command(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # no shipped store here, as in an installed package's folder
    monkeypatch.delenv("COLLECTOR_STORE", raising=False)
    with pytest.raises(StoreError, match="no store here"):
        collector.open().table("scores")
    for argv in (["query", "scores"], ["query", "--sql", "SELECT 1"], ["site"]):
        result = CliRunner().invoke(app, argv)
        assert result.exit_code == 1 and "no store here" in str(result.exception), argv


def test_reference_data_enters_the_store_and_replaces_its_table(
    store: Path, tmp_path: Path
) -> None:
    prices = tmp_path / "prices.csv"
    prices.write_text(
        "accelerator_key,usd_per_accelerator_hour,label,note\nH100-SXM,4.25,quoted,ours\n"
    )
    wh = collector.open(store)
    wh.ingest([LOGS / "v05_resnet.txt"])
    assert wh.sql("SELECT count(*) FROM store.prices WHERE label = 'example'").fetchall() > [(0,)]
    wh.ingest([prices])
    assert wh.sql("SELECT * FROM prices").fetchall() == [("H100-SXM", 4.25, "quoted", "ours")]
    prices.write_text("accelerator_key,usd_per_accelerator_hour,label,note\nH100-SXM,-1,x,y\n")
    with pytest.raises(InputError, match=r"prices.csv:2: usd_per_accelerator_hour '-1'"):
        wh.ingest([prices])


# Ad-hoc SQL is read-only and confined to the pinned snapshot: each attack fails with one
# line and changes nothing.
ATTACKS = {
    "copy over a stored table": "COPY (SELECT * FROM store.runs) TO '{runs}' (FORMAT parquet)",
    "copy over it in place": (
        "COPY (SELECT * FROM store.runs) TO '{runs}' (FORMAT parquet, USE_TMP_FILE false)"
    ),
    "copy anywhere": "COPY (SELECT 1) TO '{out}/copied.csv'",
    "read a file": "SELECT * FROM read_text('/etc/passwd')",
    "read a csv": "SELECT * FROM read_csv('{out}/plain.csv')",
    "read other parquet": "SELECT * FROM read_parquet('{out}/other.parquet')",
    "list files": "SELECT * FROM glob('/etc/*')",
    "attach": "ATTACH '{out}/attached.db'",
    "install": "INSTALL httpfs",
    "load": "LOAD httpfs",
    "settings": "SET enable_external_access = true",
    "write in memory": "CREATE TABLE t AS SELECT 1",
    "two statements": "SELECT 1; COPY (SELECT 1) TO '{out}/second.csv'",
    "a statement in a string": "SELECT * FROM query('COPY (SELECT 1) TO ''{out}/q.csv''')",
}


@pytest.mark.parametrize("attack", ATTACKS)
def test_adhoc_sql_cannot_write_or_read_outside_the_snapshot(
    one_run: Path, tmp_path: Path, attack: str
) -> None:
    out = tmp_path / "outside"
    out.mkdir()
    (out / "plain.csv").write_text("a\n1\n")
    pq.write_table(pa.table({"a": [1]}), out / "other.parquet")
    runs = one_run / "snap-000001" / "runs.parquet"
    before = hashlib.sha256(runs.read_bytes()).hexdigest()
    text = ATTACKS[attack].format(runs=runs, out=out)
    with collector.open(one_run) as wh, pytest.raises(QueryError):
        wh.sql(text).fetchall()
    assert hashlib.sha256(runs.read_bytes()).hexdigest() == before
    assert sorted(p.name for p in out.iterdir()) == ["other.parquet", "plain.csv"]
    result = CliRunner().invoke(app, ["query", "--store", str(one_run), "--sql", text])
    assert result.exit_code == 1 and isinstance(result.exception, QueryError)


def test_adhoc_sql_reads_the_pinned_snapshot(one_run: Path) -> None:
    runs = one_run / "snap-000001" / "runs.parquet"
    with collector.open(one_run) as wh:
        assert wh.sql(f"SELECT count(*) FROM read_parquet('{runs}')").fetchall() == [(1,)]
        assert wh.sql("SELECT count(*) FROM scores JOIN store.runs USING (system_id)").fetchall()


def test_a_table_stored_at_an_older_schema_version_is_read_upgraded(one_run: Path) -> None:
    path = one_run / "snap-000001" / "runs.parquet"
    current = pq.read_table(path)
    added = ["round_source", "accelerator_model", "accelerator_vendor", "rcp_scaling_factor"]
    added += ["throughput_per"]
    old = current.drop_columns([*added, "init_s"])
    pq.write_table(old.replace_schema_metadata({"table": "runs", "schema_version": "1"}), path)
    _reseal(path)  # as a collector of that version wrote it
    with collector.open(one_run) as wh:
        upgraded = wh.table("store.runs").to_arrow_table()
    assert upgraded.column_names == load("runs").names
    assert upgraded.column("round_source").to_pylist() == [None]


def _reseal(path: Path) -> None:
    """Record a rewritten table file's size, digest and schema version in its manifest."""
    listing = path.parent / manifest.MANIFEST
    doc = json.loads(listing.read_text())
    size, digest = manifest.file_digest(path)
    entry = doc["tables"][path.stem]
    entry.update(bytes=size, sha256=digest, schema_version=1)
    listing.write_text(json.dumps(doc, indent=2, sort_keys=True))


def _built(wh: Warehouse) -> set[str]:
    rows = wh.connection.execute("SELECT table_name FROM duckdb_tables() WHERE temporary")
    return {r[0] for r in rows.fetchall()}


@pytest.mark.slow  # many connections, and a parallel ingest
def test_warehouses_dropped_unclosed_leave_parallel_ingest_working(
    one_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a DuckDB connection left open keeps its threads; a worker forked beside them crashed
    for _ in Warehouse.names():  # as many connections as a session reading every table
        warehouse = collector.open(one_run)
        warehouse.table("scores").fetchall()
        del warehouse  # dropped, never closed
    monkeypatch.setattr(pipeline, "PARALLEL_MIN_BYTES", 0)
    v05_tree(tmp_path / "a")
    report = pipeline.ingest([tmp_path / "a", LOGS], store=tmp_path / "s", workers=2)
    assert report.runs_added > 2
