"""Percentile-bootstrap intervals as vectorised DuckDB functions over lists of run values.

bootstrap_mean(values DOUBLE[]) and bootstrap_ratio(numerator DOUBLE[], denominator DOUBLE[])
return STRUCT(low DOUBLE, high DOUBLE): the nearest-rank percentile interval, at the level of
parameters.yml, of the mean of a list (or of the ratio of two lists' means) over `resamples`
resamples drawn with replacement.

Method. A group of n values is resampled with the weight matrix W (resamples x n) of one side:
row b holds the multinomial counts / n of n positions drawn uniformly with replacement,
``Generator(PCG64([seed, n, side])).integers(0, n, (resamples, n))``, side 0 for a numerator
(or a mean) and 1 for a denominator. The resampled means of every group of n values are then
one matrix product X @ W.T, and the two sides of a ratio are drawn independently. The interval
is the lo-th and hi-th smallest of the resampled statistics (1-based), lo = max(1,
ceil(resamples * (1 - level) / 2)) and hi = ceil(resamples * (1 + level) / 2): the 25th and
975th of 1000 at level 0.95. The draws depend only on the seed and the group size, so the same
store and parameters give the same intervals in every process.

A group of one value has no resamples: bootstrap_mean of it is NULL, and so is bootstrap_ratio
of two one-value lists; a one-value side beside a side of several values is held fixed (only
the other side is resampled). NULL elements are left out; NULL or empty lists give NULL.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache

import duckdb
import numpy as np
import pyarrow as pa

from collector.queries import parameters

CHUNK_ROWS = 256  # rows resampled at a time: CHUNK_ROWS x resamples doubles stay in cache
LARGE_GROUP = 64  # above this many values a group gathers its draws instead of caching W
DRAW_BLOCK = 1 << 20  # draws generated at a time for a large group
# rows x n x resamples of one matrix product: small products stay on one BLAS thread, which
# on a busy machine is faster than handing each product to a thread pool
PRODUCT_SIZE = 1 << 18
INTERVAL = pa.struct([("low", pa.float64()), ("high", pa.float64())])


def ranks(resamples: int, level: float) -> tuple[int, int]:
    """1-based nearest ranks (lo, hi) of the interval's ends among `resamples` statistics."""
    lo = max(1, math.ceil(resamples * (1 - level) / 2 - 1e-9))
    hi = min(resamples, math.ceil(resamples * (1 + level) / 2 - 1e-9))
    return lo, hi


