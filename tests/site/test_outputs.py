"""`collector site --out` and `mkdocs build` write only inside the folder asked for and delete
only the files collector wrote there and recorded, unchanged since."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from collector import site
from collector.errors import InputError
from collector.site.build import Result


def result(files: dict[str, bytes]) -> Result:
    return Result("snap-000001", files, ())


@pytest.fixture
def out(tmp_path: Path) -> Path:
    folder = tmp_path / "out"
    site.write(result({"index.md": b"# Home\n", "data/runs.csv": b"a\n"}), folder)
    return folder


@pytest.mark.parametrize(
    "record",
    [
        ["../victim.txt", "mine.md"],  # the record of older versions: a plain list
        {"written_by": "collector site", "files": {"../victim.txt": "0" * 64}},
        {"written_by": "collector site", "files": {"/tmp/victim.txt": "0" * 64}},
        {"written_by": "someone", "files": {"mine.md": "0" * 64}},
    ],
)
def test_a_planted_record_deletes_nothing(out: Path, tmp_path: Path, record: object):
    victim = tmp_path / "victim.txt"
    victim.write_text("mine")
    (out / "mine.md").write_text("mine")
    (out / ".generated.json").write_text(json.dumps(record))
    site.write(result({"index.md": b"# Home\n"}), out)
    assert victim.read_text() == "mine" and (out / "mine.md").read_text() == "mine"


def test_a_file_changed_since_it_was_written_is_kept(out: Path):
    (out / "data" / "runs.csv").write_text("edited by hand\n")
    site.write(result({"index.md": b"# Home\n"}), out)
    assert (out / "data" / "runs.csv").read_text() == "edited by hand\n"


def test_a_file_no_longer_generated_is_removed(out: Path):
    site.write(result({"index.md": b"# Home\n"}), out)
    assert not (out / "data" / "runs.csv").exists()
    record = json.loads((out / ".generated.json").read_text())
    assert record == {
        "written_by": "collector site",
        "files": {"index.md": hashlib.sha256(b"# Home\n").hexdigest()},
    }


def test_links_planted_in_the_output_are_replaced_not_written_through(out: Path, tmp_path: Path):
    victim = tmp_path / "victim.txt"
    victim.write_text("mine")
    (out / "index.md").unlink()
    (out / "index.md").symlink_to(victim)
    site.write(result({"index.md": b"# Home\n"}), out)
    assert victim.read_text() == "mine"
    assert not (out / "index.md").is_symlink() and (out / "index.md").read_text() == "# Home\n"


def test_a_linked_subfolder_is_refused(out: Path, tmp_path: Path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (out / "data" / "runs.csv").unlink()
    (out / "data").rmdir()
    (out / "data").symlink_to(elsewhere)
    with pytest.raises(InputError, match="data: not a folder of .* \\(a link or a file\\)"):
        site.write(result({"data/runs.csv": b"a\n"}), out)
    assert list(elsewhere.iterdir()) == []


def test_an_output_folder_that_is_a_link_is_refused(tmp_path: Path):
    target = tmp_path / "target"
    target.mkdir()
    (tmp_path / "link").symlink_to(target)
    with pytest.raises(InputError, match="link: a symbolic link; give the folder it leads to"):
        site.write(result({"index.md": b"x"}), tmp_path / "link")
    assert list(target.iterdir()) == []


def test_a_store_or_the_static_sources_are_refused(tmp_path: Path):
    from collector.store import snapshot

    store = tmp_path / "store"
    snapshot.write(store, snapshot.empty())
    for folder in (store, store / "snap-000001", store / "pages"):
        with pytest.raises(InputError, match="inside the store"):
            site.write(result({"index.md": b"x"}), folder)
    static = tmp_path / "site_src"
    static.mkdir()
    (static / "about.md").write_text("# About\n")
    with pytest.raises(InputError, match="inside the static sources"):
        site.write(result({"index.md": b"x"}), static, static)
    assert sorted(p.name for p in static.iterdir()) == ["about.md"]


def test_generated_names_that_are_not_plain_paths_are_refused(tmp_path: Path):
    with pytest.raises(InputError, match="not a plain path"):
        site.write(result({"../escape.md": b"x"}), tmp_path / "out")
    assert not (tmp_path / "escape.md").exists()


def test_a_static_source_linking_out_is_not_published(tmp_path: Path):
    secret = tmp_path / "secret.txt"
    secret.write_text("hunter2")
    static = tmp_path / "site_src"
    static.mkdir()
    (static / "about.md").write_text("# About\n")
    (static / "leak.md").symlink_to(secret)
    written = site.write(result({}), tmp_path / "out", static)
    assert written == ["about.md"]


def test_mkdocs_build_from_a_damaged_store_stops_with_one_line(
    small_store: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str]
):
    import shutil
    import subprocess

    from tests.site.conftest import build_site

    store = tmp_path / "store"
    shutil.copytree(small_store, store)
    live = store / (store / "CURRENT").read_text().strip()
    (live / "runs.parquet").write_bytes(b"PAR1 truncated")
    (tmp_path / "build").mkdir()
    with pytest.raises(subprocess.CalledProcessError):
        build_site(store, tmp_path / "build")
    err = capfd.readouterr().err
    assert "Traceback" not in err
    assert "runs.parquet: does not match manifest.json" in err
