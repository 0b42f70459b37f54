"""The Full-size runs page: its scaling chart per server, the words for each link, and the
accelerator models side by side at equal counts."""

from __future__ import annotations

from typing import Any

from collector.site import charts
from collector.site.pages import full_size
from collector.site.render import render

NO_P2P = "NVLink peer-to-peer disabled (traffic through host memory)"


def cells(text: str, column: int) -> list[str]:
    """One column of the page's table rows, Markdown escapes undone."""
    rows = [line.split(" | ") for line in text.splitlines() if line.startswith("| [")]
    return [r[column].replace("\\(", "(").replace("\\)", ")") for r in rows]


def scaling_row(benchmark: str, gpus: int, interconnect: str, pct: float, **extra: Any) -> dict:
    return {
        "submitter": "h200-x4-full",
        "benchmark": benchmark,
        "precision": "bf16",
        "accelerator_model": "H200-SXM",
        "accelerators": gpus,
        "interconnect": interconnect,
        "efficiency_pct": pct,
        "efficiency_ci_low_pct": pct - 2,
        "efficiency_ci_high_pct": pct + 2,
        "samples_per_s_per_accelerator": 3000.0,
        "one_samples_per_s_per_accelerator": 3200.0,
        "of_linked_ratio": 0.5 if interconnect == "no-p2p" else None,
        "of_linked_ci_low_ratio": 0.45 if interconnect == "no-p2p" else None,
        "of_linked_ci_high_ratio": 0.55 if interconnect == "no-p2p" else None,
        **extra,
    }


class Data:
    """What the page reads of a site's data: derived tables by name and the snapshot."""

    snapshot = "snap-000001"

    def __init__(self, **tables: list[dict]) -> None:
        self.tables = tables

    def rows(self, name: str) -> list[dict]:
        return self.tables.get(name, [])


def test_the_scaling_chart_plots_percent_of_linear_against_the_measured_counts() -> None:
    rows = [
        {"accelerators": 1, "value": 100.0, "low": None, "high": None, "series": "GNMT",
         "link": "NVLink", "value_text": "100.0%"},
        {"accelerators": 4, "value": 93.9, "low": 93.4, "high": 94.5, "series": "GNMT",
         "link": "NVLink", "value_text": "93.9%"},
    ]  # fmt: skip
    spec = charts.efficiency(rows, "t", "d").to_dict()
    linear, bars, line = spec["layer"]
    assert linear["data"]["values"] == [{"linear": 100.0}]
    assert (bars["encoding"]["y"]["field"], bars["encoding"]["y2"]["field"]) == ("low", "high")
    x = line["encoding"]["x"]
    assert x["scale"]["type"] == "log" and x["axis"]["values"] == [1, 4]
    assert line["encoding"]["strokeDash"]["field"] == "link"
    low, high = line["encoding"]["y"]["scale"]["domain"]
    assert low < 93.4 and high > 100.0  # every point, its interval and linear are in view


def test_each_server_gets_a_chart_whose_lines_start_at_one_accelerator() -> None:
    data = Data(
        full_size_scaling=[
            scaling_row("gnmt", 4, "nvlink", 93.9),
            scaling_row("gnmt", 4, "no-p2p", 47.0),
            scaling_row("gnmt", 2, "nvlink", 95.0, submitter="h100-x2-full"),
        ]
    )
    sheet = full_size.page(data)
    assert list(sheet.charts) == ["h200-x4-full", "h100-x2-full"]
    (ref,) = sheet.charts["h200-x4-full"]
    assert ref.chart_id == "full-size-scaling-h200-x4-full"
    points = [p for layer in ref.spec["layer"][1:] for p in layer["data"]["values"]]
    lines = {(p["link"], p["accelerators"]): p["value"] for p in points}
    assert lines == {
        ("NVLink", 1): 100.0,
        ("NVLink", 4): 93.9,
        (NO_P2P, 1): 100.0,
        (NO_P2P, 4): 47.0,
    }
    assert [r["link"] for r in sheet.rows["full_size_scaling"]] == ["NVLink", NO_P2P, "NVLink"]


def test_the_page_names_peer_to_peer_off_truthfully_and_says_how_a_pcie_server_differs() -> None:
    data = Data(full_size_scaling=[scaling_row("gnmt", 4, "nvlink", 93.9),
                                   scaling_row("gnmt", 4, "no-p2p", 47.0)])  # fmt: skip
    text = render("full_size.md.j2", full_size.page(data))
    assert cells(text, 2) == ["NVLink", NO_P2P]
    assert "peer-to-peer off" not in text
    prose = " ".join(text.split())
    assert "It is not a PCIe server" in prose and "lower power limits and clocks" in prose
    assert "through a PCIe switch" in prose
    assert 'id="full-size-scaling-h200-x4-full"' in text


