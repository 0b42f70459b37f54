"""Home: per workload family, the fastest official systems of the newest round on one server
and at scale; then accelerator models compared at an equal count (official results only); then,
apart, one sentence per language model run on your own servers, set against the official
results of the same accelerator."""

from __future__ import annotations

from collector.site.common import benchmark_names, benchmark_page, newest, rel
from collector.site.config import settings
from collector.site.data import SiteData
from collector.site.model import FamilyFinding, HomePage, ModelFinding, Row

PATH = "index.md"


def page(data: SiteData) -> HomePage:
    """index.md: at most `home_findings` findings, each from official results."""
    scores = data.rows("site_scores")
    official = [r for r in scores if r["evidence"] == "official" and r["score_minutes"]]
    latest = newest(r["round"] for r in official)
    families = [f for key in settings().families if (f := _family(key, official, latest))]
    room = settings().home_findings - len(families)
    models = _models(data.rows("site_model_ratios"), min(room, settings().home_model_comparisons))
    return HomePage(
        PATH,
        "What trains fastest",
        data.snapshot,
        families=tuple(families),
        models=tuple(models),
        own_configurations=sum(
            1 for r in scores if r["evidence"] == "local" and r["score_minutes"]
        ),
        proxy_configurations=sum(1 for r in scores if r["evidence"] == "proxy"),
        language_models=tuple(r for r in data.rows("site_language_models") if r["home"]),
    )


def _family(key: str, official: list[Row], latest: str) -> FamilyFinding | None:
    """The family's first benchmark (site.yml's order) in its newest round, and that
    benchmark's fastest configuration on one server and on several."""
    mine = [r for r in official if settings().benchmark(r["benchmark"]).family == key]
    if not mine:
        return None
    last = newest(r["round"] for r in mine)
    in_last = [r for r in mine if r["round"] == last]
    bench = benchmark_names(in_last)[0]
    runs = [r for r in in_last if r["benchmark"] == bench]
    first = {r["one_server"]: r for r in runs if r["rank_in_class"] == 1}
    tied = sorted(
        (r for r in runs if r["tied_for_fastest"]),
        key=lambda r: (r["score_minutes"], r["system_id"]),
    )
    ties = {place: tuple(r for r in tied if r["one_server"] is place) for place in (True, False)}
    return FamilyFinding(
        family=settings().family_title(key),
        benchmark=bench,
        title=settings().benchmark(bench).title,
        href=rel(PATH, benchmark_page(bench)),
        round=last,
        newest_round=latest,
        one_server=first.get(True),
        at_scale=first.get(False),
        undescribed=first.get(None),
        one_server_ties=ties[True],
        at_scale_ties=ties[False],
    )


def _models(ratios: list[Row], room: int) -> list[ModelFinding]:
    """The first benchmarks and counts of site_model_ratios: newest round first, then the
    most models compared."""
    groups: dict[tuple[str, int], list[Row]] = {}
    for r in ratios:
        groups.setdefault((r["benchmark"], r["accelerators"]), []).append(r)
    return [
        ModelFinding(
            settings().benchmark(bench).title, rel(PATH, benchmark_page(bench)), tuple(rows)
        )
        for (bench, _count), rows in list(groups.items())[: max(room, 0)]
    ]
