"""The CLI under attack: every failure one line naming the file, exit status 1; outputs only
where asked and never into a store; --wait only a finite number of seconds; Ctrl-C and SIGTERM
end ingest, check and site within seconds, the store intact and the lock released."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from collector.store import snapshot
from tests.cli.test_cli import cli
from tests.conftest import LOGS, REPO


@pytest.fixture
def store(monkeypatch, capsys, tmp_path: Path) -> Path:
    path = tmp_path / "store"
    code, _, err = cli(monkeypatch, capsys, "ingest", LOGS / "v06_ssd.txt", "--store", path)
    assert code == 0, err
    return path


def one_error_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


@pytest.mark.parametrize("wait", ["nan", "inf", "-1", "-inf"])
@pytest.mark.parametrize("command", ["ingest", "check"])
def test_wait_is_only_a_finite_number_of_seconds(monkeypatch, capsys, tmp_path, command, wait):
    code, _, err = cli(
        monkeypatch, capsys, command, LOGS / "v06_ssd.txt", "--store", tmp_path, f"--wait={wait}"
    )
    assert code == 1
    assert one_error_line(err).startswith("error: --wait must be a finite number of seconds")


def test_query_output_only_where_asked(monkeypatch, capsys, store: Path, tmp_path: Path):
    args = ("query", "runs", "--store", store, "-f", "csv", "-o")
    code, _, err = cli(monkeypatch, capsys, *args, tmp_path / "missing" / "x.csv")
    assert code == 1 and "no folder" in one_error_line(err)
    code, _, err = cli(monkeypatch, capsys, *args, tmp_path)
    assert code == 1 and "a folder; name a file" in one_error_line(err)
    victim = tmp_path / "victim.txt"
    victim.write_text("mine")
    (tmp_path / "link.csv").symlink_to(victim)
    code, _, err = cli(monkeypatch, capsys, *args, tmp_path / "link.csv")
    assert (code, err) == (0, "")
    assert victim.read_text() == "mine"
    assert (tmp_path / "link.csv").read_text().startswith("source,")


@pytest.mark.parametrize("target", ["{live}/runs.parquet", "CURRENT", "{live}/new.csv", "LOCK"])
def test_query_output_never_writes_into_a_store(monkeypatch, capsys, store: Path, target: str):
    from collector.store.verify import verify_store

    live = snapshot.current_name(store)
    path = store / target.format(live=live)
    for fmt in ("csv", "parquet"):
        code, _, err = cli(
            monkeypatch, capsys, "query", "runs", "--store", store, "-f", fmt, "-o", path
        )
        assert code == 1 and "inside the store" in one_error_line(err)
    assert not any(f.problem for f in verify_store(store))
    assert snapshot.read(store)["runs"].num_rows == 1


def test_csv_cells_a_spreadsheet_would_run_are_quoted(monkeypatch, capsys, tmp_path: Path):
    folder = tmp_path / "=HYPERLINK(1)"
    folder.mkdir()
    (folder / "result_0.txt").write_bytes((LOGS / "v06_ssd.txt").read_bytes())
    store = tmp_path / "store"
    cli(monkeypatch, capsys, "ingest", folder, "--store", store)
    code, out, _ = cli(monkeypatch, capsys, "query", "runs", "--store", store, "-f", "csv")
    assert "'=HYPERLINK(1)" in out and ",=HYPERLINK" not in out


def test_a_damaged_store_is_one_line_for_every_reader(monkeypatch, capsys, store: Path):
    live = store / snapshot.current_name(store)
    data = (live / "runs.parquet").read_bytes()
    (live / "runs.parquet").write_bytes(data[: len(data) // 2])  # truncated
    for args in (("query", "runs"), ("site", "--out", store.parent / "site"), ("verify",)):
        code, out, err = cli(monkeypatch, capsys, *args, "--store", store)
        assert code == 1, args
        if args[0] == "verify":
            assert f"error: {live}: live snapshot: {live / 'runs.parquet'}: does not match" in out
        else:
            assert "runs.parquet: does not match manifest.json" in one_error_line(err)
    (store / "CURRENT").write_bytes(b"\xffsnap-000001")
    code, _, err = cli(monkeypatch, capsys, "query", "runs", "--store", store)
    assert code == 1 and "is not a snapshot name" in one_error_line(err)


def test_a_full_disk_is_one_line_and_leaves_the_store_as_it_was(monkeypatch, capsys, store: Path):
    import errno

    import pyarrow.parquet as pq

    def full(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(pq, "write_table", full)
    code, _, err = cli(monkeypatch, capsys, "ingest", LOGS / "v05_resnet.txt", "--store", store)
    assert code == 1
    assert one_error_line(err) == (
        f"error: {store}: cannot write a snapshot (No space left on device); snap-000001 stays live"
    )
    assert sorted(p.name for p in store.iterdir()) == ["CURRENT", "LOCK", "snap-000001"]


def test_names_printed_cannot_forge_lines(monkeypatch, capsys, tmp_path: Path):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "result_0\nerror: forged\x1b[2K.txt").write_bytes(b"not a log\n")
    code, out, err = cli(monkeypatch, capsys, "ingest", folder, "--store", tmp_path / "s")
    assert err.splitlines() == [
        "error: in/result_0\\nerror: forged\\x1b[2K.txt: no MLPerf log lines "
        "(:::MLPv0.5.0, :::MLL, :::MLLOG)"
    ]


def test_an_unexpected_error_is_still_one_line(monkeypatch, capsys, store: Path):
    from collector.cli import query as query_command

    def broken(*args: object) -> None:
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(query_command, "render", broken)
    code, _, err = cli(monkeypatch, capsys, "query", "--sql", "SELECT 1", "--store", store)
    assert code == 1
    assert one_error_line(err).startswith("error: unexpected ZeroDivisionError: division by zero")


# Signals, as a terminal's Ctrl-C (SIGINT to the whole process group) or a scheduler's
# SIGTERM sends them, to a real collector process whose parsing is slowed down.

SLOW = textwrap.dedent("""
    import os, sys, time
    from pathlib import Path
    import collector.ingest.pipeline as pipeline
    import collector.ingest.rows as rows
    import collector.ingest.check as check

    marks = Path(sys.argv[1])
    pipeline.PARALLEL_MIN_BYTES = 0  # workers even for a tiny tree

    def slowly(original):
        def wrapped(*args, **kwargs):
            (marks / str(os.getpid())).touch()  # a process at work: the test's signal to act
            time.sleep(0.5)
            return original(*args, **kwargs)
        return wrapped

    rows.read_and_parse = pipeline.read_and_parse = slowly(rows.read_and_parse)
    check.check_log = slowly(check.check_log)
    sys.argv = ["collector", *sys.argv[2:]]
    from collector.cli import main
    main()
