import pytest

from collector.ingest.scan import scan
from collector.ingest.summary import summarize
from tests.conftest import LOGS


def summary_of(name):
    events = scan((LOGS / name).read_bytes())
    return events, summarize(events)


def test_v05_run_reaches_target_within_float32_tolerance():
    _, s = summary_of("v05_resnet.txt")
    assert s.status == "success"
    assert s.quality_target == 0.749
    assert s.quality_best == 0.7489999  # printed float32, counts as reaching 0.749
    assert s.time_to_train_s == pytest.approx(300.0)
    assert s.epochs == 5.0
    assert [e.epoch for e in s.evals] == [1.0, 3.0, 5.0]


def test_v06_without_target_falls_back_to_run_stop_status():
    _, s = summary_of("v06_ssd.txt")
    assert s.quality_target is None
    assert s.stop_status == "success"
    assert s.status == "success"
    assert s.submission["benchmark"] == "ssd"
    assert s.epochs == 20.0


def test_local_mllog_run_carries_its_configuration():
    _, s = summary_of("mllog_local.txt")
    assert s.status == "success"
    assert s.local["precision"] == "fp32"
    assert s.throughput_samples_per_s == 1100.0
    assert s.time_to_train_s == pytest.approx(4.3, abs=1e-6)


def test_truncated_log_is_incomplete_and_an_error():
    events, s = summary_of("truncated.txt")
    assert s.status == "incomplete"
    assert s.time_to_train_s is None
    assert [(i.severity, i.code) for i in events.issues] == [("error", "missing-run-stop")]


def test_stop_before_start_is_an_error_and_no_time():
    events, s = summary_of("backwards_latin1.txt")
    assert s.status == "incomplete"
    assert ("error", "clock-backwards") in [(i.severity, i.code) for i in events.issues]


def test_unknown_keys_and_bad_values_are_warnings():
    events, s = summary_of("unknown_key_float32.txt")
    found = {(i.severity, i.code) for i in events.issues}
    assert {("warning", "unknown-key"), ("warning", "bad-value")} <= found
    assert s.status == "success"  # 21.799999237 is 21.8 in float32


def test_failed_run_when_target_not_reached():
    data = (
        b":::MLPv0.5.0 ncf 1541720001.0 (a:1) run_start\n"
        b":::MLPv0.5.0 ncf 1541720002.0 (a:1) eval_target: 0.635\n"
        b':::MLPv0.5.0 ncf 1541720003.0 (a:1) eval_accuracy: {"epoch": 0, "value": 0.6}\n'
        b':::MLPv0.5.0 ncf 1541720004.0 (a:1) run_stop: {"success": false}\n'
    )
    s = summarize(scan(data))
    assert (s.status, s.time_to_train_s, s.stop_status) == ("failed", 3.0, "failed")


def test_aborted_local_run():
    data = (
        b':::MLLOG {"time_ms": 1541720001000, "key": "run_start", "value": null}\n'
        b':::MLLOG {"time_ms": 1541720002000, "key": "run_stop", "value": null, '
        b'"metadata": {"status": "aborted"}}\n'
    )
    assert summarize(scan(data)).status == "aborted"
