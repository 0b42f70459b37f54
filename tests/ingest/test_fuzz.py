"""Mangled real logs never crash the parser, and every problem is recorded."""

import os
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from collector.ingest.rows import parse_log, read_and_parse
from collector.ingest.scan import scan
from collector.ingest.summary import summarize
from collector.ingest.trees import LogEntry
from tests.conftest import LOGS, V05, V07

settings.register_profile(
    "thorough", max_examples=10_000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "default", max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


def _excerpt(path: Path, lines: int = 60) -> bytes:
    """Head and tail of a real log: run_start near the top, run_stop near the bottom."""
    data = path.read_bytes().splitlines(keepends=True)
    marked = [line for line in data if b":::ML" in line]
    return b"".join(marked[: lines // 2] + marked[-lines // 2 :])


def _seeds() -> list[bytes]:
    seeds = [p.read_bytes() for p in sorted(LOGS.glob("*.txt"))]
    for folder in (V05, V07):
        if folder.is_dir():
            picks = sorted(folder.rglob("result_0.txt"))[:6]
            seeds += [_excerpt(p) for p in picks]
    return seeds


SEEDS = _seeds()


@st.composite
def mangled(draw):
    data = bytearray(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(0, 6))):
        op = draw(st.sampled_from(["truncate", "flip", "insert", "delete", "dup", "nul"]))
        pos = draw(st.integers(0, max(len(data) - 1, 0)))
        if op == "truncate":
            del data[pos:]
        elif op == "flip" and data:
            data[pos] = draw(st.integers(0, 255))
        elif op == "insert":
            data[pos:pos] = draw(st.binary(max_size=40)) or b":::MLPv0.5.0 "
        elif op == "delete":
            del data[pos : pos + draw(st.integers(1, 200))]
        elif op == "dup":
            data[pos:pos] = data[pos : pos + draw(st.integers(1, 400))]
        elif op == "nul":
            data[pos:pos] = b"\x00" * draw(st.integers(1, 8))
    return bytes(data)


@given(mangled())
def test_mangled_logs_never_crash_and_problems_are_recorded(data):
    events = scan(data)
    if events.fmt is None:
        assert any(i.severity == "error" for i in events.issues)
        return
    summary = summarize(events)
    assert summary.status in ("success", "failed", "aborted", "incomplete")
    if summary.status == "incomplete":  # no time to train: the reason is recorded
        assert any(i.severity == "error" for i in events.issues)
    assert len(events.keys) == len(events.values) == len(events.lines) == len(events.time_s)
    assert all(i.line is None or i.line >= 1 for i in events.issues)


@given(mangled())
@settings(max_examples=100)
def test_ingest_keeps_a_run_or_records_an_error(data):
    entry = LogEntry(
        Path("/nonexistent/result_0.txt"),
        "result_0.txt",
        "plain",
        None,
        None,
        None,
        None,
        None,
        0,
        None,
    )
    parsed = parse_log(entry, data, "0" * 64)
    assert parsed.run is not None or any(i.severity == "error" for i in parsed.issues)


def test_read_and_parse_reports_an_unreadable_file(tmp_path):
    entry = LogEntry(
        tmp_path / "gone.txt", "gone.txt", "plain", None, None, None, None, None, 0, None
    )
    parsed = read_and_parse(entry)
    assert [(i.code, i.path) for i in parsed.issues] == [("missing", "gone.txt")]