""")


def many_logs(root: Path, count: int = 80) -> Path:
    root.mkdir()
    data = (LOGS / "v06_ssd.txt").read_bytes()
    for i in range(count):
        (root / f"result_{i}.txt").write_bytes(data + f"# {i}\n".encode())
    return root


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.parametrize(
    ("command", "sig", "status"),
    [
        ("ingest", signal.SIGINT, 130),
        ("ingest", signal.SIGTERM, 143),
        ("check", signal.SIGINT, 130),
        ("check", signal.SIGTERM, 143),
    ],
)
def test_a_signal_ends_the_command_and_its_workers_within_seconds(
    tmp_path: Path, command: str, sig: signal.Signals, status: int
):
    from collector.store.verify import verify_store

    store = tmp_path / "store"
    snapshot.write(store, snapshot.empty())
    marks = tmp_path / "marks"
    marks.mkdir()
    logs = many_logs(tmp_path / "logs")
    proc = subprocess.Popen(
        [sys.executable, "-c", SLOW, str(marks), command, str(logs), "--store", str(store)],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while len(list(marks.iterdir())) < 2 and proc.poll() is None:
        assert time.monotonic() < deadline, "no worker started"
        time.sleep(0.05)
    workers = [int(p.name) for p in marks.iterdir()]
    sent = time.monotonic()
    if sig == signal.SIGINT:
        os.killpg(proc.pid, sig)  # as Ctrl-C in a terminal
    else:
        proc.send_signal(sig)  # as `kill PID`
    _, err = proc.communicate(timeout=60)
    assert time.monotonic() - sent < 10
    assert proc.returncode == status
    assert err.splitlines() == [f"error: interrupted ({sig.name})"], err
    time.sleep(0.5)
    assert [pid for pid in workers if pid != proc.pid and alive(pid)] == []
    assert snapshot.read(store).name == "snap-000001"
    assert not any(f.problem for f in verify_store(store))
    with snapshot.writing(store, wait_s=0):  # the lock was released
        pass


def test_a_signal_ends_the_site_command(tmp_path: Path, store: Path):
    script = textwrap.dedent("""
        import sys, time
        import collector.site as site
        def slow(*args, **kwargs):
            print("generating", flush=True)
            time.sleep(60)
        site.update = slow
        sys.argv = ["collector", *sys.argv[1:]]
        from collector.cli import main
        main()
    """)
    proc = subprocess.Popen(
        [sys.executable, "-c", script, "site", "--store", str(store), "--out", str(tmp_path / "o")],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout.readline() == "generating\n"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=10)
    assert (proc.returncode, err) == (143, "error: interrupted (SIGTERM)\n")
