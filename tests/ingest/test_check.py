from collector.ingest.check import check
from tests.conftest import FIXTURES, LOGS, V07, needs_shared, sql


def test_own_rules_for_v05_and_v06(store):
    verdicts = {v.log_path: v for v in check([LOGS], store=store)}
    assert verdicts["logs/v05_resnet.txt"].verdict == "pass"
    assert verdicts["logs/v05_resnet.txt"].ruleset == "collector mlperf-v0.5"
    truncated = verdicts["logs/truncated.txt"]
    assert (truncated.verdict, truncated.first_failure) == (
        "fail",
        "run_stop logged 0 times, expected exactly once",
    )
    assert (
        verdicts["logs/v06_ssd.txt"].first_failure == "none of eval_target, quality_target logged"
    )
    assert "logs/empty.txt" not in verdicts  # a folder walk takes only files that hold logs
    (empty,) = check([LOGS / "empty.txt"], store=store)
    assert (empty.verdict, empty.first_failure) == ("fail", "empty file")
    stored = sql(
        store, "SELECT verdict, count(*) AS n FROM store.compliance GROUP BY ALL ORDER BY verdict"
    ).to_pylist()
    assert sum(r["n"] for r in stored) == len(verdicts) + 1


@needs_shared
def test_mlperf_logging_checker_on_official_v07_logs(store):
    verdicts = check([V07 / "DellEMC" / "results" / "C4140" / "resnet"], store=store)
    assert len(verdicts) == 5
    assert {(v.ruleset, v.verdict) for v in verdicts} == {("mlperf-logging training 0.7.0", "pass")}


def test_mlperf_logging_checker_failure_names_the_rule(tmp_path, store):
    log = tmp_path / "training_results_v0.7" / "x" / "results" / "s" / "resnet" / "result_0.txt"
    log.parent.mkdir(parents=True)
    log.write_text(
        ':::MLLOG {"namespace": "", "time_ms": 1, "event_type": "INTERVAL_START", '
        '"key": "run_start", "value": null, "metadata": {"file": "a", "lineno": 1}}\n'
    )
    (verdict,) = check([log], store=store)
    assert verdict.ruleset == "mlperf-logging training 0.7.0"
    assert verdict.verdict == "fail"
    assert verdict.first_failure


def test_local_runs_use_the_checker_with_the_local_division_rules(store):
    from tests.conftest import REPO

    logs = REPO / "runs" / "local" / "h200-x4" / "results" / "vm_1xh200_bf16_default" / "ssd"
    verdicts = check([logs], store=store)
    assert len(verdicts) == 3
    assert {(v.ruleset, v.verdict) for v in verdicts} == {
        ("mlperf-logging training 0.7.0 + collector local rules", "pass")
    }


def test_throughput_runs_are_judged_by_the_throughput_rules(tmp_path, store):
    """A throughput-scale log (timed steps, no evaluation) passes collector's throughput rules,
    and fails them without its timed windows."""
    good = tmp_path / "good" / "result_0.txt"
    good.parent.mkdir()
    good.write_bytes((FIXTURES / "throughput" / "ncf_result_0.txt").read_bytes())
    broken = tmp_path / "broken" / "result_0.txt"
    broken.parent.mkdir()
    lines = good.read_text().splitlines(keepends=True)
    broken.write_text("".join(line for line in lines if '"tracked_stats"' not in line))
    passed, failed = check([good, broken], store=store)
    assert (passed.verdict, passed.ruleset) == ("pass", "collector throughput")
    assert failed.verdict == "fail" and "tracked_stats" in failed.first_failure
