"""Escaping, chart specs, settings and page helpers, without building a site."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pyarrow as pa
import pytest

import collector
from collector.queries import query
from collector.site import charts, common
from collector.site.escape import json_for_html, markdown_text, title_text
from collector.site.model import Sheet
from collector.site.render import render
from collector.store import snapshot

ROWS = [
    {
        "label": "a",
        "value": 1.0,
        "low": 0.9,
        "high": 1.2,
        "system": "<b>x</b>",
        "accelerators": 8,
        "runs_used": 3,
        "kind": "official MLPerf",
    },
    {
        "label": "b",
        "value": 100.0,
        "low": 90.0,
        "high": 120.0,
        "system": "y",
        "accelerators": 16,
        "runs_used": 3,
        "kind": "official MLPerf",
    },
]


EMPTY = Path(tempfile.mkdtemp())  # a store with one snapshot, every stored table empty
snapshot.write(EMPTY, snapshot.empty())


def _time(rows: list[dict], title: str = "t", description: str = "d") -> dict:
    """The spec of a time-to-train dot chart, as the benchmark pages draw it."""
    chart = charts.dots(rows, title, description, charts.TIME_MEASURE, True, charts.TIME_TIPS)
    return chart.to_dict()


def test_markdown_text_escapes_html_and_markdown() -> None:
    out = markdown_text("<script>alert(1)</script> *x* [l](u) a|b")
    assert "<" not in out and ">" not in out
    assert r"\*x\*" in out and r"\[l\]\(u\)" in out and r"a\|b" in out
    # Markdown keeps a backslash before "~", which no extension here reads
    assert markdown_text("~34%") == "~34%"


def test_json_for_html_cannot_close_a_script() -> None:
    text = str(json_for_html({"s": "</script><script>alert(1)</script>"}))
    assert "</" not in text and "<" not in text
    assert json.loads(text) == {"s": "</script><script>alert(1)</script>"}


def test_title_has_no_angle_brackets() -> None:
    assert "<" not in title_text("<script>") and "\u2039script\u203a" in title_text("<script>")


def test_time_chart_has_error_bars_tooltips_description_and_log_toggle() -> None:
    spec = _time(ROWS, "t", "alt text")
    assert spec["description"] == "alt text"
    marks = [layer["mark"]["type"] for layer in spec["layer"]]
    assert marks == ["rule", "point"]
    rule = spec["layer"][0]["encoding"]
    assert rule["x"]["field"] == "low_plot" and rule["x2"]["field"] == "high_plot"
    tips = [t["field"] for t in spec["layer"][1]["encoding"]["tooltip"]]
    assert "system" in tips and "label" in tips  # the full label, cut short on the axis
    params = spec["params"]
    assert params[0]["bind"]["input"] == "checkbox"
    assert params[0]["value"] is True  # values 100x apart: the log scale is on at first


def _switch(expr: str) -> tuple[list[float], list[float]]:
    """The two lists of a 'param ? [on] : [off]' expression."""
    on, off = expr.split(" ? ", 1)[1].split(" : ")
    return json.loads(on), json.loads(off)


def test_value_axes_tick_round_numbers_on_both_scales() -> None:
    spec = _time(ROWS)
    axis = spec["layer"][1]["encoding"]["x"]["axis"]
    logs, linear = _switch(axis["values"]["expr"])
    minutes = [round(10**v, 9) for v in logs]
    # 0.9 to 120 minutes: 30 s, 1, 2, 5, 10, 30 min, 1 h, 2 h
    assert minutes == [0.5, 1, 2, 5, 10, 30, 60, 120]
    assert linear == [0, 30, 60, 90, 120]  # minutes, at half-hour steps
    scale = spec["layer"][1]["encoding"]["x"]["scale"]
    assert _switch(scale["domain"]["expr"]) == ([logs[0], logs[-1]], [0, 120])
    # durations print as "45 s", "3.2 min", "2.1 h"
    assert "' s'" in axis["labelExpr"] and "' min'" in axis["labelExpr"]
    assert "' h'" in axis["labelExpr"]
    plain = charts.dots(
        [{"label": "x", "value": v, "kind": "k", "detail": ""} for v in (3.0, 4000.0)],
        "t",
        "d",
        "speedup, x",
    ).to_dict()
    logs, _ = _switch(plain["layer"][0]["encoding"]["x"]["axis"]["values"]["expr"])
    assert [round(10**v) for v in logs] == [1, 10, 100, 1000, 10000]  # decades: 1-2-5 crowd
    assert "' min'" not in plain["layer"][0]["encoding"]["x"]["axis"]["labelExpr"]


def test_chart_titles_start_at_the_left_edge_on_a_line_per_part() -> None:
    title = "Image classification (ResNet-50): time to train, official MLPerf"
    spec = _time(ROWS, title)
    assert spec["title"] == {
        "text": ["Image classification (ResNet-50):", "time to train, official MLPerf"],
        "anchor": "start",
        "frame": "group",
    }
    plain = charts.dots(ROWS, "Scaling efficiency, official MLPerf", "d", "x").to_dict()
    assert plain["title"]["text"] == "Scaling efficiency, official MLPerf"
    long = "Interconnect: published studies (transcribed, not measured by collector), improvement"
    lines = charts.dots(ROWS, long, "d", "x").to_dict()["title"]["text"]
    assert all(len(line) <= charts.TITLE_CHARS for line in lines)
    assert " ".join(lines) == long  # broken at spaces, nothing cut


def test_charts_take_the_width_of_their_column_and_legends_go_below() -> None:
    dots = _time(ROWS)
    assert dots["width"] == "container" and dots["height"] == {"step": charts.ROW_STEP}
    assert dots["autosize"] == {"type": "fit-x", "contains": "padding"}
    assert dots["config"]["legend"] == {"orient": "bottom", "direction": "vertical"}
    assert charts.at_width(dots, 640)["width"] == 640  # the static SVG


def test_narrow_range_has_no_log_toggle() -> None:
    spec = _time(ROWS[:1])
    assert "params" not in spec


def test_scaling_chart_uses_interval_columns() -> None:
    rows = [
        {
            "accelerators": n,
            "score_minutes": v,
            "fastest_minutes": v * 0.9,
            "slowest_minutes": v * 1.1,
            "series": "s",
            "kind": "official MLPerf",
        }
        for n, v in ((4, 100.0), (8, 55.0))
    ]
    spec = charts.scaling(rows, "t", "d").to_dict()
    enc = spec["layer"][0]["encoding"]
    assert enc["y"]["field"] == "fastest_minutes_plot"
    assert enc["y2"]["field"] == "slowest_minutes_plot"
    assert spec["layer"][1]["encoding"]["x"]["scale"]["type"] == "log"
    assert spec["layer"][1]["encoding"]["x"]["axis"]["values"] == [4, 8]


def test_dot_chart_labels_sit_above_their_row_cut_at_a_word_to_the_width() -> None:
    rows = [
        {
            "label": "resnet · vm_4xh200_bf16_no-p2p · 4 · throughput",
            "value": 99.3,
            "low": 99.1,
            "high": 99.5,
            "kind": "local run",
            "detail": "v0.5",
        }
    ]
    spec = charts.dots(rows, "t", "alt text", "efficiency, %").to_dict()
    for layer in spec["layer"]:
        axis = layer["encoding"]["y"]["axis"]
        assert axis["labelAlign"] == "left" and axis["labelBaseline"] == "bottom"
        assert axis["labelLimit"] == {"expr": "width"}
        assert "lastindexof(" in axis["labelExpr"] and "width" in axis["labelExpr"]


def _drawn(chart: object) -> list[dict]:
    """The rows a chart's spec carries, as the pages embed it (common.spec)."""
    return common.spec(chart)["data"]["values"]


