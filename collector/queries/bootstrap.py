"""Percentile-bootstrap intervals as vectorised DuckDB functions over lists of run values.

bootstrap_mean(values DOUBLE[]) and bootstrap_ratio(numerator DOUBLE[], denominator DOUBLE[])
return STRUCT(low DOUBLE, high DOUBLE): the nearest-rank percentile interval, at the level of
parameters.yml, of the mean of a list (or of the ratio of two lists' means) over `resamples`
resamples drawn with replacement.

A list of n values is sorted (so its order does not matter) and resampled with the positions
``Generator(PCG64([seed, n, side])).integers(0, n, (resamples, n))``, side 0 for a mean or a
numerator and 1 for a denominator: the draws depend only on the seed, the side and n, so the
same values give the same interval in every process, and the two sides of a ratio are drawn
independently. The ends are the lo-th and hi-th smallest resampled statistics (1-based),
lo = max(1, ceil(resamples * (1 - level) / 2)), hi = ceil(resamples * (1 + level) / 2): the
25th and 975th of 1000 at level 0.95. Means are taken relative to a list's smallest value, so
a constant list gives exactly its value.

NULL elements are left out. NULL or empty lists, lists holding an infinite value, a mean of one
value and a ratio of two one-value lists give NULL; a one-value side beside a side of several
values is held fixed. A resampled denominator of 0 gives an infinite end; a ratio that is 0 / 0
in any resample has no interval (NULL).

bootstrap_score(values DOUBLE[], low BIGINT, high BIGINT) and bootstrap_score_ratio(numerator,
low, high, denominator, low, high) are the same percentile bootstrap of the round's scoring rule
rather than of a plain mean: each resample of n runs (the same draws) is sorted and averaged
without its `low` fastest and `high` slowest values (MLPerf's olympic mean; pass the times
already multiplied by the RCP factor). A list of fewer than `min_runs` values (parameters.yml:
3) has no interval, nor does one that leaves no value to average; in a ratio, both sides need
them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa

from collector.queries import parameters

INTERVAL = pa.struct([("low", pa.float64()), ("high", pa.float64())])
CHUNK_ROWS = 256  # rows resampled at a time: two buffers of 2 MB at 1000 resamples
Lists = tuple[np.ndarray, np.ndarray, np.ndarray]  # each list's start and size, the values


def _lists(column: pa.Array | pa.ChunkedArray) -> Lists:
    """(starts, sizes, values) of a list column, each list's finite values sorted; a list
    holding an infinite value gets size 0."""
    import pyarrow.compute as pc  # loaded when an interval is computed: a slow import

    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks() if column.num_chunks else pa.array([], column.type)
    rows = _numpy(pc.list_parent_indices(column), -1)
    values = _numpy(pc.cast(pc.list_flatten(column), pa.float64()), np.nan)
    keep = ~np.isnan(values)  # NULL elements become NaN
    rows, values = rows[keep], values[keep]
    infinite = np.bincount(rows[np.isinf(values)], minlength=len(column)) > 0
    order = np.lexsort((values, rows))
    rows, values = rows[order], values[order]
    sizes = np.bincount(rows, minlength=len(column))
    starts = np.cumsum(sizes) - sizes
    return starts, np.where(infinite, 0, sizes), values


def _numpy(array: pa.Array, null: float) -> np.ndarray:
    """A fixed-width numeric Arrow array as NumPy, NULL as `null`, read from its buffer:
    pyarrow's to_numpy (and pa.array from NumPy) load pandas, 0.1 s on every query that
    computes an interval."""
    import pyarrow.compute as pc

    if array.null_count:
        array = pc.fill_null(array, pa.scalar(null, array.type))
    kind = "f" if pa.types.is_floating(array.type) else "i"
    dtype = np.dtype(f"{kind}{array.type.bit_width // 8}")
    data = array.buffers()[1]
    if data is None:  # an empty array
        return np.empty(0, dtype)
    return np.frombuffer(data, dtype, count=len(array), offset=array.offset * dtype.itemsize)


def _struct(low: np.ndarray, high: np.ndarray) -> pa.StructArray:
    """The intervals as Arrow (NULL where `low` is NaN), built from the arrays' buffers."""

    def floats(x: np.ndarray) -> pa.Array:
        x = np.ascontiguousarray(x, dtype=np.float64)
        return pa.Array.from_buffers(pa.float64(), len(x), [None, pa.py_buffer(x)])

    valid = np.packbits(~np.isnan(low), bitorder="little")
    mask = pa.Array.from_buffers(pa.bool_(), len(low), [None, pa.py_buffer(~valid)])
    return pa.StructArray.from_arrays([floats(low), floats(high)], fields=list(INTERVAL), mask=mask)


