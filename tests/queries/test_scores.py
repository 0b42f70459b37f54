"""The scores table from given runs to expected rows."""

import math

import pytest

from collector.queries import query
from collector.store import snapshot
from collector.store.schemas import load


def run(i, minutes, status="success", **extra):
    base = {
        "run_id": f"r{extra.get('system', 'sys')}{extra.get('benchmark', 'resnet')}{i}",
        "source": "official",
        "round": "v0.5",
        "submitter": "acme",
        "division": "closed",
        "system_id": "v0.5/acme/sys",
        "system": "sys",
        "benchmark": "resnet",
        "run": i,
        "status": status,
        "run_start_unix_s": 1000.0 + i,
        "run_stop_unix_s": 1000.0 + i + minutes * 60,
        "time_to_train_s": minutes * 60,
        "log_format": "mlperf-v0.5",
        "log_path": f"result_{i}.txt",
        "log_sha256": f"{i:064d}",
        "log_bytes": 1,
        "events": 2,
    }
    base.update(extra)
    if "system" in extra:
        base["system_id"] = f"v0.5/acme/{extra['system']}"
    return base


def scores_of(store, runs):
    tables = snapshot.empty().tables
    tables["runs"] = load("runs").table_from_rows(runs)
    snapshot.write(store, snapshot.Snapshot(tables))
    return query.run("scores", store).to_pylist()


def test_empty_store_has_no_scores(store):
    assert scores_of(store, []) == []


def test_drop_fastest_and_slowest_and_average_the_rest(store):
    (row,) = scores_of(store, [run(i, m) for i, m in enumerate([10, 12, 11, 30, 9])])
    assert (row["runs_total"], row["runs_used"]) == (5, 3)
    assert row["score_minutes"] == pytest.approx(11.0)
    assert row["unscorable_reason"] is None


def test_ties_are_dropped_once(store):
    (row,) = scores_of(store, [run(i, 10) for i in range(5)])
    assert row["score_minutes"] == pytest.approx(10.0)
    assert row["runs_used"] == 3


def test_one_non_converged_run_is_the_dropped_slowest(store):
    runs = [run(i, m) for i, m in enumerate([10, 12, 11, 9])] + [run(4, 5, status="failed")]
    (row,) = scores_of(store, runs)
    assert row["score_minutes"] == pytest.approx(11.0)  # 10, 11, 12 after dropping 9 and inf


def test_two_non_converged_runs_make_it_unscorable(store):
    runs = [run(i, 10) for i in range(3)] + [run(i, 1, status="failed") for i in (3, 4)]
    (row,) = scores_of(store, runs)
    assert row["score_minutes"] is None
    assert row["unscorable_reason"] == "2 of 5 runs did not converge"


def test_a_single_run_is_unscorable_with_the_rule_named(store):
    (row,) = scores_of(store, [run(0, 10)])
    assert row["unscorable_reason"] == "1 runs present, the rules require 5"
    assert row["runs_used"] == 0


def test_ncf_scores_the_first_50_converged_runs_by_start(store):
    runs = []
    for i in range(100):
        converged = i % 3 != 0  # 66 converged runs
        minutes = 1.0 if i < 60 else 100.0  # later runs slow: they must not be scored
        runs.append(
            run(
                i,
                minutes,
                status="success" if converged else "failed",
                benchmark="ncf",
                run_start_unix_s=float(i),
            )
        )
    (row,) = scores_of(store, runs)
    assert (row["runs_total"], row["runs_converged"], row["runs_used"]) == (100, 66, 48)
    first_50 = [i for i in range(100) if i % 3 != 0][:50]
    assert max(first_50) < 75
    expected = sorted(1.0 if i < 60 else 100.0 for i in first_50)[1:-1]
    assert row["score_minutes"] == pytest.approx(sum(expected) / 48)


def test_ncf_with_too_few_converged_runs(store):
    runs = [
        run(i, 1.0, status="success" if i < 40 else "failed", benchmark="ncf") for i in range(100)
    ]
    (row,) = scores_of(store, runs)
    assert row["unscorable_reason"] == "40 runs converged, the rules score the first 50"


def test_local_runs_need_three_and_group_by_precision(store):
    runs = [
        run(i, m, source="local", precision=p, round="v0.5")
        for i, (m, p) in enumerate(
            [(1, "fp32"), (2, "fp32"), (3, "fp32"), (1, "bf16"), (1, "bf16")]
        )
    ]
    rows = {r["precision"]: r for r in scores_of(store, runs)}
    assert rows["fp32"]["score_minutes"] == pytest.approx(2.0)
    assert rows["bf16"]["unscorable_reason"] == "2 runs present, the rules require 3"


def test_aborted_runs_do_not_count(store):
    runs = [run(i, 10, source="local") for i in range(3)] + [
        run(3, 1, status="aborted", source="local")
    ]
    (row,) = scores_of(store, runs)
    assert (row["runs_total"], row["score_minutes"]) == (3, pytest.approx(10.0))


def test_contract_invariants_hold_on_given_rows(store):
    scores_of(store, [run(i, 10 + i) for i in range(5)] + [run(0, 3, system="other")])
    assert query.check_contracts(store) == []
    assert not math.isnan(query.run("scores", store).column("runs_total")[0].as_py())
