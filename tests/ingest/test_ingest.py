import os
import re
import shutil
import socket
import time
from pathlib import Path

import pytest

from collector import store as stores
from collector.ingest.pipeline import ingest
from tests.conftest import FIXTURES, LOGS, sql, table, v05_tree, v06_tree


def test_trees_ingest_with_systems_joined(tmp_path, store):
    v05_tree(tmp_path / "a")
    v06_tree(tmp_path / "b")
    report = ingest([tmp_path / "a", tmp_path / "b"], store=store)
    assert (report.runs_added, report.systems, report.failed) == (3, 3, False)
    runs = {r["system_id"]: r for r in table(store, "runs").to_pylist()}
    assert set(runs) == {"v0.5/acme/sub_a/box", "v0.5/acme/sub_b/box", "v0.7/Acme/node4"}
    node4 = runs["v0.7/Acme/node4"]
    assert (node4["source"], node4["accelerators"], node4["interconnect"], node4["status"]) == (
        "official",
        4,
        "pcie",
        "success",
    )
    assert runs["v0.5/acme/sub_a/box"]["minutes"] == 5.0


def test_reingest_adds_nothing(tmp_path, store):
    v05_tree(tmp_path / "a")
    first = ingest([tmp_path / "a"], store=store)
    again = ingest([tmp_path / "a"], store=store)
    assert (first.runs_added, again.runs_added, again.runs_unchanged) == (2, 0, 2)
    assert table(store, "runs").num_rows == 2
    assert again.snapshot is None  # nothing new: the store is not rewritten


def test_bad_files_are_recorded_and_the_rest_goes_on(tmp_path, store):
    folder = tmp_path / "logs"
    folder.mkdir()
    for name in (
        "empty.txt",
        "binary.txt",
        "truncated.txt",
        "v05_resnet.txt",
        "backwards_latin1.txt",
        "unknown_key_float32.txt",
    ):
        shutil.copy(LOGS / name, folder / f"result_{name}")
    seen = []
    report = ingest([folder], store=store, on_issue=seen.append)
    assert report.failed
    assert report.runs_added == 4  # truncated and backwards runs are kept as incomplete
    issues = table(store, "issues").to_pylist()
    assert len(issues) == len(seen) == len(report.issues)
    errors = {(i["path"].split("/")[-1], i["code"]) for i in issues if i["severity"] == "error"}
    assert errors == {
        ("result_empty.txt", "empty"),
        ("result_binary.txt", "binary"),
        ("result_truncated.txt", "missing-run-stop"),
        ("result_backwards_latin1.txt", "clock-backwards"),
    }
    statuses = sorted(r["status"] for r in table(store, "runs").to_pylist())
    assert statuses == ["incomplete", "incomplete", "success", "success"]
    assert str(seen[0]).startswith(("error: logs/result_", "warning: logs/result_"))


def test_local_logs_are_labelled_local_with_their_configuration(tmp_path, store):
    ingest([LOGS / "mllog_local.txt"], store=store)
    (run,) = table(store, "runs").to_pylist()
    assert (
        run["source"],
        run["round"],
        run["submitter"],
        run["system"],
        run["precision"],
        run["scale"],
        run["accelerators"],
        run["benchmark"],
    ) == ("local", "v0.5", "testhost", "testhost_1xcpu_fp32_none", "fp32", "tiny", 0, "ncf")
    assert run["throughput_samples_per_s"] == 1100.0


def test_source_can_be_forced(store):
    ingest([LOGS / "v06_ssd.txt"], store=store, source="local")
    assert table(store, "runs").column("source").to_pylist() == ["local"]


