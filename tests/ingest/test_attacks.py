"""Hostile result trees: every file read is a regular file inside the tree and within its
limit, every bad file is one issue naming it, values outside their column's units and ranges
are issues (never a silent 0 or 1), and the rest of the tree is stored."""

from __future__ import annotations

import contextlib
import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from collector.ingest.check import check
from collector.ingest.pipeline import IngestReport, ingest
from collector.store import snapshot
from tests.conftest import LOGS, v06_tree

SSD = "training_results_v0.7/Acme/results/node4/ssd"
DESCRIPTION = "training_results_v0.7/Acme/systems/node4.json"


class Hang(BaseException):
    """Raised in a call that blocks; not an OSError, which ingest would take for a read error."""


@contextlib.contextmanager
def within(seconds: int) -> Iterator[None]:
    """Fail, rather than hang the suite, where a read blocks (a FIFO) or never ends."""

    def expire(*_: object) -> None:
        raise Hang(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def ingested(root: Path, store: Path) -> tuple[IngestReport, list[dict]]:
    with within(60):
        report = ingest([root / "training_results_v0.7"], store=store)
    return report, snapshot.read(store)["runs"].to_pylist()


def codes(report: IngestReport) -> dict[str, str]:
    return {i.path: i.code for i in report.issues}


def messages(report: IngestReport) -> list[str]:
    return [str(i) for i in report.issues]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A v0.7 tree of two systems: node4 (the one attacked) and node8 (which must be stored
    whatever node4 holds)."""
    root = v06_tree(tmp_path / "in")
    good = root / "training_results_v0.7/Acme/results/node8/ssd"
    good.mkdir(parents=True)
    log = (LOGS / "v06_ssd.txt").read_bytes()
    (good / "result_0.txt").write_bytes(log + b"other run\n")
    (root / DESCRIPTION).with_name("node8.json").write_text(
        json.dumps({"system_name": "node8", "accelerators_per_node": "8", "number_of_nodes": 1})
    )
    return root


def description(tree: Path, **fields: object) -> None:
    doc = {"system_name": "node4", "accelerator_model_name": "Tesla V100-PCIe-32GB", **fields}
    (tree / DESCRIPTION).write_text(json.dumps(doc))


@pytest.mark.parametrize(
    "name", [DESCRIPTION, f"{SSD}/scaling.json", f"{SSD}/result_0.telemetry.csv"]
)
def test_a_fifo_where_a_file_is_read_is_an_issue_not_a_hang(tree: Path, store: Path, name: str):
    path = tree / name
    path.unlink(missing_ok=True)
    os.mkfifo(path)
    report, runs = ingested(tree, store)
    assert len(runs) == 2
    assert any("not a regular file" in m and name in m for m in messages(report))


def test_a_link_to_a_device_is_refused_without_reading_it(tree: Path, store: Path):
    (tree / DESCRIPTION).unlink()
    (tree / DESCRIPTION).symlink_to("/dev/zero")  # took 3.7 GB in seconds
    report, runs = ingested(tree, store)
    assert codes(report)[DESCRIPTION] == "outside-tree"
    assert len(runs) == 2


def test_links_leading_out_of_the_tree_are_not_read(tree: Path, store: Path, tmp_path: Path):
    secret = tmp_path / "secret.json"
    secret.write_text('{"system_name": "node4", "password": "hunter2"}')
    (tree / DESCRIPTION).unlink()
    (tree / DESCRIPTION).symlink_to(secret)
    outside_log = tmp_path / "outside.txt"
    outside_log.write_bytes((LOGS / "v06_ssd.txt").read_bytes() + b"hunter2\n")
    (tree / SSD / "result_1.txt").symlink_to(outside_log)
    inside = tree / SSD / "result_2.txt"
    inside.symlink_to(tree / "training_results_v0.7/Acme/results/node8/ssd/result_0.txt")
    report, runs = ingested(tree, store)
    assert codes(report)[DESCRIPTION] == "outside-tree"
    assert codes(report)[f"{SSD}/result_1.txt"] == "outside-tree"
    assert sorted(f"{r['system']}/{r['run']}" for r in runs) == [
        "node4/0",
        "node4/2",  # a link inside the tree is read
        "node8/0",
    ]
    systems = snapshot.read(store)["systems"].to_pylist()
    assert not any("hunter2" in str(s) for s in systems)


@pytest.mark.parametrize(
    "doc",
    ["[" * 100_000 + "]" * 100_000, '{"a": ' * 50 + "1" + "}" * 50, '{"x": 1e999999}'],
)
def test_a_deeply_nested_or_huge_description_is_one_issue(tree: Path, store: Path, doc: str):
    (tree / DESCRIPTION).write_text(doc)
    report, runs = ingested(tree, store)
    assert len(runs) == 2
    if "1e999999" not in doc:
        assert codes(report)[DESCRIPTION] == "bad-description"


def test_a_deeply_nested_value_in_a_log_is_a_warning_and_the_run_is_stored(tree: Path, store: Path):
    deep = "[" * 5000 + "]" * 5000
    log = tree / SSD / "result_0.txt"
    lines = log.read_text().splitlines()
    lines.insert(2, f':::MLL 1558640437.150 eval_target: {{"value": {deep}}}')
    lines.insert(3, f":::MLL 1558640437.160 submission_org: {deep}")
    log.write_text("\n".join(lines) + "\n")
    report, runs = ingested(tree, store)
    assert len(runs) == 2
    assert any("nested deeper" in m for m in messages(report))


def test_an_impossible_date_in_the_mlperf_format_is_a_warning(tmp_path: Path, store: Path):
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "result_0.log").write_text(
        "MLPerf: ssd [13/45/19 00:30:56], run_start\nMLPerf: ssd [06/13/19 01:30:56], run_stop\n"
    )
    (folder / "result_1.txt").write_bytes((LOGS / "v06_ssd.txt").read_bytes())
    with within(60):
        report = ingest([folder], store=store)
    assert any("impossible dates, first '13/45/19 00:30:56'" in m for m in messages(report))
    runs = snapshot.read(store)["runs"].to_pylist()
    assert sorted(r["status"] for r in runs) == ["incomplete", "success"]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("accelerators_per_node", "eight"),
        ("accelerators_per_node", -8),
        ("accelerators_per_node", True),
        ("accelerators_per_node", "1e12"),
        ("accelerators_per_node", 1e30),
        ("accelerators_per_node", "9" * 400),
        ("number_of_nodes", 10**400),
        ("number_of_nodes", "2.5"),
        ("accelerator_memory_capacity", "-32 GB"),
        ("accelerator_memory_capacity", "2x 24 GB"),
        ("host_memory_capacity", 0),
    ],
)
def test_values_outside_their_units_and_ranges_are_issues_never_0_or_1(
    tree: Path, store: Path, field: str, value: object
):
    description(tree, **{"accelerators_per_node": 4, "number_of_nodes": 1, field: value})
    report, runs = ingested(tree, store)
    (issue,) = [i for i in report.issues if i.path == DESCRIPTION]
    assert issue.code == "bad-value" and issue.message.startswith(f"{field}: ")
    (system,) = [s for s in snapshot.read(store)["systems"].to_pylist() if "node4" in s["system"]]
    column = {
        "accelerators_per_node": "accelerators_per_node",
        "number_of_nodes": "nodes",
        "accelerator_memory_capacity": "accelerator_memory_gib",
        "host_memory_capacity": "host_memory_gib",
    }[field]
    assert system[column] is None
    assert len(runs) == 2


def test_a_memory_size_and_counts_as_published_still_read(tree: Path, store: Path):
    description(
        tree,
        accelerators_per_node="8",
        number_of_nodes=1.0,
        accelerator_memory_capacity="81559 MiB",
        host_memory_capacity="2.0 TB",
        host_processor_core_count="N/A",
    )
    report, _ = ingested(tree, store)
    assert DESCRIPTION not in codes(report)
    (system,) = [s for s in snapshot.read(store)["systems"].to_pylist() if "node4" in s["system"]]
    assert (system["accelerators"], system["nodes"], system["host_memory_gib"]) == (8, 1, 2048.0)
    assert round(system["accelerator_memory_gib"], 2) == 79.65


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (b'{"scaling_factor": Infinity}', "not a finite positive number"),
        (b'{"scaling_factor": 1e999}', "not a finite positive number"),
        (b'{"scaling_factor": 0}', "not a finite positive number"),
        (b'{"scaling_factor": "2"}', "not a finite positive number"),
        (b'{"scaling_factor": 1.5}\xff\xfe', "not UTF-8"),
        (b"[" * 10_000, "not JSON"),
    ],
)
def test_a_scaling_factor_that_is_not_finite_and_positive_is_an_issue(
    tree: Path, store: Path, content: bytes, why: str
):
    (tree / SSD / "scaling.json").write_bytes(content)
    report, runs = ingested(tree, store)
    (issue,) = [i for i in report.issues if i.path.endswith("scaling.json")]
    assert why in issue.message
    assert [r["rcp_scaling_factor"] for r in runs] == [None, None]


@pytest.mark.parametrize("accuracy", ["Infinity", "NaN", "1e999", "-Infinity"])
def test_an_accuracy_that_is_not_finite_never_marks_a_success(
    tmp_path: Path, store: Path, accuracy: str
):
    log = (LOGS / "v06_ssd.txt").read_text().replace('"value": 0.231', f'"value": {accuracy}')
    target = ':::MLL 1558640437.150 eval_target: {"value": 0.212}\n'
    log = log.replace(":::MLL 1558640437.200", target + ":::MLL 1558640437.200")
    (tmp_path / "result_0.txt").write_text(log)
    with within(60):
        report = ingest([tmp_path / "result_0.txt"], store=store)
    (run,) = snapshot.read(store)["runs"].to_pylist()
    assert run["status"] == "failed"
    assert run["quality_best"] == 0.19
    assert any("no finite number" in m for m in messages(report))


def test_type_confused_fields_of_a_local_run_are_issues(tmp_path: Path, store: Path):
    log = (LOGS / "mllog_local.txt").read_text()
    start = log.index('"value": {"suite"')
    end = log.index(', "metadata"', start)
    value = {"suite": "v0.5", "scale": "tiny", "benchmark": "ncf", "precision": "fp32"}
    value |= {"accelerator": {"name": "x"}, "accelerators": "eight", "nodes": -1}
    (tmp_path / "result_0.txt").write_text(f'{log[:start]}"value": {json.dumps(value)}{log[end:]}')
    with within(60):
        report = ingest([tmp_path / "result_0.txt"], store=store)
    (run,) = snapshot.read(store)["runs"].to_pylist()
    assert (run["accelerator"], run["accelerators"], run["nodes"]) == (None, None, None)
    shown = messages(report)
    assert any("collector_run accelerators 'eight' is not a count" in m for m in shown)
    assert any("collector_run accelerator {'name': 'x'} is not text" in m for m in shown)


def test_a_file_over_its_limit_is_refused_before_it_is_read(
    tree: Path, store: Path, monkeypatch: pytest.MonkeyPatch
):
    from collector.ingest import files

    monkeypatch.setitem(files.LIMITS, "log", 400)
    report, runs = ingested(tree, store)
    assert codes(report)[f"{SSD}/result_0.txt"] == "too-large"
    assert "over the 400 bytes limit" in messages(report)[0]


def test_names_with_newlines_and_bytes_that_are_not_utf8_are_stored_escaped(
    tmp_path: Path, store: Path
):
    folder = tmp_path / "logs"
    folder.mkdir()
    data = (LOGS / "v06_ssd.txt").read_bytes()
    (folder / "result\n_0.txt").write_bytes(data + b"1\n")
    os.mkdir(os.fsencode(folder) + b"/sys\xff\x1b[2J")
    (Path(os.fsdecode(os.fsencode(folder) + b"/sys\xff\x1b[2J")) / "result_1.txt").write_bytes(
        data + b"2\n"
    )
    with within(60):
        ingest([folder], store=store)
    paths = sorted(r["log_path"] for r in snapshot.read(store)["runs"].to_pylist())
    assert paths == ["logs/result\\n_0.txt", "logs/sys\\xff\\x1b[2J/result_1.txt"]
    with within(60):  # the same names again: known, nothing added
        assert ingest([folder], store=store).runs_added == 0


def test_a_bad_published_study_file_is_an_issue_and_the_logs_are_stored(
    tmp_path: Path, store: Path
):
    from collector.ingest.published import HEADER

    studies = tmp_path / "published"
    studies.mkdir()
    (studies / "a.csv").write_text(",".join(HEADER) + "\n" + ",".join(["x"] * len(HEADER)) + "\n")
    with within(60):
        report = ingest([studies, LOGS / "v06_ssd.txt"], store=store)
    assert codes(report) == {str(studies): "bad-published"}
    assert snapshot.read(store)["runs"].num_rows == 1


def test_check_refuses_what_ingest_refuses_and_goes_on(tree: Path, store: Path, tmp_path: Path):
    outside = tmp_path / "outside.txt"
    outside.write_bytes((LOGS / "v06_ssd.txt").read_bytes())
    (tree / SSD / "result_1.txt").symlink_to(outside)
    os.mkfifo(tree / SSD / "result_2.txt")
    deep = tree / "training_results_v0.7/Acme/results/node8/ssd/result_1.txt"
    deep.write_text(":::MLLOG " + "[" * 100_000 + "\n")
    skipped: list = []
    with within(120):
        verdicts = check([tree / "training_results_v0.7"], store=store, skipped=skipped)
    by_path = {v.log_path.split("/")[3] + "/" + v.log_path[-5:]: v for v in verdicts}
    assert sorted(by_path) == ["node4/0.txt", "node4/1.txt", "node8/0.txt", "node8/1.txt"]
    assert by_path["node4/1.txt"].first_failure == (
        "a link to a file outside the tree read: not read"
    )
    assert by_path["node8/1.txt"].verdict == "fail"
    assert by_path["node8/0.txt"].ruleset == "collector mlperf-v0.6"
    assert [(s.rel_path.rsplit("/", 1)[-1], s.code) for s in skipped] == [
        ("result_2.txt", "special-file")
    ]


def test_millions_of_lines_keep_their_numbers(tmp_path: Path, store: Path):
    lines = (LOGS / "v06_ssd.txt").read_bytes().splitlines(keepends=True)
    (tmp_path / "result_0.txt").write_bytes(b"\n" * 3_000_000 + b"".join(lines[:-1]) + lines[-1])
    with within(120):
        ingest([tmp_path / "result_0.txt"], store=store)
    (run,) = snapshot.read(store)["runs"].to_pylist()
    assert run["status"] == "success" and run["events"] == 6
    evals = snapshot.read(store)["evals"].column("line").to_pylist()
    assert evals == [3_000_004, 3_000_005]
