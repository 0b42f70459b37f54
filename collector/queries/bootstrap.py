"""Percentile-bootstrap intervals as vectorised DuckDB functions over lists of run values.

bootstrap_mean(values DOUBLE[]) and bootstrap_ratio(numerator DOUBLE[], denominator DOUBLE[])
return STRUCT(low DOUBLE, high DOUBLE): the nearest-rank percentile interval, at the level of
parameters.yml, of the mean of a list (or of the ratio of two lists' means) over `resamples`
resamples drawn with replacement.

Method. A group of n values is resampled with the weight matrix W (resamples x n) of one side:
row b holds the multinomial counts / n of n positions drawn uniformly with replacement,
``Generator(PCG64([seed, n, side])).integers(0, n, (resamples, n))``, side 0 for a numerator
(or a mean) and 1 for a denominator. The resampled means of every group of n values are then
one matrix product X @ W.T, and the two sides of a ratio are drawn independently. A group of
more than LARGE_GROUP values (a pool of many systems' runs) averages the values at positions
u * n >> 32 of 32-bit uniform words u (large_positions): those of row b of a matrix of words
kept per side for resample b, its first n columns (column block k of KEPT_BLOCK columns is the
output of PCG64([seed, side, k, 1]), drawn once and kept; two large groups of one side thus
share their words, never the two sides of a ratio), or above KEPT_WIDTH values, words drawn
from PCG64([seed, n, side]) in turn (the memory kept stays bounded). The interval
is the lo-th and hi-th smallest of the resampled statistics (1-based), lo = max(1,
ceil(resamples * (1 - level) / 2)) and hi = ceil(resamples * (1 + level) / 2): the 25th and
975th of 1000 at level 0.95. The draws depend only on the seed and the group size, so the same
store and parameters give the same intervals in every process.

A group of one value has no resamples: bootstrap_mean of it is NULL, and so is bootstrap_ratio
of two one-value lists; a one-value side beside a side of several values is held fixed (only
the other side is resampled). NULL elements are left out; NULL or empty lists give NULL, and
so does a list holding an infinite value (its mean is no number to resample). A denominator
whose resampled mean can be 0 gives an infinite end, and a ratio that is 0 / 0 in any resample
is undefined there, so its row has no interval (NULL).

Computation. Each group is resampled relative to its smallest value m: its means are m plus
the resampled means of x - m, which are non-negative, so a constant group gives exactly its
value, and statistics that are all non-negative are ranked by their IEEE bit patterns read as
integers (the order of the numbers, and a faster sort). Resampled statistics are single
precision (float32): about seven significant digits, where the resampling itself moves an
interval's ends by about a percent; m is added back to a mean's ends in double precision.
Single precision halves the memory the statistics pass through and ranks them as 32-bit
integers (partitioned about 1.6 times as fast as 64-bit ones). Each row of statistics is
sorted in parts of at most SORT_WIDTH (numpy sorts such short rows in networks, several times
faster per number than longer ones), and each end is ranked among the few numbers of its parts
that can hold it. Matrix products have one fixed shape per group size, so a row's statistics
are bit for bit the same whatever else is in its batch; batches are shared out to a few
threads, so the results do not depend on the number of threads either. The products of a run
of groups of one size are one stacked matmul, during which numpy lets the other threads run
(it holds the interpreter for a single small product).

The mean of a group whose values are in ascending order (the lists of samples are) computes
only the resamples that can hold an end of its interval. Whatever the values, resample a's mean
is at most b's when a draws each top k of the n positions no more often than b does; a resample
with lo or more such others below it (resamples with equal counts taken in the order drawn)
can never be the lo-th smallest, nor one with resamples - hi + 1 or more above it the hi-th.
Which resamples remain depends on n alone (and the seed): of 1000, 51 for two values, about
100 for five and 330 for ten; the candidates for each end are ranked apart. A ratio of two
such groups, its numerator's values non-negative and its denominator's positive, is pruned
alike: resample a's ratio is at most b's when a's numerator is at most b's and a's denominator
at least b's. Which remain depends on both sizes: for the two ends together, about 530 of the
2 x 1000 resamples for five values over five and 1,230 for ten over ten (up to PRUNED_SIZE
values a side), so the products are no fewer, but each end is ranked among a few hundred.
The ends are the same statistics as over all resamples, but for the last bit where
single-precision rounding reorders two nearly equal statistics (the products of fewer columns
may round otherwise: on a million synthetic runs, 3.5% of the ratios' ends moved, by at most
3 parts in 10 million).
"""

