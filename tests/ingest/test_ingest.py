import shutil

from collector.ingest.pipeline import ingest
from collector.queries import query
from tests.conftest import FIXTURES, LOGS, v05_tree, v06_tree


def test_trees_ingest_with_systems_joined(tmp_path, store):
    v05_tree(tmp_path / "a")
    v06_tree(tmp_path / "b")
    report = ingest([tmp_path / "a", tmp_path / "b"], store=store)
    assert (report.runs_added, report.systems, report.failed) == (3, 3, False)
    runs = {r["system_id"]: r for r in query.run("runs", store).to_pylist()}
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
    assert query.run("runs", store).num_rows == 2
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
    issues = query.run("issues", store).to_pylist()
    assert len(issues) == len(seen) == len(report.issues)
    errors = {(i["path"].split("/")[-1], i["code"]) for i in issues if i["severity"] == "error"}
    assert errors == {
        ("result_empty.txt", "empty"),
        ("result_binary.txt", "binary"),
        ("result_truncated.txt", "missing-run-stop"),
        ("result_backwards_latin1.txt", "clock-backwards"),
    }
    statuses = sorted(r["status"] for r in query.run("runs", store).to_pylist())
    assert statuses == ["incomplete", "incomplete", "success", "success"]
    assert str(seen[0]).startswith(("error: logs/result_", "warning: logs/result_"))


def test_local_logs_are_labelled_local_with_their_configuration(tmp_path, store):
    ingest([LOGS / "mllog_local.txt"], store=store)
    (run,) = query.run("runs", store).to_pylist()
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
    assert query.run("runs", store).column("source").to_pylist() == ["local"]


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
    for table in ("runs", "issues", "systems"):
        assert query.run(table, tmp_path / "s1") == query.run(table, tmp_path / "s2")


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
    got = query.sql(
        "SELECT device, count(*) AS n, max(gpu_power_w) AS peak FROM store.telemetry "
        "JOIN store.runs USING (run_id) GROUP BY device ORDER BY device",
        store,
    ).to_pylist()
    assert got == [{"device": "0", "n": 16, "peak": 235.5}, {"device": "1", "n": 15, "peak": 182.4}]
    (power,) = query.run("power", store).to_pylist()
    assert (power["devices_sampled"], power["aligned_by"]) == (2, "end of sampling")