def test_models_side_by_side_say_at_which_count_and_over_which_link() -> None:
    def pair(gpus: int, interconnect: str | None) -> dict:
        return {
            "comparison": "H200-SXM against H100-SXM", "model_a": "H100-SXM",
            "model_b": "H200-SXM", "benchmark": "gnmt", "precision": "bf16",
            "accelerators": gpus, "interconnect": interconnect, "b_over_a_ratio": 1.1,
            "b_over_a_ci_low_ratio": 1.09, "b_over_a_ci_high_ratio": 1.11,
            **{f"{s}_{k}": None for s in "ab" for k in (
                "samples_per_s_per_accelerator", "window_min_samples_per_s_per_accelerator",
                "window_max_samples_per_s_per_accelerator", "official_fraction",
                "official_missing_reason", "ceiling_fraction", "projected_minutes")},
            "checked_submissions": None,
        }  # fmt: skip

    data = Data(full_size_ratios=[pair(1, None), pair(2, "no-p2p")])
    text = render("full_size.md.j2", full_size.page(data))
    assert cells(text, 2)[:2] == ["1", f"2, {NO_P2P}"]


def test_a_withheld_efficiency_is_said_and_not_charted() -> None:
    withheld = scaling_row("maskrcnn", 2, "nvlink", 0.0, withheld_reason="above 100% of linear")
    withheld |= {"efficiency_pct": None, "efficiency_ci_low_pct": None,
                 "efficiency_ci_high_pct": None}  # fmt: skip
    data = Data(full_size_scaling=[scaling_row("gnmt", 2, "nvlink", 95.0), withheld])
    sheet = full_size.page(data)
    (ref,) = sheet.charts["h200-x4-full"]
    points = [p for layer in ref.spec["layer"][1:] for p in layer["data"]["values"]]
    assert all(p["value"] is not None for p in points)
    text = render("full_size.md.j2", sheet)
    assert "withheld: above 100% of linear" in text


def test_anchored_projections_are_listed_with_their_checked_error() -> None:
    row = {
        "submitter": "h200-x1-full", "benchmark": "resnet", "accelerators": 1,
        "accelerator_model": "H200-SXM", "interconnect": None,
        "samples_per_s_per_accelerator": 6754.0, "anchor_model": "H100-SXM",
        "anchor_system": "box", "anchor_round": "v4.0", "anchor_minutes": 13.5,
        "projected_minutes": 11.2, "projected_accelerators": 8, "checked_pairs": 30,
        "checked_median_abs_error_pct": 8.26,
    }  # fmt: skip
    data = Data(full_size_scaling=[], projection_anchored=[row])
    text = render("full_size.md.j2", full_size.page(data))
    assert "**11.2** (on 8) | 8.3%, 30 |" in text


def test_each_machine_of_the_v51_suite_gets_one_section_whatever_the_rows_order() -> None:
    def run(machine: str, gpus: int, benchmark: str) -> dict:
        return {
            "submitter": machine, "benchmark": benchmark, "accelerators": gpus,
            "accelerator_words": "NVIDIA H200", "precision": "bf16",
            "samples_per_s_per_accelerator": 100.0, "achieved_tflops_per_accelerator": 200.0,
            "window_min_samples_per_s_per_accelerator": 99.0,
            "window_max_samples_per_s_per_accelerator": 101.0, "official_fraction": None,
            "official_missing_reason": "no official result of this workload on H200-SXM",
        }  # fmt: skip

    # the table orders its rows by benchmark: the two machines' runs alternate
    rows = [run("h200-x1-suite", 1, "dlrm_dcnv2"), run("h200-x2-suite", 2, "dlrm_dcnv2"),
            run("h200-x1-suite", 1, "retinanet"), run("h200-x2-suite", 2, "retinanet")]  # fmt: skip
    text = render("full_size.md.j2", full_size.page(Data(site_suite_runs=rows)))
    headings = [line for line in text.splitlines() if line.startswith("## The rest of v5.1")]
    assert headings == [
        "## The rest of v5.1 on 1 x NVIDIA H200 (h200-x1-suite)",
        "## The rest of v5.1 on 2 x NVIDIA H200 (h200-x2-suite)",
    ]
