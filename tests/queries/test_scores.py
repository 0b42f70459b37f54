"""The scores table from given runs to expected rows."""

import contextlib
import io
import math
import shutil
from pathlib import Path

import pytest
from mlperf_logging.result_summarizer import result_summarizer

import collector
from collector.ingest.pipeline import ingest
from collector.queries import query
from collector.store import snapshot
from collector.store.schemas import load
from tests.conftest import table


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
    return table(store, "scores").to_pylist()


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
    assert row["unscorable_reason"] == "2 of 5 runs did not converge, the rules allow 1"


def test_a_single_run_is_unscorable_with_the_rule_named(store):
    (row,) = scores_of(store, [run(0, 10)])
    assert row["unscorable_reason"] == "1 run present, the rules require 5"
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


def test_an_aborted_run_counts_as_not_converged(store):
    runs = [run(i, 10 + i) for i in range(4)] + [run(4, 1, status="aborted")]
    (row,) = scores_of(store, runs)
    # 5 runs: 10, 11, 12, 13 and one aborted (infinitely slow); drop 10 and the aborted one
    assert (row["runs_total"], row["runs_converged"], row["runs_used"]) == (5, 4, 3)
    assert row["score_minutes"] == pytest.approx(12.0)


def test_two_aborted_runs_make_it_unscorable(store):
    runs = [run(i, 10) for i in range(3)] + [run(i, 1, status="aborted") for i in (3, 4)]
    (row,) = scores_of(store, runs)
    assert row["unscorable_reason"] == "2 of 5 runs did not converge, the rules allow 1"


def test_an_incomplete_run_counts_as_not_converged(store):
    runs = [run(i, 10 + i) for i in range(4)] + [run(4, 1, status="incomplete")]
    (row,) = scores_of(store, runs)
    assert row["score_minutes"] == pytest.approx(12.0)


def test_local_aborted_runs_count_too(store):
    runs = [run(i, 10, source="local") for i in range(3)] + [
        run(3, 1, status="aborted", source="local")
    ]
    (row,) = scores_of(store, runs)
    assert (row["runs_total"], row["runs_used"]) == (4, 2)
    assert row["score_minutes"] == pytest.approx(10.0)


ROUNDS = {"v0.5", "v0.6", "v0.7", "v1.0", "v1.1", "v2.0", "v2.1", "v3.0", "v3.1", "v4.0"}
ROUNDS |= {"v4.1", "v5.0", "v5.1"}


def v41(i, minutes, status="success", benchmark="bert", **extra):
    return run(i, minutes, status, round="v4.1", benchmark=benchmark, **extra)


def test_unet3d_drops_four_at_each_end_and_allows_four_failures(store):
    times = [float(t) for t in range(1, 37)]
    runs = [run(i, t, round="v1.0", benchmark="unet3d") for i, t in enumerate(times)]
    runs += [run(36 + i, 0.5, "aborted", round="v1.0", benchmark="unet3d") for i in range(4)]
    (row,) = scores_of(store, runs)
    # 40 runs, 4 infinitely slow: drop 1..4 and the four failures; average 5..36
    assert (row["runs_total"], row["runs_used"]) == (40, 32)
    assert row["score_minutes"] == pytest.approx(sum(range(5, 37)) / 32)


def test_unet3d_with_five_failures_is_unscorable(store):
    runs = [run(i, 10, round="v1.0", benchmark="unet3d") for i in range(35)]
    runs += [run(35 + i, 1, "failed", round="v1.0", benchmark="unet3d") for i in range(5)]
    (row,) = scores_of(store, runs)
    assert row["unscorable_reason"] == "5 of 40 runs did not converge, the rules allow 4"


def test_v1_0_scores_the_unet3d_runs_present_as_its_summarizer_did(store):
    # Supermicro's as-4142gs-tnr UNet3D: 22 logs where the package checker expects 40
    runs = [run(i, float(i + 1), round="v1.0", benchmark="unet3d") for i in range(22)]
    (row,) = scores_of(store, runs)
    assert (row["runs_used"], row["score_minutes"]) == (14, pytest.approx(sum(range(5, 19)) / 14))


