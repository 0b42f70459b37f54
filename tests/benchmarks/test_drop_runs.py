import shutil
import sys
from pathlib import Path

import pytest

import collector

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from drop_runs import drop  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "logs"


def stored_logs(store: Path) -> list[str]:
    with collector.open(store) as wh:
        return sorted(r[0] for r in wh.sql("SELECT log_path FROM store.runs").fetchall())


def ingested(tmp_path: Path, names: tuple[str, ...]) -> tuple[Path, Path]:
    """A folder of copies of the fixture logs `names` and a store they were ingested into."""
    logs = tmp_path / "logs"
    logs.mkdir()
    for name in names:
        shutil.copy(FIXTURES / name, logs / name)
    store = tmp_path / "store"
    with collector.open(store) as wh:
        wh.ingest([logs])
    return logs, store


def test_a_dropped_run_leaves_every_table_and_can_be_ingested_again(tmp_path):
    logs, store = ingested(tmp_path, ("v05_resnet.txt", "v06_ssd.txt"))
    before = stored_logs(store)
    gone = next(p for p in before if p.endswith("v05_resnet.txt"))
    removed = drop(store, [gone])
    assert removed["runs"] == 1 and removed["events"] > 0
    assert stored_logs(store) == [p for p in before if p != gone]
    with collector.open(store) as wh:
        joined = "SELECT count(*) FROM store.events JOIN store.runs USING (run_id)"
        assert wh.sql(joined).fetchall() == wh.sql("SELECT count(*) FROM store.events").fetchall()
        wh.ingest([logs])  # the path is new to the store again
    assert stored_logs(store) == before


def test_a_path_no_run_has_is_refused_and_nothing_is_written(tmp_path):
    store = tmp_path / "store"
    with collector.open(store) as wh:
        wh.ingest([FIXTURES / "v05_resnet.txt"])
        live = wh.snapshot
    with pytest.raises(SystemExit, match="no stored run has the log nope.txt"):
        drop(store, ["nope.txt"])
    with collector.open(store) as wh:
        assert wh.snapshot == live


def test_the_issues_of_a_file_read_again_go_with_the_runs(tmp_path):
    _, store = ingested(tmp_path, ("v05_resnet.txt", "truncated.txt"))
    issues = "SELECT DISTINCT path FROM store.ingest_issues ORDER BY path"
    with collector.open(store) as wh:
        before = [r[0] for r in wh.sql(issues).fetchall()]
    broken = next(p for p in before if p.endswith("truncated.txt"))
    resnet = next(p for p in stored_logs(store) if p.endswith("v05_resnet.txt"))
    removed = drop(store, [resnet], issues_of=(broken,))
    assert removed["ingest_issues"] > 0
    with collector.open(store) as wh:
        assert [r[0] for r in wh.sql(issues).fetchall()] == [p for p in before if p != broken]
