import pytest

from collector.errors import InputError
from collector.ingest.trees import find_logs
from tests.conftest import LOGS, v05_tree, v06_tree


def test_v05_layout_qualifies_reused_system_names(tmp_path):
    entries = find_logs([v05_tree(tmp_path / "t")])
    assert [(e.layout, e.round, e.submitter, e.system, e.benchmark, e.run) for e in entries] == [
        ("v0.5", "v0.5", "acme", "sub_a/box", "resnet", 0),
        ("v0.5", "v0.5", "acme", "sub_b/box", "resnet", 0),
    ]
    assert entries[0].description.name == "entry.json"
    assert entries[0].rel_path == "t/v0.5.0/acme/sub_a/results/box/resnet/result_0.txt"


def test_v06_layout_finds_the_system_json(tmp_path):
    (entry,) = find_logs([v06_tree(tmp_path / "t")])
    assert (entry.layout, entry.round, entry.submitter, entry.system) == (
        "v0.6+",
        "v0.7",
        "Acme",
        "node4",
    )
    assert entry.description.name == "node4.json"


def test_plain_files_and_folders(tmp_path):
    (entry,) = find_logs([LOGS / "v06_ssd.txt"])
    assert (entry.layout, entry.rel_path, entry.system) == ("plain", "v06_ssd.txt", None)
    folder = tmp_path / "mixed"
    folder.mkdir()
    (folder / "notes.txt").write_text("not a log")
    (folder / "a.log").write_text("anything with a .log suffix is taken")
    (folder / "run3.txt").write_bytes((LOGS / "v05_resnet.txt").read_bytes())
    assert [(e.rel_path, e.run) for e in find_logs([folder])] == [
        ("mixed/a.log", 0),
        ("mixed/run3.txt", 3),
    ]


def test_the_same_file_given_twice_is_found_once(tmp_path):
    assert len(find_logs([LOGS / "v06_ssd.txt", LOGS / "v06_ssd.txt"])) == 1


def test_a_wrong_path_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        find_logs([tmp_path / "nope"])
