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


def test_benchmarks_are_named_in_words_by_their_definition_or_study(wh):
    names = {
        (r["benchmark"], r["round"]): r["words"] for r in rows(wh, "FROM site_benchmark_names")
    }
    assert names[("ssd", "v0.5")] == "SSD-ResNet34"
    assert names[("ssd", "v2.0")] == names[("retinanet", "v5.1")] == "RetinaNet ResNeXt50"
    assert names[("gnn", "v4.0")] == names[("rgat", "v5.0")] == "R-GAT"
    study = rows(wh, "SELECT study FROM store.studies WHERE number = '004'")[0]["study"]
    assert names[("lenet", study)] == "LeNet"
    # every published workload that definitions.yml names is shown by that name
    words = {r["benchmark"]: r["model"] for r in parameters.study_benchmarks().rows}
    published = rows(wh, "SELECT DISTINCT benchmark, study FROM store.published")
    for r in published:
        if r["benchmark"] in words:
            assert names[(r["benchmark"], r["study"])] == words[r["benchmark"]]
    # and a chart's label starts with it
    labels = rows(
        wh, "SELECT label, benchmark FROM site_comparisons WHERE kind = 'published study'"
    )
    assert labels and all(r["label"].split(" · ")[0] == words[r["benchmark"]] for r in labels)


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


def test_model_ratios_are_ratios_of_official_scores(wh):
    """v5.1 RetinaNet, 8 accelerators: B200 against H200 is the ratio of the two systems'
    official scores (about 1.57), never of plain means of runs."""
    (row,) = rows(
        wh,
        "SELECT * FROM site_model_ratios WHERE round = 'v5.1' AND benchmark = 'retinanet' "
        "AND model = 'NVIDIA B200' AND other_model = 'NVIDIA H200' AND accelerators = 8",
    )
    score = dict(
        wh.sql(
            "SELECT system_id, score_minutes FROM scores WHERE round = 'v5.1' "
            "AND benchmark = 'retinanet'"
        ).fetchall()
    )
    assert row["minutes"] == pytest.approx(score[row["system_id"]], rel=1e-12)
    assert row["speedup"] == pytest.approx(
        score[row["other_system_id"]] / score[row["system_id"]], rel=1e-12
    )
    assert row["speedup"] == pytest.approx(1.572, abs=0.002)
    assert row["speedup_ci_low"] <= row["speedup"] <= row["speedup_ci_high"]


def test_deadline_fit_reads_the_official_score(wh):
    """256 x B200 on Llama 3.1 405B: the score is 256.3 min (the mean of its runs, 239.6 min,
    would fit four hours)."""
    got = rows(
        wh,
        "SELECT deadline_hours, minutes FROM deadline_fit WHERE benchmark = 'llama31_405b' "
        "AND system = 'hpg.dgxb200x8.n32'",
    )
    assert {r["deadline_hours"] for r in got} == {8.0}
    assert got[0]["minutes"] == pytest.approx(256.33, abs=0.01)


def test_every_time_compared_is_an_official_score(wh):
    """configurations, which every ranking, ratio and fit reads, holds the scores of runs."""
    differ = rows(
        wh,
        "SELECT c.* FROM configurations AS c JOIN scores AS s ON s.source = c.source "
        "AND s.round = c.round AND s.system_id = c.system_id AND s.division = c.division "
        "AND s.benchmark = c.benchmark AND s.precision IS NOT DISTINCT FROM c.precision "
        "AND s.interconnect IS NOT DISTINCT FROM c.interconnect "
        "AND s.accelerators IS NOT DISTINCT FROM c.accelerators "
        "WHERE c.runs > 0 AND NOT (c.minutes IS NOT DISTINCT FROM s.score_minutes "
        "OR abs(c.minutes - s.score_minutes) <= 1e-9 * s.score_minutes)",
    )
    assert differ == []