from __future__ import annotations

import itertools
import math
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache

import duckdb
import numpy as np
import pyarrow as pa

from collector.queries import parameters

CHUNK_ROWS = 1024  # rows resampled at a time by one thread: a call of 2048 rows (a DuckDB
# vector) makes two even tasks, one per thread, and each task has long runs of one group size
LARGE_GROUP = 64  # above this many values a group gathers its draws instead of caching W
DRAW_BLOCK = 1 << 16  # positions gathered at a time for a large group
KEPT_BLOCK = 1024  # columns of a side's kept words drawn at a time (from a stream of their own)
KEPT_WIDTH = 8192  # groups of up to this many values take their words from the kept ones (32
# MB a side at most, for 1000 resamples); larger groups draw theirs
SORT_WIDTH = 256  # numpy sorts rows of up to 256 32-bit numbers in about a quarter of the time
# of rows of 1000 (and partitions them no faster)
PRODUCT_ROWS = 16  # rows of one matrix product, fewer where its size would pass PRODUCT_SIZE
# rows x n x resamples of one matrix product: small products stay on one BLAS thread (the
# work is shared out to threads here instead)
PRODUCT_SIZE = 1 << 18
THREADS = min(4, os.cpu_count() or 1)
PRUNED_SIZE = 12  # ratios of groups of up to this many values resample their candidates alone:
# of larger groups nearly all resamples are candidates (1,780 of 2 x 1000 for 32 over 12)
INTERVAL = pa.struct([("low", pa.float64()), ("high", pa.float64())])

Groups = tuple[np.ndarray, np.ndarray, np.ndarray]  # offsets, lengths, values
Orders = tuple[np.ndarray, np.ndarray, np.ndarray]  # never above, never below, kind


def ranks(resamples: int, level: float) -> tuple[int, int]:
    """1-based nearest ranks (lo, hi) of the interval's ends among `resamples` statistics."""
    lo = max(1, math.ceil(resamples * (1 - level) / 2 - 1e-9))
    hi = min(resamples, math.ceil(resamples * (1 + level) / 2 - 1e-9))
    return lo, hi


@lru_cache(maxsize=4)
def _pool(pid: int) -> ThreadPoolExecutor:
    """The threads of this process (by its id: a forked child starts its own)."""
    return ThreadPoolExecutor(THREADS, thread_name_prefix=f"bootstrap-{pid}")


Scratch = dict[str, np.ndarray]  # a task's scratch arrays, by name
# Scratch arrays of tasks that ended, for the next ones. Not thread-locals: DuckDB calls the
# functions from its own threads, which get a fresh interpreter thread state (and so fresh
# thread-locals) on every call.
_spare: list[Scratch] = []
_spare_lock = threading.Lock()
_working = [0]  # threads at work on intervals in this process
_counting = threading.Lock()


def _claim(wanted: int) -> int:
    """Count the calling thread at work, with up to `wanted` helpers that keep at most THREADS
    at work in all; returns the helpers granted. A negative `wanted` counts that many off."""
    with _counting:
        if wanted < 0:
            _working[0] += wanted
            return 0
        granted = max(0, min(wanted, THREADS - _working[0] - 1))
        _working[0] += 1 + granted
        return granted


def _helping(share: Callable[[], None]) -> None:
    """Run `share` as a helper, counted off when it ends."""
    try:
        share()
    finally:
        _claim(-1)


def _buffer(scratch: Scratch, name: str, rows: int, cols: int) -> np.ndarray:
    """A float32 array of rows x cols kept in `scratch` under `name`: reusing it spares the
    fresh pages a new array of this size costs (a ratio's statistics are 4 MB a call)."""
    held = scratch.get(name)
    if held is None or held.size < rows * cols:
        held = scratch[name] = np.empty(rows * cols, dtype=np.float32)
    return held[: rows * cols].reshape(rows, cols)


