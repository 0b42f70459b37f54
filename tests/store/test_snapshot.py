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


def test_write_swaps_atomically_and_keeps_the_last_few_snapshots(store):
    tables = snapshot.empty().tables
    names = [
        snapshot.write(store, snapshot.Snapshot(dict(tables, ingest_issues=one_issue(m))))
        for m in "abcde"
    ]
    assert names == [f"snap-00000{n}" for n in range(1, 6)]
    assert snapshot.read(store)["ingest_issues"].column("message").to_pylist() == ["e"]
    kept = sorted(p.name for p in store.glob("snap-*"))
    assert kept == names[-snapshot.KEEP :]


def test_a_snapshot_held_by_a_reader_is_not_removed(store):
    tables = snapshot.empty().tables
    snapshot.write(store, snapshot.Snapshot(dict(tables, ingest_issues=one_issue("old"))))
    with snapshot.Pin(store) as held:
        for m in "abcdef":
            snapshot.write(store, snapshot.Snapshot(dict(tables, ingest_issues=one_issue(m))))
        assert (store / held / "ingest_issues.parquet").exists()
    snapshot.write(store, snapshot.empty())
    assert not (store / held).exists()  # the next writer removes it once released


def test_leftovers_of_dead_writers_are_ignored_then_removed_once_old(store):
    snapshot.write(store, snapshot.empty())
    (store / ".snap-000002.abc_1234").mkdir()
    (store / ".snap-000002.abc_1234" / "runs.parquet").write_bytes(b"half")
    snapshot.write(store, snapshot.empty())
    (store / "CURRENT").write_text("snap-000001\n")  # snap-000002 renamed, never made live
    assert snapshot.read(store).name == "snap-000001"
    assert snapshot.write(store, snapshot.empty()) == "snap-000003"
    names = sorted(p.name for p in store.iterdir())
    assert names == ["CURRENT", "LOCK", "snap-000001", "snap-000002", "snap-000003"]
    snapshot.write(store, snapshot.empty())
    assert sorted(p.name for p in store.glob("snap-*")) == [
        "snap-000002",
        "snap-000003",
        "snap-000004",
    ]


def test_a_writer_waits_for_the_lock_then_gives_up_with_one_line(store, tmp_path):
    script = tmp_path / "holder.py"
    script.write_text(
        textwrap.dedent(f"""
        import pathlib, sys, time
        from collector.store import snapshot
        with snapshot.writing(pathlib.Path({str(store)!r})):
            print("holding", flush=True)
            sys.stdin.readline()
    """)
    )
    holder = subprocess.Popen(
        [sys.executable, str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    try:
        assert holder.stdout.readline().strip() == b"holding"
        told = []
        with (
            pytest.raises(StoreError, match="another writer still holds LOCK after 0.3 s"),
            snapshot.writing(store, wait_s=0.3, on_wait=told.append),
        ):
            pass
        assert told == [f"waiting up to 0.3 s for another writer of {store} to finish"]
    finally:
        holder.kill()  # a killed holder's lock is released by the kernel
        holder.wait()
    with snapshot.writing(store, wait_s=5):
        assert snapshot.write(store, snapshot.empty()) == "snap-000001"


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
