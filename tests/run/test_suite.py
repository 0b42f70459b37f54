from pathlib import Path

import pytest
import yaml

from collector.errors import RunError
from collector.run.suite import BENCHMARKS, SUITES_DIR, load_suite


def test_v05_has_seven_benchmarks_with_mlperf_targets():
    suite = load_suite("v0.5")
    assert list(suite.benchmarks) == list(BENCHMARKS)
    full = {b: s.scales["full"].target for b, s in suite.benchmarks.items()}
    assert full == {
        "resnet": 0.749,
        "ssd": 0.212,
        "maskrcnn": 0.377,
        "gnmt": 21.8,
        "transformer": 25.0,
        "ncf": 0.635,
        "minigo": 0.40,
    }
    runs = {b: s.scales["full"].runs for b, s in suite.benchmarks.items()}
    assert (
        runs["resnet"] == 5 and runs["gnmt"] == 10 and runs["ncf"] == 100 and runs["minigo"] == 20
    )
    assert all(s.scales["tiny"].runs >= 3 for s in suite.benchmarks.values())


def _write(tmp_path: Path, mutate) -> Path:
    data = yaml.safe_load((SUITES_DIR / "v0.5.yml").read_text())
    mutate(data)
    path = tmp_path / "bad.yml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d["benchmarks"]["resnet"].pop("tiny"), "benchmarks.resnet: missing key 'tiny'"),
        (
            lambda d: d["benchmarks"]["ssd"]["small"].update(target="high"),
            "ssd.small.target: expected",
        ),
        (lambda d: d["benchmarks"].update(bert=d["benchmarks"]["ncf"]), "benchmarks.bert: unknown"),
        (lambda d: d["benchmarks"]["ncf"]["runs"].update(full=0), "must be >= 1"),
        (
            lambda d: d["benchmarks"]["gnmt"]["tiny"]["params"].pop("batch_size"),
            "missing key 'batch_size'",
        ),
    ],
)
def test_bad_suite_files_name_the_field(tmp_path, mutate, message):
    with pytest.raises(RunError, match=message.replace("(", r"\(").replace(".", r"\.")):
        load_suite(str(_write(tmp_path, mutate)))


def test_unknown_suite_and_invalid_yaml(tmp_path):
    with pytest.raises(RunError, match="unknown suite 'v9'"):
        load_suite("v9")
    bad = tmp_path / "x.yml"
    bad.write_text("suite: [unclosed")
    with pytest.raises(RunError, match="not valid YAML"):
        load_suite(str(bad))
