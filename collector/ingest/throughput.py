"""What a log's training throughput counts (throughput.yml): all accelerators or one, checked
per log against the samples of one epoch over its epoch time."""

from __future__ import annotations

import math

from collector.ingest import data
from collector.ingest.rounds import rounds


def samples_per_epoch(round_: str, benchmark: str) -> int | None:
    """The training samples of one epoch of `benchmark` in `round_`, where throughput.yml
    holds them."""
    order = [r.name for r in rounds()]
    if round_ not in order:
        return None
    at = order.index(round_)
    for b in data("throughput.yml")["benchmarks"]:
        last = order.index(b["last_round"]) if b["last_round"] else len(order)
        if b["benchmark"] == benchmark and order.index(b["first_round"]) <= at <= last:
            return int(b["samples_per_epoch"])
    return None


def throughput_per(
    logged: float | None, epoch_s: float | None, samples: int | None, accelerators: int | None
) -> str | None:
    """`total` where the logged throughput is the samples of an epoch over its time,
    `accelerator` where it is that over the accelerators, None where neither is within the
    tolerance, or nothing can be checked (one accelerator: both are the same, `total`)."""
    if not logged or not epoch_s or not samples or not accelerators or accelerators < 1:
        return None
    measured = samples / epoch_s
    limit = math.log(data("throughput.yml")["tolerance"])
    off = {
        "total": abs(math.log(logged / measured)),
        "accelerator": abs(math.log(logged * accelerators / measured)),
    }
    best = min(off, key=off.__getitem__) if accelerators > 1 else "total"
    return best if off[best] <= limit else None
