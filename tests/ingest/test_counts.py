"""Accelerators and nodes a run used, from what its log launched; hosts of TPU slices; what a
logged throughput counts. Fixtures: excerpts of official logs (tests/fixtures/counts)."""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path

import pytest

from collector.ingest.launch import Launched, counted
from collector.ingest.pipeline import ingest
from collector.ingest.systems import reconcile, system_row
from collector.ingest.throughput import samples_per_epoch, throughput_per
from tests.conftest import FIXTURES, sql

COUNTS = FIXTURES / "counts"
V05 = COUNTS / "training_results_v0.5"
V06 = COUNTS / "training_results_v0.6"
V21 = COUNTS / "training_results_v2.1"
V50 = COUNTS / "training_results_v5.0"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    store = tmp_path_factory.mktemp("counts") / "store"
    report = ingest([V05, V06, V21, V50], store=store)
    assert not report.failed
    rows = sql(store, "SELECT * FROM store.runs").to_pylist()
    return {f"{r['round']}/{r['system']}/{r['benchmark']}": r for r in rows}


def test_v05_ssd_counts_the_eight_nodes_of_eight_gpus_its_log_launched(runs):
    # entry.json describes the submission's largest job, 36 DGX-2H x 16 (576)
    run = runs["v0.5/dgx2h_multi_ngc18.11_pytorch/ssd"]
    assert (run["nodes"], run["accelerators"]) == (8, 64)


def test_v05_resnet_counts_the_nodes_that_cleared_their_caches_as_its_config_says(runs):
    # entry.json says 128 DGX-1 (1,024 GPUs); the submission's config file launched 80 x 8
    config = (
        V05 / "v0.5.0/nvidia/submission/code/image_classification/mxnet/config_DGX1_multi.sh"
    ).read_text()
    nodes = int(re.search(r"^DGXNNODES=(\d+)", config, re.M).group(1))
    per_node = int(re.search(r"^DGXNGPU=(\d+)", config, re.M).group(1))
    run = runs["v0.5/dgx1_multi_ngc18.11_mxnet/resnet"]
    assert (run["nodes"], run["accelerators"]) == (nodes, nodes * per_node) == (80, 640)


def test_v06_dgx2h_n30_ssd_counts_eight_processes_per_node(runs):
    # the system description says 30 x 16; slurm launched 8 tasks per node
    run = runs["v0.6/dgx2h_n30_ngc19.05_pytorch/ssd"]
    assert (run["nodes"], run["accelerators"]) == (30, 240)


def test_a_count_above_the_description_is_not_taken_from_the_log():
    # v0.5 single-DGX-1 transformer logs clear caches twice; v1.0 Dell minigo logs
    # SLURM_NTASKS_PER_NODE=33 on one 8-GPU server
    described = {"accelerators": 8, "nodes": 1, "accelerators_per_node": 8}
    assert counted(described, Launched(nodes=2, per_node=33)) == (
        {"accelerators": 8, "nodes": 1},
        None,
    )


def test_a_tpu_slice_described_as_one_node_counts_its_hosts():
    # v0.6 Google tpu-v3-512: 256 chips described as one node; Google's later descriptions
    # of TPU v3 slices count 8 chips per host (v0.7 tpu-v3-8192: 512 nodes x 8)
    doc = json.loads((FIXTURES / "rounds" / "v06_tpu-v3-512.json").read_text())
    row, _ = reconcile(system_row(doc), "tpu-v3-512")
    assert (row["accelerators"], row["nodes"], row["accelerators_per_node"]) == (256, 32, 8)


def _logged(path: Path) -> tuple[list[float], list[float]]:
    """tracked_stats throughputs and epoch durations (s) of an mllog excerpt."""
    tput, start, spans = [], {}, []
    for line in path.read_text().splitlines():
        event = json.loads(line.partition(":::MLLOG ")[2])
        epoch = event["metadata"].get("epoch_num")
        if event["key"] == "tracked_stats":
            tput.append(event["value"]["throughput"])
        elif event["key"] == "epoch_start":
            start[epoch] = event["time_ms"] / 1000
        elif event["key"] == "epoch_stop" and epoch in start:
            spans.append(event["time_ms"] / 1000 - start[epoch])
    return tput, spans


def test_retinanet_throughput_logged_per_gpu_is_stored_for_the_whole_run(runs):
    log = V21 / "NVIDIA/results/dgxh100_n4_preview/ssd/result_0.txt"
    tput, spans = _logged(log)
    run = runs["v2.1/dgxh100_n4_preview/ssd"]
    assert run["accelerators"] == 32
    assert run["throughput_per"] == "accelerator"
    assert run["throughput_samples_per_s"] == pytest.approx(32 * statistics.median(tput))
    # one epoch of OpenImages over its epoch time is the whole run's throughput
    measured = samples_per_epoch("v2.1", "ssd") / statistics.median(spans)
    assert run["throughput_samples_per_s"] == pytest.approx(measured, rel=0.05)


def test_retinanet_throughput_logged_for_the_whole_run_is_kept(runs):
    # NVIDIA's 25.04 container logs the whole run's images per second
    log = V50 / "NVIDIA/results/nyx_n1_ngc25.04_pytorch/retinanet/result_0.txt"
    tput, spans = _logged(log)
    run = runs["v5.0/nyx_n1_ngc25.04_pytorch/retinanet"]
    assert run["accelerators"] == 8
    assert run["throughput_per"] == "total"
    assert run["throughput_samples_per_s"] == pytest.approx(statistics.median(tput))
    measured = samples_per_epoch("v5.0", "retinanet") / statistics.median(spans)
    assert run["throughput_samples_per_s"] == pytest.approx(measured, rel=0.05)


def test_a_throughput_neither_total_nor_per_accelerator_is_not_classified():
    # the v2.1 dgxh100_n4_preview numbers: 217.4 images/s per GPU, 168.3 s epochs, 32 GPUs
    assert throughput_per(217.4, 168.3, 1_170_301, 32) == "accelerator"
    assert throughput_per(217.4 * 32, 168.3, 1_170_301, 32) == "total"
    assert throughput_per(217.4 * 4, 168.3, 1_170_301, 32) is None
    assert throughput_per(217.4, 168.3, None, 32) is None
