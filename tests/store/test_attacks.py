"""A store tampered with, damaged or full: readers and writers refuse it in one line naming
the file, and no writer deletes what it cannot prove is an old snapshot of the store."""

from __future__ import annotations

import errno
import json
import os
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from collector.errors import StoreError
from collector.ingest.pipeline import ingest
from collector.store import snapshot
from collector.store.schemas import load
from tests.conftest import LOGS


def issues(*messages: str) -> snapshot.Snapshot:
    rows = [
        {"path": f"{m}.txt", "line": 1, "severity": "warning", "code": "x", "message": m}
        for m in messages
    ]
    return snapshot.Snapshot(
        dict(snapshot.empty().tables, ingest_issues=load("ingest_issues").table_from_rows(rows))
    )


def folders(store: Path) -> list[str]:
    return sorted(p.name for p in store.iterdir() if p.name.startswith("snap-"))


@pytest.fixture
def two(store: Path) -> Path:
    """A store of two snapshots, the second live."""
    snapshot.write(store, issues("a"))
    snapshot.write(store, issues("a", "b"))
    return store


@pytest.mark.parametrize(
    "pointer",
    [
        "snap-000002/",  # a trailing slash: the next ingest deleted every snapshot
        "snap-000002/../snap-000001",
        "snap-000001/../../x/snap-000001",  # read another folder
        " snap-000002",
        "snap-000002\n\n",
        "snap-2",
        "/tmp",
        "..",
    ],
)
def test_current_is_only_an_exact_snapshot_name_and_a_writer_then_deletes_nothing(
    two: Path, pointer: str
):
    (two / "CURRENT").write_text(pointer)
    with pytest.raises(StoreError, match="CURRENT: .* is not a snapshot name"):
        snapshot.read(two)
    with pytest.raises(StoreError, match="CURRENT"):
        snapshot.write(two, issues("c"))
    assert folders(two) == ["snap-000001", "snap-000002"]


def test_current_that_is_not_text_or_not_a_file_is_one_line(two: Path):
    (two / "CURRENT").write_bytes(b"\xff\xfesnap")
    with pytest.raises(StoreError, match="is not a snapshot name"):
        snapshot.read(two)
    (two / "CURRENT").unlink()
    os.mkfifo(two / "CURRENT")  # would block a reader for ever
    with pytest.raises(StoreError, match="CURRENT: not a regular file"):
        snapshot.read(two)
    (two / "CURRENT").unlink()
    (two / "CURRENT").symlink_to(two / "snap-000001" / "manifest.json")
    with pytest.raises(StoreError, match="symbolic link"):
        snapshot.read(two)


def test_a_missing_table_file_is_refused_never_read_as_empty(tmp_path: Path):
    store = tmp_path / "store"
    ingest([LOGS / "v05_resnet.txt"], store=store)
    live = store / snapshot.current_name(store)
    (live / "runs.parquet").unlink()
    with pytest.raises(StoreError, match=r"runs.parquet: missing from its snapshot"):
        snapshot.read(store)
    with pytest.raises(StoreError, match=r"runs.parquet: missing"):  # nothing committed
        ingest([LOGS / "v06_ssd.txt"], store=store)
    assert folders(store) == [live.name]


def test_a_table_file_rewritten_with_forged_rows_is_refused(two: Path):
    path = two / "snap-000002" / "ingest_issues.parquet"
    forged = pq.read_table(path)
    forged = forged.set_column(4, "message", pa.array(["forged", "rows"]))
    pq.write_table(forged, path)  # same schema, metadata and row count
    with pytest.raises(StoreError, match="ingest_issues.parquet: does not match manifest.json"):
        snapshot.read(two)
    import collector

    with pytest.raises(StoreError, match="does not match"), collector.open(two) as wh:
        wh.sql("SELECT * FROM store.ingest_issues").fetchall()


def test_a_truncated_table_file_is_one_line(two: Path):
    from collector.store.verify import verify_store

    path = two / "snap-000002" / "ingest_issues.parquet"
    path.write_bytes(path.read_bytes()[:100])
    with pytest.raises(StoreError, match="ingest_issues.parquet: does not match"):
        snapshot.read(two)
    findings = verify_store(two)
    assert [f.path for f in findings if f.problem] == [str(two / "snap-000002")]


@pytest.mark.parametrize(
    "doc",
    [
        "not json",
        '{"snapshot": "snap-000009", "tables": {}}',
        '{"snapshot": "snap-000002", "format": 2, "tables": {"../../x": {}}}',
        '{"snapshot": "snap-000002", "format": 2, "tables": {"runs": {"rows": -1}}}',
        "[" * 100_000,
    ],
)
def test_a_manifest_that_is_not_one_is_refused(two: Path, doc: str):
    (two / "snap-000002" / "manifest.json").write_text(doc)
    with pytest.raises(StoreError, match="snap-000002/manifest.json: "):
        snapshot.read(two)


