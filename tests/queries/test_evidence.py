"""ceilings, throughput_fractions, full_size_ratios, full_size_scaling and log_gaps on
constructed runs whose fractions, ratios and counts can be computed by hand, with the reference
data they read (the measured ceilings, sources.csv and missing.csv) ingested from files."""

import json

import pytest

import collector
from collector.store import snapshot
from collector.store.schemas import load
from tests.queries.test_derived import run

IMAGENET = 1281167  # datasets.yml: ImageNet 2012 training images
STEP_FLOPS = 2.56e13  # per accelerator: at a global batch of 256, 1e11 FLOPs per sample


def local(host, model, benchmark, windows, accelerators=1, interconnect="nvlink", i=0):
    """A local full-size run (scale throughput) in bf16, and its events: global batch 256, the
    collector_run event with the FLOPs of one step, the timed windows."""
    cfg = "cfg_bf16" if accelerators == 1 else f"cfg_{accelerators}x_{interconnect}_bf16"
    row = run(
        host,
        accelerators,
        1.0,
        i,
        benchmark=benchmark,
        precision="bf16",
        scale="throughput",
        interconnect=interconnect,
        accelerator_model=model,
        system_id=f"v0.5/{host}/{cfg}",
        log_path=f"{host}/results/{cfg}/{benchmark}/result_0.txt",
        throughput_samples_per_s=sorted(windows)[len(windows) // 2],
    )
    collector_run = {"throughput": {"step_flops_per_accelerator": STEP_FLOPS}}
    keyed = [("global_batch_size", "256"), ("collector_run", json.dumps(collector_run))]
    keyed += [("tracked_stats", json.dumps({"throughput": w})) for w in windows]
    events = [
        {
            "run_id": row["run_id"],
            "seq": i,
            "line": i + 1,
            "time_unix_s": float(i),
            "key": k,
            "value_text": v,
        }
        for i, (k, v) in enumerate(keyed)
    ]
    return row, events


def official(system, accelerators, rate, i, benchmark="resnet", round_="v3.0", epochs=40):
    """A converged official H100 run that trained `rate` samples per second per accelerator."""
    return run(
        system,
        accelerators,
        epochs * IMAGENET / (rate * accelerators) / 60,
        i,
        source="official",
        round=round_,
        division="closed",
        benchmark=benchmark,
        accelerator_model="H100-SXM",
        epochs=float(epochs),
        system_id=f"{round_}/Acme/{system}",
        log_path=f"training_results_{round_}/Acme/results/{system}/{benchmark}/result_{i}.txt",
    )


@pytest.fixture(scope="module")
def con(tmp_path_factory):
    data = tmp_path_factory.mktemp("data")
    (data / "local" / "h100" / "systems").mkdir(parents=True)
    (data / "local" / "h100" / "systems" / "cfg_bf16.ceilings.json").write_text(
        json.dumps({"measured_at": "2026-11-25", "matmul_tflops": {"bf16": 500.0, "fp32": 50.0}})
    )
    (data / "sources.csv").write_text(
        "tree,repository,commit,description\n"
        "training_results_v2.1,https://example.org/v2.1,1,\n"
        "training_results_v3.0,https://example.org/v3.0,1,\n"
    )
    (data / "official").mkdir()
    (data / "official" / "missing.csv").write_text(
        "tree,path\n"
        "training_results_v3.0,Acme/results/q/resnet/result_3.txt\n"
        "training_results_v3.0,Acme/results/q/resnet/result_4.txt\n"
        "training_results_v3.0,Acme/results/gone/resnet/result_0.txt\n"
    )
    h100, h100_events = local("h100", "H100-SXM", "resnet", [900.0, 1000.0, 1100.0])
    h200, h200_events = local("h200", "H200-SXM", "resnet", [1200.0, 1300.0, 1400.0])
    ssd, ssd_events = local("h100", "H100-SXM", "ssd", [300.0, 310.0, 320.0])
    # two GPUs of the H100 server: 2,000 samples/s with NVLink (linear), 1,600 without peer-to-peer
    pair, pair_events = local("h100", "H100-SXM", "resnet", [1800.0, 2000.0, 2200.0], 2)
    nop2p, nop2p_events = local(
        "h100", "H100-SXM", "resnet", [1500.0, 1600.0, 1700.0], 2, "no-p2p", 1
    )
    # older one-GPU runs of both models on one-GPU machines, which record no link: one
    # accelerator has none, so they are the same setting as the servers' one-GPU runs
    alone = [
        local(host, model, "resnet", [rate], interconnect="none")
        for host, model, rate in (("h100one", "H100-SXM", 500.0), ("h200one", "H200-SXM", 600.0))
    ]
    for row, _ in alone:
        row["run_start_unix_s"] = -100.0
    runs = [h100, h200, ssd, pair, nop2p] + [row for row, _ in alone]
    runs += [official("big", 8, 1500.0, 0), official("p", 4, 2000.0, 0)]
    runs += [official("q", 4, 2400.0, 0), official("q", 4, 2600.0, 1)]
    # from v2.0 the benchmark named ssd is RetinaNet: another workload, never a reference
    runs += [official("retina", 8, 500.0, 0, benchmark="ssd", round_="v2.1", epochs=4)]
    systems = [
        {
            "system_id": r["system_id"],
            "source": "local",
            "round": "v0.5",
            "submitter": r["system"],
            "system": "cfg_bf16",
            "interconnect_inferred": False,
            "description_path": f"{r['system']}/systems/cfg_bf16.json",
            "description_sha256": "0" * 64,
        }
        for r in (h100, h200)
    ]
    tables = snapshot.empty().tables
    tables["runs"] = load("runs").table_from_rows(runs)
    events = h100_events + h200_events + ssd_events + pair_events + nop2p_events
    events += [e for _, more in alone for e in more]
    tables["events"] = load("events").table_from_rows(events)
    tables["systems"] = load("systems").table_from_rows(systems)
    store = tmp_path_factory.mktemp("evidence") / "store"
    snapshot.write(store, snapshot.Snapshot(tables))
    connection = collector.open(store)
    # the reference data enters the store as a user's would: ingested with the runs
    connection.ingest(
        [data / "sources.csv", data / "official" / "missing.csv", data / "local" / "h100"]
    )
    assert connection.check_contracts() == []
    yield connection
    connection.close()


def rows(con, table):
    return con.sql(f"SELECT * FROM {table}").to_arrow_table().to_pylist()


def test_ceilings_are_read_beside_the_system_description(con):
    got = {(r["system_id"], r["precision"]): r["matmul_tflops"] for r in rows(con, "ceilings")}
    assert got == {("v0.5/h100/cfg_bf16", "bf16"): 500.0, ("v0.5/h100/cfg_bf16", "fp32"): 50.0}


def test_a_run_is_a_fraction_of_the_official_rate_of_its_chip_and_of_its_ceiling(con):
    row = next(
        r
        for r in rows(con, "throughput_fractions")
        if r["system"] == "h100" and r["benchmark"] == "resnet"
    )
    assert row["evidence"] == "compute throughput on synthetic data (data loading not included)"
    assert (row["windows"], row["samples_per_s_per_accelerator"]) == (3, 1000.0)
    assert row["window_min_samples_per_s_per_accelerator"] == 900.0
    # the fewest accelerators (4), then the higher mean rate: q's (2,400 + 2,600) / 2
    assert (row["official_system"], row["official_accelerators"], row["official_runs"]) == (
        "q",
        4,
        2,
    )
    assert row["official_configurations"] == 2
    assert row["official_samples_per_s_per_accelerator"] == pytest.approx(2500.0)
    assert row["official_fraction"] == pytest.approx(0.4)
    assert row["official_log_path"] == "training_results_v3.0/Acme/results/q/resnet/result_0.txt"
    assert row["official_missing_reason"] is None
    # 2.56e13 FLOPs a step x 1,000 / 256 steps a second = 100 TFLOP/s of a 500 TFLOP/s ceiling
    assert row["achieved_tflops_per_accelerator"] == pytest.approx(100.0)
    assert row["ceiling_fraction"] == pytest.approx(0.2)


def test_no_official_result_of_the_chip_or_the_workload_gives_null_and_why(con):
    got = {(r["system"], r["benchmark"]): r for r in rows(con, "throughput_fractions")}
    h200 = got["h200", "resnet"]
    assert h200["official_fraction"] is None and h200["official_round"] is None
    assert h200["official_missing_reason"] == "no official result of this workload on H200-SXM"
    assert h200["ceiling_fraction"] is None  # no ceiling measured beside that system
    ssd = got["h100", "ssd"]
    assert ssd["official_fraction"] is None
    assert "RetinaNet" in ssd["official_missing_reason"]


def test_two_models_side_by_side_with_the_ratio_of_the_printed_rates(con):
    """ssd ran on one model only; of each model's one-GPU runs the newest, whatever its link,
    with the runs of its system: the ratio is of the printed rates, and the timed windows of
    one run give no interval."""
    (row,) = rows(con, "full_size_ratios")
    assert (row["accelerators"], row["interconnect"]) == (1, None)
    assert (row["benchmark"], row["comparison"]) == ("resnet", "H200-SXM against H100-SXM")
    assert (row["a_samples_per_s_per_accelerator"], row["b_samples_per_s_per_accelerator"]) == (
        1000.0,
        1300.0,
    )
    assert row["b_over_a_ratio"] == pytest.approx(1.3)
    assert (row["a_runs"], row["b_runs"]) == (1, 1)
    assert row["b_over_a_ci_low_ratio"] is None and row["b_over_a_ci_high_ratio"] is None
    assert row["a_official_fraction"] == pytest.approx(0.4) and row["b_official_fraction"] is None
    assert row["b_official_missing_reason"].startswith("no official result")
    assert row["a_projected_minutes"] is None  # no official v0.5 run to project with
    assert row["projection_evidence"] == "projected from measured throughput"


def test_several_accelerators_of_one_server_against_one_and_against_the_link(con):
    got = {r["interconnect"]: r for r in rows(con, "full_size_scaling")}
    assert set(got) == {"nvlink", "no-p2p"}  # one row per run on several accelerators
    linked, off = got["nvlink"], got["no-p2p"]
    assert linked["efficiency_pct"] == pytest.approx(100.0)  # 2,000 / (2 x 1,000)
    # one run a setting: its timed windows are no sample of runs, so no interval
    assert (linked["runs"], linked["efficiency_ci_low_pct"]) == (1, None)
    assert linked["of_linked_ratio"] is None and linked["linked_run_id"] is None
    assert off["efficiency_pct"] == pytest.approx(80.0)
    assert off["of_linked_ratio"] == pytest.approx(0.8)  # 1,600 / 2,000
    assert off["of_linked_ci_low_ratio"] is None
    assert off["linked_run_id"] == linked["run_id"] and off["one_run_id"] == linked["one_run_id"]
    assert off["samples_per_s_per_accelerator"] == 800.0


def test_a_throughput_run_has_no_time_to_train(con):
    assert not [r for r in rows(con, "scores") if r["scale"] == "throughput"]
    timed = [r for r in rows(con, "observations") if r["minutes"] is not None]
    assert timed and not [r for r in timed if r["scale"] == "throughput"]


def test_missing_logs_are_counted_per_configuration_folder(con):
    got = {r["system"]: r for r in rows(con, "log_gaps")}
    assert set(got) == {"q", "gone"}
    q = got["q"]
    assert (q["round"], q["benchmark"], q["system_id"]) == ("v3.0", "resnet", "v3.0/Acme/q")
    assert (q["logs_missing"], q["logs_stored"], q["configuration_absent"]) == (2, 2, False)
    assert (got["gone"]["logs_stored"], got["gone"]["configuration_absent"]) == (0, True)


def test_the_site_tables_say_which_logs_a_configuration_lacks(con):
    """q's runs 3 and 4 are missing; 'gone', not described, may be on one server or several."""
    (q,) = [r for r in rows(con, "site_scores") if r["system"] == "q"]
    assert (q["runs_total"], q["logs_missing"]) == (2, 2)
    assert (q["absent_configurations"], q["absent_logs"]) == (1, 1)
    (big,) = [r for r in rows(con, "site_scores") if r["system"] == "big"]
    assert (big["logs_missing"], big["absent_configurations"]) == (0, 1)
    assert all(r["logs_missing"] == 0 for r in rows(con, "site_scores") if r["source"] == "local")