def test_intervals_come_from_three_runs_and_hold_their_point(wh):
    for table, point, low, high, runs in (
        ("scores", "score_minutes", "score_ci_low_minutes", "score_ci_high_minutes",
         "len(scored_minutes)"),
        ("configurations", "minutes", "minutes_ci_low", "minutes_ci_high", "runs"),
    ):  # fmt: skip
        bad = rows(
            wh,
            f"SELECT * FROM {table} WHERE {low} IS NOT NULL AND ({runs} < 3 "
            f"OR {point} < {low} * (1 - 1e-9) OR {point} > {high} * (1 + 1e-9))",
        )
        assert bad == [], table


def test_interconnect_deltas_are_like_for_like(wh):
    """v1.0 DLRM: NVSwitch systems of one submitter never against another's PCIe system."""
    published = rows(
        wh,
        "SELECT * FROM interconnect_delta WHERE kind = 'measured' AND gain IS NOT NULL "
        "AND submitter <> baseline_submitter",
    )
    assert published == []
    withheld = rows(
        wh,
        "SELECT * FROM interconnect_delta WHERE kind = 'measured' AND gain IS NULL",
    )
    assert withheld and all(r["withheld_reason"] for r in withheld)


def test_model_ratios_compare_closed_available_corroborated_results_only(wh):
    """No "B200 33.5x MI300X" (BERT v5.0: the only MI300X result is one third party's box on
    its own framework) and no "A100 1.08x H100" (MiniGo v2.1: the H100 was a preview)."""
    assert (
        rows(
            wh,
            "SELECT * FROM site_model_ratios WHERE other_model LIKE '%MI300X%' "
            "AND benchmark = 'bert'",
        )
        == []
    )
    assert rows(wh, "SELECT * FROM site_model_ratios WHERE benchmark = 'minigo'") == []
    (bert,) = rows(
        wh, "SELECT * FROM site_model_ratios WHERE benchmark = 'bert' AND accelerators = 8"
    )
    assert bert["left_out_configurations"] == 1
    assert "MI300X" in bert["left_out_reasons"]
    preview = rows(
        wh,
        "SELECT r.* FROM site_model_ratios AS r JOIN store.systems AS s "
        "ON s.system_id IN (r.system_id, r.other_system_id) "
        "WHERE lower(s.availability) SIMILAR TO '.*(preview|research).*'",
    )
    assert preview == []


def test_ties_are_never_ranked(wh):
    """A ratio within the benchmark's allowed variance is a tie; one-server leaders whose
    runner-up is within it are tied for fastest."""
    untied = rows(
        wh,
        "SELECT * FROM site_model_ratios WHERE NOT tied AND speedup - 1 <= variance_pct / 100",
    )
    assert untied == []
    leaders = rows(
        wh,
        "SELECT s.*, (SELECT min(o.score_minutes) FROM site_scores AS o "
        "WHERE o.evidence = s.evidence AND o.benchmark = s.benchmark AND o.round = s.round "
        "AND o.one_server IS NOT DISTINCT FROM s.one_server AND o.rank_in_class = 2) AS second "
        "FROM site_scores AS s WHERE s.rank_in_class = 1 AND s.tied_in_class = 1",
    )
    for r in leaders:
        if r["second"] is not None:
            assert r["second"] > r["score_minutes"] * (1 + r["variance_pct"] / 100), r
    (retinanet,) = {
        r["tied_in_class"]
        for r in rows(
            wh,
            "SELECT tied_in_class FROM site_scores WHERE evidence = 'official' AND round = 'v5.1' "
            "AND benchmark = 'retinanet' AND one_server AND rank_in_class = 1",
        )
    }
    assert retinanet > 1  # 21.5 to 22.3 min on 8 x B200: none is the fastest