def test_parallel_and_serial_ingest_agree(tmp_path):
    v05_tree(tmp_path / "a")
    v06_tree(tmp_path / "b")
    paths = [tmp_path / "a", tmp_path / "b", LOGS]
    ingest(paths, store=tmp_path / "s1", workers=1)
    from collector.ingest import pipeline as module

    old = module.PARALLEL_MIN_BYTES
    module.PARALLEL_MIN_BYTES = 0
    try:
        ingest(paths, store=tmp_path / "s2", workers=2)
    finally:
        module.PARALLEL_MIN_BYTES = old
    for name in ("runs", "issues", "systems"):
        assert table(tmp_path / "s1", name) == table(tmp_path / "s2", name)


def test_telemetry_beside_a_log_is_stored_and_its_bad_rows_reported(tmp_path, store):
    folder = tmp_path / "runs"
    shutil.copytree(FIXTURES / "telemetry", folder)
    csv = folder / "result_0.telemetry.csv"
    lines = csv.read_text().splitlines()
    lines[2] = "1.0,1,0,618.3"
    csv.write_text("\n".join(lines) + "\n")
    report = ingest([folder], store=store)
    assert (report.runs_added, report.failed) == (1, False)
    assert [str(i) for i in report.issues] == [
        "warning: runs/result_0.telemetry.csv:3: 4 fields where the header has 6"
    ]
    got = sql(
        store,
        "SELECT device, count(*) AS n, max(gpu_power_w) AS peak FROM store.telemetry "
        "JOIN store.runs USING (run_id) GROUP BY device ORDER BY device",
    ).to_pylist()
    assert got == [{"device": "0", "n": 16, "peak": 235.5}, {"device": "1", "n": 15, "peak": 182.4}]
    (power,) = table(store, "power").to_pylist()
    assert (power["devices_sampled"], power["aligned_by"]) == (2, "end of sampling")


