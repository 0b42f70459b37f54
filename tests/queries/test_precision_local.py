"""precision_gain pairs collector's per-precision configurations of one machine."""

import pytest

from collector.store import snapshot
from collector.store.schemas import load
from tests.conftest import table


def local_run(system, precision, minutes, i):
    return {
        "run_id": f"{system}-{i}",
        "source": "local",
        "round": "v0.5",
        "submitter": "lab",
        "division": "local",
        "system_id": f"v0.5/lab/{system}",
        "system": system,
        "benchmark": "ssd",
        "run": i,
        "status": "success",
        "run_start_unix_s": 0.0,
        "time_to_train_s": minutes * 60,
        "accelerator": "NVIDIA H200",
        "accelerators": 1,
        "nodes": 1,
        "framework": "PyTorch 2.11",
        "precision": precision,
        "interconnect": "nvlink",
        "scale": "small",
        "log_format": "mllog",
        "log_path": f"{system}/{i}.txt",
        "log_sha256": f"{system}{i}".ljust(64, "0"),
        "log_bytes": 1,
        "events": 1,
    }


def test_configurations_named_per_precision_pair_on_the_same_machine(store):
    runs = [local_run("host_1xh200_bf16_default", "bf16", 1.0 + i / 10, i) for i in range(3)]
    runs += [local_run("host_1xh200_fp32_default", "fp32", 4.0 + i / 10, i) for i in range(3)]
    runs += [local_run("other_1xh200_fp32_default", "fp32", 9.0, i) for i in range(3)]
    tables = snapshot.empty().tables
    tables["runs"] = load("runs").table_from_rows(runs)
    snapshot.write(store, snapshot.Snapshot(tables))
    rows = [r for r in table(store, "precision_gain").to_pylist() if r["kind"] == "time"]
    assert len(rows) == 1  # never against the other machine's fp32
    assert rows[0]["system"] == "host_1xh200_bf16_default"
    assert rows[0]["gain"] == pytest.approx(4.1 / 1.1)
