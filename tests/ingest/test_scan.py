from collector.ingest.scan import MAX_EVENT_BYTES, scan
from tests.conftest import LOGS


def codes(events):
    return [(i.severity, i.code, i.line) for i in events.issues]


def test_v05_log_with_prefixes_midline_tokens_and_duplicates():
    events = scan((LOGS / "v05_resnet.txt").read_bytes())
    assert events.fmt.name == "mlperf-v0.5"
    assert events.benchmark == "resnet"
    assert events.keys.count("opt_name") == 1  # the DEBUG: duplicate is dropped
    assert "train_epoch" in events.keys and events.keys.count("train_epoch") == 2
    assert events.lines[events.keys.index("run_start")] == 3
    assert events.values[events.keys.index("input_batch_size")] == "32"
    assert events.issues == []


def test_v06_and_mllog_formats():
    v06 = scan((LOGS / "v06_ssd.txt").read_bytes())
    assert v06.fmt.name == "mlperf-v0.6"
    assert v06.keys[:2] == ["submission_benchmark", "run_start"]
    mllog = scan((LOGS / "mllog_local.txt").read_bytes())
    assert mllog.fmt.name == "mllog"
    assert mllog.time_s[0] == 1763700000.0
    assert (
        mllog.metadata[-1] == '{"file": "collector/run/log.py", "lineno": 70, "status": "success"}'
    )


def test_empty_binary_and_plain_text_are_errors():
    assert codes(scan(b"")) == [("error", "empty", None)]
    assert ("error", "binary", None) in codes(scan((LOGS / "binary.txt").read_bytes()))
    assert codes(scan(b"hello\n")) == [("error", "no-events", None)]


def test_non_utf8_and_clock_backwards_are_warnings_with_lines():
    events = scan((LOGS / "backwards_latin1.txt").read_bytes())
    assert ("warning", "not-utf8", 3) in codes(events)
    assert ("warning", "clock-backwards", 5) in codes(events)
    assert len(events) == 5  # nothing lost


def test_unparsable_marker_lines_are_reported_not_fatal():
    events = scan((LOGS / "unknown_key_float32.txt").read_bytes())
    assert ("warning", "bad-line", 5) in codes(events)
    assert len(events) == 6


def test_a_ten_megabyte_line_is_skipped_with_a_warning():
    head = (LOGS / "v05_resnet.txt").read_bytes()
    huge = b":::MLPv0.5.0 resnet 1541720290.0 (x.py:1) opt_name: " + b"x" * (10 << 20) + b"\n"
    events = scan(head + huge)
    assert MAX_EVENT_BYTES < 10 << 20
    assert [c for c in codes(events) if c[1] == "line-too-long"] == [
        ("warning", "line-too-long", head.count(b"\n") + 1)
    ]
    assert len(events) == len(scan(head))


def test_mixed_formats_are_reported():
    data = (LOGS / "v05_resnet.txt").read_bytes() + (LOGS / "v06_ssd.txt").read_bytes()
    events = scan(data)
    assert events.fmt.name == "mlperf-v0.5"
    assert ("warning", "mixed-formats", None) in codes(events)


def test_mllog_duplicates_and_lines_in_another_layout():
    lines = (LOGS / "mllog_local.txt").read_bytes().splitlines(keepends=True)
    plain = scan(b"".join(lines))
    doubled = scan(b"".join([*lines[:3], b"rank0: " + lines[2], *lines[3:]]))
    assert (doubled.keys, doubled.values) == (plain.keys, plain.values)
    assert list(doubled.lines) == [n if n <= 3 else n + 1 for n in plain.lines]
    other = b':::MLLOG {"key": "seed", "value": 7, "time_ms": 1763700000002.5}\n'
    mixed = scan(b"".join([*lines[:3], other, *lines[3:]]))
    assert mixed.keys == [*plain.keys[:3], "seed", *plain.keys[3:]]
    assert (mixed.values[3], mixed.metadata[3], mixed.lines[3]) == ("7", None, 4)
    assert mixed.time_s[3] == 1763700000002.5 * 0.001
    assert mixed.metadata[:3] == plain.metadata[:3] and mixed.issues == plain.issues


def test_a_large_log_read_in_pieces_gives_the_events_of_the_whole(tmp_path, monkeypatch):
    from collector.ingest import files

    monkeypatch.setattr(files, "PIECE_BYTES", 230)  # twice the longest line: none is cut
    for name in ("mllog_local.txt", "v06_ssd.txt", "backwards_latin1.txt", "truncated.txt"):
        data = (LOGS / name).read_bytes()
        path = tmp_path / name
        path.write_bytes(data)
        large = files.read_log(path)
        assert isinstance(large, files.LargeFile) and len(large) == len(data)
        assert len(list(large.pieces())) > 1
        whole, pieces = scan(data), scan(large)
        assert pieces.fmt == whole.fmt and pieces.keys == whole.keys, name
        assert pieces.values == whole.values and pieces.metadata == whole.metadata
        assert list(pieces.lines) == list(whole.lines) and list(pieces.time_s) == list(whole.time_s)
        assert pieces.issues == whole.issues, name
        import hashlib

        assert large.sha256() == hashlib.sha256(data).hexdigest()


def test_a_large_log_that_changes_while_read_is_refused(tmp_path, monkeypatch):
    import pytest

    from collector.ingest import files

    monkeypatch.setattr(files, "PIECE_BYTES", 300)
    path = tmp_path / "result_0.txt"
    path.write_bytes((LOGS / "mllog_local.txt").read_bytes() * 3)
    large = files.read_log(path)
    path.write_bytes((LOGS / "mllog_local.txt").read_bytes() * 4)
    with pytest.raises(files.Refused, match="changed while it was read"):
        scan(large)
