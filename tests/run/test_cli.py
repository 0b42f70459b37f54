import pytest
from typer.testing import CliRunner

import collector.cli.run  # noqa: F401  (registers the command)
from collector.cli import app
from collector.errors import RunError


def test_cli_dry_run_prints_one_line_per_run(tmp_path):
    res = CliRunner().invoke(
        app,
        ["run", "--benchmarks", "ssd,ncf", "--repeats", "2", "--dry-run", "--out", str(tmp_path)],
    )
    assert res.exit_code == 0, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 4
    assert (
        lines[0].startswith("1/4 ")
        and " ssd scale=tiny repeat=1/2 workers=1 precision=fp32 " in lines[0]
    )
    assert lines[3].endswith("/ncf/result_1.txt")
    assert not (tmp_path / "results").exists()  # a dry run writes nothing


def test_cli_reports_bad_options_as_errors(tmp_path):
    res = CliRunner().invoke(app, ["run", "--gpus", "two", "--dry-run", "--out", str(tmp_path)])
    assert res.exit_code != 0
    assert "--gpus expects integers" in str(res.exception)


def test_node_processes_check_their_options_as_the_cli_does():
    from collector.run.node import options

    argv = ["--out", "x", "--nodes", "2", "--gpus-per-node", "1"]
    assert options(argv).nodes == 2
    with pytest.raises(RunError, match="one --interconnect"):
        options([*argv, "--interconnect", "default,no-p2p"])
    with pytest.raises(RunError, match="unknown scale"):
        options([*argv, "--scale", "huge"])
