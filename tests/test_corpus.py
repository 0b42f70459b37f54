"""The official MLPerf results in ../shared: pinned scores, systems, idempotence, kill -9."""

import os
import signal
import subprocess
import sys
import time

import pytest

from collector.ingest.pipeline import ingest
from tests.conftest import MLPERF, V05, V07, needs_shared, sql, table

pytestmark = [needs_shared, pytest.mark.slow]


@pytest.fixture(scope="module")
def corpus_store(tmp_path_factory):
    store = tmp_path_factory.mktemp("corpus") / "store"
    report = ingest([V05, V07], store=store)
    assert not report.failed, [str(i) for i in report.issues if i.severity == "error"]
    return store


def score(store, system, benchmark):
    rows = [
        r
        for r in table(store, "scores").to_pylist()
        if r["system"] == system and r["benchmark"] == benchmark
    ]
    assert len(rows) == 1, rows
    return rows[0]


@pytest.mark.parametrize(
    ("system", "benchmark", "minutes"),
    [
        ("dgx1_multi_ngc18.11_mxnet", "resnet", 6.2417),
        ("8xV100", "resnet", 137.8002),  # Google cloud_v100x8
        ("skx8180", "ncf", 29.7979),  # Intel: first 50 converged by start time
    ],
)
def test_hand_checked_v05_scores(corpus_store, system, benchmark, minutes):
    assert score(corpus_store, system, benchmark)["score_minutes"] == pytest.approx(
        minutes, abs=5e-5
    )


def test_every_folder_with_logs_gets_a_score_or_a_reason(corpus_store):
    folders = {p.parent for p in V05.rglob("result_*.txt")} | {
        p.parent for p in V07.rglob("result_*.txt")
    }
    rows = table(corpus_store, "scores").to_pylist()
    assert len(rows) == len(folders)
    for row in rows:
        assert (row["score_minutes"] is None) != (row["unscorable_reason"] is None)


def test_v07_dell_systems_are_joined(corpus_store):
    rows = {r["system"]: r for r in table(corpus_store, "runs").to_pylist() if r["round"] == "v0.7"}
    assert (
        rows["C4140"]["accelerator"],
        rows["C4140"]["accelerators"],
        rows["C4140"]["interconnect"],
    ) == ("Nvidia Tesla V100-SXM2-32GB", 4, "nvlink")
    assert (rows["4xC4140"]["accelerators"], rows["4xC4140"]["nodes"]) == (16, 4)
    assert rows["DSS8440"]["interconnect"] == "pcie"


def test_system_ids_are_unique_per_round(corpus_store):
    systems = table(corpus_store, "systems").to_pylist()
    assert len({s["system_id"] for s in systems}) == len(systems)


def test_ingest_twice_gives_identical_row_counts(corpus_store):
    before = {t: table(corpus_store, t).num_rows for t in ("runs", "systems", "issues")}
    events = sql(corpus_store, "SELECT count(*) AS n FROM store.events")
    report = ingest([V05, V07], store=corpus_store)
    logs = sum(1 for tree in (V05, V07) for _ in tree.rglob("result_*.txt"))
    assert (report.runs_added, report.runs_unchanged) == (0, logs)
    after = {t: table(corpus_store, t).num_rows for t in ("runs", "systems", "issues")}
    assert before == after
    assert sql(corpus_store, "SELECT count(*) AS n FROM store.events") == events


def test_kill_9_during_ingest_leaves_the_store_readable(tmp_path):
    store = tmp_path / "store"
    ingest([V07], store=store)
    before = table(store, "runs").num_rows
    for delay in (0.5, 1.5, 3.0):
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "collector.cli",
                "ingest",
                str(V05),
                "--store",
                str(store),
                "--quiet",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        runs = table(store, "runs").num_rows
        assert runs in (before, before + sum(1 for _ in V05.rglob("result_*.txt")))
        assert table(store, "scores").num_rows > 0
    assert MLPERF.is_dir()
