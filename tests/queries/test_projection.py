"""samples_to_target, projection and projection_error: a real v0.5 log and constructed runs
whose projections and leave-one-out errors can be computed by hand."""

import hashlib
import json
import shutil

import pytest

import collector
from collector.ingest.pipeline import ingest
from collector.store import snapshot
from collector.store.schemas import load
from tests.conftest import LOGS, sql

GNMT_PAIRS = 3498161  # datasets.yml: WMT16 en-de after the reference's length filter


def official(system, batch, epochs, epoch_s, eval_s, startup_s, benchmark="gnmt", style=""):
    """One converged v0.5 run: an evaluation after each epoch, epochs numbered from 0.

    style "late": the epoch starts are all written after run_stop (as some logs do);
    "beside": each evaluation runs beside training, which goes on during it."""
    run_id = f"{system}-{benchmark}"
    events, evals, t, seq = [], [], startup_s, 0
    late = []

    def event(key, time, value=""):
        nonlocal seq
        events.append(
            {
                "run_id": run_id,
                "seq": seq,
                "line": seq + 1,
                "time_unix_s": time,
                "key": key,
                "value_text": value,
            }
        )
        seq += 1

    event("run_start", 0.0)
    event("input_batch_size", 0.0, str(batch))
    for epoch in range(epochs):
        if style == "late":
            late.append((t, str(epoch)))
        elif style != "beside" or epoch == 0:
            event("train_epoch", t, str(epoch))
        t += epoch_s
        event("eval_start", t)
        if style == "beside" and epoch + 1 < epochs:
            event("train_epoch", t + 0.5, str(epoch + 1))
        event("eval_stop", t + eval_s)
        evals.append(
            {
                "run_id": run_id,
                "seq": epoch,
                "line": seq,
                "time_unix_s": t + eval_s,
                "elapsed_s": t + eval_s,
                "epoch": float(epoch),
                "quality": 20.0 + epoch,
            }
        )
        t += 0.5 if style == "beside" and epoch + 1 < epochs else eval_s
    event("run_stop", t)
    for time, epoch in late:
        event("train_epoch", t + 1 + time, epoch)
    run = {
        "run_id": run_id,
        "source": "official",
        "round": "v0.5",
        "submitter": "acme",
        "division": "closed",
        "system_id": f"v0.5/acme/{system}",
        "system": system,
        "benchmark": benchmark,
        "run": 0,
        "status": "success",
        "run_start_unix_s": 0.0,
        "run_stop_unix_s": t,
        "time_to_train_s": t,
        "quality_target": 21.8,
        "epochs": float(epochs - 1),
        "accelerators": 8,
        "log_format": "mlperf-v0.5",
        "log_path": f"acme/{system}/{benchmark}/result_0.txt",
        "log_sha256": hashlib.sha256(run_id.encode()).hexdigest(),
        "log_bytes": 1,
        "events": seq,
    }
    return run, events, evals


