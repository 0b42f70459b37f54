"""The shipped store (runs/warehouse): every accelerator has an entry in the canonical table,
counts are the runs' own, and throughputs say what they counted."""

from __future__ import annotations

import pytest

import collector
from collector.ingest import data
from tests.conftest import REPO

SHIPPED = REPO / "runs" / "warehouse"

pytestmark = pytest.mark.skipif(not (SHIPPED / "CURRENT").is_file(), reason="no shipped store")


@pytest.fixture(scope="module")
def wh():
    with collector.open(SHIPPED) as warehouse:
        yield warehouse


def rows(wh, text: str) -> list[dict]:
    return wh.sql(text).to_arrow_table().to_pylist()


def test_every_accelerator_in_the_shipped_store_has_an_entry(wh):
    keys = {m["key"] for m in data("accelerators.yml")["models"]}
    found = rows(
        wh,
        "SELECT DISTINCT accelerator, accelerator_model FROM store.runs"
        " WHERE accelerator IS NOT NULL"
        " UNION SELECT DISTINCT accelerator, accelerator_model FROM store.systems"
        " WHERE accelerator IS NOT NULL",
    )
    assert found
    assert [r for r in found if r["accelerator_model"] not in keys] == []


def test_every_accelerator_in_the_shipped_store_is_named_in_words(wh):
    unnamed = rows(wh, "SELECT accelerator FROM accelerator_words WHERE model IS NULL")
    assert unnamed == []


def test_no_tpu_slice_of_more_chips_than_one_host_is_one_node(wh):
    per_host = {
        m["key"]: m["chips_per_host"]
        for m in data("accelerators.yml")["models"]
        if m.get("chips_per_host")
    }
    slices = rows(
        wh,
        "SELECT system_id, accelerator_model, accelerators, nodes FROM store.runs"
        " WHERE source = 'official' AND accelerator_model LIKE 'TPU-%'",
    )
    assert slices
    wrong = [
        r
        for r in slices
        if r["nodes"] == 1 and r["accelerators"] > per_host[r["accelerator_model"]]
    ]
    assert wrong == []


@pytest.mark.parametrize(
    ("system", "benchmark", "nodes", "accelerators"),
    [
        ("dgx1_multi_ngc18.11_pytorch", "ssd", 8, 64),
        ("dgx2h_multi_ngc18.11_pytorch", "ssd", 8, 64),
        ("dgx1_multi_ngc18.11_mxnet", "resnet", 80, 640),
        ("dgx2h_multi_ngc18.11_mxnet", "resnet", 32, 512),
        ("dgx2h_n30_ngc19.05_pytorch", "ssd", 30, 240),
    ],
)
def test_nvidia_multi_node_runs_count_what_their_logs_launched(
    wh, system, benchmark, nodes, accelerators
):
    found = rows(
        wh,
        "SELECT DISTINCT nodes, accelerators FROM store.runs"
        f" WHERE source = 'official' AND system = '{system}' AND benchmark = '{benchmark}'",
    )
    assert found == [{"nodes": nodes, "accelerators": accelerators}]


def test_retinanet_weak_scaling_is_not_a_fraction_of_a_percent_of_linear(wh):
    # with per-GPU throughput read as the run's, 2,048 GPUs were "0.13% of linear"
    weak = rows(
        wh,
        "SELECT efficiency_pct FROM scaling WHERE kind = 'weak' AND source = 'official'"
        " AND (benchmark = 'retinanet' OR (benchmark = 'ssd' AND round >= 'v2.0'))",
    )
    assert weak
    assert min(r["efficiency_pct"] for r in weak) > 10