def test_gpt3_three_runs_score_the_middle_one(store):
    runs = [v41(i, m, benchmark="gpt3") for i, m in enumerate([100, 90, 120])]
    (row,) = scores_of(store, runs)
    assert (row["runs_used"], row["score_minutes"]) == (1, pytest.approx(100.0))


def test_more_runs_than_required_all_count(store):
    runs = [v41(i, m, benchmark="ssd") for i, m in enumerate([5, 6, 7, 8, 9, 10])]
    (row,) = scores_of(store, runs)
    assert (row["runs_used"], row["score_minutes"]) == (4, pytest.approx(7.5))


def test_the_rcp_factor_multiplies_the_score_and_is_kept_beside_it(store):
    runs = [v41(i, 10 + i, rcp_scaling_factor=1.25) for i in range(10)]
    (row,) = scores_of(store, runs)
    assert row["raw_score_minutes"] == pytest.approx(14.5)
    assert row["rcp_scaling_factor"] == 1.25
    assert row["score_minutes"] == pytest.approx(14.5 * 1.25)


def test_rounds_before_v2_apply_no_rcp_factor(store):
    runs = [
        run(i, 10 + i, round="v1.1", benchmark="bert", rcp_scaling_factor=1.5) for i in range(10)
    ]
    (row,) = scores_of(store, runs)
    assert (row["rcp_scaling_factor"], row["score_minutes"]) == (1.0, pytest.approx(14.5))


def test_a_benchmark_the_round_does_not_have_is_unscorable(store):
    (row,) = scores_of(store, [v41(i, 10, benchmark="minigo") for i in range(10)])
    assert row["unscorable_reason"] == "no scoring rule for minigo in v4.1"


def test_every_round_has_rules():
    rounds = set(query.score_rules().column("round"))
    assert rounds > ROUNDS


def test_contract_invariants_hold_on_given_rows(store):
    scores_of(store, [run(i, 10 + i) for i in range(5)] + [run(0, 3, system="other")])
    assert collector.open(store).check_contracts() == []
    assert not math.isnan(table(store, "scores").column("runs_total")[0].as_py())


# --- oracle: MLCommons' result summarizer on real result folders --------------------------

ROUND_FOLDERS = Path(__file__).resolve().parents[1] / "fixtures" / "rounds"
# (tree, org, system, benchmark, ruleset): every benchmark folder of tests/fixtures/rounds
ORACLE_CASES = [
    ("training_results_v1.1", "NVIDIA", "dgxa100_ngc21.09_merlin_hugectr", "dlrm", "1.1.0"),
    ("training_results_v2.1", "Intel", "1-node-SPR-pytorch", "dlrm", "2.1.0"),
    ("training_results_v4.1", "Google", "cloud-tpu-trillium-1024-maxtext", "gpt3", "4.1.0"),
    ("training_results_v5.0", "tinycorp", "tinybox_green", "retinanet", "5.0.0"),
]


@pytest.fixture(scope="module")
def official_scores(tmp_path_factory):
    """collector's scores of the fixture folders, by (round, system, benchmark)."""
    store = tmp_path_factory.mktemp("rounds") / "store"
    ingest(sorted(ROUND_FOLDERS.glob("training_results_*")), store=store)
    rows = table(store, "scores").to_pylist()
    return {(r["round"], r["system"], r["benchmark"]): r for r in rows}


def summarizer_score(folder: Path, benchmark: str, ruleset: str, tmp_path: Path):
    """(minutes, RCP factor) of mlperf-logging's result summarizer on a copy of `folder`."""
    copy = tmp_path / folder.name
    shutil.copytree(folder, copy)
    with contextlib.redirect_stdout(io.StringIO()):
        minutes, _, factor = result_summarizer._compute_strong_score_standalone(
            benchmark, folder.parent.name, False, str(copy), "training", ruleset
        )
    return minutes, factor


@pytest.mark.parametrize("tree, org, system, benchmark, ruleset", ORACLE_CASES)
def test_scores_equal_the_result_summarizers(
    official_scores, tmp_path, tree, org, system, benchmark, ruleset
):
    folder = ROUND_FOLDERS / tree / org / "results" / system / benchmark
    expected, factor = summarizer_score(folder, benchmark, ruleset, tmp_path)
    ours = official_scores[(tree.removeprefix("training_results_"), system, benchmark)]
    assert ours["rcp_scaling_factor"] == pytest.approx(factor, rel=1e-12)
    assert ours["score_minutes"] == pytest.approx(expected, rel=1e-9)


