"""Writers and readers of one store at once, as separate processes: nothing lost, no reader
ever sees its snapshot disappear."""

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from collector.ingest.pipeline import ingest
from collector.store import KEEP
from tests.conftest import LOGS, REPO, sql, table

RUNS_PER_TREE = 2


def make_tree(root: Path, n: int) -> Path:
    """A tiny tree of RUNS_PER_TREE logs whose bytes no other tree has."""
    tree = root / f"tree{n}"
    tree.mkdir(parents=True)
    for run in range(RUNS_PER_TREE):
        data = (LOGS / "v05_resnet.txt").read_bytes() + f"end of tree {n} run {run}\n".encode()
        (tree / f"result_{run}.txt").write_bytes(data)
    return tree


def collector(*args: object) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "collector.cli", *map(str, args)],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.slow
@pytest.mark.parametrize(("writers", "trials"), [(2, 3), (4, 2), (8, 2)])
def test_concurrent_ingests_store_every_run_of_every_tree(tmp_path, writers, trials):
    for trial in range(trials):
        root = tmp_path / str(trial)
        store = root / "store"
        trees = [make_tree(root, n) for n in range(writers)]
        procs = [collector("ingest", tree, "--store", store, "--wait", 120) for tree in trees]
        results = [proc.communicate(timeout=300) for proc in procs]
        assert [p.returncode for p in procs] == [0] * writers, [err for _, err in results]
        added = [int(re.search(r"(\d+) runs added", out).group(1)) for out, _ in results]
        assert added == [RUNS_PER_TREE] * writers
        paths = set(table(store, "runs").column("log_path").to_pylist())
        assert paths == {f"tree{n}/result_{r}.txt" for n in range(writers) for r in (0, 1)}
        left = sorted(p.name for p in store.iterdir() if p.name.startswith((".", "snap-")))
        assert left == [f"snap-{n:06d}" for n in range(writers - KEEP + 1, writers + 1) if n > 0]


WRITER = textwrap.dedent("""
    import itertools, pathlib, sys, time
    from collector.ingest.pipeline import ingest
    from tests.store.test_concurrency import make_tree
    root, store = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    print("ready", flush=True)
    for n in itertools.count(1):
        print(ingest([make_tree(root, n)], store=store).snapshot, flush=True)
        time.sleep(0.05)  # leave the readers some of the machine
        if (root / "stop").exists():
            break
""")


@pytest.mark.slow
def test_queries_during_a_loop_of_ingests_never_fail(tmp_path):
    store = tmp_path / "store"
    ingest([make_tree(tmp_path, 0)], store=store)
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(tmp_path), str(store)],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE,
        text=True,
    )
    assert writer.stdout.readline() == "ready\n"
    errors, counts, seen = [], [], set()
    # queries until three snapshots have replaced the first (at least 20, at most 100)
    while len(counts) < 100 and (len(counts) < 20 or len(seen) < 4):
        seen.add((store / "CURRENT").read_text())
        try:
            counts.append(
                sql(
                    store,
                    "SELECT count(DISTINCT run_id) AS n FROM store.runs JOIN store.events "
                    "USING (run_id)",
                )
                .column("n")[0]
                .as_py()
            )
        except Exception as exc:  # any failure of a reader counts
            errors.append(str(exc))
    (tmp_path / "stop").touch()
    written = writer.communicate(timeout=300)[0].split()
    assert writer.returncode == 0
    assert errors == []
    assert len(written) >= 3  # the queries ran while snapshots were replaced
    assert counts == sorted(counts) and counts[-1] > counts[0]


def test_a_writer_that_cannot_get_the_store_in_time_says_so_in_one_line(tmp_path):
    store = tmp_path / "store"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import pathlib, sys\n"
            "from collector.store import writing\n"
            f"with writing(pathlib.Path({str(store)!r})):\n"
            "    print('holding', flush=True)\n"
            "    sys.stdin.readline()\n",
        ],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline() == "holding\n"
        waiting = collector("ingest", make_tree(tmp_path, 0), "--store", store, "--wait", 1)
        out, err = waiting.communicate(timeout=120)
    finally:
        holder.kill()
        holder.wait()
    assert (waiting.returncode, out) == (1, "")
    assert err.splitlines() == [
        f"waiting up to 1 s for another writer of {store} to finish",
        f"error: {store}: another writer still holds LOCK after 1 s; try again when it has "
        "finished, or wait longer (--wait)",
    ]