def test_projection_check_is_out_of_sample(wh):
    """No submission is projected from its own timings: each borrows those of other
    submitters on the same accelerator model, count and round."""
    got = rows(wh, "SELECT * FROM projection_check")
    assert got
    submitters = dict(
        wh.sql(
            "SELECT DISTINCT system_id, submitter FROM store.runs WHERE source = 'official'"
        ).fetchall()
    )
    for r in got:
        donors = r["donor_system_ids"]
        assert r["system_id"] not in donors
        assert all(submitters[d] != submitters[r["system_id"]] for d in donors)


def test_anchored_projection_is_checked_on_pairs_of_official_results(wh):
    """ResNet-50, H100 and H200: each official result projected from the other model's, with
    the ratio of the shipped local runs' throughputs; measured here: median |error| 8.5%,
    90th percentile 9.5%, 30 pairs."""
    (total,) = rows(wh, "SELECT * FROM projection_anchor_error WHERE benchmark = 'all'")
    assert total["pairs"] == 30
    assert total["median_abs_error_pct"] == pytest.approx(8.46, abs=0.01)
    assert total["p90_abs_error_pct"] == pytest.approx(9.55, abs=0.01)
    assert total["median_abs_error_pct"] <= 10  # the goal
    for r in rows(wh, "SELECT * FROM projection_anchor_check"):
        assert r["target_system_id"] != r["anchor_system_id"]
        assert r["projected_minutes"] == pytest.approx(
            r["anchor_minutes"]
            * r["anchor_local_samples_per_s_per_accelerator"]
            / r["target_local_samples_per_s_per_accelerator"]
        )


def test_local_runs_are_anchored_on_the_nearest_official_result(wh):
    """A local H200 ResNet-50 run is anchored on the official H200 result; a local Mask R-CNN
    H200 run, with no official H200 result, on the H100's, through the two local rates."""
    got = rows(wh, "SELECT * FROM projection_anchored")
    resnet = [r for r in got if r["benchmark"] == "resnet" and r["accelerator_model"] == "H200-SXM"]
    assert resnet and all(r["anchor_model"] == "H200-SXM" for r in resnet)
    mask = [r for r in got if r["benchmark"] == "maskrcnn" and r["accelerator_model"] == "H200-SXM"]
    assert mask and all(r["anchor_model"] == "H100-SXM" for r in mask)
    for r in got:
        assert r["projected_minutes"] == pytest.approx(
            r["anchor_minutes"]
            * r["anchor_local_samples_per_s_per_accelerator"]
            / r["samples_per_s_per_accelerator"]
        )
    assert not [r for r in got if r["benchmark"] == "ssd"]  # local SSD-ResNet34 is no RetinaNet
    # as the anchors' local rates: a 2-GPU run's rate per GPU holds its own scaling loss
    assert {r["accelerators"] for r in got} == {1}


def test_local_runs_are_set_against_official_scores(wh):
    """The official reference of a full-size run (and the language models' projections from
    it) reads the reference configuration's official score, not a mean of its runs."""
    got = rows(
        wh,
        "SELECT f.official_minutes, s.score_minutes FROM throughput_fractions AS f "
        "JOIN scores AS s ON s.system_id = f.official_system_id AND s.benchmark = f.benchmark "
        "AND s.accelerators = f.official_accelerators WHERE f.official_minutes IS NOT NULL",
    )
    assert got
    for r in got:
        assert r["official_minutes"] == pytest.approx(r["score_minutes"], rel=1e-12)


def test_preview_systems_are_labelled_where_scores_are_shown(wh):
    (row,) = rows(
        wh,
        "SELECT availability FROM site_scores WHERE system_id = 'v2.1/NVIDIA/dgxh100_preview' "
        "AND benchmark = 'minigo'",
    )
    assert row["availability"] == "preview"


def test_round_gains_within_the_variance_are_ties(wh):
    got = rows(wh, "SELECT * FROM site_round_gains")
    for r in got:
        within = max(r["speedup"], 1 / r["speedup"]) <= 1 + 2.5 / 100
        if within:
            assert r["tied"], r
        if max(r["speedup"], 1 / r["speedup"]) > 1.05:
            assert not r["tied"], r