@lru_cache(maxsize=64)
def _weights(seed: int, resamples: int, n: int, side: int) -> np.ndarray:
    """W.T (n x resamples): how often each of n positions is drawn in each resample, / n."""
    draws = np.random.Generator(np.random.PCG64([seed, n, side])).integers(0, n, (resamples, n))
    draws += np.arange(resamples)[:, None] * n
    counts = np.bincount(draws.ravel(), minlength=resamples * n).reshape(resamples, n)
    weights = np.ascontiguousarray(counts.T / n)
    weights.setflags(write=False)
    return weights


def _means(lists: Lists, rows: np.ndarray, seed: int, side: int, out: np.ndarray) -> None:
    """out = resampled means of the lists at `rows`, all of one size, relative to their least
    value (added back), so that a constant list gives exactly its value."""
    starts, sizes, values = lists
    n = int(sizes[rows[0]])
    block = values[starts[rows, None] + np.arange(n)]
    least = block[:, :1]
    # einsum's own loop, not BLAS: BLAS's threads spin between the many small products and
    # take the cores from DuckDB's threads
    np.einsum("rn,nb->rb", block - least, _weights(seed, out.shape[1], n, side), out=out)
    out += least


def _trimmed(
    data: tuple[Lists, np.ndarray, np.ndarray],
    rows: np.ndarray,
    seed: int,
    side: int,
    out: np.ndarray,
) -> None:
    """out = resampled olympic means of the lists at `rows` of one side (its lists, and the
    values dropped at the low and high end), all of one size n and the same drops: each
    resample sorted and averaged without its least and greatest values."""
    (starts, sizes, values), low_drop, high_drop = data
    n, low, high = int(sizes[rows[0]]), int(low_drop[rows[0]]), int(high_drop[rows[0]])
    block = values[starts[rows, None] + np.arange(n)]  # each row ascending
    draws = np.random.Generator(np.random.PCG64([seed, n, side])).integers(0, n, (out.shape[1], n))
    draws.sort(axis=1)  # the values are ascending: sorted positions give sorted resamples
    out[:] = block[:, draws[:, low : n - high]].mean(axis=2)


def _percentiles(
    sides: list[Any],
    defined: np.ndarray,
    shapes: np.ndarray,
    statistic: Callable[[Any, np.ndarray, int, int, np.ndarray], None],
    seed: int,
    resamples: int,
    level: float,
) -> pa.StructArray:
    """The nearest-rank interval of the statistic of one side, or of the ratio of two sides'
    statistics, of each `defined` row (NULL elsewhere, and where a statistic is 0 / 0);
    `statistic(data, rows, seed, side, out)` (`_means` or `_trimmed`) fills `out` with the
    resampled statistics of `rows` of one side. Rows of the same `shapes` row are resampled
    together, CHUNK_ROWS at a time, into buffers used again for every chunk (fresh memory
    costs more than the arithmetic)."""
    lo = max(1, math.ceil(resamples * (1 - level) / 2 - 1e-9))
    hi = min(resamples, math.ceil(resamples * (1 + level) / 2 - 1e-9))
    low, high = np.full(defined.size, np.nan), np.full(defined.size, np.nan)
    todo = np.flatnonzero(defined)
    groups = np.unique(shapes[todo], axis=0, return_inverse=True)[1].ravel()
    buffers = np.empty((len(sides), min(CHUNK_ROWS, todo.size), resamples))
    for group in range(groups.max(initial=-1) + 1):
        members = todo[groups == group]
        for start in range(0, members.size, CHUNK_ROWS):
            rows = members[start : start + CHUNK_ROWS]
            stats = buffers[:, : rows.size]
            for side, data in enumerate(sides):
                statistic(data, rows, seed, side, stats[side])
            if len(sides) == 2:
                with np.errstate(divide="ignore", invalid="ignore"):  # x / 0 is inf, 0 / 0 NaN
                    np.divide(stats[0], stats[1], out=stats[0])
            stats = stats[0]
            stats.sort(axis=1)  # NaN last
            low[rows], high[rows] = stats[:, lo - 1], stats[:, hi - 1]
            low[rows[np.isnan(stats[:, -1])]] = np.nan
    return _struct(low, high)


