"""The language models among the derived tables: their data (samples each official run trained,
tokens per sample, model FLOPs per token) checked against the shipped store and the runner, and
the shipped runs on 2 and 4 x H200 set against the official results, each figure recomputed from
the raw logs and rows."""

from __future__ import annotations

import json
import shutil
import statistics
from pathlib import Path

import pytest

import collector
from collector.ingest.pipeline import ingest
from collector.queries.parameters import language_models
from collector.run.suite import load_suite
from tests.conftest import REPO

LOCAL = REPO / "runs" / "local"
#: the shipped campaigns of the language models
CAMPAIGNS = [LOCAL / "h200-x4-llm", LOCAL / "h200-x2-llm"]
LOGS = [log for c in CAMPAIGNS for log in c.glob("results/*/*/result_0.txt")]


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    """The shipped store with the language-model campaigns ingested again (nothing changes)."""
    path = tmp_path_factory.mktemp("llm") / "store"
    shutil.copytree(REPO / "runs" / "warehouse", path)
    ingest(CAMPAIGNS, store=path)
    return path


@pytest.fixture(scope="module")
def con(store):
    """A connection of the store's warehouse with the derived tables the tests read."""
    with collector.open(store) as wh:
        for name in ("throughput_fractions", "projection", "site_guide"):
            wh.table(name)
        yield wh.connection


def test_every_counted_log_is_a_stored_official_run_with_the_same_bytes(con):
    counted = language_models()["language_model_runs"].to_pylist()
    stored = dict(
        con.execute(
            "SELECT log_path, log_sha256 FROM store.runs WHERE source = 'official' "
            "AND benchmark IN ('llama31_8b', 'llama2_70b_lora')"
        ).fetchall()
    )
    assert len(counted) == len(stored) > 2000
    assert all(stored[r["log_path"]] == r["log_sha256"] for r in counted)
    success = {
        p
        for (p,) in con.execute(
            "SELECT log_path FROM store.runs WHERE status = 'success'"
        ).fetchall()
    }
    assert all(r["samples_to_target"] > 0 for r in counted if r["log_path"] in success)


def test_model_flops_per_token_are_the_runners(con):
    from collector.run.types import RunContext
    from collector.run.workloads import workload_class

    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    suite = load_suite("v5.1")
    for row in language_models()["token_benchmarks"].to_pylist():
        params = suite.benchmarks[row["benchmark"]].scales["throughput"].params
        w = workload_class(row["benchmark"])(params, "throughput", RunContext(torch.device("cpu")))
        batch = next(iter(w.train_batches(1)))
        assert row["tokens_per_sample"] == params["max_sequence_length"]
        per_token = w.model_flops(batch) / (batch[0].shape[0] * row["tokens_per_sample"])
        assert row["model_flops_per_token"] == per_token


def windows(log: Path) -> tuple[list[float], dict]:
    recs = [json.loads(line[len(":::MLLOG ") :]) for line in log.read_text().splitlines()]
    tokens = [r["value"]["tokens_per_s"] for r in recs if r["key"] == "tracked_stats"]
    facts = next(r["value"] for r in recs if r["key"] == "collector_run")
    return tokens, facts


def test_fractions_of_official_recomputed_from_the_logs(con):
    rows = con.execute(
        "SELECT * FROM throughput_fractions WHERE tokens_per_sample IS NOT NULL"
    ).df()
    assert len(rows) == len(LOGS) == 10
    samples = {r["log_path"]: r for r in language_models()["language_model_runs"].to_pylist()}
    for r in rows.itertuples():
        tokens, facts = windows(LOCAL / r.log_path)
        gpus = facts["accelerators"]
        assert r.evidence == "compute throughput on synthetic tokens (data loading not included)"
        assert r.tokens_per_s_per_accelerator == pytest.approx(statistics.median(tokens) / gpus)
        assert r.mfu == pytest.approx(
            facts["throughput"]["step_flops_per_accelerator"]
            * r.tokens_per_s_per_accelerator
            / (r.global_batch / gpus * 8192)
            / 989.4e12
        )
        # the official reference: its runs' samples at run_stop x 8192 / time / accelerators
        official = con.execute(
            "SELECT log_path, time_to_train_s, accelerators FROM store.runs WHERE system_id = ? "
            "AND round = ? AND benchmark = ? AND status = 'success'",
            [
                f"{r.official_round}/{r.official_system_id.split('/', 1)[1]}",
                r.official_round,
                r.benchmark,
            ],
        ).fetchall()
        rates = [samples[p]["samples_to_target"] * 8192 / t / n for p, t, n in official]
        assert r.official_runs == len(rates)
        assert r.official_tokens_per_s_per_accelerator == pytest.approx(statistics.mean(rates))
        assert r.official_fraction == pytest.approx(
            r.tokens_per_s_per_accelerator / statistics.mean(rates)
        )


def test_projections_are_the_official_time_at_the_measured_rate(con, store):
    got = con.execute(
        "SELECT p.benchmark, p.precision, p.accelerators, p.projected_accelerators, p.round, "
        "p.projected_minutes, f.official_minutes, f.official_fraction, f.official_accelerators "
        "FROM projection AS p JOIN throughput_fractions AS f USING (run_id) "
        "WHERE f.tokens_per_sample IS NOT NULL"
    ).df()
    assert len(got) == len(LOGS) and set(got["round"]) == {"v5.1"}
    for r in got.itertuples():
        assert r.projected_accelerators == r.official_accelerators
        assert r.projected_minutes == pytest.approx(r.official_minutes / r.official_fraction)
    guide = con.execute(
        "SELECT submitter, precision, hardware, one_server FROM site_guide "
        "WHERE evidence = 'projected' AND round = 'v5.1' AND benchmark = 'llama2_70b_lora' "
        "ORDER BY ALL"
    ).fetchall()
    on = "8 x NVIDIA H200, 1 node (an official layout; measured on {})".format
    assert guide == [
        ("h200-x2-llm", "bf16", on(2), True),
        ("h200-x2-llm", "fp8", on(2), True),
        ("h200-x4-llm", "bf16", on(2), True),
        ("h200-x4-llm", "bf16", on(4), True),
    ]
    with collector.open(store) as wh:
        assert wh.check_contracts() == []
