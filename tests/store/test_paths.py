"""Which store a command uses when it names none: a checkout stays as it was cloned."""

from __future__ import annotations

from pathlib import Path

import pytest

from collector import store as stores
from collector.store import snapshot


@pytest.fixture
def clone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory with a shipped store of one snapshot, as a fresh clone has."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("COLLECTOR_STORE", raising=False)
    monkeypatch.delenv("COLLECTOR_DATA", raising=False)
    snapshot.write(Path("runs/warehouse"), snapshot.empty())
    return tmp_path


def test_reading_uses_the_shipped_store_and_writes_nothing(clone: Path):
    assert stores.resolve(None) == Path("runs/warehouse")
    assert not (clone / ".collector").exists()


def test_the_first_write_copies_the_shipped_store_to_the_working_store(clone: Path):
    path = stores.resolve(None, writing=True)
    assert path == Path(".collector/store")
    assert snapshot.read(path).name == snapshot.read(Path("runs/warehouse")).name
    snapshot.write(path, snapshot.empty())
    assert snapshot.read(Path("runs/warehouse")).name == "snap-000001"
    assert stores.resolve(None) == path  # readers follow the working store from then on


def test_a_named_store_or_the_environment_wins(clone: Path, monkeypatch: pytest.MonkeyPatch):
    assert stores.resolve("elsewhere", writing=True) == Path("elsewhere")
    monkeypatch.setenv("COLLECTOR_STORE", "env-store")
    assert stores.resolve(None, writing=True) == Path("env-store")
    assert not (clone / ".collector").exists()


def test_without_shipped_data_the_working_store_starts_empty(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("COLLECTOR_STORE", raising=False)
    assert stores.resolve(None, writing=True) == Path(".collector/store")
    assert snapshot.read(Path(".collector/store")).name is None


def test_a_damaged_shipped_store_is_never_copied_to_the_working_store(clone: Path):
    import pytest

    from collector.errors import StoreError

    live = Path("runs/warehouse/snap-000001")
    (live / "runs.parquet").write_bytes(b"forged")
    with pytest.raises(StoreError, match="runs.parquet: does not match manifest.json"):
        stores.resolve(None, writing=True)
    assert not (clone / ".collector" / "store").exists()
    assert [p.name for p in (clone / ".collector").iterdir()] == []
