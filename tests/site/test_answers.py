"""The Answers page rendered from the shipped store: each question has its section, the
tables that need no picking carry their rows, the pickers get every row they choose from, and
a store without answers says so instead of failing."""

from __future__ import annotations

import json
import re

import pytest

import collector
from collector.site.data import load
from collector.site.pages import answers
from collector.site.render import render
from tests.conftest import REPO


@pytest.fixture(scope="module")
def page_text() -> str:
    with collector.open(REPO / "runs" / "warehouse") as wh:
        return render("answers.md.j2", answers.page(load(wh)))


def embedded(text: str) -> dict:
    pattern = r'<script type="application/json" id="answers-data">(.*?)</script>'
    found = re.search(pattern, text, re.S)
    assert found
    return json.loads(found.group(1))


def test_every_question_has_its_section(page_text: str) -> None:
    for anchor in ("smallest", "pairs", "interconnect", "precision", "nearest", "cost"):
        assert f'<h2 id="{anchor}">' in page_text
        assert f"](#{anchor})" in page_text


def test_pickers_get_their_rows(page_text: str) -> None:
    data = embedded(page_text)
    (row,) = [
        r for r in data["smallest"] if r["benchmark"] == "llama31_405b" and r["deadline_hours"] == 2
    ]
    assert row["smallest_accelerators"] == 512 and row["title"] == "Llama 3.1 405B pre-training"
    assert any(
        p["model_a"] == "NVIDIA B200" and p["model_b"] == "NVIDIA H200" for p in data["pairs"]
    )
    assert all(r["href"].startswith("benchmarks/") for r in data["cost"])


def test_the_first_picker_names_each_workload_once_and_only_answerable_ones(
    page_text: str,
) -> None:
    picker = page_text.split('id="smallest-benchmark"')[1].split("</select>")[0]
    values = re.findall(r'<option value="([^"]+)">([^<]+)</option>', picker)
    titles = [t for _, t in values]
    assert len(titles) == len(set(titles))
    answered = {r["benchmark"] for r in embedded(page_text)["smallest"]}
    assert {v for v, _ in values} == answered
    assert "rgat" in answered and "gnn" not in answered  # v5.x's name for v4.x's gnn


def test_controlled_interconnect_and_precision_tables(page_text: str) -> None:
    local = page_text.split('id="interconnect-local"')[1].split("</table>")[0]
    # seven benchmarks on each of three servers; Mask R-CNN's runs on two of them withdrawn
    assert local.count("<tr><td") == 19
    assert "4 x NVIDIA H200, bf16" in local and "1.88 x" in local
    assert "2 x NVIDIA H200, bf16" in local
    assert "Measured here:" in page_text and "median" in page_text
    precision = page_text.split('id="precision-table"')[1].split("</table>")[0]
    assert "fp32 → bf16" in precision and "bf16 → fp8" in precision
    # the 8B's fp8 gain on two GPUs of two machines: each row names its runs' folder
    assert "(h200-x2-llm)" in precision and "(h200-x4-llm)" in precision


def test_a_store_without_comparisons_says_so() -> None:
    with collector.open(REPO / "runs" / "warehouse") as wh:
        data = load(wh)
    for name in list(data.tables):
        if name.startswith("site_interconnect"):
            data.tables[name] = data.tables[name].slice(0, 0)
    text = render("answers.md.j2", answers.page(data))
    assert "No controlled interconnect comparison in this store yet." in text
