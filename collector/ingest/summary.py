"""Turn the events of one log into the outcome of one run, by the rules in rules.yml."""

from __future__ import annotations

import json
import math
import statistics
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from functools import cache
from itertools import compress
from typing import Any

from collector.ingest import data
from collector.ingest.scan import Events
from collector.ingest.values import (
    EARLIEST_UNIX_S,
    LONGEST_RUN_S,
    BadValue,
    as_float,
    decode_value,
    finite,
    impossible_time,
)


@dataclass
class Eval:
    """One quality evaluation logged during a run."""

    time_s: float
    epoch: float | None
    quality: float
    line: int


@dataclass
class RunSummary:
    """What one log says about its run."""

    status: str = "incomplete"  # success | failed | aborted | incomplete
    run_start_s: float | None = None
    run_stop_s: float | None = None
    time_to_train_s: float | None = None
    quality_target: float | None = None
    quality_best: float | None = None
    epochs: float | None = None
    throughput_samples_per_s: float | None = None
    epoch_s: float | None = None  # median epoch_start to epoch_stop of one epoch, in seconds
    stop_status: str | None = None  # as logged by run_stop, if it said
    submission: dict[str, str] = field(default_factory=dict)  # submission_* keys
    local: dict[str, Any] | None = None  # the collector_run object of a local log
    evals: list[Eval] = field(default_factory=list)


DECODE_BATCH = 1 << 16  # values taken from the log's arrays at a time


def decode_event(text: str, meta_text: str | None, events: Events) -> tuple[Any, dict[str, Any]]:
    """The value and metadata of an event from their texts, whatever the format."""
    value = decode_value(text)
    try:
        meta: dict[str, Any] = json.loads(meta_text) if meta_text else {}
    except RecursionError:
        raise BadValue("metadata nested too deep") from None
    if events.fmt is not None and events.fmt.name == "mlperf-v0.6" and isinstance(value, dict):
        # v0.6 wraps value and metadata in one JSON object
        meta = value.get("metadata") or {}
        value = value.get("value")
    return value, meta if isinstance(meta, dict) else {}


def summarize(events: Events) -> RunSummary:
    """Apply the rules to the events of one log; problems are added to events.issues."""
    r = data("rules.yml")
    out = RunSummary()
    throughputs: list[float] = []
    start_key, stop_key, quality_key = r["start_key"], r["stop_key"], r["quality_key"]
    epoch_keys, target_keys = frozenset(r["epoch_keys"]), frozenset(r["target_keys"])
    interval = r["epoch_interval_keys"]  # [start, stop] of one epoch
    decodes = epoch_keys | target_keys | {quality_key, r["throughput_key"], r["local_run_key"]}
    decodes |= set(interval)
    opened: dict[float, float] = {}
    durations: list[float] = []
    wanted = decodes | {start_key, stop_key}
    epochs: list[float] = []
    keys, lines = events.keys, events.lines
    distinct = set(keys)
    chosen = {key for key in distinct if key in wanted or key[:11] == "submission_"}
    picked = list(compress(range(len(keys)), map(chosen.__contains__, keys)))  # in order
    starts = [i for i in picked if keys[i] == start_key]
    stops = [i for i in picked if keys[i] == stop_key]
    read = [i for i in picked if keys[i] in decodes or keys[i][:11] == "submission_"]
    for i, text, meta_text in _texts(events, read):
        key = keys[i]
        try:
            value, meta = decode_event(text, meta_text, events)
        except (BadValue, ValueError) as exc:
            events.warn("bad-value", f"{key}: {exc}", lines[i])
            continue
        in_epochs = key in epoch_keys or key == quality_key or key in interval
        epoch = _epoch(value, meta) if in_epochs else None
        if epoch is not None and key in interval:
            when = float(events.time_s[i])
            if key == interval[0]:
                opened[epoch] = when
            elif epoch in opened and math.isfinite(when - opened[epoch]):
                durations.append(when - opened.pop(epoch))
        if epoch is not None and key in epoch_keys:
            epochs.append(epoch)
        if key == quality_key:
            quality = as_float(value)
            when = float(events.time_s[i])
            if quality is None:
                events.warn("bad-value", f"{key} has no finite number: {text[:60]}", lines[i])
            elif not math.isfinite(when):
                events.warn("bad-value", f"{key} logged at time {when}", lines[i])
            else:
                out.evals.append(Eval(when, epoch, quality, lines[i]))
        elif key in target_keys:
            out.quality_target = as_float(value)
            if out.quality_target is None and value is not None:
                events.warn("bad-value", f"{key} has no finite number: {text[:60]}", lines[i])
        elif key == r["throughput_key"] and isinstance(value, dict):
            tput = as_float(value.get("throughput"))
            if tput is not None and tput > 0:
                throughputs.append(tput)
        elif key == r["local_run_key"] and isinstance(value, dict):
            out.local = value
        elif key.startswith("submission_") and value is not None:
            out.submission[key.removeprefix("submission_")] = str(value)
    _timing(events, out, starts, stops)
    out.epochs = max(epochs) if epochs else None
    out.throughput_samples_per_s = statistics.median(throughputs) if throughputs else None
    positive = [d for d in durations if d > 0]
    out.epoch_s = statistics.median(positive) if positive else None
    if out.evals:
        out.quality_best = max(e.quality for e in out.evals)
    out.status = _status(out, r["relative_tolerance"])
    _unknown_keys(events, distinct)
    return out


