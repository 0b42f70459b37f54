import os
import signal
import subprocess
import sys
import textwrap
import time

import pyarrow as pa
import pytest

from collector.errors import StoreError
from collector.store import migrations, snapshot
from collector.store.schemas import load


def one_issue(message: str) -> pa.Table:
    return load("ingest_issues").table_from_rows(
        [{"path": "a.txt", "line": 1, "severity": "warning", "code": "x", "message": message}]
    )


def test_a_new_store_reads_as_empty(store):
    snap = snapshot.read(store)
    assert snap.name is None
    assert snap["runs"].num_rows == 0


def test_write_swaps_atomically_and_removes_the_old_snapshot(store):
    tables = snapshot.empty().tables
    first = snapshot.write(store, snapshot.Snapshot(dict(tables, ingest_issues=one_issue("a"))))
    second = snapshot.write(store, snapshot.Snapshot(dict(tables, ingest_issues=one_issue("b"))))
    assert (first, second) == ("snap-000001", "snap-000002")
    assert not (store / first).exists()
    assert snapshot.read(store)["ingest_issues"].column("message").to_pylist() == ["b"]


def test_leftovers_of_an_interrupted_writer_are_ignored_then_removed(store):
    snapshot.write(store, snapshot.empty())
    (store / ".snap-000002.abc").mkdir()
    (store / ".snap-000002.abc" / "runs.parquet").write_bytes(b"half")
    assert snapshot.read(store).name == "snap-000001"
    snapshot.write(store, snapshot.empty())
    assert sorted(p.name for p in store.iterdir()) == ["CURRENT", "snap-000002"]


def test_a_pointer_to_a_missing_snapshot_is_a_store_error(store):
    store.mkdir()
    (store / "CURRENT").write_text("snap-000009\n")
    with pytest.raises(StoreError, match="missing snapshot"):
        snapshot.read(store)


def test_merge_replaces_rows_with_the_same_key():
    old = one_issue("a")
    new = load("ingest_issues").table_from_rows(
        [
            {"path": "a.txt", "line": 1, "severity": "warning", "code": "x", "message": "a"},
            {"path": "b.txt", "line": None, "severity": "error", "code": "y", "message": "b"},
        ]
    )
    assert snapshot.merge("ingest_issues", old, new).num_rows == 2


def test_old_versions_upgrade_through_registered_migrations(store, monkeypatch):
    table = load("ingest_issues").table_from_rows(
        [{"path": "a.txt", "line": 1, "severity": "warning", "code": "x", "message": "m"}]
    )
    old = table.replace_schema_metadata({"schema_version": "0"})
    with pytest.raises(StoreError, match="no migration"):
        migrations.upgrade("ingest_issues", old, 1)

    def upper_codes(t: pa.Table) -> pa.Table:
        return t.set_column(3, "code", pa.array([c.upper() for c in t.column("code").to_pylist()]))

    monkeypatch.setitem(migrations.MIGRATIONS, ("ingest_issues", 0), upper_codes)
    upgraded = migrations.upgrade("ingest_issues", old, 1)
    assert migrations.stored_version(upgraded) == 1
    assert upgraded.column("code").to_pylist() == ["X"]
    with pytest.raises(StoreError, match="newer"):
        migrations.upgrade(
            "ingest_issues", table.replace_schema_metadata({"schema_version": "7"}), 1
        )


def test_kill_9_during_writes_leaves_a_readable_store(store, tmp_path):
    snapshot.write(
        store, snapshot.Snapshot(dict(snapshot.empty().tables, ingest_issues=one_issue("kept")))
    )
    script = tmp_path / "writer.py"
    script.write_text(
        textwrap.dedent(f"""
        import pyarrow as pa
        from collector.store import snapshot
        from collector.store.schemas import load
        rows = [{{"path": f"p{{i}}", "line": i, "severity": "warning", "code": "c",
                 "message": "m" * 200}} for i in range(200_000)]
        big = load("ingest_issues").table_from_rows(rows)
        print("ready", flush=True)
        while True:
            snapshot.write(__import__("pathlib").Path({str(store)!r}),
                           snapshot.Snapshot(dict(snapshot.empty().tables, ingest_issues=big)))
    """)
    )
    for delay in (0.05, 0.3, 0.9):
        proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE)
        assert proc.stdout.readline().strip() == b"ready"
        time.sleep(delay)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        snap = snapshot.read(store)  # must open and query whatever the kill interrupted
        assert snap["ingest_issues"].num_rows in (1, 200_000)
