"""Comparisons over the shipped store: true, fair and on the official metric."""

import pytest

import collector
from collector.queries import parameters
from tests.conftest import REPO


@pytest.fixture(scope="module")
def wh():
    with collector.open(REPO / "runs" / "warehouse") as warehouse:
        yield warehouse


def rows(wh, sql):
    rel = wh.sql(sql)
    return [dict(zip(rel.columns, r, strict=True)) for r in rel.fetchall()]


def test_every_stored_benchmark_and_round_has_one_definition(wh):
    missing = rows(
        wh,
        "SELECT DISTINCT source, round, benchmark FROM store.runs "
        "WHERE source IN ('official', 'local') AND benchmark_definition(benchmark, round) IS NULL",
    )
    assert missing == []


def test_definitions_of_one_name_do_not_overlap():
    spans = {}
    for d in parameters.definitions().rows:
        spans.setdefault(d["benchmark"], []).append((d["first_round"], d["last_round"]))
    key = lambda r: tuple(int(x) for x in r.lstrip("v").split("."))  # noqa: E731
    for name, found in spans.items():
        found.sort(key=lambda s: key(s[0]))
        for (_, last), (first, _) in zip(found, found[1:], strict=False):
            assert last is not None and key(last) < key(first), name


def test_ssd_changed_benchmark_in_v2_0_and_continues_as_retinanet(wh):
    (old, new, renamed) = (
        wh.sql(f"SELECT benchmark_definition({b!r}, {r!r})").fetchall()[0][0]
        for b, r in (("ssd", "v1.1"), ("ssd", "v2.0"), ("retinanet", "v5.0"))
    )
    assert old != new and new == renamed


def test_round_gains_never_cross_a_definition(wh):
    crossed = rows(
        wh,
        "SELECT * FROM round_gains WHERE benchmark_definition(earlier_benchmark, earlier_round) "
        "IS DISTINCT FROM benchmark_definition(benchmark, round)",
    )
    assert crossed == []
    assert (
        rows(
            wh,
            "SELECT * FROM round_gains WHERE benchmark = 'ssd' AND round = 'v2.0' "
            "AND earlier_round = 'v1.1'",
        )
        == []
    )
    site = rows(
        wh,
        "SELECT * FROM site_round_gains WHERE old_round = 'v1.1' "
        "AND new_round = 'v2.0' AND benchmark = 'ssd'",
    )
    assert site == []


def test_speedups_never_cross_a_definition(wh):
    crossed = rows(
        wh,
        "SELECT s.* FROM speedups AS s JOIN configurations AS b "
        "ON b.config_id = s.baseline_config_id JOIN configurations AS c "
        "ON c.config_id = s.config_id WHERE b.definition IS DISTINCT FROM c.definition",
    )
    assert crossed == []
