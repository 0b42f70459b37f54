import os
import subprocess
import sys
import time

import psutil
import pytest

from collector.ingest.parallel import map_batches, split_by_size


def _tag(batch, offset):
    if batch == ["boom"]:
        raise ValueError("boom")
    return [(x + offset, os.getpid()) for x in batch]


@pytest.mark.parametrize("processes", [1, 2, 3, 8])
def test_batches_keep_order_and_cover_every_item(processes):
    items = list(range(50))
    sizes = [1 + (i * 37) % 11 for i in items]
    batches = split_by_size(items, sizes, processes)
    assert [x for batch in batches for x in batch] == items
    assert all(batches)
    assert split_by_size([], [], processes) == []


def test_map_batches_returns_results_in_order_from_worker_processes():
    batches = split_by_size(list(range(200)), [1] * 200, 2)
    results = map_batches(_tag, batches, (1000,), 2)
    assert [x for result in results for x, _ in result] == list(range(1000, 1200))
    assert os.getpid() not in {pid for result in results for _, pid in result}
    assert map_batches(_tag, [[1], [2]], (0,), 1) == [[(1, os.getpid())], [(2, os.getpid())]]


def test_map_batches_raises_what_a_batch_raised():
    batches = [[1], [2], ["boom"], [3], [4], [5]]
    with pytest.raises(ValueError, match="boom"):
        map_batches(_tag, batches, (0,), 2)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a Linux parent-death signal")
def test_workers_end_when_the_caller_is_killed():
    code = "import time\nfrom collector.ingest.parallel import map_batches\n"
    code += "map_batches(time.sleep, [30.0] * 4, (), 3)\n"
    caller = subprocess.Popen([sys.executable, "-c", code])
    workers: list[psutil.Process] = []
    deadline = time.monotonic() + 30
    while len(workers) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
        workers = psutil.Process(caller.pid).children(recursive=True)
    assert len(workers) >= 2
    caller.kill()
    caller.wait()
    _, alive = psutil.wait_procs(workers, timeout=10)
    assert not alive
