"""Loading runs/published/*.csv into the published table and the store."""

from pathlib import Path

import pytest

from collector.errors import InputError
from collector.ingest.pipeline import ingest
from collector.ingest.published import (
    HEADER,
    is_published_folder,
    load_published,
    load_studies,
    qualifiers,
)
from collector.store import snapshot
from tests.conftest import sql

PUBLISHED = Path(__file__).resolve().parents[2] / "runs" / "published"


def write_csv(folder: Path, rows: list[list[str]], name: str = "x.csv") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    lines = [",".join(HEADER)] + [",".join(r) for r in rows]
    (folder / name).write_text("\r\n".join(lines) + "\r\n", encoding="utf-8")
    return folder


def row(row_id: str, metric: str = "epochs", value: str = "61", notes: str = "") -> list[str]:
    return [row_id, "s", "c", "DGX-1", "V100", "4", "1", "nvlink", "fp16", "", "resnet",
            metric, value, "epochs", "512", "", notes]  # fmt: skip


def test_qualifiers_are_the_leading_tags():
    assert qualifiers("[approx] [range min] Published as '~65%'") == "approx,range min"
    assert qualifiers("Published as [approx] later") is None
    assert qualifiers(None) is None


def test_load_types_and_keeps_the_text(tmp_path):
    folder = write_csv(tmp_path / "p", [row("a-1", value="22.0", notes="[recovered] x")])
    (got,) = load_published(folder).to_pylist()
    assert got["value"] == 22.0 and got["value_text"] == "22.0"
    assert got["accelerators"] == 4 and got["framework"] is None
    assert got["qualifiers"] == "recovered" and got["file"] == "x.csv"


def test_repeated_ids_and_bad_numbers_are_refused(tmp_path):
    with pytest.raises(InputError, match="repeated"):
        load_published(write_csv(tmp_path / "a", [row("a-1"), row("a-1")]))
    with pytest.raises(InputError, match="not a number"):
        load_published(write_csv(tmp_path / "b", [row("a-1", value="~3")]))


def test_the_shipped_csvs_load():
    table = load_published(PUBLISHED)
    assert table.num_rows == 255
    assert is_published_folder(PUBLISHED)
    assert not is_published_folder(PUBLISHED / "README.md")


def test_ingest_stores_published_and_keeps_it_across_log_ingests(tmp_path):
    store = tmp_path / "store"
    folder = write_csv(tmp_path / "p", [row("a-1")])
    ingest([folder], store=store)
    assert snapshot.read(store)["published"].num_rows == 1
    ingest([Path(__file__).parents[1] / "fixtures" / "logs"], store=store)
    assert snapshot.read(store)["published"].num_rows == 1
    assert sql(store, "SELECT count(*) AS n FROM store.published").to_pylist() == [{"n": 1}]


def test_every_shipped_study_is_described():
    studies = load_studies(PUBLISHED)
    cited = set(load_published(PUBLISHED).column("study").to_pylist())
    assert cited <= set(studies)
    assert studies["002_a24192ef58ce3fd5"]["date"] == "August 2018"


def test_a_study_description_missing_a_field_is_refused(tmp_path):
    (tmp_path / "studies.yml").write_text(
        "schema_version: 1\nstudies:\n  s1: {number: '1', kind: slides, title: T}\n"
    )
    with pytest.raises(InputError, match=r"studies.yml: study s1: authors, publisher, date"):
        load_studies(tmp_path)
    assert load_studies(tmp_path / "absent") == {}


def test_a_log_folder_with_an_unreadable_csv_is_read_as_logs(tmp_path):
    folder = tmp_path / "logs"
    folder.mkdir()
    log = Path(__file__).parents[1] / "fixtures" / "logs" / "v05_resnet.txt"
    (folder / "result_0.txt").write_bytes(log.read_bytes())
    (folder / "notes.csv").write_bytes(b"\xff\xfe garbage \x80\n")
    (tmp_path / "elsewhere.csv").write_text(",".join(HEADER) + "\n")
    (folder / "out.csv").symlink_to(tmp_path / "elsewhere.csv")  # a link out: not read
    assert not is_published_folder(folder)
    ingest([folder], store=tmp_path / "store")
    assert sql(tmp_path / "store", "SELECT count(*) AS n FROM store.runs").to_pylist() == [{"n": 1}]


def test_an_unreadable_csv_in_a_published_folder_is_an_issue(tmp_path):
    folder = write_csv(tmp_path / "p", [row("a-1")])
    (folder / "y.csv").write_bytes(b"\xff\xfe garbage \x80\n")
    report = ingest([folder], store=tmp_path / "store")
    assert [(i.path, i.code) for i in report.issues] == [(str(folder), "bad-published")]
    assert "y.csv: bytes that are not UTF-8" in report.issues[0].message