def _score_intervals(
    sides: list[tuple[Lists, np.ndarray, np.ndarray]],
    min_runs: int,
    seed: int,
    resamples: int,
    level: float,
) -> pa.StructArray:
    """The nearest-rank interval of the olympic mean of one list, or of the ratio of two lists'
    olympic means (each side: its lists, and the values dropped at the low and high end)."""
    defined = np.ones(len(sides[0][1]), dtype=bool)
    for (_, sizes, _), low_drop, high_drop in sides:
        defined &= (sizes >= min_runs) & (sizes - low_drop - high_drop >= 1)
        defined &= (low_drop >= 0) & (high_drop >= 0)
    shapes = np.stack([col for lists, a, b in sides for col in (lists[1], a, b)], axis=1)
    return _percentiles(sides, defined, shapes.astype(np.int64), _trimmed, seed, resamples, level)


def _counts(column: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """An integer column as int64, NULL as -1 (which leaves no interval)."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks() if column.num_chunks else pa.array([], pa.int64())
    return _numpy(column, -1).astype(np.int64)


def functions(
    seed: int, resamples: int, level: float, min_runs: int = 3
) -> dict[str, Callable[..., pa.StructArray]]:
    """The Arrow functions bootstrap_mean, bootstrap_ratio, bootstrap_score and
    bootstrap_score_ratio for one set of parameters."""
    if resamples < 1 or not 0 < level < 1 or min_runs < 1:
        raise ValueError(
            f"bootstrap needs resamples >= 1, 0 < level < 1 and min_runs >= 1: "
            f"{resamples}, {level}, {min_runs}"
        )

    def bootstrap_score(values, low, high) -> pa.StructArray:  # noqa: ANN001
        side = (_lists(values), _counts(low), _counts(high))
        return _score_intervals([side], min_runs, seed, resamples, level)

    def bootstrap_score_ratio(top, top_low, top_high, bottom, bottom_low, bottom_high):  # noqa: ANN001, ANN202
        sides = [
            (_lists(top), _counts(top_low), _counts(top_high)),
            (_lists(bottom), _counts(bottom_low), _counts(bottom_high)),
        ]
        return _score_intervals(sides, min_runs, seed, resamples, level)

    def bootstrap_mean(values: pa.Array | pa.ChunkedArray) -> pa.StructArray:
        lists = _lists(values)
        sizes = lists[1]
        return _percentiles([lists], sizes >= 2, sizes[:, None], _means, seed, resamples, level)

    def bootstrap_ratio(
        numerator: pa.Array | pa.ChunkedArray, denominator: pa.Array | pa.ChunkedArray
    ) -> pa.StructArray:
        top, bottom = _lists(numerator), _lists(denominator)
        n, m = top[1], bottom[1]
        defined = (n >= 1) & (m >= 1) & ((n >= 2) | (m >= 2))
        shapes = np.stack([n, m], axis=1)
        return _percentiles([top, bottom], defined, shapes, _means, seed, resamples, level)

    return {
        "bootstrap_mean": bootstrap_mean,
        "bootstrap_ratio": bootstrap_ratio,
        "bootstrap_score": bootstrap_score,
        "bootstrap_score_ratio": bootstrap_score_ratio,
    }


def register(con: duckdb.DuckDBPyConnection, params: parameters.Table | None = None) -> None:
    """Create bootstrap_mean, bootstrap_ratio, bootstrap_score and bootstrap_score_ratio on
    `con`, with the parameters of parameters.yml (or of a one-row table with seed, resamples,
    level and optionally min_runs)."""
    row = (params or parameters.bootstrap_params()).to_pylist()[0]
    doubles = duckdb.list_type(duckdb.sqltype("DOUBLE"))
    count = duckdb.sqltype("BIGINT")
    interval = duckdb.struct_type({"low": "DOUBLE", "high": "DOUBLE"})
    fns = functions(
        int(row["seed"]), int(row["resamples"]), float(row["level"]), int(row.get("min_runs", 3))
    )
    arguments = {
        "bootstrap_mean": [doubles],
        "bootstrap_ratio": [doubles] * 2,
        "bootstrap_score": [doubles, count, count],
        "bootstrap_score_ratio": [doubles, count, count] * 2,
    }
    for name, fn in fns.items():
        con.create_function(
            name, fn, arguments[name], interval, type="arrow", null_handling="special"
        )