def _texts(events: Events, picked: list[int]) -> Iterator[tuple[int, str, str | None]]:
    """(index, value text, metadata text) of the events picked, taken in batches."""
    for start in range(0, len(picked), DECODE_BATCH):
        batch = picked[start : start + DECODE_BATCH]
        yield from zip(batch, events.values_at(batch), events.metas_at(batch), strict=True)


def _epoch(value: Any, meta: dict[str, Any]) -> float | None:
    for candidate in (
        meta.get("epoch_num"),
        meta.get("first_epoch_num"),
        value.get("epoch") if isinstance(value, dict) else None,
    ):
        if finite(candidate) is not None:
            return finite(candidate)
    return finite(value)  # v0.5 train_epoch: <n>


def _timing(events: Events, out: RunSummary, starts: list[int], stops: list[int]) -> None:
    """Start, stop and time to train. An impossible time (not a number, infinite, negative,
    in the future) or duration (negative, over a year) is an error and leaves the run
    without it, so never a success. Times before 2015 are a clock of another origin
    (some official logs count from their machine's boot): a warning, durations kept."""
    now = time.time()
    if not starts:
        events.error("missing-run-start", "no run_start event")
    else:
        if len(starts) > 1:
            events.warn(
                "duplicate-run-start",
                f"{len(starts)} run_start events; the first counts",
                events.lines[starts[1]],
            )
        out.run_start_s = _possible(events, starts[0], now)
    if not stops:
        events.error("missing-run-stop", "no run_stop event: log truncated or run killed")
        return
    last = stops[-1]
    out.run_stop_s = _possible(events, last, now)
    _warn_clock_origin(events, [*starts[:1], last])
    if out.run_stop_s is None:
        return
    try:
        value, meta = decode_event(events.values_at([last])[0], events.metas_at([last])[0], events)
    except (BadValue, ValueError):
        value, meta = None, {}
    if isinstance(meta.get("status"), str):
        out.stop_status = meta["status"].lower()
    elif isinstance(value, dict) and isinstance(value.get("success"), bool):
        out.stop_status = "success" if value["success"] else "failed"
    if out.run_start_s is not None:
        elapsed = out.run_stop_s - out.run_start_s
        if elapsed < 0:
            events.error(
                "clock-backwards",
                f"run_stop is {-elapsed:.3f} s before run_start",
                events.lines[last],
            )
        elif elapsed > LONGEST_RUN_S:
            events.error(
                "impossible-time",
                f"run_stop is {elapsed:.6g} s after run_start: longer than any training run",
                events.lines[last],
            )
        else:
            out.time_to_train_s = elapsed


def _possible(events: Events, i: int, now: float) -> float | None:
    """The time of event i, or None (and an error) when no run can have logged it."""
    seconds = float(events.time_s[i])
    why = impossible_time(seconds, now)
    if why is None:
        return seconds
    events.error("impossible-time", f"{events.keys[i]} time {seconds!r} s {why}", events.lines[i])
    return None


def _warn_clock_origin(events: Events, picked: list[int]) -> None:
    """One warning at the first of the run's start and stop that predates 2015."""
    for i in picked:
        seconds = float(events.time_s[i])
        if 0 <= seconds < EARLIEST_UNIX_S:
            events.warn(
                "clock-origin",
                f"{events.keys[i]} time {seconds!r} s is before 2015-01-01: the log's clock "
                "does not count from the Unix epoch; its durations are kept",
                events.lines[i],
            )
            return


def _status(out: RunSummary, tolerance: float) -> str:
    if out.run_start_s is None or out.run_stop_s is None or out.time_to_train_s is None:
        return "incomplete"
    if out.stop_status in ("aborted", "abort"):
        return "aborted"
    if out.quality_target is not None and out.quality_best is not None:
        target = out.quality_target
        reached = out.quality_best >= target - abs(target) * tolerance
        return "success" if reached else "failed"
    if out.quality_target is not None:  # a target but no evaluation: cannot have converged
        return "failed"
    return "success" if out.stop_status == "success" else "failed"


def with_target(summary: RunSummary, target: float) -> RunSummary:
    """The summary judged against a quality target that its log does not state."""
    out = replace(summary, quality_target=target)
    out.status = _status(out, data("rules.yml")["relative_tolerance"])
    return out


def _unknown_keys(events: Events, distinct: set[str]) -> None:
    if events.fmt is None:
        return
    exact, prefixes = _vocabulary(events.fmt.name)
    unknown = sorted(k for k in distinct if k not in exact and not k.startswith(prefixes))
    if unknown:
        shown = ", ".join(unknown[:5]) + (" ..." if len(unknown) > 5 else "")
        events.warn("unknown-key", f"{len(unknown)} unknown keys kept as events: {shown}")


@cache
def _vocabulary(fmt: str) -> tuple[frozenset[str], tuple[str, ...]]:
    """The keys (exact, and prefixes) a format is known to log."""
    vocab = data("rules.yml")["known_keys"].get(fmt, {})
    exact = frozenset(vocab.get("exact", ()))
    if fmt == "mllog":  # and every key constant of mlperf-logging
        from mlperf_logging.mllog import constants

        exact |= {v for k, v in vars(constants).items() if k.isupper() and isinstance(v, str)}
    return exact, tuple(vocab.get("prefixes", ()))