class Bootstrap:
    """Seeded percentile bootstrap of means and ratios of means over ragged groups."""

    def __init__(self, seed: int, resamples: int, level: float) -> None:
        if resamples < 1 or not 0 < level < 1:
            raise ValueError(f"bootstrap needs resamples >= 1 and 0 < level < 1: {resamples}")
        self.seed = int(seed)
        self.resamples = int(resamples)
        self.lo, self.hi = ranks(self.resamples, float(level))
        self._weights: Callable[[int, int], np.ndarray] = lru_cache(maxsize=256)(self._make)

    def _rng(self, n: int, side: int) -> np.random.Generator:
        return np.random.Generator(np.random.PCG64([self.seed, n, side]))

    def _make(self, n: int, side: int) -> np.ndarray:
        """W.T (n x resamples): multinomial counts / n of n draws per resample."""
        draws = self._rng(n, side).integers(0, n, size=(self.resamples, n))
        draws += (np.arange(self.resamples) * n)[:, None]
        counts = np.bincount(draws.ravel(), minlength=self.resamples * n)
        weights = counts.reshape(self.resamples, n).T / n
        weights.setflags(write=False)
        return np.ascontiguousarray(weights)

    def _large(self, values: np.ndarray, side: int) -> np.ndarray:
        """Resampled means of one large group: the draws of W, gathered block by block
        (relative to the first value, as in _product)."""
        n = values.size
        rng = self._rng(n, side)
        first = values[0]
        values = values - first
        out = np.empty(self.resamples)
        step = max(1, DRAW_BLOCK // n)
        for start in range(0, self.resamples, step):
            stop = min(self.resamples, start + step)
            draws = rng.integers(0, n, size=(stop - start, n))
            out[start:stop] = values[draws].mean(axis=1)
        return out + first

    def means(
        self, offsets: np.ndarray, lengths: np.ndarray, values: np.ndarray, side: int
    ) -> np.ndarray:
        """Resampled means (rows x resamples) of the groups values[offsets:offsets+lengths].

        Groups of one value repeat it; every group must hold at least one value.
        """
        out = np.empty((offsets.size, self.resamples))
        for n in np.unique(lengths):
            rows = np.flatnonzero(lengths == n)
            n = int(n)
            if n == 1:
                out[rows] = values[offsets[rows]][:, None]
            elif n > LARGE_GROUP:
                for row in rows:
                    group = values[offsets[row] : offsets[row] + n]
                    out[row] = self._large(group, side)
            else:
                self._product(values, offsets[rows], n, self._weights(n, side), out, rows)
        return out

    def _product(
        self,
        values: np.ndarray,
        starts: np.ndarray,
        n: int,
        weights: np.ndarray,
        out: np.ndarray,
        rows: np.ndarray,
    ) -> None:
        """out[rows] = X @ W.T for the groups of n values at `starts`, in products of one fixed
        shape (the last one padded with zeros): the same BLAS kernel then computes every row,
        so a row's means are bit for bit the same whatever else is in its batch. Each group is
        resampled relative to its first value, so a constant group gives exactly its value."""
        step = max(2, PRODUCT_SIZE // (n * self.resamples))
        block = np.zeros((step, n))
        product = np.empty((step, self.resamples))
        for first in range(0, rows.size, step):
            count = min(step, rows.size - first)
            block[:count] = values[starts[first : first + count, None] + np.arange(n)]
            block[count:] = 0.0
            shift = block[:, :1].copy()
            block -= shift
            np.matmul(block, weights, out=product)
            product += shift
            out[rows[first : first + count]] = product[:count]

    def select(self, stats: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The lo-th and hi-th smallest of each row (nearest-rank percentiles); partitions each
        row of `stats` in place."""
        stats.partition(self.hi - 1, axis=1)  # in place: the smaller ones come first
        high = stats[:, self.hi - 1].copy()
        below = stats[:, : self.hi]
        below.partition(self.lo - 1, axis=1)
        return below[:, self.lo - 1], high

    def mean_interval(
        self, offsets: np.ndarray, lengths: np.ndarray, values: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Interval of each group's mean; NaN where a group has fewer than two values."""
        low = np.full(offsets.size, np.nan)
        high = np.full(offsets.size, np.nan)
        todo = np.flatnonzero(lengths >= 2)
        todo = todo[np.argsort(lengths[todo], kind="stable")]
        for start in range(0, todo.size, CHUNK_ROWS):
            rows = todo[start : start + CHUNK_ROWS]
            stats = self.means(offsets[rows], lengths[rows], values, 0)
            low[rows], high[rows] = self.select(stats)
        return low, high

    def ratio_interval(
        self,
        num: tuple[np.ndarray, np.ndarray, np.ndarray],
        den: tuple[np.ndarray, np.ndarray, np.ndarray],
    ) -> tuple[np.ndarray, np.ndarray]:
        """Interval of mean(numerator) / mean(denominator) per row, each given as (offsets,
        lengths, values); NaN where a side is empty or both sides hold one value."""
        (n_off, n_len, n_val), (d_off, d_len, d_val) = num, den
        low = np.full(n_off.size, np.nan)
        high = np.full(n_off.size, np.nan)
        todo = np.flatnonzero((n_len >= 1) & (d_len >= 1) & ((n_len >= 2) | (d_len >= 2)))
        todo = todo[np.lexsort((d_len[todo], n_len[todo]))]
        for start in range(0, todo.size, CHUNK_ROWS):
            rows = todo[start : start + CHUNK_ROWS]
            stats = self.means(n_off[rows], n_len[rows], n_val, 0)
            stats /= self.means(d_off[rows], d_len[rows], d_val, 1)
            low[rows], high[rows] = self.select(stats)
        return low, high


def _groups(column: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(offsets, lengths, values) of a list column: NULL lists and NULL or NaN elements dropped."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks() if column.num_chunks else pa.array([], column.type)
    offsets = np.asarray(column.offsets, dtype=np.int64)
    values = column.values.to_numpy(zero_copy_only=False).astype(np.float64, copy=False)
    starts, ends = offsets[:-1], offsets[1:]
    if column.null_count:
        nulls = np.asarray(column.is_null().to_numpy(zero_copy_only=False), dtype=bool)
        ends = np.where(nulls, starts, ends)  # a NULL list holds no values
    keep = ~np.isnan(values)  # NULL elements arrive as NaN
    if not keep.all():
        before = np.concatenate([[0], np.cumsum(keep)])
        starts, ends, values = before[starts], before[ends], values[keep]
    return starts.astype(np.int64), (ends - starts).astype(np.int64), values


def _struct(low: np.ndarray, high: np.ndarray) -> pa.StructArray:
    missing = np.isnan(low)
    return pa.StructArray.from_arrays(
        [
            pa.array(low, pa.float64(), from_pandas=True),
            pa.array(high, pa.float64(), from_pandas=True),
        ],
        fields=list(INTERVAL),
        mask=pa.array(missing),
    )


def functions(boot: Bootstrap) -> dict[str, Callable[..., pa.StructArray]]:
    """The Arrow functions bootstrap_mean and bootstrap_ratio bound to one bootstrap."""

    def bootstrap_mean(values: pa.Array | pa.ChunkedArray) -> pa.StructArray:
        return _struct(*boot.mean_interval(*_groups(values)))

    def bootstrap_ratio(
        numerator: pa.Array | pa.ChunkedArray, denominator: pa.Array | pa.ChunkedArray
    ) -> pa.StructArray:
        return _struct(*boot.ratio_interval(_groups(numerator), _groups(denominator)))

    return {"bootstrap_mean": bootstrap_mean, "bootstrap_ratio": bootstrap_ratio}


def register(con: duckdb.DuckDBPyConnection, params: pa.Table | None = None) -> None:
    """Create bootstrap_mean and bootstrap_ratio on `con`, with the parameters of
    parameters.yml (or of a one-row table with seed, resamples and level)."""
    row = (params or parameters.bootstrap_params()).to_pylist()[0]
    boot = Bootstrap(row["seed"], row["resamples"], row["level"])
    doubles = duckdb.list_type(duckdb.sqltype("DOUBLE"))
    interval = duckdb.struct_type(
        {"low": duckdb.sqltype("DOUBLE"), "high": duckdb.sqltype("DOUBLE")}
    )
    fns = functions(boot)
    con.create_function(
        "bootstrap_mean",
        fns["bootstrap_mean"],
        [doubles],
        interval,
        type="arrow",
        null_handling="special",
    )
    con.create_function(
        "bootstrap_ratio",
        fns["bootstrap_ratio"],
        [doubles, doubles],
        interval,
        type="arrow",
        null_handling="special",
    )
