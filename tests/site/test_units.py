"""Escaping, chart specs and advice rules, without building a site."""

from __future__ import annotations

import json

import pytest

from collector.site import charts
from collector.site.config import settings
from collector.site.escape import json_for_html, markdown_text, title_text

ROWS = [
    {
        "label": "a",
        "minutes": 1.0,
        "fastest_minutes": 0.9,
        "slowest_minutes": 1.2,
        "system": "<b>x</b>",
        "accelerators": 8,
        "runs_used": 3,
        "kind": "official MLPerf",
    },
    {
        "label": "b",
        "minutes": 100.0,
        "fastest_minutes": 90.0,
        "slowest_minutes": 120.0,
        "system": "y",
        "accelerators": 16,
        "runs_used": 3,
        "kind": "official MLPerf",
    },
]


class Tables(dict):
    """Site data holding only the derived tables given (name -> rows)."""

    def rows(self, name: str) -> list[dict]:
        return self.get(name, [])


def _local_link(benchmark: str, gain: float, low: float, high: float) -> dict:
    """An interconnect_delta row of local runs on 4 accelerators: time without NVLink over
    time with it, and its interval."""
    return {
        "benchmark": benchmark,
        "accelerators": 4,
        "source": "local",
        "scale": "small",
        "kind": "measured",
        "gain": gain,
        "gain_ci_low": low,
        "gain_ci_high": high,
    }


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
    spec = charts.time_to_train(ROWS, "t", "alt text").to_dict()
    assert spec["description"] == "alt text"
    marks = [layer["mark"]["type"] for layer in spec["layer"]]
    assert marks == ["rule", "point"]
    rule = spec["layer"][0]["encoding"]
    assert (
        rule["x"]["field"] == "fastest_minutes_plot"
        and rule["x2"]["field"] == "slowest_minutes_plot"
    )
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
    spec = charts.time_to_train(ROWS, "t", "d").to_dict()
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
    plain = charts.bars(
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
    spec = charts.time_to_train(ROWS, title, "d").to_dict()
    assert spec["title"] == {
        "text": ["Image classification (ResNet-50):", "time to train, official MLPerf"],
        "anchor": "start",
        "frame": "group",
    }
    plain = charts.bars(ROWS, "Scaling efficiency, official MLPerf", "d", "x").to_dict()
    assert plain["title"]["text"] == "Scaling efficiency, official MLPerf"
    long = "Interconnect: published studies (transcribed, not measured by collector), improvement"
    lines = charts.bars(ROWS, long, "d", "x").to_dict()["title"]["text"]
    assert all(len(line) <= charts.TITLE_CHARS for line in lines)
    assert " ".join(lines) == long  # broken at spaces, nothing cut


def test_charts_take_the_width_of_their_column_and_legends_go_below() -> None:
    dots = charts.time_to_train(ROWS, "t", "d").to_dict()
    assert dots["width"] == "container" and dots["height"] == {"step": charts.ROW_STEP}
    assert dots["autosize"] == {"type": "fit-x", "contains": "padding"}
    assert dots["config"]["legend"] == {"orient": "bottom", "direction": "vertical"}
    assert charts.at_width(dots, 640)["width"] == 640  # the static SVG


def test_narrow_range_has_no_log_toggle() -> None:
    spec = charts.time_to_train(ROWS[:1], "t", "d").to_dict()
    assert "params" not in spec


def test_scaling_chart_uses_interval_columns() -> None:
    rows = [
        {
            "accelerators": n,
            "value": v,
            "low": v * 0.9,
            "high": v * 1.1,
            "series": "s",
            "measure": "minutes",
            "kind": "official MLPerf",
        }
        for n, v in ((4, 100.0), (8, 55.0))
    ]
    spec = charts.scaling(rows, "t", "d").to_dict()
    enc = spec["layer"][0]["encoding"]
    assert enc["y"]["field"] == "low_plot" and enc["y2"]["field"] == "high_plot"
    assert spec["layer"][1]["encoding"]["x"]["scale"]["type"] == "log"
    assert spec["layer"][1]["encoding"]["x"]["axis"]["values"] == [4, 8]


def test_advice_rules_pick_by_threshold() -> None:
    rules = settings().advice["scaling"]
    assert next(r for r in rules if r.holds(30.0)).below == 50
    assert next(r for r in rules if r.holds(95.0)).below == 1000


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
    spec = charts.bars(rows, "t", "alt text", "efficiency, %").to_dict()
    for layer in spec["layer"]:
        axis = layer["encoding"]["y"]["axis"]
        assert axis["labelAlign"] == "left" and axis["labelBaseline"] == "bottom"
        assert axis["labelLimit"] == {"expr": "width"}
        assert "lastindexof(" in axis["labelExpr"] and "width" in axis["labelExpr"]


def test_a_long_dot_chart_shows_its_first_rows_and_a_box_for_all() -> None:
    rows = [
        {"label": f"row {i}", "value": float(i + 1), "kind": "k", "detail": ""}
        for i in range(charts.FIRST_ROWS + 5)
    ]
    spec = charts.bars(rows, "t", "d", "speedup, x").to_dict()
    box = next(p for p in spec["params"] if p["name"] == "all_rows")
    assert box["value"] is False and box["bind"]["input"] == "checkbox"
    assert f"<= {charts.FIRST_ROWS}" in spec["transform"][1]["filter"]
    short = charts.bars(rows[:5], "t", "d", "speedup, x").to_dict()
    assert "transform" not in short


def test_a_described_local_system_takes_its_proxy_scale_from_its_runs() -> None:
    from collector.site.pages.common import kind
    from collector.site.pages.systems import systems_with_runs

    described = {"source": "local", "round": "v0.5", "submitter": "lab", "system": "box"}
    tables = {
        "systems": [{**described, "system_id": "v0.5/lab/box"}],
        "runs": [
            {**described, "system_id": "v0.5/lab/box", "scale": "small", "benchmark": b}
            for b in ("resnet", "ssd")
        ],
    }

    data = Tables(tables)

    (system,) = systems_with_runs(data)  # type: ignore[arg-type]
    assert kind(system) == "local run, proxy scale small"


def test_scaling_labels_name_a_baseline_other_than_one_accelerator() -> None:
    from collector.site.pages.observations import against as _against

    assert _against({"baseline_accelerators": 2}) == "vs 2"
    assert _against({"baseline_accelerators": 1}) is None
    assert _against({}) is None


def test_a_scaling_line_never_joins_precisions_or_interconnects() -> None:
    from collector.site.pages.benchmarks import _scaling_section

    def config(gpus: int, precision: str, interconnect: str, minutes: float) -> dict:
        return {
            "kind": "local run, proxy scale small",
            "round": "v0.5",
            "submitter": "lab",
            "accelerator": "NVIDIA H200",
            "accelerators": gpus,
            "precision": precision,
            "interconnect": interconnect,
            "minutes": minutes,
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
    (chart,) = _scaling_section("benchmarks/x.md", "X", configs).charts
    values = chart.spec["data"]["values"]
    assert {(v["series"], v["accelerators"]) for v in values} == {
        ("lab NVIDIA H200 (v0.5) bf16 nvlink", n) for n in (1, 2, 4)
    }


def test_compare_tables_show_columns_their_tables_have() -> None:
    from collector.queries import query
    from collector.site.pages.compare import SHOWN

    contracts = query.contracts()
    for table, shown in SHOWN.items():
        assert set(shown) <= {c["name"] for c in contracts[table].columns}, table


def test_compare_cells_give_a_ratio_with_its_interval_where_it_has_one() -> None:
    from collector.site.pages.compare import INTERVALS, _cell

    ends = INTERVALS["gain"]
    row = {"gain": 1.9412, "gain_ci_low": 1.9066, "gain_ci_high": 1.9731}
    assert _cell(None, row, "gain", ends) == '<span class="ci">1.94 (1.91–1.97)</span>'
    published = {"gain": 1.5, "gain_ci_low": None, "gain_ci_high": None}
    assert _cell(None, published, "gain", ends) == "1.5"
    assert _cell(None, row, "gain") == "1.94"


def test_mixed_precision_rows_say_whether_time_or_throughput_gave_them() -> None:
    from collector.site.pages.compare import _label
    from collector.site.pages.observations import Observation

    def gain(kind: str) -> Observation:
        row = {"system": "box", "kind": kind}
        return Observation("precision", "ssd", "vision", 4.6, 4.4, 4.8, 1, "local run", row)

    assert _label(gain("time")) == "ssd · box · 1 · time to train"
    assert _label(gain("throughput")) == "ssd · box · 1 · throughput"


def test_system_comparisons_read_only_rows_against_a_named_system() -> None:
    from collector.site.pages.compare import _label
    from collector.site.pages.observations import observations

    def speedup(kind: str, value: float) -> dict:
        return {
            "baseline_kind": kind,
            "baseline": "h200-1gpu-local",
            "baseline_accelerators": 4,
            "benchmark": "ssd",
            "system": "vm_1xh100_bf16_default",
            "system_id": "v0.5/h100-x1/vm_1xh100_bf16_default",
            "baseline_system_id": "v0.5/h200-x1/vm_1xh200_bf16_default",
            "accelerators": 1,
            "source": "local",
            "scale": "small",
            "speedup": value,
            "speedup_ci_low": value - 0.1,
            "speedup_ci_high": value + 0.1,
        }

    data = Tables({"speedups": [speedup("family", 4.0), speedup("system", 0.7)]})
    (o,) = observations(data, "systems")  # type: ignore[arg-type]
    assert (o.value, o.low, o.high) == pytest.approx((0.7, 0.6, 0.8))
    # the hosts are named (both ran systems called vm_1x..._default), and so is the baseline,
    # not its accelerator count
    assert _label(o) == "ssd · h100-x1/vm_1xh100_bf16_default · 1 · vs h200-1gpu-local"


def test_interconnect_rows_are_charted_as_percent_slower_without_nvlink() -> None:
    from collector.site.pages.compare import _label
    from collector.site.pages.observations import observations

    row = _local_link("gnmt", 1.25, 1.1, 1.5)

    data = Tables({"interconnect_delta": [row]})

    (o,) = observations(data, "interconnect")  # type: ignore[arg-type]
    assert (o.value, o.low, o.high) == pytest.approx((25.0, 10.0, 50.0))
    assert _label(o) == "gnmt · 4"
    row["precision"] = "fp32"
    (o,) = observations(data, "interconnect")  # type: ignore[arg-type]
    assert _label(o) == "gnmt · 4 · fp32"


def test_guide_reasons_are_the_configurations_own() -> None:
    from collector.site.pages.guide import _reasons

    local = {"benchmark": "gnmt", "source": "local", "scale": "small"}
    tables = {
        "scaling": [
            {**local, "kind": "strong", "accelerators": 4, "system": "a", "efficiency_pct": 50.0},
            {
                **local,
                "kind": "strong",
                "accelerators": 4,
                "system": "b",
                "baseline_accelerators": 2,
                "efficiency_pct": 90.0,
            },
        ],
        "interconnect_delta": [
            {**local, "kind": "measured", "accelerators": n, "precision": p, "gain": g}
            for n, p, g in ((2, "bf16", 1.1), (4, "bf16", 1.9), (4, "fp32", 0.96))
        ]
        + [
            {
                **local,
                "kind": "measured",
                "accelerators": 8,
                "precision": "bf16",
                "gain": 1.3,
                "confounders": "different hosts",
            }
        ],
        "precision_gain": [
            {**local, "kind": "time", "accelerators": n, "interconnect": i, "gain": g}
            for n, i, g in ((1, "nvlink", 5.0), (2, "nvlink", 3.0), (2, "no-p2p", 2.5))
        ],
    }

    data = Tables(tables)

    reasons = _reasons(data)  # type: ignore[arg-type]
    local_run = "local run, proxy scale small"
    gnmt = (local_run, "gnmt")
    assert reasons[(*gnmt, 4, "a")] == ["scaling efficiency 50% in time to train"]
    assert reasons[(*gnmt, 4, "b")] == ["scaling efficiency 90% in time to train vs 2"]
    # interconnect by count and precision: an fp32 configuration never shows the bf16 delta
    assert reasons[(*gnmt, 2, "interconnect", "bf16")] == ["10% slower without NVLink"]
    assert reasons[(*gnmt, 4, "interconnect", "bf16")] == ["90% slower without NVLink"]
    assert reasons[(*gnmt, 4, "interconnect", "fp32")] == ["4% faster without NVLink"]
    # a pair that differs in more than the link is no reason for anything
    assert (*gnmt, 8, "interconnect", "bf16") not in reasons
    # mixed precision by count and interconnect, and by benchmark for the rest
    assert reasons[(*gnmt, 2, "precision", "no-p2p")] == [
        "mixed precision 2.5x in time to train on 2 accelerators"
    ]
    assert reasons[gnmt] == ["mixed precision 5x in time to train on 1 accelerator"]


def test_home_states_interconnect_and_precision_findings_with_their_caveats() -> None:
    from collector.site.pages.home import _interconnect_findings, _precision_findings

    official = {"benchmark": "resnet", "source": "official", "kind": "measured"}
    local = {"benchmark": "gnmt", "source": "local", "scale": "small"}
    tables = {
        "interconnect_delta": [
            {
                **official,
                "accelerators": 8,
                "gain": 0.9,
                "gain_ci_low": 0.85,
                "gain_ci_high": 0.95,
                "confounders": "different systems",
            },
            {**local, "kind": "measured", "accelerators": 2, "gain": 1.1},
            {**local, "kind": "measured", "accelerators": 4, "gain": 1.9},
            {
                **local,
                "benchmark": "ssd",
                "kind": "measured",
                "accelerators": 4,
                "gain": 0.97,
                "within_noise": True,
            },
        ],
        "precision_gain": [
            {**local, "kind": "throughput", "accelerators": 1, "precision": "bf16", "gain": 4.8},
            {**local, "kind": "time", "accelerators": 1, "precision": "bf16", "gain": 5.2},
        ],
    }

    data = Tables(tables)

    first, second, third = (f.sentence for f in _interconnect_findings(data))  # type: ignore[arg-type]
    assert "**3%** faster, within noise, without NVLink" in third
    assert "**10%** faster without NVLink" in first and "interval 5–15%" in first
    assert "Not like for like: different systems." in first
    assert "**90%** slower without NVLink" in second and "on 4 accelerators" in second
    (gain,) = (f.sentence for f in _precision_findings(data))  # type: ignore[arg-type]
    assert "mixed precision (bf16) trains **5.2x** as fast as FP32" in gain
    assert "on 1 accelerator in time to train" in gain


def test_home_compares_accelerator_models_against_the_baseline_system() -> None:
    from collector.site.pages.home import _system_findings

    h100, h200 = "v0.5/h100-x1/vm_1xh100_bf16_default", "v0.5/h200-x1/vm_1xh200_bf16_default"
    h200_x4 = "v0.5/h200-x4/vm_4xh200_bf16_default"

    def row(system_id: str, accelerator: str, count: int, bench: str, value: float) -> dict:
        return {
            "baseline_kind": "system",
            "baseline": "h200-1gpu-local",
            "baseline_system_id": h200,
            "baseline_accelerators": 1,
            "system_id": system_id,
            "accelerator": accelerator,
            "accelerators": count,
            "precision": "bf16",
            "benchmark": bench,
            "source": "local",
            "scale": "small",
            "speedup": value,
            "within_noise": value > 1,
        }

    data = Tables(
        {
            "configurations": [
                {"system_id": h100, "accelerator": "NVIDIA H100 80GB HBM3"},
                {"system_id": h200, "accelerator": "NVIDIA H200"},
            ],
            "speedups": [
                row(h100, "NVIDIA H100 80GB HBM3", 1, "ssd", 0.7),
                row(h100, "NVIDIA H100 80GB HBM3", 1, "ncf", 0.75),
                row(h100, "NVIDIA H100 80GB HBM3", 1, "resnet", 1.2),
                # four H200s, and one H200 of another host: no comparison of models
                row(h200_x4, "NVIDIA H200", 4, "ssd", 1.6),
                row("v0.5/h200-x4/vm_1xh200_bf16_default", "NVIDIA H200", 1, "ssd", 1.0),
            ],
        }
    )
    (finding,) = (f.sentence for f in _system_findings(data))  # type: ignore[arg-type]
    assert finding.startswith(
        "**NVIDIA H100 80GB HBM3** against **NVIDIA H200** in bf16 on 1 accelerator: "
        "h100-x1/vm\\_1xh100\\_bf16\\_default trains **0.75x** as fast as "
        "h200-x1/vm\\_1xh200\\_bf16\\_default, the median of 3 benchmarks, from 0.7x"
    )
    assert finding.endswith(
        "to 1.2x (Image classification \\(ResNet-50\\)); 2 of 3 outside the noise."
    )


def test_home_precision_gain_names_the_systems_of_two_hosts() -> None:
    from collector.site.pages.home import _precision_findings

    def gain(host: str, value: float) -> dict:
        return {
            "benchmark": "ssd",
            "source": "local",
            "scale": "small",
            "kind": "time",
            "accelerators": 1,
            "precision": "bf16",
            "system": "vm_1xgpu_bf16_default",
            "system_id": f"v0.5/{host}/vm_1xgpu_bf16_default",
            "gain": value,
        }

    data = Tables({"precision_gain": [gain("h100-x1", 3.7), gain("h200-x4", 4.6)]})
    (finding,) = (f.sentence for f in _precision_findings(data))  # type: ignore[arg-type]
    assert "trains **3.7x** as fast as FP32 on 1 accelerator in time to train on h100-x1/" in (
        finding
    )
    assert finding.endswith(
        "The other configuration at that count: h200-x4/vm\\_1xgpu\\_bf16\\_default 4.6x."
    )


def test_home_names_the_configuration_it_states_and_what_the_others_gave() -> None:
    """Two precisions measured at the same count: the finding states one, naming its
    precision, and says what the other gave; a lone configuration gets no such sentence."""
    from collector.site.pages.home import _interconnect_findings, _scaling_findings

    local = {"benchmark": "gnmt", "source": "local", "scale": "small", "accelerators": 4}
    tables = {
        "scaling": [
            {**local, "kind": "strong", "precision": "bf16", "efficiency_pct": 51.9},
            {**local, "kind": "strong", "precision": "fp32", "efficiency_pct": 81.5},
            {**local, "kind": "weak", "precision": "bf16", "efficiency_pct": 97.0},
        ],
        "interconnect_delta": [
            {**local, "kind": "measured", "precision": "bf16", "gain": 1.924},
            {**local, "kind": "measured", "precision": "fp32", "gain": 0.96},
            {**local, "benchmark": "ssd", "kind": "measured", "precision": "bf16", "gain": 1.3},
            {
                **local,
                "benchmark": "ssd",
                "kind": "measured",
                "precision": "fp32",
                "gain": 1.42,
                "within_noise": True,
            },
        ],
    }

    data = Tables(tables)

    strong, weak = (f.sentence for f in _scaling_findings(data))  # type: ignore[arg-type]
    assert "**51.9%** efficiency in bf16 on 4 accelerators in time to train" in strong
    assert strong.endswith(" The other configuration at that count: fp32 81.5%.")
    assert "**97%** efficiency in bf16" in weak and "other configuration" not in weak
    link, noisy = (f.sentence for f in _interconnect_findings(data))  # type: ignore[arg-type]
    assert "**4%** faster without NVLink (over PCIe, or with peer-to-peer off) in fp32" in link
    assert link.endswith(" The other configuration at that count: bf16 92.4% slower.")
    # the other configuration's interval holds no change, and the sentence says so
    assert "**30%** slower without NVLink" in noisy and "in bf16" in noisy
    assert noisy.endswith(" The other configuration at that count: fp32 42% slower (within noise).")


def test_advice_is_given_per_kind_of_evidence_official_first() -> None:
    from collector.site.pages.observations import advice

    base = {"benchmark": "ssd", "kind": "measured", "accelerators": 8}
    tables = {
        "interconnect_delta": [
            {**base, "source": "published", "gain": 1.02, "confounders": "same workstation"},
            {**base, "source": "official", "gain": 1.3, "confounders": "different systems"},
            {**base, "source": "local", "scale": "small", "precision": "bf16", "gain": 1.2},
            {**base, "source": "local", "scale": "small", "precision": "fp32", "gain": 1.04},
            {**base, "source": "local", "scale": "small", "precision": "fp32", "gain": 1.01},
        ]
    }

    data = Tables(tables)

    official, local, published = advice(data)["vision"]  # type: ignore[arg-type]
    # the only official pair differs in more than the link: no advice from it
    assert official == (
        "Vision: no like-for-like interconnect comparison. The 1 pair(s) measured differ in "
        "more than the link (different systems) and gave 30% slower (ssd, 8) without NVLink, "
        "so no advice follows. (official MLPerf)"
    )
    assert "trains 4% slower, short of" in local
    assert local.endswith(
        "(local run, proxy scale small, ssd in fp32 on 8 accelerators; median of 3 measured)"
    )
    assert "trains 2% slower, short of" in published
    assert published.endswith("(published study, ssd on 8 accelerators)")


def test_interconnect_gains_below_one_read_as_faster() -> None:
    """A link that trained faster without NVLink is stated so, its interval turned with it."""
    from collector.site.pages.observations import advice, observations

    row = _local_link("ssd", 0.95, 0.9, 1.02)

    data = Tables({"interconnect_delta": [row]})

    (o,) = observations(data, "interconnect")  # type: ignore[arg-type]
    size, low, high, way = o.reading()
    assert way == "faster"
    assert (size, low, high) == pytest.approx((5, -2, 10))
    (text,) = advice(data)["vision"]  # type: ignore[arg-type]
    assert "it trains 5% faster, short of the 10% slowdown" in text
    assert "95% interval -2–10." in text


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


def test_advice_uses_like_for_like_pairs_and_says_when_its_interval_is_not_settled() -> None:
    from collector.site.pages.observations import advice

    local = {"benchmark": "ssd", "kind": "measured", "source": "local", "scale": "small"}
    tables = {
        "interconnect_delta": [
            {**local, "accelerators": 4, "gain": 1.5, "confounders": "different hosts"},
            {**local, "accelerators": 4, "gain": 1.05, "gain_ci_low": 0.97, "gain_ci_high": 1.2},
        ]
    }

    (line,) = advice(Tables(tables))["vision"]  # type: ignore[arg-type]

    # the confounded pair (50% slower) is left out; the interval reaches past 10% slower
    assert "it trains 5% slower, short of the 10% slowdown" in line
    assert "95% interval -3–20. The interval reaches into the range of other advice" in line


def test_scaling_advice_is_against_the_fewest_accelerators_and_flags_above_linear() -> None:
    from collector.site.pages.observations import advice

    local = {"benchmark": "ncf", "source": "local", "scale": "small", "kind": "strong"}
    stated = {"benchmark": "transformer", "source": "published", "kind": "strong"}
    tables = {
        "scaling": [
            {**local, "accelerators": 4, "baseline_accelerators": 1, "efficiency_pct": 22.6},
            {**local, "accelerators": 4, "baseline_accelerators": 2, "efficiency_pct": 44.2},
            {**stated, "accelerators": 8, "efficiency_pct": 197.0},
        ]
    }

    data = Tables(tables)

    (local_line,) = advice(data)["recommendation"]  # type: ignore[arg-type]
    (published,) = advice(data)["translation"]  # type: ignore[arg-type]
    assert local_line.startswith("Recommendation barely scales: 22.6% efficiency at 4")
    assert "median of" not in local_line  # the row against 2 accelerators is not among them
    assert published.startswith("Translation: 197% efficiency at 8 accelerators is above linear.")


def test_tables_by_evidence_never_share_a_kind_and_put_official_first() -> None:
    from collector.site.pages.common import by_evidence

    rows = [
        ("local run, proxy scale tiny", ("a", 0.5)),
        ("official MLPerf", ("b", 6.2)),
        ("local run, proxy scale tiny", ("c", 0.7)),
    ]

    tables = by_evidence(("system", "minutes"), rows)

    assert [t.title for t in tables] == ["Official MLPerf results", "Local runs, proxy scale tiny"]
    assert [t.rows for t in tables] == [(("b", 6.2),), (("a", 0.5), ("c", 0.7))]


def test_published_numbers_are_filed_by_what_they_are_measured_against() -> None:
    from collector.site.pages.compare import PUBLISHED

    def row(metric: str, baseline: str, precision: str | None = "fp16") -> dict:
        return {"metric": metric, "baseline": baseline, "precision": precision, "notes": ""}

    fp16_over_fp32 = row("improvement_pct", "FP32 on the same V100-PCIe system")
    v100_over_p100 = row("improvement_pct", "one node with 4x Tesla P100-SXM2")
    nvlink_bridge = row("improvement_pct", "same workstation without NVLink bridge (PCIe)", None)
    p2p_access = row("speedup", "V100-PCIe, 4 GPUs in one node (P2P over PCIe)", "fp32")
    one_gpu = row("speedup", "1 GPU same system")

    assert [PUBLISHED["precision_gain"](r) for r in (fp16_over_fp32, v100_over_p100)] == [
        True,
        False,
    ]
    assert [PUBLISHED["interconnect_delta"](r) for r in (fp16_over_fp32, nvlink_bridge)] == [
        False,
        True,
    ]
    assert [PUBLISHED["scaling"](r) for r in (p2p_access, one_gpu)] == [False, True]


def test_a_dot_chart_without_intervals_draws_no_bars() -> None:
    rows = [{"label": "a", "value": 1.5, "low": None, "high": None, "kind": "k", "detail": ""}]

    spec = charts.bars(rows, "t", "d", "speedup").to_dict()

    assert [layer["mark"]["type"] for layer in spec["layer"]] == ["point"]


def test_listed_reads_json_text_as_the_store_keeps_a_software_stack() -> None:
    from collector.site.pages.common import listed

    stack = '[{"cuda_version": "11.0", "nccl_version": "2.7.5"}]'

    assert listed(stack) == "cuda_version=11.0, nccl_version=2.7.5"
    assert listed("[not json") == "[not json"
    assert listed([[1, 2], [3]]) == "1, 2; 3"


def test_advice_says_when_its_measurements_disagree_and_skips_bounds_and_weak_scaling() -> None:
    from collector.site.pages.observations import advice

    local = {"source": "local", "scale": "small", "kind": "measured", "accelerators": 4}
    stated = {"benchmark": "resnet", "source": "published", "kind": "measured"}
    tables = {
        "interconnect_delta": [
            {**local, "benchmark": "gnmt", "precision": "bf16", "gain": 1.924},
            {**local, "benchmark": "gnmt", "precision": "fp32", "gain": 1.035},
            {**local, "benchmark": "transformer", "precision": "fp32", "gain": 0.9},
            # one end of a published range is no measurement to advise from
            {**stated, "gain": 1.2, "qualifiers": "range max"},
            {**stated, "gain": 1.05, "qualifiers": "range min"},
        ],
        "scaling": [
            {**local, "benchmark": "ssd", "kind": "strong", "efficiency_pct": 31.0},
            {**local, "benchmark": "ssd", "kind": "weak", "efficiency_pct": 98.0},
        ],
    }

    lines = advice(Tables(tables))

    (link,) = lines["translation"]
    assert "trains 3.5% slower, short of the 10% slowdown" in link
    assert link.endswith(
        "The 3 measurements disagree, from 10% faster (transformer, 4, fp32) to 92.4% slower "
        "(gnmt, 4, bf16), so this is not settled. (local run, proxy scale small, gnmt in fp32 "
        "on 4 accelerators; median of 3 measured)"
    )
    (scaling,) = lines["vision"]  # time to train, not the weak-scaling throughput
    assert scaling.startswith("Vision barely scales: 31% efficiency at 4 accelerators.")


def test_a_chart_with_values_of_zero_or_less_starts_on_a_linear_axis() -> None:
    rows = [
        {"label": "a", "value": 40.0, "low": 30.0, "high": 50.0, "kind": "k", "detail": ""},
        {"label": "b", "value": -3.0, "low": -5.0, "high": 0.5, "kind": "k", "detail": ""},
        {"label": "c", "value": 0.2, "low": 0.1, "high": 0.3, "kind": "k", "detail": ""},
    ]

    spec = charts.bars(rows, "t", "d", "slower without NVLink, %").to_dict()

    assert spec["params"][0]["value"] is False  # offered, but a log axis would hide "b"
