"""Shared fixtures: the small logs in tests/fixtures and the shared MLPerf corpus."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pyarrow as pa
import pytest

import collector

FIXTURES = Path(__file__).parent / "fixtures"
LOGS = FIXTURES / "logs"
REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("COLLECTOR_SHARED", REPO.parent / "shared"))
MLPERF = SHARED / "mlperf"
V05 = MLPERF / "training_results_v0.5"
V07 = MLPERF / "training_results_v0.7"

needs_shared = pytest.mark.skipif(not V05.is_dir(), reason="../shared/mlperf is not present")


def v05_tree(root: Path) -> Path:
    """A v0.5-layout tree: <org>/<submission>/results/<system>/<benchmark>/result_N.txt."""
    org = root / "v0.5.0" / "acme"
    for submission in ("sub_a", "sub_b"):
        system = org / submission / "results" / "box"
        (system / "resnet").mkdir(parents=True)
        (system / "entry.json").write_text(
            '{"division": "closed", "status": "onprem", "hardware": "DGX-1", '
            '"framework": "MXNet", "interconnect": "IB", "nodes": [{"num_nodes": 1, '
            '"cpu": "Xeon", "num_cores": 40, "accelerator": "Tesla V100-SXM2-16GB", '
            '"num_accelerators": 8, "sys_mem_size": 512}]}'
        )
        log = (LOGS / "v05_resnet.txt").read_bytes() + f"end of {submission}\n".encode()
        (system / "resnet" / "result_0.txt").write_bytes(log)
    (org / "sub_a" / "submission.json").write_text('{"org": "Acme"}')
    return root


def v06_tree(root: Path) -> Path:
    """A v0.6+-layout tree: <org>/results/<system>/<benchmark>/result_N.txt + systems/."""
    org = root / "training_results_v0.7" / "Acme"
    (org / "results" / "node4" / "ssd").mkdir(parents=True)
    (org / "systems").mkdir()
    (org / "systems" / "node4.json").write_text(
        '{"submitter": "Acme", "division": "closed", "status": "available", '
        '"system_name": "node4", "number_of_nodes": "1", "accelerators_per_node": "4", '
        '"accelerator_model_name": "Tesla V100-PCIe-32GB", "accelerator_interconnect": '
        '"N/A", "host_processor_model_name": "Xeon", "host_memory_capacity": "384GB"}'
    )
    (org / "results" / "node4" / "ssd" / "result_0.txt").write_bytes(
        (LOGS / "v06_ssd.txt").read_bytes()
    )
    return root


def pytest_configure(config: pytest.Config) -> None:
    """What the tests compute outside a test (session fixtures) is cached in a folder of the
    session's, never in the user's cache."""
    os.environ["COLLECTOR_CACHE"] = tempfile.mkdtemp(prefix="collector-tests-")


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(os.environ.pop("COLLECTOR_CACHE"), ignore_errors=True)


@pytest.fixture(autouse=True)
def _own_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test caches the derived tables it computes in a folder of its own: none reads
    another test's."""
    monkeypatch.setenv("COLLECTOR_CACHE", str(tmp_path_factory.mktemp("cache")))


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return tmp_path / "store"


def table(store: Path, name: str) -> pa.Table:
    """A derived table (`scores`) or a stored one (`store.runs`), through the public API."""
    with collector.open(store) as wh:
        return wh.table(name).to_arrow_table()


def sql(store: Path, text: str) -> pa.Table:
    """The answer of ad-hoc SQL over a store, through the public API."""
    with collector.open(store) as wh:
        return wh.sql(text).to_arrow_table()