def test_the_fixtures_exercise_aborted_incomplete_and_rcp_runs(official_scores):
    rows = list(official_scores.values())
    assert {r["runs_total"] - r["runs_converged"] for r in rows} == {0, 1}
    assert sum(r["rcp_scaling_factor"] != 1.0 for r in rows) == 2
    assert all(r["score_minutes"] is not None for r in rows)


def scores_with_issues(store, runs, issues):
    tables = snapshot.empty().tables
    tables["runs"] = load("runs").table_from_rows(runs)
    tables["ingest_issues"] = load("ingest_issues").table_from_rows(issues)
    snapshot.write(store, snapshot.Snapshot(tables))
    return table(store, "scores").to_pylist()


def bad_line(row):
    return {
        "path": row["log_path"],
        "line": 7,
        "severity": "warning",
        "code": "bad-line",
        "message": ":::MLLOG line is not an event object",
        "log_sha256": row["log_sha256"],
    }


def test_a_log_with_an_unparsable_line_fails_where_the_round_checks_it(store):
    runs = [v41(i, 10 + i) for i in range(10)]
    (row,) = scores_with_issues(store, runs, [bad_line(runs[0])])
    # the fastest run (10) fails the round's compliance check: drop 11 and it, average 12..19
    assert (row["runs_converged"], row["runs_used"]) == (9, 8)
    assert row["score_minutes"] == pytest.approx(15.5)


def test_rounds_before_v0_7_keep_a_log_with_an_unparsable_line(store):
    runs = [run(i, 10 + i) for i in range(5)]
    (row,) = scores_with_issues(store, runs, [bad_line(runs[0])])
    assert (row["runs_converged"], row["score_minutes"]) == (5, pytest.approx(12.0))


def test_an_init_phase_longer_than_the_checker_allows_fails(store):
    runs = [v41(i, 10 + i, init_s=600.0) for i in range(10)]
    runs[0]["init_s"] = 31 * 60.0  # closed division: 30 minutes
    (row,) = scores_of(store, runs)
    assert (row["runs_converged"], row["score_minutes"]) == (9, pytest.approx(15.5))


def test_the_open_division_allows_a_longer_init(store):
    runs = [v41(i, 10 + i, division="open", init_s=31 * 60.0) for i in range(10)]
    (row,) = scores_of(store, runs)
    assert (row["runs_converged"], row["score_minutes"]) == (10, pytest.approx(14.5))


def test_v0_5_has_no_init_limit(store):
    runs = [run(i, 10 + i, init_s=3600.0) for i in range(5)]
    (row,) = scores_of(store, runs)
    assert row["runs_converged"] == 5


def test_a_result_file_without_mlperf_lines_is_a_failed_run_as_the_summarizer_counts_it(
    tmp_path,
):
    # v1.0 Intel's minigo result_run10.txt holds one sentence and no MLPerf line
    tree = tmp_path / "training_results_v2.1"
    shutil.copytree(ROUND_FOLDERS / "training_results_v2.1", tree)
    folder = tree / "Intel" / "results" / "1-node-SPR-pytorch" / "dlrm"
    shutil.copy(ROUND_FOLDERS / "v10_intel_minigo_no_mlperf_lines.txt", folder / "result_5.txt")
    store = tmp_path / "store"
    report = ingest([tree], store=store)
    assert report.runs_added == 6
    (issue,) = [i for i in report.issues if i.severity == "error"]
    assert (issue.path, issue.code) == (
        f"{tree.name}/{folder.relative_to(tree)}/result_5.txt",
        "no-events",
    )
    (row,) = table(store, "scores").to_pylist()
    assert (row["runs_total"], row["runs_converged"], row["runs_used"]) == (6, 5, 4)
    expected, _ = summarizer_score(folder, "dlrm", "2.1.0", tmp_path / "oracle")
    assert row["score_minutes"] == pytest.approx(expected, rel=1e-9)
