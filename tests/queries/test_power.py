"""power and the measured columns of cost_energy, from given runs and telemetry rows."""

import csv
import json
import random
import statistics

import pytest

import collector
from collector.store import snapshot
from collector.store.schemas import load
from tests.conftest import REPO
from tests.queries.test_derived import run

H200 = {"accelerator": "NVIDIA H200"}


def samples(run_id, device, times, power, unix0=None):
    """Telemetry rows of one device: a sample at each time with the given power."""
    return [
        {
            "run_id": run_id,
            "device": device,
            "seq": i,
            "time_s": t,
            "unix_s": None if unix0 is None else unix0 + t,
            "gpu_power_w": power(t),
            "gpu_util_pct": 100.0,
            "gpu_sm_clock_mhz": 1980.0 if unix0 is not None else None,
            "gpu_temp_c": 50.0 + i if unix0 is not None else None,
        }
        for i, t in enumerate(times)
    ]


@pytest.fixture(scope="module")
def con(tmp_path_factory):
    # clocked: 2 GPUs, run_start 1000 and run_stop 1060 on the wall clock; sampling from 995
    clocked = run("box", 2, 1.0, 0, run_start_unix_s=1000.0, run_stop_unix_s=1060.0, **H200)
    # unclocked: 1 GPU, 30 s run, sampling ends at 50 s: the window is 20..50 s
    plain = run("box", 1, 0.5, 0, run_start_unix_s=0.0, run_stop_unix_s=30.0, **H200)
    failed = run(
        "box", 1, 0.5, 1, status="failed", run_start_unix_s=0.0, run_stop_unix_s=30.0, **H200
    )
    cpu_only = run("cpu", 0, 0.5, 0)
    telemetry = (
        samples(
            clocked["run_id"], "0", range(0, 71), lambda t: 400.0 if 5 <= t <= 65 else 90.0, 995.0
        )
        + samples(
            clocked["run_id"], "1", range(0, 71), lambda t: 500.0 if 5 <= t <= 65 else 90.0, 995.0
        )
        + samples(plain["run_id"], "3", range(1, 51), lambda t: 600.0 if t >= 20 else 100.0)
        + samples(failed["run_id"], "3", range(1, 51), lambda t: 300.0)
        + [
            {
                "run_id": cpu_only["run_id"],
                "device": "cpu",
                "seq": 0,
                "time_s": 1.0,
                "cpu_util_pct": 50.0,
            }
        ]
    )
    tables = snapshot.empty().tables
    tables["runs"] = load("runs").table_from_rows([clocked, plain, failed, cpu_only])
    tables["telemetry"] = load("telemetry").table_from_rows(telemetry)
    store = tmp_path_factory.mktemp("power") / "store"
    snapshot.write(store, snapshot.Snapshot(tables))
    assert collector.open(store).check_contracts() == []
    connection = collector.open(store)
    yield connection
    connection.close()


def by_system(con, table, order="accelerators, run"):
    return con.sql(f"SELECT * FROM {table} ORDER BY {order}").to_arrow_table().to_pylist()


def test_samples_on_the_wall_clock_are_placed_by_it(con):
    row = by_system(con, "power")[-1]
    assert (row["accelerators"], row["devices_sampled"], row["aligned_by"]) == (2, 2, "wall clock")
    assert row["samples_per_device"] == 61  # 1000..1060 inclusive
    assert row["power_w"] == pytest.approx(900.0)
    assert row["power_per_accelerator_w"] == pytest.approx(450.0)
    assert row["energy_kwh"] == pytest.approx(900.0 * 60 / 3.6e6)
    assert (row["sm_clock_median_min_mhz"], row["gpu_temp_max_c"]) == (1980.0, 50.0 + 65)


def test_older_files_are_aligned_at_their_end_with_run_stop(con):
    ok, failed = [r for r in by_system(con, "power") if r["accelerators"] == 1]
    assert (ok["aligned_by"], ok["samples_per_device"]) == ("end of sampling", 31)  # 20..50 s
    assert ok["power_w"] == pytest.approx(600.0) and ok["sm_clock_median_min_mhz"] is None
    assert ok["energy_kwh"] == pytest.approx(600.0 * 30 / 3.6e6)
    assert failed["status"] == "failed" and failed["power_w"] == pytest.approx(300.0)


