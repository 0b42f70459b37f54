"""The init phase of a log, as the compliance checkers measure it."""

from pathlib import Path

import pytest

from collector.ingest.init_time import init_seconds
from collector.ingest.scan import scan

ROUNDS = Path(__file__).resolve().parents[1] / "fixtures" / "rounds"
DLRM = ROUNDS / "training_results_v2.1/Intel/results/1-node-SPR-pytorch/dlrm/result_0.txt"


def test_first_init_start_to_first_init_stop():
    log = b"\n".join(
        [
            b':::MLLOG {"time_ms": 1000, "key": "init_start", "value": null, "metadata": {}}',
            b':::MLLOG {"time_ms": 2500, "key": "init_start", "value": null, "metadata": {}}',
            b':::MLLOG {"time_ms": 61000, "key": "init_stop", "value": null, "metadata": {}}',
            b':::MLLOG {"time_ms": 62000, "key": "run_start", "value": null, "metadata": {}}',
        ]
    )
    assert init_seconds(scan(log)) == pytest.approx(60.0)


def test_a_log_without_init_stop_has_no_init_time():
    log = b':::MLLOG {"time_ms": 1000, "key": "init_start", "value": null, "metadata": {}}'
    assert init_seconds(scan(log)) is None


def test_a_real_log():
    seconds = init_seconds(scan(DLRM.read_bytes()))
    assert seconds is not None and 0 <= seconds < 30 * 60