def local(batch, windows, startup_s, eval_s):
    """A local full-size throughput run: timed windows logged as tracked_stats."""
    run_id = "h200-gnmt"
    rows = [
        ("run_start", 0.0, ""),
        ("global_batch_size", 0.0, str(batch)),
        ("epoch_start", startup_s, ""),
    ]
    rows += [
        ("tracked_stats", startup_s + i + 1, json.dumps({"throughput": w}))
        for i, w in enumerate(windows)
    ]
    rows += [("eval_start", 100.0, ""), ("eval_stop", 100.0 + eval_s, ""), ("run_stop", 200.0, "")]
    events = [
        {"run_id": run_id, "seq": i, "line": i + 1, "time_unix_s": t, "key": k, "value_text": v}
        for i, (k, t, v) in enumerate(rows)
    ]
    ordered = sorted(windows)
    run = {
        "run_id": run_id,
        "source": "local",
        "round": "v0.5",
        "submitter": "h200",
        "division": "local",
        "system_id": "v0.5/h200/h200_1xH200_bf16_none",
        "system": "h200",
        "benchmark": "gnmt",
        "run": 0,
        "status": "success",
        "run_start_unix_s": 0.0,
        "run_stop_unix_s": 200.0,
        "time_to_train_s": 200.0,
        "accelerator": "NVIDIA H200",
        "accelerators": 1,
        "precision": "bf16",
        "scale": "throughput",
        "throughput_samples_per_s": ordered[len(ordered) // 2],
        "log_format": "mllog",
        "log_path": "h200/gnmt/result_0.txt",
        "log_sha256": "f" * 64,
        "log_bytes": 1,
        "events": len(events),
    }
    return run, events


def scored(submitter, built, runs=10):
    """`runs` identical runs of one official submission of `submitter` on 8 x V100 (the round's
    rules score ten GNMT runs): its score is the one run's time."""
    run, events, evals = built
    copies = []
    for i in range(runs):
        rid = f"{run['run_id']}-{i}"
        copies.append(
            (
                run | {"run_id": rid, "run": i, "submitter": submitter,
                       "system_id": run["system_id"].replace("acme", submitter),
                       "accelerator_model": "V100-SXM2",
                       "log_path": run["log_path"].replace("result_0", f"result_{i}"),
                       "log_sha256": hashlib.sha256(rid.encode()).hexdigest()},
                [e | {"run_id": rid} for e in events],
                [v | {"run_id": rid} for v in evals],
            )
        )  # fmt: skip
    return copies


def projection_store(store):
    """Three official GNMT submissions of three submitters on 8 x V100 (and MiniGo), each of
    ten identical runs, and one local throughput run, stored.

    A: batch 1024, 3 epochs of 100 s + 10 s evaluations after 20 s of start-up: 350 s;
    B: batch 2048, 4 epochs of 50 s + 10 s, 20 s start-up: 260 s;
    C: batch 8192, 6 epochs of 20 s + 5 s, 10 s start-up: 160 s."""
    built = [
        *scored("acme", official("a", 1024, 3, 100.0, 10.0, 20.0)),
        *scored("beta", official("b", 2048, 4, 50.0, 10.0, 20.0)),
        *scored("gamma", official("c", 8192, 6, 20.0, 5.0, 10.0)),
        official("go", 256, 4, 50.0, 10.0, 20.0, benchmark="minigo"),
    ]
    mine, mine_events = local(2048, [1000.0, 1200.0, 1100.0], 30.0, 8.0)
    tables = snapshot.empty().tables
    tables["runs"] = load("runs").table_from_rows([r for r, _, _ in built] + [mine])
    tables["events"] = load("events").table_from_rows(
        [e for _, es, _ in built for e in es] + mine_events
    )
    tables["evals"] = load("evals").table_from_rows([v for _, _, vs in built for v in vs])
    snapshot.write(store, snapshot.Snapshot(tables))
    return store


@pytest.fixture(scope="module")
def con(tmp_path_factory):
    store = projection_store(tmp_path_factory.mktemp("projection") / "store")
    assert collector.open(store).check_contracts() == []
    connection = collector.open(store)
    yield connection
    connection.close()


def table(con, name):
    return con.sql(f"SELECT * FROM {name}").to_arrow_table().to_pylist()


def test_samples_to_target_are_epochs_trained_times_the_data_set(con):
    rows = {r["system"]: r for r in table(con, "samples_to_target") if r["run_id"].endswith("-0")}
    assert set(rows) == {"a", "b", "c"}  # MiniGo has no data set to count epochs of
    b = rows["b"]
    assert (b["epochs_to_target"], b["samples_to_target"]) == (4, 4 * GNMT_PAIRS)
    assert (b["global_batch"], b["startup_s"], b["epoch_s"], b["eval_s"]) == (2048, 20, 50, 10)
    assert b["evals_per_epoch"] == 1 and b["throughput_samples_per_s"] == GNMT_PAIRS / 50


def test_the_check_uses_none_of_a_submissions_own_timings_or_epochs(con):
    """Each submission borrows the timings of the other submitters' (same round, accelerator
    model and count; medians of the two) and the epochs of the one nearest in global batch:
    A: 15 + 4 x (35 + 7.5) = 185 s for 350; B: 15 + 3 x (60 + 7.5) = 217.5 s for 260;
    C: 20 + 4 x (75 + 10) = 360 s for 160."""
    got = {r["system_id"].split("/")[-1]: r for r in table(con, "projection_check")}
    assert got["a"]["donor_system_ids"] == ["v0.5/beta/b", "v0.5/gamma/c"]
    assert got["a"]["projected_minutes"] == pytest.approx(185 / 60)
    assert got["b"]["projected_minutes"] == pytest.approx(217.5 / 60)
    assert got["c"]["projected_minutes"] == pytest.approx(360 / 60)
    assert got["a"]["real_minutes"] == pytest.approx(350 / 60)  # the score of its ten runs
    errors = sorted([185 / 350 - 1, 217.5 / 260 - 1, 360 / 160 - 1], key=abs)
    (row,) = table(con, "projection_error")
    assert (row["benchmark"], row["submissions"]) == ("gnmt", 3)
    assert row["median_abs_error_pct"] == pytest.approx(abs(errors[1]) * 100)
    p90 = abs(errors[1]) + 0.8 * (abs(errors[2]) - abs(errors[1]))
    assert row["p90_abs_error_pct"] == pytest.approx(p90 * 100)
    # the timing alone, with each one's own epochs: 142.5 / 350, 285 / 260, 530 / 160
    timing = sorted([142.5 / 350 - 1, 285 / 260 - 1, 530 / 160 - 1], key=abs)
    assert row["median_abs_timing_error_pct"] == pytest.approx(abs(timing[1]) * 100)
    assert row["median_abs_epochs_error_pct"] == pytest.approx((4 / 3 - 1) * 100)


def test_a_local_run_is_projected_from_its_throughput_with_an_interval(con):
    (row,) = table(con, "projection")
    assert row["evidence"] == "projected from measured throughput"
    assert (row["official_runs"], row["windows"], row["evals"]) == (10, 3, 4)
    assert row["official_logs"].startswith("acme/b/gnmt/result_0.txt ")  # batch 2048: B
    costs = 30.0 + 4 * 8.0  # start-up + B's 4 evaluations at this run's 8 s each
    assert row["projected_minutes"] == pytest.approx((4 * GNMT_PAIRS / 1100 + costs) / 60)
    low, high = row["projected_ci_low_minutes"], row["projected_ci_high_minutes"]
    # the ends are single-precision resampled means: within a part in a million of the bounds
    assert (4 * GNMT_PAIRS / 1200 + costs) / 60 * (1 - 1e-6) <= low < row["projected_minutes"]
    assert row["projected_minutes"] < high <= (4 * GNMT_PAIRS / 1000 + costs) / 60 * (1 + 1e-6)


def test_a_real_v05_log_gives_its_epochs_and_timings(tmp_path):
    """NVIDIA's DGX-1 Transformer run 0 (its MLPerf lines): evaluations at epochs -1, 0, 1."""
    system = tmp_path / "v0.5.0" / "nvidia" / "submission" / "results" / "dgx1"
    (system / "transformer").mkdir(parents=True)
    (system / "entry.json").write_text(
        '{"division": "closed", "framework": "PyTorch", "nodes": [{"num_nodes": 1, '
        '"accelerator": "Tesla V100-SXM2-16GB", "num_accelerators": 8}]}'
    )
    shutil.copy(LOGS / "v05_transformer_dgx1.txt", system / "transformer" / "result_0.txt")
    ingest([tmp_path / "v0.5.0"], store=tmp_path / "store")
    (row,) = sql(tmp_path / "store", "SELECT * FROM samples_to_target").to_pylist()
    assert (row["epochs_to_target"], row["global_batch"], row["evals"]) == (3, 5120 * 8, 3)
    assert row["samples_to_target"] == 3 * 4590101
    # blocks after the first: 593.98 s and 595.05 s of training for one epoch each
    assert row["epoch_s"] == pytest.approx((593.98 + 595.05) / 2, abs=1e-2)
    # the first evaluation starts 604.79 s after run_start, one epoch in: the rest is start-up
    assert row["startup_s"] == pytest.approx(604.79 - row["epoch_s"], abs=1e-2)
    assert row["eval_s"] == pytest.approx(7.07, abs=1e-2)


def test_a_throughput_log_is_projected_end_to_end_from_ingested_logs(tmp_path):
    """A local full-size Transformer log (three timed windows of 1,600, 1,500 and 1,700
    samples/s after 25 s of start-up and warm-up) beside NVIDIA's real DGX-1 log."""
    system = tmp_path / "v0.5.0" / "nvidia" / "submission" / "results" / "dgx1"
    (system / "transformer").mkdir(parents=True)
    (system / "entry.json").write_text(
        '{"division": "closed", "framework": "PyTorch", "nodes": [{"num_nodes": 1, '
        '"accelerator": "Tesla V100-SXM2-16GB", "num_accelerators": 8}]}'
    )
    shutil.copy(LOGS / "v05_transformer_dgx1.txt", system / "transformer" / "result_0.txt")
    (tmp_path / "local").mkdir()
    shutil.copy(LOGS / "mllog_throughput.txt", tmp_path / "local" / "run.log")
    ingest([tmp_path / "v0.5.0", tmp_path / "local"], store=tmp_path / "store")
    assert collector.open(tmp_path / "store").check_contracts() == []
    (row,) = sql(tmp_path / "store", "SELECT * FROM projection").to_pylist()
    samples = 3 * 4590101  # the DGX-1 run's 3 epochs of WMT en-de
    assert (row["scale"], row["samples_to_target"], row["windows"]) == ("throughput", samples, 3)
    assert (row["throughput_samples_per_s"], row["startup_s"]) == (1600, 25)
    assert row["eval_s"] is None  # no evaluation timed: none is added
    assert row["projected_minutes"] == pytest.approx((samples / 1600 + 25) / 60)
    low, high = row["projected_ci_low_minutes"], row["projected_ci_high_minutes"]
    assert (samples / 1700 + 25) / 60 * (1 - 1e-6) <= low < row["projected_minutes"]
    assert row["projected_minutes"] < high <= (samples / 1500 + 25) / 60 * (1 + 1e-6)
    assert row["checked_submissions"] is None  # one official submission: nothing to leave out
    assert row["official_logs"].endswith("dgx1/transformer/result_0.txt")


def test_epoch_starts_written_late_and_evaluations_beside_training(tmp_path):
    # late: 5 epochs of 10 s + 2 s evaluations after 7 s, epoch starts written at the end
    # beside: 4 epochs of 10 s; each 3 s evaluation runs while the next epoch trains
    built = [
        official("late", 512, 5, 10.0, 2.0, 7.0, style="late"),
        official("beside", 512, 4, 10.0, 3.0, 7.0, style="beside"),
    ]
    tables = snapshot.empty().tables
    tables["runs"] = load("runs").table_from_rows([r for r, _, _ in built])
    tables["events"] = load("events").table_from_rows([e for _, es, _ in built for e in es])
    tables["evals"] = load("evals").table_from_rows([v for _, _, vs in built for v in vs])
    snapshot.write(tmp_path / "store", snapshot.Snapshot(tables))
    assert collector.open(tmp_path / "store").check_contracts() == []
    rows = {
        r["system"]: r
        for r in sql(tmp_path / "store", "SELECT * FROM samples_to_target").to_pylist()
    }
    late, beside = rows["late"], rows["beside"]
    assert (late["epochs_to_target"], late["startup_s"], late["epoch_s"]) == (5, 7, 10)
    assert late["eval_s"] == 2
    assert beside["epochs_to_target"] == 4 and beside["eval_s"] == 0
    # from one evaluation's start to the next: the 10 s epoch trained 0.5 s after it began
    assert beside["epoch_s"] == pytest.approx(10.5) and beside["startup_s"] == pytest.approx(6.5)
