"""Telemetry files beside local runs: real samples, older layouts and broken rows."""

from pathlib import Path

import pytest

from collector.ingest.telemetry import COLUMNS, read_telemetry, telemetry_path
from collector.run.telemetry import Telemetry

SAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "telemetry" / "result_0.telemetry.csv"


def test_a_real_file_of_the_first_layout_reads_with_the_later_columns_null():
    rows, issues = read_telemetry(SAMPLES.read_bytes(), "run1")
    assert issues == []
    assert len(rows) == 32 and {r["device"] for r in rows} == {"0", "1"}
    first = rows[0]
    assert first == {
        "run_id": "run1",
        "time_s": 1.0,
        "device": "0",
        "gpu_util_pct": 0.0,
        "gpu_mem_used_mib": 618.3,
        "gpu_power_w": 78.7,
        "cpu_util_pct": 0.0,
        "seq": 0,
    }
    assert [r["seq"] for r in rows if r["device"] == "1"] == list(range(16))
    assert max(r["gpu_power_w"] for r in rows) == 235.5


def test_the_writer_and_the_reader_agree(tmp_path):
    path = tmp_path / "result_0.telemetry.csv"
    with Telemetry(path, [], interval=0.02):
        pass
    rows, issues = read_telemetry(path.read_bytes(), "r")
    assert issues == [] and rows
    assert all(r["device"] == "cpu" and r["unix_s"] > 1.6e9 for r in rows)
    assert set(rows[0]) == {"run_id", "seq", *COLUMNS}


def test_broken_rows_are_reported_by_line_and_the_rest_kept():
    text = SAMPLES.read_text().splitlines()
    text[3] = "2.0,0,not-a-number,1,2,3"
    text[5] = "3.0,1"
    text[7] = "nan,0,1,2,3,4"
    text.append("")
    rows, issues = read_telemetry("\n".join(text).encode(), "r")
    assert len(rows) == 29
    assert [(i.line, i.code) for i in issues] == [
        (4, "bad-value"),
        (6, "bad-row"),
        (8, "bad-value"),
    ]
    assert all(i.severity == "warning" for i in issues)
    assert "not-a-number" in issues[0].message


@pytest.mark.parametrize(
    ("data", "code"),
    [(b"", "empty"), (b"device,gpu_power_w\n0,1\n", "missing-field")],
)
def test_files_without_a_usable_header_give_no_rows(data, code):
    rows, issues = read_telemetry(data, "r")
    assert rows == [] and [(i.line, i.code) for i in issues] == [(1, code)]


def test_bytes_that_are_not_utf8_are_replaced_and_reported():
    data = SAMPLES.read_bytes().replace(b"\n1.0,0,0,", b"\n1.0,0,\xff,", 1)
    rows, issues = read_telemetry(data, "r")
    assert [(i.line, i.code) for i in issues] == [(None, "not-utf8"), (2, "bad-value")]
    assert len(rows) == 31


def test_unknown_columns_are_ignored_with_a_warning():
    lines = SAMPLES.read_text().splitlines()
    text = "\n".join([lines[0] + ",fan_pct", *(line + ",40" for line in lines[1:])])
    rows, issues = read_telemetry(text.encode(), "r")
    assert [(i.line, i.code) for i in issues] == [(1, "unknown-key")]
    assert len(rows) == 32 and "fan_pct" not in rows[0]


def test_the_file_sits_beside_its_log():
    log = Path("results/sys/ncf/result_3.txt")
    assert telemetry_path(log) == Path("results/sys/ncf/result_3.telemetry.csv")