def copy_of(log: Path, folder: Path, name: str, tail: str = "") -> Path:
    """`log` at folder/name, with a line appended (distinct bytes) when `tail` is given."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(log.read_bytes() + tail.encode())
    return folder / name


def test_byte_identical_logs_at_two_paths_are_two_runs_with_a_warning(tmp_path, store):
    for system in ("a", "b"):
        copy_of(LOGS / "v05_resnet.txt", tmp_path / "sub" / system, "result_0.txt")
    report = ingest([tmp_path / "sub"], store=store)
    assert (report.runs_added, report.failed) == (2, False)
    assert [str(i) for i in report.issues] == [
        "warning: sub/b/result_0.txt: same bytes as sub/a/result_0.txt; stored as a run of "
        "both paths"
    ]
    runs = sql(
        store,
        "SELECT log_path, run_id, log_sha256, (SELECT count(*) FROM store.events AS e "
        "WHERE e.run_id = r.run_id) AS events FROM store.runs AS r ORDER BY log_path",
    ).to_pylist()
    assert [r["log_path"] for r in runs] == ["sub/a/result_0.txt", "sub/b/result_0.txt"]
    assert runs[0]["log_sha256"] == runs[1]["log_sha256"]
    assert runs[0]["run_id"] != runs[1]["run_id"]
    assert runs[0]["events"] == runs[1]["events"] > 0
    again = ingest([tmp_path / "sub"], store=store)
    assert (again.runs_added, again.runs_unchanged, again.snapshot) == (0, 2, None)
    copy_of(LOGS / "v05_resnet.txt", tmp_path / "sub" / "c", "result_0.txt")
    third = ingest([tmp_path / "sub"], store=store)
    assert (third.runs_added, third.runs_unchanged) == (1, 2)
    assert [i.message for i in third.issues] == [
        "same bytes as sub/a/result_0.txt; stored as a run of both paths"
    ]


def test_reingest_of_an_unchanged_tree_with_problems_writes_nothing(tmp_path, store):
    folder = tmp_path / "logs"
    for name in ("empty.txt", "truncated.txt", "v05_resnet.txt"):
        copy_of(LOGS / name, folder, f"result_{name}")
    first = ingest([folder], store=store)
    assert first.failed and first.snapshot == "snap-000001"
    again = ingest([folder], store=store)
    assert (again.snapshot, again.failed, again.issues, again.runs_added) == (None, False, [], 0)
    assert [(i.path, i.code) for i in again.recorded] == [("logs/result_empty.txt", "empty")]
    assert sorted(p.name for p in store.glob("snap-*")) == ["snap-000001"]


NOW_MS = int(time.time() * 1000)


def local_log_at(tmp_path: Path, **times_ms: str) -> tuple[Path, dict[str, int]]:
    """The local mllog fixture with the time_ms of some keys replaced; the lines of
    run_start and run_stop."""
    lines = (LOGS / "mllog_local.txt").read_text().splitlines(keepends=True)
    at = {}
    for key in ("run_start", "run_stop"):
        (n,) = [n for n, line in enumerate(lines) if f'"key": "{key}"' in line]
        if key in times_ms:
            lines[n] = re.sub(r'"time_ms": [0-9]+', f'"time_ms": {times_ms[key]}', lines[n])
        at[key] = n + 1
    (tmp_path / "result_0.txt").write_text("".join(lines))
    return tmp_path / "result_0.txt", at


@pytest.mark.parametrize(
    ("key", "time_ms", "why"),
    [
        ("run_start", "NaN", "nan s is not a number"),
        ("run_stop", "Infinity", "inf s is infinite"),
        ("run_stop", "-5", "-0.005 s is negative"),
        ("run_stop", "1e308", "1e+305 s is more than a day after the ingest"),
        ("run_stop", str(NOW_MS + 2 * 86_400_000), "s is more than a day after the ingest"),
    ],
    # ids that do not hold the clock's time: every test worker collects the same tests
    ids=["nan", "infinite", "negative", "1e308", "two days ahead"],
)
def test_an_impossible_run_time_is_an_error_and_never_a_success(tmp_path, store, key, time_ms, why):
    log, at = local_log_at(tmp_path, **{key: time_ms})
    report = ingest([log], store=store)
    (issue,) = [i for i in report.issues if i.code == "impossible-time"]
    assert (issue.path, issue.line, issue.severity) == ("result_0.txt", at[key], "error")
    assert issue.message.startswith(f"{key} time ") and issue.message.endswith(why)
    (run,) = table(store, "runs").to_pylist()
    assert (run["status"], run["minutes"]) == ("incomplete", None)


def test_a_run_start_before_2015_on_a_wall_clock_stop_is_an_error(tmp_path, store):
    log, at = local_log_at(tmp_path, run_start="1400000000000")
    report = ingest([log], store=store)
    timing = [i for i in report.issues if i.code in ("clock-origin", "impossible-time")]
    assert [(i.line, i.severity, i.code, i.message) for i in timing] == [
        (
            at["run_start"],
            "warning",
            "clock-origin",
            "run_start time 1400000000.0 s is before 2015-01-01: the log's clock does not "
            "count from the Unix epoch; its durations are kept",
        ),
        (
            at["run_stop"],
            "error",
            "impossible-time",
            "run_stop is 3.637e+08 s after run_start: longer than any training run",
        ),
    ]
    assert table(store, "runs").column("status").to_pylist() == ["incomplete"]


def test_a_log_on_a_clock_of_another_origin_keeps_its_duration(tmp_path, store):
    # official v0.7 DLRM logs of one submitter count time_ms from about 1.59e9 ms
    text = (LOGS / "mllog_local.txt").read_text()
    shift = 1763700000000 - 1593050000
    text = re.sub(r'"time_ms": ([0-9]+)', lambda m: f'"time_ms": {int(m[1]) - shift}', text)
    (tmp_path / "result_0.txt").write_text(text)
    report = ingest([tmp_path / "result_0.txt"], store=store)
    assert [(i.severity, i.code) for i in report.issues] == [("warning", "clock-origin")]
    (run,) = table(store, "runs").to_pylist()
    assert (run["status"], run["minutes"]) == ("success", pytest.approx(4.3 / 60))


def test_a_run_stop_of_1e308_seconds_in_a_v05_log_is_not_a_success(tmp_path, store):
    text = (LOGS / "v05_resnet.txt").read_text()
    huge = "1" + "0" * 308 + ".0"
    text = re.sub(r"(?m)^(:::MLPv0\.5\.0 resnet )\S+( .* run_stop)", rf"\g<1>{huge}\2", text)
    (tmp_path / "result_0.txt").write_text(text)
    report = ingest([tmp_path / "result_0.txt"], store=store)
    assert [(i.code, i.message) for i in report.issues if i.severity == "error"] == [
        ("impossible-time", "run_stop time 1e+308 s is more than a day after the ingest")
    ]
    assert table(store, "runs").column("status").to_pylist() == ["incomplete"]


def test_fifos_devices_sockets_and_broken_links_are_issues_and_skipped(
    tmp_path, store, monkeypatch
):
    tree = tmp_path / "tree"
    copy_of(LOGS / "v05_resnet.txt", tree, "result_0.txt")
    os.mkfifo(tree / "result_1.txt")
    (tree / "result_2.txt").symlink_to(tmp_path / "gone.txt")
    (tree / "result_3.txt").symlink_to(tree / "result_3.txt")
    (tree / "result_4.txt").symlink_to(os.devnull)
    monkeypatch.chdir(tmp_path)  # a socket's path must be short
    listener = socket.socket(socket.AF_UNIX)
    listener.bind("tree/result_5.txt")
    os.mkfifo(tmp_path / "fifo.txt")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    (tmp_path / "dangling").symlink_to(tmp_path / "gone")
    given = [tree, Path("/dev/zero"), *(tmp_path / n for n in ("fifo.txt", "loop", "dangling"))]
    try:
        report = ingest(given, store=store)
    finally:
        listener.close()
    assert report.runs_added == 1
    assert sorted((i.path, i.severity, i.code) for i in report.issues) == sorted(
        [
            ("tree/result_1.txt", "warning", "special-file"),
            ("tree/result_2.txt", "warning", "dangling-link"),
            ("tree/result_3.txt", "warning", "link-loop"),
            ("tree/result_4.txt", "warning", "special-file"),
            ("tree/result_5.txt", "warning", "special-file"),
            ("/dev/zero", "error", "special-file"),
            (str(tmp_path / "fifo.txt"), "error", "special-file"),
            (str(tmp_path / "loop"), "error", "link-loop"),
            (str(tmp_path / "dangling"), "error", "dangling-link"),
        ]
    )
    assert table(store, "issues").num_rows == 9


def test_a_result_file_without_mlperf_lines_is_an_incomplete_run(tmp_path, store):
    folder = tmp_path / "training_results_v1.0" / "Intel" / "results" / "8-nodes" / "minigo"
    folder.mkdir(parents=True)
    shutil.copy(
        FIXTURES / "rounds" / "v10_intel_minigo_no_mlperf_lines.txt", folder / "result_run10.txt"
    )
    shutil.copy(LOGS / "not_a_log.txt", tmp_path / "notes.log")  # outside a results layout
    report = ingest([tmp_path / "training_results_v1.0", tmp_path / "notes.log"], store=store)
    (run,) = table(store, "runs").to_pylist()
    assert (run["round"], run["submitter"], run["benchmark"], run["run"]) == (
        "v1.0",
        "Intel",
        "minigo",
        10,
    )
    assert (run["status"], run["minutes"]) == ("incomplete", None)
    (stored,) = stores.read(store, ("runs",))["runs"].to_pylist()
    assert (stored["log_format"], stored["events"]) == ("none", 0)
    codes = {(i.path.rsplit("/", 1)[-1], i.code) for i in report.issues}
    assert codes == {("result_run10.txt", "no-events"), ("notes.log", "no-events")}
