"""The CLI as a user sees it: exact output, one-line errors, exit status."""

import shutil
import sys

import pytest

import collector
from collector.cli import main
from collector.queries import query
from tests.conftest import LOGS


def cli(monkeypatch, capsys, *args):
    monkeypatch.setattr(sys, "argv", ["collector", *map(str, args)])
    try:
        main()
        code = 0
    except SystemExit as stop:
        code = stop.code
    out, err = capsys.readouterr()
    return code, out, err


def test_ingest_prints_a_summary_and_query_prints_csv(monkeypatch, capsys, tmp_path):
    store = tmp_path / "store"
    code, out, err = cli(monkeypatch, capsys, "ingest", LOGS / "v05_resnet.txt", "--store", store)
    assert (code, err) == (0, "")
    assert out == (
        f"ingested 1 files (0.0 MB): 1 runs added, 0 unchanged, 1 systems, "
        f"0 errors, 0 warnings -> {store}\n"
    )
    code, out, err = cli(monkeypatch, capsys, "query", "runs", "--store", store, "-f", "csv")
    header, row = out.splitlines()
    assert header.startswith(
        "source,round,submitter,division,system_id,system,benchmark,run,"
        "status,minutes,accelerator,accelerators,nodes,precision,"
        "interconnect,scale,"
    )
    assert row.startswith("official,v0.5,unknown,,v0.5/unknown/logs,logs,resnet,0,success,5.0,")


def test_ingest_of_a_broken_file_warns_with_file_and_line_and_exits_1(
    monkeypatch, capsys, tmp_path
):
    folder = tmp_path / "in"
    folder.mkdir()
    shutil.copy(LOGS / "truncated.txt", folder / "result_0.txt")
    shutil.copy(LOGS / "backwards_latin1.txt", folder / "result_1.txt")
    code, out, err = cli(monkeypatch, capsys, "ingest", folder, "--store", tmp_path / "s")
    assert code == 1
    assert err.splitlines() == [
        "error: in/result_0.txt: no run_stop event: log truncated or run killed",
        "warning: in/result_1.txt:3: bytes that are not UTF-8 (first at byte 149)",
        "warning: in/result_1.txt:5: timestamp 1541720050.000 is 53.000 s before an earlier "
        "event (key run_stop)",
        "error: in/result_1.txt:5: run_stop is 50.000 s before run_start",
        "warning: in/result_1.txt: 1 unknown keys kept as events: caf\ufffd_key",
    ]
    assert out.endswith(
        f"2 runs added, 0 unchanged, 1 systems, 2 errors, 3 warnings -> {tmp_path / 's'}\n"
    )


def test_errors_are_one_line_and_exit_1(monkeypatch, capsys, tmp_path):
    assert cli(monkeypatch, capsys, "ingest", tmp_path / "missing") == (
        1,
        "",
        f"error: {tmp_path / 'missing'}: no such file or folder\n",
    )
    code, out, err = cli(monkeypatch, capsys, "query", "nope", "--store", tmp_path)
    known = ", ".join(query.names())
    assert (code, err) == (1, f"error: unknown table 'nope'; known: {known}\n")
    code, out, err = cli(monkeypatch, capsys, "query", "runs", "--format", "xml")
    assert (code, err) == (
        1,
        "error: --format must be one of table, csv, json, parquet, not 'xml'\n",
    )


def test_query_table_format_is_aligned(monkeypatch, capsys, tmp_path):
    store = tmp_path / "store"
    cli(monkeypatch, capsys, "ingest", LOGS / "v05_resnet.txt", "--store", store)
    code, out, _ = cli(
        monkeypatch,
        capsys,
        "query",
        "--sql",
        "SELECT benchmark, status, minutes FROM runs",
        "--store",
        store,
    )
    assert out == (
        "benchmark  status   minutes\n"
        "---------  -------  -------\n"
        "resnet     success  5\n"
        "(1 rows)\n"
    )


def test_query_json_and_parquet(monkeypatch, capsys, tmp_path):
    store = tmp_path / "store"
    cli(monkeypatch, capsys, "ingest", LOGS / "v05_resnet.txt", "--store", store)
    code, out, _ = cli(
        monkeypatch,
        capsys,
        "query",
        "--sql",
        "SELECT 1 AS one, 'x' AS s",
        "-f",
        "json",
        "--store",
        store,
    )
    assert out == '[\n {\n  "one": 1,\n  "s": "x"\n }\n]\n'
    target = tmp_path / "runs.parquet"
    code, _, _ = cli(
        monkeypatch, capsys, "query", "runs", "-f", "parquet", "-o", target, "--store", store
    )
    assert code == 0 and target.stat().st_size > 0


def test_check_prints_verdicts(monkeypatch, capsys, tmp_path):
    code, out, _ = cli(
        monkeypatch,
        capsys,
        "check",
        LOGS / "v05_resnet.txt",
        LOGS / "truncated.txt",
        "--store",
        tmp_path / "s",
    )
    assert code == 1
    assert out == (
        "FAIL truncated.txt [collector mlperf-v0.5]: run_stop logged 0 times, expected "
        "exactly once\n"
        "PASS v05_resnet.txt [collector mlperf-v0.5]\n"
        "checked 2 logs: 1 pass, 1 fail\n"
    )


def test_ingest_of_published_studies_says_how_many_rows(monkeypatch, capsys, tmp_path):
    from collector.ingest.published import load_published
    from tests.conftest import REPO

    folder = REPO / "runs" / "published"
    store = tmp_path / "store"
    code, out, err = cli(monkeypatch, capsys, "ingest", folder, "--store", store)
    rows = load_published(folder).num_rows
    assert (code, err) == (0, "")
    assert out == (
        f"{rows} published study rows loaded; ingested 0 files (0.0 MB): 0 runs added, "
        f"0 unchanged, 0 systems, 0 errors, 0 warnings -> {store}\n"
    )


@pytest.mark.slow  # every derived table, each through a command of its own
def test_query_prints_the_columns_its_contract_displays_within_120_columns(
    monkeypatch, capsys, tmp_path
):
    store = tmp_path / "store"
    cli(monkeypatch, capsys, "ingest", LOGS / "v05_resnet.txt", "--store", store)
    with collector.open(store) as warehouse:  # every table computed once, into the cache
        for name in query.contracts():
            warehouse.table(name)
    for name, contract in query.contracts().items():
        code, out, _ = cli(monkeypatch, capsys, "query", name, "--store", store)
        assert code == 0, name
        lines = out.splitlines()
        assert lines[0].split() == list(contract.display or lines[0].split()), name
        assert max(len(line) for line in lines) <= 120, (name, max(map(len, lines)))
    code, out, _ = cli(monkeypatch, capsys, "query", "runs", "--store", store, "--all-columns")
    assert out.splitlines()[0].split() == [c["name"] for c in query.contracts()["runs"].columns]
    assert "log_path" in out.splitlines()[0]


def test_query_cuts_long_cells_and_says_what_it_left_out(monkeypatch, capsys, tmp_path):
    store = tmp_path / "store"
    cli(monkeypatch, capsys, "ingest", LOGS / "v05_resnet.txt", "--store", store)
    code, out, _ = cli(monkeypatch, capsys, "query", "manifest", "--store", store)
    sha = out.splitlines()[2].split()[-1]
    assert len(sha) == 28 and sha.endswith("…")  # a sha256 is 64 characters
    hidden = len(query.contracts()["manifest"].columns) - len(query.contracts()["manifest"].display)
    assert out.splitlines()[-1] == f"(1 rows; {hidden} more columns with --all-columns)"