def test_a_snapshot_folder_that_is_a_link_is_refused(two: Path, tmp_path: Path):
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(two / "snap-000002", elsewhere / "snap-000003")
    (two / "snap-000003").symlink_to(elsewhere / "snap-000003")
    (two / "CURRENT").write_text("snap-000003\n")
    with pytest.raises(StoreError, match="missing snapshot"):
        snapshot.read(two)


def test_a_writer_deletes_only_what_it_proves_are_old_snapshots(two: Path, tmp_path: Path):
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("mine")
    (two / "snap-000000").symlink_to(victim)  # a link under an old snapshot's name
    planted = two / ".snap-000001.abcdefgh"  # a staging folder's name on someone's files
    planted.mkdir()
    (planted / "notes.txt").write_text("mine")
    unmanifested = two / "snap-000001x"
    unmanifested.mkdir()
    for _ in range(snapshot.KEEP + 1):
        snapshot.write(two, issues("c"))
    assert (victim / "keep.txt").read_text() == "mine"
    assert (planted / "notes.txt").read_text() == "mine"
    assert unmanifested.is_dir()
    assert folders(two) == [
        "snap-000000",
        "snap-000001x",
        "snap-000004",
        "snap-000005",
        "snap-000006",
    ]


def test_a_snapshot_never_made_live_is_kept_until_it_is_old(two: Path):
    from collector.store import manifest

    shutil.copytree(two / "snap-000002", two / "snap-000003")
    manifest.write(two / "snap-000003", manifest.encode("snap-000003", {}))
    assert snapshot.write(two, issues("c")) == "snap-000004"
    assert folders(two) == ["snap-000002", "snap-000003", "snap-000004"]


def test_links_planted_for_the_writer_are_not_followed(two: Path, tmp_path: Path):
    victim = tmp_path / "victim.txt"
    victim.write_text("mine")
    (two / ".CURRENT.tmp").symlink_to(victim)
    snapshot.write(two, issues("c"))
    (two / "LOCK").unlink()
    (two / "LOCK").symlink_to(victim)
    with pytest.raises(StoreError, match="LOCK: cannot open the writer lock"):
        snapshot.write(two, issues("d"))
    assert victim.read_text() == "mine"


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS, errno.EACCES])
def test_a_full_or_read_only_file_system_is_one_line_and_leaves_no_staging(
    two: Path, monkeypatch: pytest.MonkeyPatch, code: int
):
    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(pq, "write_table", refuse)
    why = os.strerror(code)
    with pytest.raises(StoreError, match=rf"store: cannot write a snapshot \({why}\); snap-000002"):
        snapshot.write(two, issues("c"))
    assert sorted(p.name for p in two.iterdir()) == [
        "CURRENT",
        "LOCK",
        "snap-000001",
        "snap-000002",
    ]
    assert snapshot.read(two)["ingest_issues"].num_rows == 2


def test_a_manifest_without_checksums_is_checked_by_rows_then_sealed(two: Path):
    from collector.store import manifest
    from collector.store.verify import verify_store

    folder = two / "snap-000002"
    old = json.loads((folder / "manifest.json").read_text())
    old.pop("format")
    for entry in old["tables"].values():
        entry.pop("bytes"), entry.pop("sha256")
    (folder / "manifest.json").write_text(json.dumps(old))
    assert snapshot.read(two)["ingest_issues"].num_rows == 2
    finding = [f for f in verify_store(two) if f.path == str(folder)][0]
    assert not finding.problem and "no checksums" in finding.message
    sealed = [f for f in verify_store(two, upgrade=True) if f.path == str(folder)][0]
    assert "checksums added" in sealed.message
    assert manifest.load(folder)[0] == manifest.FORMAT
    old["tables"]["ingest_issues"]["rows"] = 3  # a format-1 manifest that does not match
    (folder / "manifest.json").write_text(json.dumps(old))
    with pytest.raises(StoreError, match="2 rows where manifest.json says 3"):
        snapshot.read(two)


def test_verify_reports_a_sound_store(two: Path):
    from collector.store.verify import verify_store

    findings = verify_store(two)
    assert [str(f) for f in findings] == [
        f"ok: {two / 'CURRENT'}: names snap-000002",
        f"ok: {two / 'snap-000001'}: snapshot: 13 tables, 1 rows, sizes and sha256 match",
        f"ok: {two / 'snap-000002'}: snapshot (live): 13 tables, 2 rows, sizes and sha256 match",
    ]


@pytest.mark.parametrize("inner", ["snap-000002/inner", "inner", "snap-000002"])
def test_a_store_inside_another_store_is_refused(two: Path, inner: str):
    with pytest.raises(StoreError, match="inside the store .*; a store cannot hold another"):
        snapshot.write(two / inner, issues("x"))
    assert snapshot.read(two)["ingest_issues"].num_rows == 2
    assert not (two / "inner").exists()