def _chunks(rows: np.ndarray, size: int) -> list[np.ndarray]:
    """`rows` cut into as few pieces of at most `size` as can be, of even sizes (threads that
    take them finish together)."""
    return np.array_split(rows, -(-rows.size // size)) if rows.size else []


def _runs(keys: np.ndarray) -> list[tuple[int, int]]:
    """(start, stop) of each run of equal adjacent keys."""
    edges = [0, *(np.flatnonzero(np.diff(keys)) + 1).tolist(), keys.size]
    return list(itertools.pairwise(edges))


def _gather(groups: Groups, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The groups at `rows` (each of at least one value) as a float32 matrix, one row each:
    its smallest value m, then its values less m, then zeros (and PRODUCT_ROWS rows of zeros
    after the last); with the groups' sizes and their m in double precision. The values are
    gathered column by column (the j-th value of every group at once), so that the smallest
    of each group is a reduction over the few columns rather than along each short row."""
    offsets, lengths, values = groups
    sizes = lengths[rows]
    columns = np.arange(int(sizes.max()))[:, None]
    outside = columns >= sizes  # columns x groups: past a group's last value
    block = values[np.where(outside, 0, offsets[rows] + columns)]
    np.copyto(block, np.inf, where=outside)
    shift = block.min(axis=0)
    block -= shift
    np.copyto(block, 0.0, where=outside)
    out = np.zeros((rows.size + PRODUCT_ROWS, columns.size + 1), dtype=np.float32)
    out[: rows.size, 0] = shift
    out[: rows.size, 1:] = block.T
    return out, sizes, shift


def large_positions(words: np.ndarray, n: int) -> np.ndarray:
    """The positions in [0, n) that 32-bit uniform words give a group of n > LARGE_GROUP
    values: u * n >> 32, Lemire's multiply-shift without its rejection step, so no position is
    likelier than another by more than n / 2**32 (a millionth for four thousand values)."""
    positions = np.multiply(words, np.uint64(n), dtype=np.uint64)
    positions >>= np.uint64(32)
    return positions.view(np.int64)


def large_words(bits: np.random.PCG64, count: int) -> np.ndarray:
    """The next `count` 32-bit words of `bits`: each 64-bit output gives two, in memory order
    (the low half first on little-endian machines)."""
    return bits.random_raw(-(-count // 2)).view(np.uint32)[:count]


class Bootstrap:
    """Seeded percentile bootstrap of means and ratios of means over ragged groups."""

    def __init__(self, seed: int, resamples: int, level: float) -> None:
        if resamples < 1 or not 0 < level < 1:
            raise ValueError(f"bootstrap needs resamples >= 1 and 0 < level < 1: {resamples}")
        self.seed = int(seed)
        self.resamples = int(resamples)
        self.lo, self.hi = ranks(self.resamples, float(level))
        self.top = self.resamples - self.hi + 1  # the hi-th smallest and those above it
        self._counts: Callable[[int, int], np.ndarray] = lru_cache(maxsize=256)(self._draw)
        self._weights: Callable[[int, int, bool], np.ndarray] = lru_cache(maxsize=256)(self._make)
        self._orders: Callable[[int, int], Orders] = lru_cache(maxsize=256)(self._order)
        self.candidates: Callable[[int], tuple[np.ndarray, np.ndarray]] = lru_cache(maxsize=64)(
            lambda n: self._ranked(*self._orders(n, 0))
        )
        self._candidate_weights: Callable[[int], np.ndarray] = lru_cache(maxsize=64)(
            lambda n: _frozen(self._weights(n, 0, False)[:, np.concatenate(self.candidates(n))])
        )
        self.ratio_candidates: Callable[[int, int], tuple[np.ndarray, np.ndarray]] = lru_cache(
            maxsize=1024
        )(self._ratio_candidates)
        self._ratio_weights: Callable[[int, int], tuple[np.ndarray, np.ndarray, int]] = lru_cache(
            maxsize=1024
        )(self._make_ratio_weights)
        self._kept: dict[int, np.ndarray] = {}  # by side: resamples x width words
        self._keeping = threading.Lock()

    def _bits(self, n: int, side: int) -> np.random.PCG64:
        """The random stream of the groups of n values on one side."""
        return np.random.PCG64([self.seed, n, side])

    def _draw(self, n: int, side: int) -> np.ndarray:
        """Multinomial counts (resamples x n): how often each of n positions is drawn."""
        draws = np.random.Generator(self._bits(n, side)).integers(0, n, (self.resamples, n))
        draws += (np.arange(self.resamples) * n)[:, None]
        counts = np.bincount(draws.ravel(), minlength=self.resamples * n)
        return counts.reshape(self.resamples, n)

    def _make(self, n: int, side: int, shifted: bool) -> np.ndarray:
        """W.T (n x resamples): multinomial counts / n of n draws per resample; after a first
        row of ones when `shifted`, for rows that start with the value their means are
        relative to."""
        weights = self._counts(n, side).T / n
        if shifted:
            weights = np.vstack([np.ones(self.resamples), weights])
        return _frozen(weights)

    def _order(self, n: int, side: int) -> Orders:
        """How the resampled means of n values in ascending order compare whatever the values
        (see the module's docstring): bitsets whose row b holds the resamples a never above b
        (a draws each top k of the n positions no more often than b), and those never below
        b; and each resample's kind (resamples with equal counts share one)."""
        counts = self._counts(n, side)
        tops = np.cumsum(counts[:, :0:-1], axis=1)  # draws of the top 1, 2, ..., n - 1 values
        levels = np.arange(n + 1)[:, None]
        never_above = never_below = _bitsets(np.ones((1, self.resamples), dtype=bool))[0]
        for top in tops.T:
            never_above = never_above & _bitsets(top <= levels)[top]  # row b: a <= b
            never_below = never_below & _bitsets(top >= levels)[top]  # row a: b >= a
        kind = np.unique(counts, axis=0, return_inverse=True)[1].ravel()
        return never_above, never_below, kind

    def _ranked(
        self, never_above: np.ndarray, never_below: np.ndarray, kind: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """The resamples (ascending) that can hold the lo-th smallest statistic, whatever the
        values, and those that can hold the hi-th: those with at most lo - 1 others never
        above them, and those with at most resamples - hi others never below them, resamples
        of one kind (always equal) ordered as drawn."""
        order = np.argsort(kind, kind="stable")
        firsts = np.searchsorted(kind[order], kind[order])  # where each one's kind begins
        drawn_before = np.empty(self.resamples, dtype=np.int64)  # of its kind
        drawn_before[order] = np.arange(self.resamples) - firsts
        drawn_after = np.bincount(kind)[kind] - 1 - drawn_before
        # resamples never above (below) each one, itself included
        ahead = np.bitwise_count(never_above).sum(axis=1) - drawn_after
        behind = np.bitwise_count(never_below).sum(axis=1) - drawn_before
        return np.flatnonzero(ahead <= self.lo), np.flatnonzero(behind <= self.top)

    def _ratio_candidates(self, n: int, m: int) -> tuple[np.ndarray, np.ndarray]:
        """The resamples that can hold the ends of the ratio of the means of n non-negative
        values over m positive ones, each side in ascending order: a's ratio is never above
        b's when a's numerator is never above b's and a's denominator never below b's."""
        above_n, below_n, kind_n = self._orders(n, 0)
        above_m, below_m, kind_m = self._orders(m, 1)
        kind = np.unique(kind_n * (kind_m.max() + 1) + kind_m, return_inverse=True)[1]
        return self._ranked(above_n & below_m, below_n & above_m, kind.ravel())

    def _make_ratio_weights(self, n: int, m: int) -> tuple[np.ndarray, np.ndarray, int]:
        """W.T of both sides (as _make, shifted) for the candidates of a ratio of n over m, the
        low end's first, and how many of those there are."""
        lows, highs = self.ratio_candidates(n, m)
        chosen = np.concatenate([lows, highs])
        return (
            _frozen(self._weights(n, 0, True)[:, chosen]),
            _frozen(self._weights(m, 1, True)[:, chosen]),
            lows.size,
        )

    def _words(self, side: int, n: int) -> np.ndarray:
        """The kept words of one side, resamples x (at least n), grown by blocks of KEPT_BLOCK
        columns as larger groups come (each block from its own stream, so the words do not
        depend on the order in which groups came)."""
        held = self._kept.get(side)
        if held is not None and held.shape[1] >= n:
            return held
        with self._keeping:
            held = self._kept.get(side)
            width = 0 if held is None else held.shape[1]
            if width >= n:
                return held
            blocks = -(-n // KEPT_BLOCK)
            grown = np.empty((self.resamples, blocks * KEPT_BLOCK), dtype=np.uint32)
            if held is not None:
                grown[:, :width] = held
            for k in range(width // KEPT_BLOCK, blocks):
                bits = np.random.PCG64([self.seed, side, k, 1])
                words = large_words(bits, self.resamples * KEPT_BLOCK)
                grown[:, k * KEPT_BLOCK : (k + 1) * KEPT_BLOCK] = words.reshape(self.resamples, -1)
            self._kept[side] = grown
            return grown

    def _large(self, values: np.ndarray, side: int, out: np.ndarray) -> None:
        """out = resampled means of one large group, its values gathered block by block."""
        n = values.size
        kept = self._words(side, n) if n <= KEPT_WIDTH else None
        bits = self._bits(n, side) if kept is None else None
        step = max(2, DRAW_BLOCK // n & ~1)  # even: no block leaves half a 64-bit output
        for start in range(0, self.resamples, step):
            stop = min(self.resamples, start + step)
            if bits is None:
                words = kept[start:stop, :n]
            else:
                words = large_words(bits, (stop - start) * n).reshape(stop - start, n)
            drawn = values[large_positions(words, n)]
            np.add.reduce(drawn, axis=1, out=out[start:stop])
        out /= n  # the means, as .mean() would give them (without its overhead per block)

    def _resample(
        self, block: np.ndarray, sizes: np.ndarray, side: int, out: np.ndarray, pruned: bool = False
    ) -> None:
        """out[:len(sizes)] = resampled means of the groups of a _gather block: relative to
        their smallest value for a mean (side -1, drawn as side 0), else whole (side 0 or 1);
        of a mean's candidate resamples alone if `pruned` (groups of one size). Products have
        one fixed shape per group size; the last one of a run of groups of one size spills
        into the rows after it, which are computed next (or spare)."""
        shifted = side >= 0
        first = 0 if shifted else 1
        for start, stop in [(0, sizes.size)] if pruned else _runs(sizes):
            n = int(sizes[start])
            if n > LARGE_GROUP:
                for row in range(start, stop):
                    self._large(block[row, 1 : n + 1], max(side, 0), out[row])
                    out[row] += block[row, 0] if shifted else 0.0
                continue
            if pruned:
                weights = self._candidate_weights(n)
            else:
                weights = self._weights(n, max(side, 0), shifted)
            _products(block[start:, first : n + 1], weights, out[start:], stop - start)

    def select(self, stats: np.ndarray, non_negative: bool) -> tuple[np.ndarray, np.ndarray]:
        """The lo-th and hi-th smallest of each row (nearest-rank percentiles), as integers
        where every statistic is a non-negative number. Each row is sorted in place in parts
        of at most SORT_WIDTH; the lo smallest of the row are among the lo smallest of its
        parts, and the resamples - hi + 1 largest among theirs, so each end is then ranked
        among those few alone. A row holding a NaN statistic gets NaN ends."""
        keys = stats.view(np.int32) if non_negative else stats
        parts = -(-stats.shape[1] // SORT_WIDTH)
        bounds = [stats.shape[1] * part // parts for part in range(parts + 1)]
        spans = list(itertools.pairwise(bounds))
        for start, stop in spans:
            keys[:, start:stop].sort(axis=1)
        lows = np.concatenate([keys[:, a : min(b, a + self.lo)] for a, b in spans], axis=1)
        highs = np.concatenate([keys[:, max(a, b - self.top) : b] for a, b in spans], axis=1)
        low, high = self._ends(lows, highs, stats.dtype)
        if not non_negative:
            # NaN sorts last: a part holding one ends with it
            undefined = np.isnan(keys[:, [b - 1 for _, b in spans]]).any(axis=1)
            low[undefined] = high[undefined] = np.nan
        return low, high

    def _ends(
        self, lows: np.ndarray, highs: np.ndarray, dtype: np.dtype
    ) -> tuple[np.ndarray, np.ndarray]:
        """The interval's ends of each row, as `dtype`, from the keys that can hold its lo-th
        smallest statistic (`lows`) and those that can hold its hi-th (`highs`, which hold
        every statistic above it too): the lo-th smallest of the one and the resamples - hi +
        1-th largest of the other. Partitions both in place."""
        lows.partition(self.lo - 1, axis=1)
        highs.partition(highs.shape[1] - self.top, axis=1)
        return lows[:, self.lo - 1].view(dtype), highs[:, highs.shape[1] - self.top].view(dtype)

    def _mean_rows(
        self, groups: Groups, rows: np.ndarray, ordered: np.ndarray, scratch: Scratch
    ) -> tuple[np.ndarray, np.ndarray]:
        """Interval of the means of the groups at `rows`: the resampled means of the values
        less the smallest one, which is added back to the interval's ends. A run of groups of
        one size in ascending order resamples only the candidates that can hold the ends."""
        block, sizes, shift = _gather(groups, rows)
        low, high = np.empty(rows.size), np.empty(rows.size)
        for start, stop in _runs(sizes * 2 + ordered[rows]):
            n = int(sizes[start])
            part = block[start : stop + PRODUCT_ROWS]  # the rows a run's products spill into
            if not (ordered[rows[start]] and n <= LARGE_GROUP):
                stats = _buffer(scratch, "stats", part.shape[0], self.resamples)
                self._resample(part, sizes[start:stop], -1, stats)
                # means of finite values less the least: non-negative, ranked as integers
                low[start:stop], high[start:stop] = self.select(stats[: stop - start], True)
                continue
            lows, highs = self.candidates(n)
            stats = _buffer(scratch, "stats", part.shape[0], lows.size + highs.size)
            self._resample(part, sizes[start:stop], -1, stats, pruned=True)
            # finite, non-negative: means of values less the least, ranked as integers
            keys = stats[: stop - start].view(np.int32)
            ends = self._ends(keys[:, : lows.size], keys[:, lows.size :], stats.dtype)
            low[start:stop], high[start:stop] = ends
        return low + shift, high + shift

    def _ratio_rows(
        self, num: Groups, den: Groups, rows: np.ndarray, pruned: np.ndarray, scratch: Scratch
    ) -> tuple[np.ndarray, np.ndarray]:
        """Interval of mean(numerator) / mean(denominator) of the groups at `rows`, those
        `pruned` last (by ratio_interval's order)."""
        whole = rows.size - np.count_nonzero(pruned[rows])
        low, high = np.empty(rows.size), np.empty(rows.size)
        if whole:
            low[:whole], high[:whole] = self._whole_ratio_rows(num, den, rows[:whole], scratch)
        if whole < rows.size:
            ends = self._pruned_ratio_rows(num, den, rows[whole:], scratch)
            low[whole:], high[whole:] = ends
        return low, high

    def _pruned_ratio_rows(
        self, num: Groups, den: Groups, rows: np.ndarray, scratch: Scratch
    ) -> tuple[np.ndarray, np.ndarray]:
        """Interval of the ratios of the groups at `rows`, each side in ascending order, the
        numerator non-negative and the denominator positive, in runs of one pair of sizes:
        only the resamples that can hold an end are computed (ratio_candidates)."""
        top, top_sizes, _ = _gather(num, rows)
        bottom, bottom_sizes, _ = _gather(den, rows)
        low, high = np.empty(rows.size, np.float32), np.empty(rows.size, np.float32)
        for start, stop in _runs((top_sizes << 32) + bottom_sizes):
            n, m = int(top_sizes[start]), int(bottom_sizes[start])
            over, under, lows = self._ratio_weights(n, m)
            stats = _buffer(scratch, "stats", stop - start + PRODUCT_ROWS, over.shape[1])
            denominator = _buffer(scratch, "denominator", stats.shape[0], over.shape[1])
            _products(top[start:, : n + 1], over, stats, stop - start)
            _products(bottom[start:, : m + 1], under, denominator, stop - start)
            stats = stats[: stop - start]
            np.divide(stats, denominator[: stop - start], out=stats)
            # finite non-negative ratios, ranked as integers
            keys = stats.view(np.int32)
            ends = self._ends(keys[:, :lows], keys[:, lows:], stats.dtype)
            low[start:stop], high[start:stop] = ends
        return low, high

    def _whole_ratio_rows(
        self, num: Groups, den: Groups, rows: np.ndarray, scratch: Scratch
    ) -> tuple[np.ndarray, np.ndarray]:
        """Interval of the ratios of the groups at `rows`, over all resamples."""
        stats = _buffer(scratch, "stats", rows.size + PRODUCT_ROWS, self.resamples)
        denominator = _buffer(scratch, "denominator", rows.size + PRODUCT_ROWS, self.resamples)
        top, top_sizes, _ = _gather(num, rows)
        bottom, bottom_sizes, _ = _gather(den, rows)
        self._resample(top, top_sizes, 0, stats)
        self._resample(bottom, bottom_sizes, 1, denominator)
        stats = stats[: rows.size]
        with np.errstate(divide="ignore", invalid="ignore"):  # x / 0 is infinite, 0 / 0 NaN
            np.divide(stats, denominator[: rows.size], out=stats)
        # non-negative numerators over positive denominators: finite non-negative ratios
        least_top, least_bottom = top[: rows.size, 0].min(), bottom[: rows.size, 0].min()
        return self.select(stats, least_top >= 0 and least_bottom > 0)

    def _run(
        self,
        work: Callable[[np.ndarray, Scratch], tuple[np.ndarray, np.ndarray]],
        rows: np.ndarray,
        large: np.ndarray,
        size: int,
    ) -> tuple[np.ndarray, np.ndarray]:
        """(low, high) of `size` rows from `work` on tasks of rows, taken in turn by this
        thread and by as many helper threads as keep at most THREADS at work in all (DuckDB
        may call from several threads at once); NaN for rows in no task. Each of the `large`
        rows is a task; the others are cut into tasks of at most CHUNK_ROWS to share out, or
        make one task if no helper is free (fewer, larger numpy calls: the threads calling at
        once contend for the interpreter between them). Each thread lends `work` the scratch
        arrays of a task that ended before."""
        low = np.full(size, np.nan)
        high = np.full(size, np.nan)
        helpers = _claim(-(-rows.size // CHUNK_ROWS) + large.size - 1)
        # without helpers, one task: fewer and larger numpy calls
        chunks = _chunks(rows, CHUNK_ROWS) if helpers else [rows] if rows.size else []
        pending = iter(chunks + _chunks(large, 1))
        taking = threading.Lock()

        def share() -> None:
            with _spare_lock:
                scratch = _spare.pop() if _spare else {}
            try:
                while True:
                    with taking:
                        rows = next(pending, None)
                    if rows is None:
                        return
                    low[rows], high[rows] = work(rows, scratch)
            finally:
                with _spare_lock:
                    _spare.append(scratch)

        pool = _pool(os.getpid())
        others = [pool.submit(_helping, share) for _ in range(helpers)]
        try:
            share()
        finally:
            _claim(-1)
            for other in others:
                other.result()
        return low, high

    def mean_interval(
        self, offsets: np.ndarray, lengths: np.ndarray, values: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Interval of each group's mean; NaN where a group has fewer than two values. The
        values are finite (as _groups gives them)."""
        groups = (offsets, lengths, values)
        ordered = _ascending(groups)
        todo = np.flatnonzero(lengths >= 2)
        todo = todo[np.argsort(lengths[todo] * 2 + ordered[todo], kind="stable")]
        large = lengths[todo] > LARGE_GROUP
        return self._run(
            lambda rows, scratch: self._mean_rows(groups, rows, ordered, scratch),
            todo[~large],
            todo[large],
            offsets.size,
        )

    def ratio_interval(self, num: Groups, den: Groups) -> tuple[np.ndarray, np.ndarray]:
        """Interval of mean(numerator) / mean(denominator) per row, each given as (offsets,
        lengths, values) of finite values; NaN where a side is empty or both sides hold one
        value."""
        n_len, d_len = num[1], den[1]
        todo = np.flatnonzero((n_len >= 1) & (d_len >= 1) & ((n_len >= 2) | (d_len >= 2)))
        large = (n_len > LARGE_GROUP) | (d_len > LARGE_GROUP)
        # ascending sides of at most PRUNED_SIZE values, the least numerator non-negative and
        # the least denominator positive (in single precision, as they are resampled)
        pruned = _ascending(num) & _ascending(den) & (np.maximum(n_len, d_len) <= PRUNED_SIZE)
        least_num = num[2][num[0][todo]].astype(np.float32)
        pruned[todo] &= (least_num >= 0) & (den[2][den[0][todo]].astype(np.float32) > 0)
        todo = todo[np.lexsort((d_len[todo], n_len[todo], pruned[todo]))]
        large = large[todo]
        return self._run(
            lambda rows, scratch: self._ratio_rows(num, den, rows, pruned, scratch),
            todo[~large],
            todo[large],
            n_len.size,
        )


def _products(block: np.ndarray, weights: np.ndarray, out: np.ndarray, rows: int) -> None:
    """out[:rows] = block[:rows] @ weights, in products of one fixed shape per weight matrix
    (so a row's result does not depend on the rows beside it); the last product spills into
    the rows after `rows` (of both block and out), which must exist. One stacked matmul: each
    product is the same BLAS call as alone, and numpy releases the GIL for a stack (not for
    one small product)."""
    step = max(1, min(PRODUCT_ROWS, PRODUCT_SIZE // weights.size))
    count = -(-rows // step)
    parts = block[: count * step].reshape(count, step, block.shape[1])
    into = out[: count * step].reshape(count, step, weights.shape[1])  # whole rows: a view
    np.matmul(parts, weights, out=into)


def _frozen(weights: np.ndarray) -> np.ndarray:
    """A read-only contiguous float32 copy of a weight matrix, as the products take it."""
    weights = np.ascontiguousarray(weights, dtype=np.float32)
    weights.setflags(write=False)
    return weights


def _bitsets(flags: np.ndarray) -> np.ndarray:
    """Each row of a boolean matrix as a bitset of 64-bit words."""
    words = -(-flags.shape[1] // 64)
    packed = np.zeros((flags.shape[0], words * 8), dtype=np.uint8)
    packed[:, : -(-flags.shape[1] // 8)] = np.packbits(flags, axis=1, bitorder="little")
    return packed.view(np.uint64)


def _ascending(groups: Groups) -> np.ndarray:
    """Whether each group's values are in ascending order."""
    offsets, lengths, values = groups
    descents = np.zeros(values.size + 1, dtype=np.int64)  # at i: j < i, values[j + 1] < values[j]
    np.cumsum(np.diff(values) < 0, out=descents[1 : values.size])
    descents[-1] = descents[-2] if values.size else 0
    last = np.maximum(offsets + lengths - 1, offsets)
    return descents[last] == descents[offsets]


def _groups(column: pa.Array | pa.ChunkedArray) -> Groups:
    """(offsets, lengths, values) of a list column: NULL lists and NULL or NaN elements dropped,
    and a list holding an infinite value held as empty (it gets no interval)."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks() if column.num_chunks else pa.array([], column.type)
    offsets = np.asarray(column.offsets, dtype=np.int64)
    values = column.values.to_numpy(zero_copy_only=False).astype(np.float64, copy=False)
    starts, ends = offsets[:-1], offsets[1:]
    if column.null_count:
        nulls = np.asarray(column.is_null().to_numpy(zero_copy_only=False), dtype=bool)
        ends = np.where(nulls, starts, ends)  # a NULL list holds no values
    if not np.isfinite(values).all():
        keep = ~np.isnan(values)  # NULL elements arrive as NaN
        before = np.concatenate([[0], np.cumsum(keep)])
        starts, ends, values = before[starts], before[ends], values[keep]
        infinite = np.isinf(values)
        before = np.concatenate([[0], np.cumsum(infinite)])
        ends = np.where(before[ends] > before[starts], starts, ends)
        values = np.where(infinite, 0.0, values)  # read by no group now
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


def register(
    con: duckdb.DuckDBPyConnection, params: pa.Table | None = None, boot: Bootstrap | None = None
) -> None:
    """Create bootstrap_mean and bootstrap_ratio on `con`, with the parameters of
    parameters.yml (or of a one-row table with seed, resamples and level), or bound to `boot`."""
    if boot is None:
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