def test_a_long_ratio_chart_draws_its_largest_rows_only() -> None:
    n = charts.TOP_ROWS + 5
    rows = [
        {"label": f"row {i}", "value": float(i % 7 + i), "kind": "k", "detail": ""}
        for i in range(n)
    ]
    chart = charts.dots(rows, "t", "d", "speedup, x")
    drawn = _drawn(chart)
    assert len(drawn) == charts.TOP_ROWS
    largest = sorted((r["value"] for r in rows), reverse=True)[: charts.TOP_ROWS]
    assert sorted((r["value"] for r in drawn), reverse=True) == largest
    spec = chart.to_dict()
    # no box that draws every row, no filter that hides rows the spec carries
    assert not any(p["name"] == "all_rows" for p in spec.get("params", []))
    assert not any("filter" in t for t in spec.get("transform", []))


def test_a_long_time_chart_draws_its_fastest_rows_in_the_order_given() -> None:
    rows = [
        {"label": f"row {i}", "value": 10.0 + i // 2, "low": None, "high": None, "kind": "k"}
        for i in range(charts.TOP_ROWS + 10)
    ][::-1]
    chart = charts.dots(rows, "t", "d", charts.TIME_MEASURE, True, charts.TIME_TIPS)
    drawn = _drawn(chart)
    assert [r["value"] for r in drawn] == sorted(r["value"] for r in rows)[: charts.TOP_ROWS]
    # equal times keep the order the table gives them
    assert [r["label"] for r in drawn[:2]] == ["row 1", "row 0"]
    # the time axis ends at the slowest row drawn (19 min), not at those left out (24 min)
    layer = next(x for x in chart.to_dict()["layer"] if "x" in x["encoding"])
    assert max(layer["encoding"]["x"]["axis"]["values"]) == 20


def test_rows_labelled_alike_each_keep_a_row_of_the_chart() -> None:
    rows = [{"label": "resnet50 · study 002", "value": v, "kind": "k"} for v in (97.5, 92.5)]
    chart = charts.dots(rows, "t", "d", "efficiency, %")
    drawn = _drawn(chart)
    y = chart.to_dict()["layer"][0]["encoding"]["y"]
    assert len({r[y["field"]] for r in drawn}) == 2  # two places on the row axis, not one
    assert "split(datum.label" in y["axis"]["labelExpr"]  # each shows the label alone


def test_a_short_dot_chart_draws_every_row() -> None:
    rows = [{"label": f"r{i}", "value": float(i + 1), "kind": "k"} for i in range(5)]
    chart = charts.dots(rows, "t", "d", "speedup, x")
    assert len(_drawn(chart)) == 5 and "transform" not in chart.to_dict()


def _derive(name: str, **inputs: list[dict]) -> list[dict]:
    """The rows of derived table `name` computed by its SQL from the rows given for the tables
    it depends on (each with the columns and types of its contract's table; null where not
    given), in a store with nothing in it."""
    with collector.open(EMPTY) as wh:
        return _derived(wh.connection, name, inputs)


def _derived(con: object, name: str, inputs: dict[str, list[dict]]) -> list[dict]:
    for dep in query.contracts()[name].depends_on:
        query.build(con, dep)  # its columns and types, computed over the empty store
        described = con.table(dep)
        types = dict(zip(described.columns, described.types, strict=True))
        rows = inputs.get(dep, [])
        con.register(f"_{dep}", pa.table({c: [r.get(c) for r in rows] or [None] for c in types}))
        cols = ", ".join(f'CAST("{c}" AS {t}) AS "{c}"' for c, t in types.items())
        con.execute(f"DROP TABLE {dep}")  # the rows given in its place, still counted as built
        con.execute(f"CREATE TEMP TABLE {dep} AS SELECT {cols} FROM _{dep} LIMIT {len(rows)}")
    return query.select(con, query.contracts()[name].sql).to_arrow_table().to_pylist()


def _label(topic: str, row: dict) -> str:
    (out,) = _derive("site_comparisons", **{topic: [row]})
    return out["label"]


def test_scaling_labels_name_a_baseline_other_than_one_accelerator() -> None:
    row = {"benchmark": "ssd", "system": "box", "accelerators": 8, "source": "official",
           "kind": "strong", "efficiency_pct": 90.0, "baseline_accelerators": 2}  # fmt: skip
    assert _label("scaling", row) == "ssd · box · 8 · time to train · vs 2"
    assert _label("scaling", {**row, "baseline_accelerators": 1}) == "ssd · box · 8 · time to train"


def test_chart_labels_name_the_submitter_and_the_accelerator_model_in_words() -> None:
    row = {"benchmark": "bert", "system": "16xR750-2xA100-PCIe-80GB", "accelerators": 32,
           "accelerator": "NVIDIA A100-PCIe-80GB", "submitter": "Dell", "source": "official",
           "kind": "weak", "efficiency_pct": 90.0, "baseline_accelerators": 16}  # fmt: skip
    (out,) = _derive("site_comparisons", scaling=[row], accelerator_words=[
        {"accelerator": "NVIDIA A100-PCIe-80GB", "model": "NVIDIA A100 PCIe"}])  # fmt: skip
    assert out["label"] == "bert · Dell, 32 x NVIDIA A100 PCIe · throughput · vs 16"


def test_chart_labels_name_the_benchmark_by_its_definition_in_every_round() -> None:
    row = {"system": "box", "accelerators": 8, "source": "official", "kind": "strong",
           "efficiency_pct": 90.0, "baseline_accelerators": 1}  # fmt: skip
    renamed = [{**row, "benchmark": "gnn", "round": "v4.1"},
               {**row, "benchmark": "rgat", "round": "v5.0"}]  # fmt: skip
    assert {r["label"] for r in _derive("site_comparisons", scaling=renamed)} == {
        "R-GAT · box · 8 · time to train · v4.1",
        "R-GAT · box · 8 · time to train · v5.0",
    }
    # a name that meant another benchmark in another round reads as that one
    ssd = [{**row, "benchmark": "ssd", "round": r} for r in ("v1.1", "v2.0")]
    labels = {r["label"] for r in _derive("site_comparisons", scaling=ssd)}
    assert labels == {"SSD-ResNet34 · box · 8 · time to train · v1.1",
                      "RetinaNet ResNeXt50 · box · 8 · time to train · v2.0"}  # fmt: skip


def test_a_studys_rows_read_apart_by_workload_framework_and_precision() -> None:
    row = {"benchmark": "resnet50", "system": "C4140", "accelerators": 8, "kind": "published",
           "source": "published", "round": "002_a2", "efficiency_pct": 90.0,
           "baseline_accelerators": 1, "framework": "MXNet 0.11.1"}  # fmt: skip
    pair = [{**row, "precision": "fp16"}, {**row, "precision": "fp32", "efficiency_pct": 97.5}]
    labels = [r["label"] for r in _derive("site_comparisons", scaling=pair)]
    assert sorted(labels) == ["ResNet-50 · C4140 · 8 · MXNet 0.11.1, fp16",
                              "ResNet-50 · C4140 · 8 · MXNet 0.11.1, fp32"]  # fmt: skip


def test_a_scaling_line_never_joins_precisions_or_interconnects() -> None:
    def config(gpus: int, precision: str, interconnect: str, minutes: float) -> dict:
        return {
            "evidence": "local",
            "kind": "local run, full scale",
            "benchmark": "x",
            "round": "v0.5",
            "submitter": "lab",
            "accelerator": "NVIDIA H200",
            "accelerators": gpus,
            "precision": precision,
            "interconnect": interconnect,
            "score_minutes": minutes,
            "fastest_minutes": minutes * 0.9,
            "slowest_minutes": minutes * 1.1,
        }

    configs = [
        config(1, "fp32", "nvlink", 0.9),  # one count only: no line
        config(1, "bf16", "nvlink", 0.6),
        config(2, "bf16", "nvlink", 0.4),
        config(2, "bf16", "no-p2p", 0.4),  # one count only: no line
        config(4, "bf16", "nvlink", 0.3),
    ]
    rows = _derive("site_scaling", site_scores=configs)
    assert {(r["series"], r["accelerators"]) for r in rows} == {
        ("lab, NVIDIA H200, bf16, NVLink (v0.5)", n) for n in (1, 2, 4)
    }


def test_compare_tables_show_columns_their_tables_have() -> None:
    from collector.queries import query
    from collector.site.pages.compare import SHOWN

    contracts = query.contracts()
    for table, (first, more) in SHOWN.items():
        assert set(first + more) <= {c["name"] for c in contracts[table].columns}, table


def test_compare_cells_give_a_ratio_with_its_interval_where_it_has_one() -> None:
    from collector.site.pages.compare import INTERVALS, _cell

    ends = INTERVALS["gain"]
    row = {"gain": 1.9412, "gain_ci_low": 1.9066, "gain_ci_high": 1.9731}
    assert _cell(None, row, "gain", ends) == '<span class="ci">1.94 (1.91–1.97)</span>'
    published = {"gain": 1.5, "gain_ci_low": None, "gain_ci_high": None}
    assert _cell(None, published, "gain", ends) == "1.5"
    assert _cell(None, row, "gain") == "1.94"
    assert _cell(None, {"within_noise": True}, "within_noise") == "yes"
    assert _cell(None, {"within_noise": False}, "within_noise") == "no"


def test_compare_cells_say_what_a_study_left_unstated() -> None:
    from collector.site.pages.compare import _cell

    across = {"source": "published", "benchmark": None, "accelerators": None, "gain": 1.4}
    assert _cell(None, across, "benchmark") == _cell(None, across, "accelerators") == "not stated"
    assert _cell(None, dict(across, source="official"), "benchmark") is None


def test_mixed_precision_rows_say_whether_time_or_throughput_gave_them() -> None:
    def gain(kind: str) -> dict:
        return {"benchmark": "ssd", "system": "box", "accelerators": 1, "kind": kind,
                "source": "local", "scale": "full", "gain": 4.6}  # fmt: skip

    assert _label("precision_gain", gain("time")) == "ssd · box · 1 · time to train"
    assert _label("precision_gain", gain("throughput")) == "ssd · box · 1 · throughput"


def test_system_comparisons_read_only_rows_against_a_named_system() -> None:
    def speedup(kind: str, value: float) -> dict:
        return {
            "baseline_kind": kind,
            "baseline": "h200-1gpu-local",
            "baseline_accelerators": 4,
            "benchmark": "ssd",
            "system": "vm_1xh100_bf16_default",
            "system_id": "v0.5/h100-x1/vm_1xh100_bf16_default",
            "baseline_system_id": "v0.5/h200-x1/vm_1xh200_bf16_default",
            "baseline_system": "vm_1xh200_bf16_default",
            "baseline_accelerator": "H200-SXM",
            "accelerators": 1,
            "source": "local",
            "scale": "full",
            "speedup": value,
            "speedup_ci_low": value - 0.1,
            "speedup_ci_high": value + 0.1,
        }

    (o,) = _derive("site_comparisons", speedups=[speedup("family", 4.0), speedup("system", 0.7)])
    assert (o["value"], o["low"], o["high"]) == pytest.approx((0.7, 0.6, 0.8))
    # the hosts are named (both ran systems called vm_1x..._default), and so is the baseline's,
    # with its accelerators
    assert o["label"] == (
        "ssd · h100-x1/vm_1xh100_bf16_default · 1 · vs h200-x1 vm_1xh200_bf16_default, 4 x H200-SXM"
    )


def test_interconnect_rows_are_charted_as_percent_slower_without_nvlink() -> None:
    row = {"benchmark": "gnmt", "accelerators": 4, "source": "local", "scale": "full",
           "kind": "measured", "gain": 1.25, "gain_ci_low": 1.1, "gain_ci_high": 1.5}  # fmt: skip
    (o,) = _derive("site_comparisons", interconnect_delta=[row])
    assert (o["value"], o["low"], o["high"]) == pytest.approx((25.0, 10.0, 50.0))
    assert o["label"] == "gnmt · 4"
    assert _label("interconnect_delta", {**row, "precision": "fp32"}) == "gnmt · 4 · fp32"


def test_proxy_runs_bounds_and_confounded_pairs_are_not_charted() -> None:
    row = {"benchmark": "gnmt", "accelerators": 4, "source": "local", "scale": "full",
           "kind": "measured", "gain": 1.25}  # fmt: skip
    left_out = [{**row, "scale": "tiny"}, {**row, "qualifiers": "lower bound"},
                {**row, "confounders": "different systems"}]  # fmt: skip
    assert _derive("site_comparisons", interconnect_delta=left_out) == []


def test_a_submitted_description_opens_nested_objects_into_rows() -> None:
    """No row of a system's submitted description is a blob of JSON: objects open into dotted
    rows, lists read as items, a matrix row by row."""
    from collector.site.pages.systems import _fields

    submitted = {
        "system_name": "vm_2xh200",
        "collector": {
            "versions": {"cuda": "13.0", "nccl": "2.28.9"},
            "topology": {"matrix": [["X", "NV18"], ["NV18", "X"]]},
            "power_limit_w": [700.0, 700.0],
            "interconnect_env": {},
        },
        "other_software_stack": [{"nccl_version": "2.7.5", "cuda_version": "11.0"}],
    }

    assert list(_fields(submitted)) == [
        ("collector.interconnect_env", ""),
        ("collector.power_limit_w", "700.0, 700.0"),
        ("collector.topology.matrix", "X, NV18; NV18, X"),
        ("collector.versions.cuda", "13.0"),
        ("collector.versions.nccl", "2.28.9"),
        ("other_software_stack", "cuda_version=11.0, nccl_version=2.7.5"),
        ("system_name", "vm_2xh200"),
    ]


def test_tables_by_evidence_never_share_a_kind_and_keep_the_order_of_their_table() -> None:
    systems = [
        {"kind": "official MLPerf", "hardware": "b", "system_id": "v0.7/a/b", "round": "v0.7"},
        {"kind": "local run, proxy scale tiny", "hardware": "a", "system_id": "v0.5/h/a"},
        {"kind": "local run, proxy scale tiny", "hardware": "c", "system_id": "v0.5/h/c"},
    ]
    rows = [{"source": "", "submitter": "s", "run_interconnect": None, "system": "n",
             "round": "v0.5", **r} for r in systems]  # fmt: skip
    text = render(
        "systems.md.j2", Sheet("systems/index.md", "Systems", "s", {"site_systems": rows})
    )
    official, local = text.split("### ")[1:]
    assert official.startswith("Official MLPerf results") and official.count("| [") == 1
    assert local.startswith("Local runs, proxy scale tiny") and local.count("| [") == 2


def test_a_dot_chart_without_intervals_draws_no_bars() -> None:
    rows = [{"label": "a", "value": 1.5, "low": None, "high": None, "kind": "k", "detail": ""}]

    spec = charts.dots(rows, "t", "d", "speedup").to_dict()

    assert [layer["mark"]["type"] for layer in spec["layer"]] == ["point"]


def test_listed_reads_json_text_as_the_store_keeps_a_software_stack() -> None:
    from collector.site.common import listed

    stack = '[{"cuda_version": "11.0", "nccl_version": "2.7.5"}]'

    assert listed(stack) == "cuda_version=11.0, nccl_version=2.7.5"
    assert listed("[not json") == "[not json"
    assert listed([[1, 2], [3]]) == "1, 2; 3"


def test_a_chart_with_values_of_zero_or_less_starts_on_a_linear_axis() -> None:
    rows = [
        {"label": "a", "value": 40.0, "low": 30.0, "high": 50.0, "kind": "k", "detail": ""},
        {"label": "b", "value": -3.0, "low": -5.0, "high": 0.5, "kind": "k", "detail": ""},
        {"label": "c", "value": 0.2, "low": 0.1, "high": 0.3, "kind": "k", "detail": ""},
    ]

    spec = charts.dots(rows, "t", "d", "slower without NVLink, %").to_dict()

    assert spec["params"][0]["value"] is False  # offered, but a log axis would hide "b"


def test_numbers_read_as_people_write_them() -> None:
    from collector.site.common import num

    assert num(0.40312) == "0.403"
    assert num(75.81) == "75.8"
    assert num(67899680.4) == "67,899,680"
    assert num(99.97) == "100" and num(0.99, 2) == "0.99"
    assert num(None) == "—" and num(float("nan")) == "—"


def test_a_range_shows_the_digits_that_tell_its_ends_apart() -> None:
    from collector.site.common import interval

    assert interval(73.12, 78.49, " min") == "73.1–78.5 min"
    assert interval(21.46, 21.54, " min") == "21.46–21.54 min"
    assert interval(1.2, 1.2, "x") == "1.2–1.2x"  # equal ends stay equal
    # more digits to tell the ends apart keep the thousands grouped, as the median beside them
    assert interval(1058.7, 1059.2) == "1,058.7–1,059.2"
    assert interval(979927.0, 987239.0) == "979,927–987,239"
    assert interval(None, 2.0) == "—"