def test_runs_without_gpu_power_have_no_row(con):
    assert all(r["accelerators"] > 0 for r in by_system(con, "power"))
    assert len(by_system(con, "power")) == 3


def test_cost_energy_averages_the_measured_successful_runs(con):
    rows = {r["accelerators"]: r for r in by_system(con, "cost_energy", "accelerators")}
    one = rows[1]
    assert one["measured_runs"] == 1  # the failed run is no observation
    assert one["energy_measured_kwh"] == pytest.approx(600.0 * 30 / 3.6e6)
    assert one["power_measured_per_accelerator_w"] == pytest.approx(600.0)
    # one run is no score: the measured energy stays, no time, bound or cost is derived
    assert one["minutes"] is None and one["energy_at_tdp_kwh"] is None
    assert rows[2]["energy_measured_kwh"] == pytest.approx(900.0 * 60 / 3.6e6)


def test_power_does_not_depend_on_the_order_samples_are_stored_in(tmp_path):
    """Means are taken in time order: the stored order (or the threads') changes no bit."""
    clocked = run("box", 2, 1.0, 0, run_start_unix_s=1000.0, run_stop_unix_s=1300.0, **H200)
    rng = random.Random(3)
    watts = {t: 300.0 + rng.random() * 400.0 for t in range(0, 300)}
    rows = [
        row
        for device in ("0", "1")
        for row in samples(clocked["run_id"], device, range(0, 300), watts.__getitem__, 1000.0)
    ]
    found = []
    for name, ordered in (("forward", rows), ("backward", rows[::-1])):
        tables = snapshot.empty().tables
        tables["runs"] = load("runs").table_from_rows([clocked])
        tables["telemetry"] = load("telemetry").table_from_rows(ordered)
        snapshot.write(tmp_path / name, snapshot.Snapshot(tables))
        with collector.open(tmp_path / name) as connection:
            found.append(by_system(connection, "power"))
    assert found[0] == found[1]


def test_window_power_is_recomputed_from_a_shipped_runs_files():
    """The fp8 Llama 3.1 8B run on 2 x H200: each GPU's median power and clock over the
    samples of its telemetry file between the log's first epoch_start and last epoch_stop."""
    folder = REPO / "runs" / "local" / "h200-x2-llm"
    log = folder / "results" / "vm_2xh200_fp8_default" / "llama31_8b" / "result_0.txt"
    events = [json.loads(line[len(":::MLLOG ") :]) for line in log.read_text().splitlines()]
    start = min(e["time_ms"] for e in events if e["key"] == "epoch_start") / 1000
    stop = max(e["time_ms"] for e in events if e["key"] == "epoch_stop") / 1000
    power, clock = {}, {}
    with open(log.with_suffix(".telemetry.csv")) as f:
        for s in csv.DictReader(f):
            if s["gpu_power_w"] and start <= float(s["unix_s"]) <= stop:
                power.setdefault(s["device"], []).append(float(s["gpu_power_w"]))
                clock.setdefault(s["device"], []).append(float(s["gpu_sm_clock_mhz"]))
    system = json.loads((folder / "systems" / "vm_2xh200_fp8_default.json").read_text())
    with collector.open(REPO / "runs" / "warehouse") as wh:
        where = "system_id = 'v5.1/h200-x2-llm/vm_2xh200_fp8_default' AND benchmark = 'llama31_8b'"
        (got,) = wh.sql(f"SELECT * FROM window_power WHERE {where}").df().to_dict("records")
    assert got["devices_sampled"] == len(power) == 2
    assert got["samples_per_device"] == min(map(len, power.values())) > 10
    medians = [statistics.median(power[d]) for d in sorted(power)]
    assert got["power_per_accelerator_w"] == pytest.approx(statistics.mean(medians))
    assert got["sm_clock_median_min_mhz"] == min(statistics.median(c) for c in clock.values())
    assert got["power_limit_w"] == min(system["collector"]["power_limit_w"]) == 700.0
    assert 0.95 < got["power_of_limit_ratio"] <= 1.0  # at its limit: bounded by power
