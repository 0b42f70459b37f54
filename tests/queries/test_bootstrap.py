"""The bootstrap_mean and bootstrap_ratio functions: method, edge cases and determinism."""

from __future__ import annotations

import math
import warnings

import duckdb
import numpy as np
import pyarrow as pa
import pytest

from collector.queries import bootstrap
from collector.queries.parameters import bootstrap_params

SEED = 20190101
SINGLE = 1e-6  # resampled statistics are float32: about seven significant digits


def connection() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    bootstrap.register(con)
    return con


def one(sql: str) -> dict | None:
    con = connection()
    try:
        return con.execute(f"SELECT {sql}").fetchone()[0]
    finally:
        con.close()


def split_words(raw: np.ndarray) -> list[int]:
    """32-bit words of 64-bit outputs, the low half first."""
    return [int(w) for x in raw for w in (x & 0xFFFFFFFF, x >> 32)]


def reference_means(values: np.ndarray, seed: int, resamples: int, side: int) -> np.ndarray:
    """The documented draws, written out: n positions with replacement per resample, as
    bounded integers, or for a large group as the multiply-shift of 32-bit words: the side's
    kept words (column blocks from their own streams) up to KEPT_WIDTH values, else words
    drawn in turn from the group's stream."""
    n = values.size
    bits = np.random.PCG64([seed, n, side])
    if n <= bootstrap.LARGE_GROUP:
        draws = np.random.Generator(bits).integers(0, n, (resamples, n))
        return values[draws].mean(axis=1)
    if n <= bootstrap.KEPT_WIDTH:
        width = bootstrap.KEPT_BLOCK
        blocks = [
            np.array(
                split_words(np.random.PCG64([seed, side, k, 1]).random_raw(resamples * width // 2))
            ).reshape(resamples, width)
            for k in range(-(-n // width))
        ]
        words = np.hstack(blocks)[:, :n]
    else:
        words = np.array(split_words(bits.random_raw(resamples * n))[: resamples * n])
        words = words.reshape(resamples, n)
    return values[words * n >> 32].mean(axis=1)


def test_nearest_ranks():
    assert bootstrap.ranks(1000, 0.95) == (25, 975)
    assert bootstrap.ranks(1000, 0.9) == (50, 950)
    assert bootstrap.ranks(5, 0.6) == (1, 4)
    assert bootstrap.ranks(10, 0.99) == (1, 10)


@pytest.mark.parametrize("n", [2, 7, bootstrap.LARGE_GROUP + 37, bootstrap.KEPT_WIDTH + 5])
def test_mean_interval_is_the_documented_percentile_bootstrap(n):
    """Every path (cached weight matrix, kept words, words drawn in turn) gives the
    nearest-rank percentiles of the resampled means of the documented draws."""
    values = np.random.default_rng(n).lognormal(3, 0.2, n)
    boot = bootstrap.Bootstrap(seed=7, resamples=200, level=0.9)
    low, high = boot.mean_interval(np.array([0]), np.array([n]), values)
    means = np.sort(reference_means(values, 7, 200, 0))
    assert boot.lo == 10 and boot.hi == 190
    assert low[0] == pytest.approx(means[9], rel=SINGLE)
    assert high[0] == pytest.approx(means[189], rel=SINGLE)


@pytest.mark.parametrize("n", [2, 3, 5, 10, 33])
def test_mean_of_ascending_values_is_the_documented_percentile_bootstrap(n):
    """A group in ascending order resamples only the candidates for its ends, and its ends
    are the nearest-rank percentiles of all the resampled means."""
    rng = np.random.default_rng(n)
    boot = bootstrap.Bootstrap(seed=SEED, resamples=1000, level=0.95)
    assert sum(kept.size for kept in boot.candidates(n)) < 1000
    for values in (rng.lognormal(3, 0.2, n), 5.0 + rng.integers(0, 3, n)):
        values = np.sort(values)
        low, high = boot.mean_interval(np.array([0]), np.array([n]), values)
        means = np.sort(reference_means(values, SEED, 1000, 0))
        assert low[0] == pytest.approx(means[boot.lo - 1], rel=SINGLE)
        assert high[0] == pytest.approx(means[boot.hi - 1], rel=SINGLE)


@pytest.mark.parametrize(("resamples", "level"), [(1000, 0.95), (200, 0.9), (37, 0.8)])
def test_candidates_hold_the_ends_for_every_ascending_list(resamples, level):
    """Over many ascending lists of small integers (exact sums, ties everywhere), the lo-th
    smallest resampled sum is the lo-th smallest among its candidates, and the hi-th smallest
    has as many above it among its candidates as among all."""
    rng = np.random.default_rng(resamples)
    boot = bootstrap.Bootstrap(seed=SEED, resamples=resamples, level=level)
    top = resamples - boot.hi  # resamples above the hi-th smallest
    for n in range(2, 13):
        counts = boot._counts(n, 0)
        lows, highs = boot.candidates(n)
        lists = np.sort(rng.integers(0, rng.integers(2, 9), (300, n)), axis=1)
        every = np.sort(lists @ counts.T, axis=1)
        low, high = np.sort(lists @ counts[lows].T, axis=1), np.sort(lists @ counts[highs].T)
        np.testing.assert_array_equal(low[:, boot.lo - 1], every[:, boot.lo - 1])
        np.testing.assert_array_equal(high[:, highs.size - top - 1], every[:, boot.hi - 1])
    # two values: a resample's mean is fixed by how often it draws the larger one, so the
    # candidates are exactly the lo lowest and the top + 1 highest
    assert [kept.size for kept in boot.candidates(2)] == [boot.lo, top + 1]


@pytest.mark.parametrize(
    ("resamples", "level"), [(1000, 0.95), (300, 0.9), (37, 0.8), (2000, 0.99), (513, 0.5)]
)
def test_selection_gives_the_nearest_rank_ends(resamples, level):
    """Sorted in parts, the rows still give their lo-th and hi-th smallest statistics: of
    either sign, with ties, with NaN (ends NaN), as numbers and as the integers of
    non-negative numbers."""
    rng = np.random.default_rng(resamples)
    boot = bootstrap.Bootstrap(seed=SEED, resamples=resamples, level=level)
    spread = rng.normal(0, 1, (40, resamples)).astype(np.float32)
    tied = rng.integers(0, 4, (40, resamples)).astype(np.float32)
    undefined = spread.copy()
    rows = np.arange(0, 40, 3)
    undefined[rows, rng.integers(0, resamples, rows.size)] = np.nan  # one in every third row
    for stats, non_negative in (
        (spread, False),
        (undefined, False),
        (np.abs(spread), True),
        (tied, True),
    ):
        ends = np.sort(stats, axis=1)[:, [boot.lo - 1, boot.hi - 1]]
        ends[np.isnan(stats).any(axis=1)] = np.nan
        low, high = boot.select(stats.copy(), non_negative)
        np.testing.assert_array_equal(np.column_stack([low, high]), ends)


def test_large_group_draws_do_not_depend_on_the_block_size(monkeypatch):
    """A large group draws its positions block by block; any block size gives the same."""
    n = bootstrap.LARGE_GROUP + 37
    values = np.random.default_rng(1).lognormal(3, 0.2, n)
    boot = bootstrap.Bootstrap(seed=7, resamples=200, level=0.9)
    whole = boot.mean_interval(np.array([0]), np.array([n]), values)
    monkeypatch.setattr(bootstrap, "DRAW_BLOCK", 3 * n)  # blocks of two resamples
    blocks = boot.mean_interval(np.array([0]), np.array([n]), values)
    np.testing.assert_array_equal(blocks, whole)


def test_kept_words_do_not_depend_on_the_groups_before():
    """A side's kept words grow block by block with the groups that come; a large group gets
    the same interval whether a smaller one came before it or not."""
    n = bootstrap.KEPT_BLOCK + 300
    values = np.random.default_rng(2).lognormal(3, 0.2, n)
    fresh = bootstrap.Bootstrap(seed=7, resamples=200, level=0.9)
    grown = bootstrap.Bootstrap(seed=7, resamples=200, level=0.9)
    grown.mean_interval(np.array([0]), np.array([100]), values[:100])
    assert grown._kept[0].shape[1] == bootstrap.KEPT_BLOCK
    got = grown.mean_interval(np.array([0]), np.array([n]), values)
    assert grown._kept[0].shape[1] == 2 * bootstrap.KEPT_BLOCK
    np.testing.assert_array_equal(got, fresh.mean_interval(np.array([0]), np.array([n]), values))


def test_ratio_resamples_the_two_sides_independently():
    num = np.array([10.0, 12.0, 11.0, 13.0])
    den = np.array([5.0, 6.0, 5.5])
    boot = bootstrap.Bootstrap(seed=3, resamples=100, level=0.8)
    groups = (np.array([0]), np.array([num.size]), num), (np.array([0]), np.array([3]), den)
    low, high = boot.ratio_interval(*groups)
    ratios = np.sort(reference_means(num, 3, 100, 0) / reference_means(den, 3, 100, 1))
    assert (low[0], high[0]) == pytest.approx((ratios[9], ratios[89]), rel=SINGLE)


@pytest.mark.parametrize(("resamples", "level"), [(1000, 0.95), (200, 0.9), (37, 0.8)])
def test_ratio_candidates_hold_the_ends_for_every_ascending_pair(resamples, level):
    """Over many pairs of ascending lists of small positive integers (ties everywhere), the
    lo-th and hi-th smallest resampled ratios are those ranked among the pair's candidates.
    Ratios of integer sums: a resample never above another is never computed above it."""
    rng = np.random.default_rng(resamples)
    boot = bootstrap.Bootstrap(seed=SEED, resamples=resamples, level=level)
    top = resamples - boot.hi  # resamples above the hi-th smallest
    for n, m in [(1, 2), (2, 1), (2, 2), (3, 5), (5, 3), (6, 6), (7, 10), (11, 4)]:
        over, under = boot._counts(n, 0), boot._counts(m, 1)
        lows, highs = boot.ratio_candidates(n, m)
        assert lows.size + highs.size < 2 * resamples
        nums = np.sort(rng.integers(0, rng.integers(2, 9), (200, n)), axis=1)
        dens = np.sort(rng.integers(1, rng.integers(2, 9), (200, m)), axis=1)
        ratios = (nums @ over.T) / (dens @ under.T)
        every = np.sort(ratios, axis=1)
        low, high = np.sort(ratios[:, lows], axis=1), np.sort(ratios[:, highs], axis=1)
        np.testing.assert_array_equal(low[:, boot.lo - 1], every[:, boot.lo - 1])
        np.testing.assert_array_equal(high[:, highs.size - top - 1], every[:, boot.hi - 1])


def test_ratios_of_ascending_lists_are_the_documented_percentile_bootstrap(monkeypatch):
    """Pairs of ascending lists (the lists of samples) resample only the candidates of their
    ends, and the ends are still the documented bootstrap's. Lists out of order, a negative
    numerator, a denominator not positive or more than PRUNED_SIZE values a side are
    resampled in full."""
    pruned: list[int] = []
    pruned_rows = bootstrap.Bootstrap._pruned_ratio_rows

    def counting(self, num, den, rows, scratch):
        pruned.extend(rows.tolist())
        return pruned_rows(self, num, den, rows, scratch)

    monkeypatch.setattr(bootstrap.Bootstrap, "_pruned_ratio_rows", counting)
    rng = np.random.default_rng(8)
    boot = bootstrap.Bootstrap(seed=SEED, resamples=1000, level=0.95)
    large = bootstrap.PRUNED_SIZE + 1
    cases = [(2, 3), (5, 5), (9, 6), (1, 7), (12, 2), (4, 4), (6, 3), (3, 3), (5, 2), (large, 3)]
    nums = [np.sort(rng.lognormal(1, 0.3, n)) for n, _ in cases]
    dens = [np.sort(rng.lognormal(0, 0.3, m)) for _, m in cases]
    nums[5][0] = -0.5  # a negative numerator
    dens[6][0] = 0.0  # a denominator that is not positive
    nums[7] = nums[7][::-1].copy()  # out of order
    dens[8] = dens[8][::-1].copy()
    for row, (num, den) in enumerate(zip(nums, dens, strict=True)):
        groups = [(np.array([0]), np.array([v.size]), v) for v in (num, den)]
        pruned.clear()
        low, high = boot.ratio_interval(*groups)
        assert pruned == ([0] if row < 5 else [])
        means = reference_means(num, SEED, 1000, 0), reference_means(den, SEED, 1000, 1)
        with np.errstate(divide="ignore"):
            ratios = np.sort(means[0] / means[1])
        ends = (ratios[boot.lo - 1], ratios[boot.hi - 1])
        assert (low[0], high[0]) == pytest.approx(ends, rel=SINGLE, abs=SINGLE)


def test_rows_do_not_depend_on_their_batch():
    """A batch of mixed sizes gives each row what it gets alone."""
    rng = np.random.default_rng(5)
    lists = [list(rng.lognormal(0, 0.3, n)) for n in (3, 9, 2, 3, 120, 1, 9)]
    con = connection()
    together = con.execute(
        "SELECT bootstrap_mean(v) FROM (SELECT unnest(?::DOUBLE[][]) AS v)", [lists]
    ).fetchall()
    alone = [con.execute("SELECT bootstrap_mean(?::DOUBLE[])", [v]).fetchone() for v in lists]
    con.close()
    assert together == alone
    assert together[5] == (None,)


def test_ratio_rows_do_not_depend_on_their_batch_or_the_threads(monkeypatch):
    """Pairs of mixed sizes give each row what it gets alone, with one thread or several,
    whether their lists are in ascending order (every other pair) or not."""
    rng = np.random.default_rng(6)
    sizes = [(3, 9), (9, 3), (2, 2), (1, 5), (70, 4), (5, 1), (9, 9), (4, 7), (3, 9)] * 40
    order = [np.sort if i % 2 else list for i in range(len(sizes))]
    nums = [list(order[i](rng.lognormal(1, 0.3, a))) for i, (a, _) in enumerate(sizes)]
    dens = [list(order[i](rng.lognormal(0, 0.3, b))) for i, (_, b) in enumerate(sizes)]
    sql = (
        "SELECT bootstrap_ratio(n, d)"
        " FROM (SELECT unnest(?::DOUBLE[][]) AS n, unnest(?::DOUBLE[][]) AS d)"
    )
    con = connection()
    together = con.execute(sql, [nums, dens]).fetchall()
    monkeypatch.setattr(bootstrap, "THREADS", 1)
    assert con.execute(sql, [nums, dens]).fetchall() == together
    alone = [
        con.execute("SELECT bootstrap_ratio(?::DOUBLE[], ?::DOUBLE[])", [n, d]).fetchone()
        for n, d in zip(nums[:18], dens[:18], strict=True)
    ]
    con.close()
    assert together[:18] == alone


def test_calls_from_duckdb_threads_reuse_scratch_arrays(monkeypatch):
    """DuckDB's threads get fresh thread-locals on every call, so the scratch arrays of the
    statistics (4 MB a call of 1000 ratios) are lent from tasks that ended, not kept per
    thread: many calls share as many sets as ran at once."""
    lent: list[int] = []
    ratio_rows = bootstrap.Bootstrap._ratio_rows

    def recording(self, num, den, rows, pruned, scratch):
        lent.append(id(scratch))
        return ratio_rows(self, num, den, rows, pruned, scratch)

    monkeypatch.setattr(bootstrap.Bootstrap, "_ratio_rows", recording)
    con = connection()
    con.execute("SET threads = 2")
    con.execute(
        "SELECT count(bootstrap_ratio([1.0, 2.0, 3.0] || [i::DOUBLE], [2.0, 1.0] || [i::DOUBLE]))"
        " FROM range(40000) AS t(i)"
    ).fetchall()
    con.close()
    assert len(lent) >= 10
    assert len(set(lent)) <= 2 + bootstrap.THREADS


@pytest.mark.parametrize("side", [-1, 0, 1])
def test_stacked_products_are_the_products_one_at_a_time(side):
    """A run of groups of one size is resampled by one stacked matmul: bit for bit the
    products of PRODUCT_ROWS rows each that the weights give one at a time."""
    rng = np.random.default_rng(12)
    lengths = np.array([4] * 37 + [9] * 21 + [2] * 5)
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    groups = (offsets, lengths, rng.lognormal(2, 0.4, lengths.sum()))
    rows = np.arange(lengths.size)
    boot = bootstrap.Bootstrap(seed=SEED, resamples=1000, level=0.95)
    block, sizes, _ = bootstrap._gather(groups, rows)
    stacked = np.zeros((rows.size + bootstrap.PRODUCT_ROWS, 1000), dtype=np.float32)
    boot._resample(block, sizes, side, stacked)
    shifted, first = side >= 0, 0 if side >= 0 else 1
    one_by_one = np.zeros_like(stacked)
    for start, stop in bootstrap._runs(sizes):
        n = int(sizes[start])
        weights = boot._weights(n, max(side, 0), shifted)
        for row in range(start, stop, bootstrap.PRODUCT_ROWS):
            part = block[row : row + bootstrap.PRODUCT_ROWS, first : n + 1]
            np.matmul(part, weights, out=one_by_one[row : row + bootstrap.PRODUCT_ROWS])
    assert stacked[: rows.size].tobytes() == one_by_one[: rows.size].tobytes()


def test_negative_values_rank_as_numbers():
    """Statistics of either sign (here ratios with negative numerators) rank by value."""
    num = np.array([-3.0, 2.5, -1.0, 4.0, 0.5])
    den = np.array([2.0, 2.2, 1.9, 2.1])
    boot = bootstrap.Bootstrap(seed=11, resamples=300, level=0.9)
    groups = (np.array([0]), np.array([num.size]), num), (np.array([0]), np.array([4]), den)
    low, high = boot.ratio_interval(*groups)
    ratios = np.sort(reference_means(num, 11, 300, 0) / reference_means(den, 11, 300, 1))
    ends = (ratios[boot.lo - 1], ratios[boot.hi - 1])
    assert (low[0], high[0]) == pytest.approx(ends, rel=SINGLE, abs=SINGLE)
    means = np.sort(reference_means(num, 11, 300, 0))
    low, high = boot.mean_interval(np.array([0]), np.array([num.size]), num)
    ends = (means[boot.lo - 1], means[boot.hi - 1])
    assert (low[0], high[0]) == pytest.approx(ends, rel=SINGLE, abs=SINGLE)


def test_intervals_are_deterministic_across_connections():
    values = "[3.1, 2.7, 3.3, 2.9, 3.0, 3.6]"
    first = one(f"bootstrap_ratio({values}, [1.2, 1.1, 1.3])")
    assert first == one(f"bootstrap_ratio({values}, [1.2, 1.1, 1.3])")
    assert one(f"bootstrap_mean({values})") == one(f"bootstrap_mean({values})")


def test_interval_contains_the_mean():
    values = [100.0, 102.0, 98.0, 101.0, 99.0, 103.0, 97.0]
    got = one(f"bootstrap_mean({values})")
    assert 97.0 <= got["low"] < np.mean(values) < got["high"] <= 103.0
    ratio = one(f"bootstrap_ratio({values}, [27.0, 26.0, 28.0, 27.5, 26.5])")
    assert ratio["low"] < np.mean(values) / 27.0 < ratio["high"]


def test_constant_sample_gives_a_zero_width_interval_at_its_value():
    for n in (2, 3, 7, bootstrap.LARGE_GROUP + 1):
        assert one(f"bootstrap_mean({[0.1] * n})") == {"low": 0.1, "high": 0.1}
        got = one(f"bootstrap_ratio({[0.3] * n}, [0.3, 0.3, 0.3])")
        assert got == {"low": 1.0, "high": 1.0}
    assert one("bootstrap_ratio([1.1, 1.1], [0.55, 0.55, 0.55])") == {"low": 2.0, "high": 2.0}


def test_single_observations_have_no_interval():
    assert one("bootstrap_mean([42.0])") is None
    assert one("bootstrap_ratio([2.0], [1.0])") is None


def test_a_single_observation_side_is_held_fixed():
    got = one("bootstrap_ratio([2.0], [1.0, 2.0, 4.0])")
    boot = bootstrap.Bootstrap(**bootstrap_params().to_pylist()[0])
    den = np.sort(reference_means(np.array([1.0, 2.0, 4.0]), boot.seed, boot.resamples, 1))
    assert got["low"] == pytest.approx(2.0 / den[boot.hi - 1], rel=SINGLE)
    assert got["high"] == pytest.approx(2.0 / den[boot.lo - 1], rel=SINGLE)
    assert got["low"] < 2.0 / (7.0 / 3) < got["high"]


def test_null_and_empty_lists_give_null():
    assert one("bootstrap_mean([]::DOUBLE[])") is None
    assert one("bootstrap_mean(NULL::DOUBLE[])") is None
    assert one("bootstrap_ratio(NULL::DOUBLE[], [1.0, 2.0])") is None
    assert one("bootstrap_ratio([1.0, 2.0], []::DOUBLE[])") is None


def test_lists_holding_an_infinity_have_no_interval():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert one("bootstrap_mean([1.0, 'inf'::DOUBLE, 2.0])") is None
        assert one("bootstrap_ratio([1.0, 2.0], ['-inf'::DOUBLE, 2.0])") is None
        # the rows beside them keep theirs
        con = connection()
        got = con.execute(
            "SELECT bootstrap_mean(x) FROM (VALUES (1, [1.0, 'inf'::DOUBLE]), (2, [3.0, 1.0, 2.0]))"
            " AS t(i, x) ORDER BY i"
        ).fetchall()
        con.close()
    assert [row[0] for row in got] == [None, one("bootstrap_mean([1.0, 2.0, 3.0])")]


def test_zero_denominators_give_an_infinite_end_and_zero_over_zero_none():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        some = one("bootstrap_ratio([1.0, 2.0, 3.0], [0.0, 1.0])")
        every = one("bootstrap_ratio([1.0, 2.0], [0.0, 0.0])")
        undefined = one("bootstrap_ratio([0.0, 1.0], [0.0, 1.0])")
    assert 1.0 < some["low"] < 3.0 and some["high"] == math.inf
    assert every == {"low": math.inf, "high": math.inf}
    assert undefined is None


def test_null_elements_are_left_out():
    assert one("bootstrap_mean([1.0, NULL, 3.0, 2.0])") == one("bootstrap_mean([1.0, 3.0, 2.0])")
    assert one("bootstrap_mean([NULL, 5.0])") is None


def test_identical_lists_are_within_noise():
    values = "[50.0, 51.0, 49.5, 50.5, 52.0]"
    got = one(f"bootstrap_ratio({values}, {values})")
    assert got["low"] < 1.0 < got["high"]


def test_sliced_and_chunked_arrow_input():
    """The functions read offsets into the list values, as Arrow hands over slices."""
    boot = bootstrap.Bootstrap(seed=SEED, resamples=50, level=0.9)
    fn = bootstrap.functions(boot)["bootstrap_mean"]
    lists = pa.array([[9.0, 8.0], [1.0, 2.0, 3.0], None, [4.0, 6.0]], pa.list_(pa.float64()))
    whole = fn(lists).to_pylist()
    assert fn(lists.slice(1)).to_pylist() == whole[1:]
    assert fn(pa.chunked_array([lists[:2], lists[2:]])).to_pylist() == whole
    assert whole[2] is None and whole[0]["low"] >= 8.0


def test_parameters_are_checked():
    with pytest.raises(ValueError):
        bootstrap.Bootstrap(seed=1, resamples=0, level=0.95)
    with pytest.raises(ValueError):
        bootstrap.Bootstrap(seed=1, resamples=100, level=1.5)
