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
"""

from __future__ import annotations

import math
from collections.abc import Callable

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from collector.queries import parameters

INTERVAL = pa.struct([("low", pa.float64()), ("high", pa.float64())])


def _lists(column: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(starts, sizes, values) of a list column, each list's finite values sorted; a list
    holding an infinite value gets size 0."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks() if column.num_chunks else pa.array([], column.type)
    rows = pc.list_parent_indices(column).to_numpy()
    values = pc.list_flatten(column).to_numpy(zero_copy_only=False).astype(np.float64)
    keep = ~np.isnan(values)  # NULL elements arrive as NaN
    rows, values = rows[keep], values[keep]
    infinite = np.bincount(rows[np.isinf(values)], minlength=len(column)) > 0
    order = np.lexsort((values, rows))
    rows, values = rows[order], values[order]
    sizes = np.bincount(rows, minlength=len(column))
    starts = np.cumsum(sizes) - sizes
    return starts, np.where(infinite, 0, sizes), values


def _means(starts, sizes, values, seed: int, resamples: int, side: int) -> np.ndarray:
    """Resampled means (rows x resamples) of every list of at least one value; NaN rows else."""
    out = np.full((sizes.size, resamples), np.nan)
    for n in np.unique(sizes[sizes > 0]).tolist():
        rows = np.flatnonzero(sizes == n)
        draws = np.random.Generator(np.random.PCG64([seed, n, side])).integers(0, n, (resamples, n))
        draws += np.arange(resamples)[:, None] * n  # counts of each position per resample
        counts = np.bincount(draws.ravel(), minlength=resamples * n).reshape(resamples, n)
        block = values[starts[rows, None] + np.arange(n)]
        least = block[:, :1]
        out[rows] = least + (block - least) @ (counts.T / n)
    return out


def _ends(stats: np.ndarray, defined: np.ndarray, level: float) -> pa.StructArray:
    """The nearest-rank interval of each row of statistics, NULL where not `defined` or where a
    statistic is NaN."""
    resamples = stats.shape[1]
    lo = max(1, math.ceil(resamples * (1 - level) / 2 - 1e-9))
    hi = min(resamples, math.ceil(resamples * (1 + level) / 2 - 1e-9))
    defined = defined & ~np.isnan(stats).any(axis=1)
    ends = np.partition(stats[defined], [lo - 1, hi - 1], axis=1)
    low, high = np.full(stats.shape[0], np.nan), np.full(stats.shape[0], np.nan)
    low[defined], high[defined] = ends[:, lo - 1], ends[:, hi - 1]
    return pa.StructArray.from_arrays(
        [pa.array(low), pa.array(high)], fields=list(INTERVAL), mask=pa.array(~defined)
    )


def functions(seed: int, resamples: int, level: float) -> dict[str, Callable[..., pa.StructArray]]:
    """The Arrow functions bootstrap_mean and bootstrap_ratio for one set of parameters."""
    if resamples < 1 or not 0 < level < 1:
        raise ValueError(f"bootstrap needs resamples >= 1 and 0 < level < 1: {resamples}, {level}")

    def bootstrap_mean(values: pa.Array | pa.ChunkedArray) -> pa.StructArray:
        starts, sizes, flat = _lists(values)
        return _ends(_means(starts, sizes, flat, seed, resamples, 0), sizes >= 2, level)

    def bootstrap_ratio(
        numerator: pa.Array | pa.ChunkedArray, denominator: pa.Array | pa.ChunkedArray
    ) -> pa.StructArray:
        (n_starts, n, n_values), (d_starts, d, d_values) = _lists(numerator), _lists(denominator)
        top = _means(n_starts, n, n_values, seed, resamples, 0)
        bottom = _means(d_starts, d, d_values, seed, resamples, 1)
        with np.errstate(divide="ignore", invalid="ignore"):  # x / 0 is infinite, 0 / 0 NaN
            ratios = top / bottom
        return _ends(ratios, (n >= 1) & (d >= 1) & ((n >= 2) | (d >= 2)), level)

    return {"bootstrap_mean": bootstrap_mean, "bootstrap_ratio": bootstrap_ratio}


def register(con: duckdb.DuckDBPyConnection, params: pa.Table | None = None) -> None:
    """Create bootstrap_mean and bootstrap_ratio on `con`, with the parameters of
    parameters.yml (or of a one-row table with seed, resamples and level)."""
    row = (params or parameters.bootstrap_params()).to_pylist()[0]
    doubles = duckdb.list_type(duckdb.sqltype("DOUBLE"))
    interval = duckdb.struct_type({"low": "DOUBLE", "high": "DOUBLE"})
    fns = functions(int(row["seed"]), int(row["resamples"]), float(row["level"]))
    for name, fn in fns.items():
        arguments = [doubles] * (2 if name == "bootstrap_ratio" else 1)
        con.create_function(name, fn, arguments, interval, type="arrow", null_handling="special")
