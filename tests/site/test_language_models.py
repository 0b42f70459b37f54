"""The language-model runs on the Full-size runs page and Home: labelled as compute throughput
on synthetic tokens, set against the official result of the same accelerator, never among the
official findings."""

from __future__ import annotations

from collector.site.model import HomePage, Sheet
from collector.site.render import render

ROW = {
    "run_id": "r1", "submitter": "h200-x4-llm", "system": "vm_4xh200_bf16_default",
    "benchmark": "llama31_8b", "accelerator_model": "H200-SXM",
    "accelerator_words": "NVIDIA H200", "accelerators": 4, "precision": "bf16",
    "evidence": "compute throughput on synthetic tokens (data loading not included)",
    "global_batch": 32, "tokens_per_sample": 8192, "tokens_per_s_per_accelerator": 9677.1,
    "window_min_tokens_per_s_per_accelerator": 9000.2,
    "window_max_tokens_per_s_per_accelerator": 9687.3, "achieved_tflops_per_accelerator": 560.4,
    "mfu": 0.5664, "official_round": "v5.1", "official_system": "XD670",
    "official_accelerators": 64, "official_runs": 10,
    "official_tokens_per_s_per_accelerator": 11225.4,
    "official_fraction": 0.8621, "official_minutes": 37.68, "official_missing_reason": None,
    "projected_accelerators": 64, "projected_minutes": 43.70, "projected_ci_low_minutes": 43.66,
    "projected_ci_high_minutes": 46.99, "power_per_accelerator_w": 692.1,
    "power_limit_w": 700.0, "sm_clock_median_min_mhz": 1500.0, "home": True,
}  # fmt: skip
NONE = ROW | {
    "run_id": "r2", "benchmark": "llama2_70b_lora", "official_fraction": None,
    "official_missing_reason": "no official result of this workload on B300-SXM",
    "projected_minutes": None, "power_per_accelerator_w": None,
}  # fmt: skip


def test_full_size_page_sets_each_run_beside_its_official_reference():
    rows = {
        "site_language_models": [NONE, ROW],
        "site_suite_runs": [],
        "full_size_ratios": [],
        "full_size_scaling": [],
    }
    text = render("full_size.md.j2", Sheet("full-size.md", "Full-size runs", "s", rows))
    assert "## Language models on 4 x NVIDIA H200 (h200-x4-llm)" in text
    assert "Compute throughput on synthetic tokens, data loading not included" in text
    line = next(ln for ln in text.splitlines() if ln.startswith("| [Llama 3.1 8B"))
    assert (
        "| **9,677** (9,000–9,687) | 57% | 692 W (700 W), 1,500 MHz | 86% | 43.7 min on 64 "
        "(43.7–47 min) |" in line
    )
    line = next(ln for ln in text.splitlines() if ln.startswith("| [Llama 2 70B"))
    assert line.endswith("| not sampled | — | none |")
    assert (
        "- Llama 3.1 8B pre-training: 11,225 tokens/s per accelerator, 64 x NVIDIA H200 (XD670, "
        "v5.1, the mean of 10 runs), 37.7 minutes to train." in text
    )
    assert "- Llama 2 70B fine-tuning \\(LoRA\\): none: no official result of this workload" in text
    # a blank line before the list, or Markdown runs its items into the sentence
    assert "The official references:\n\n- " in text


def test_home_states_one_sentence_per_benchmark_apart_from_the_official_findings():
    rows = (ROW, ROW | {"run_id": "r3", "precision": "fp8", "tokens_per_s_per_accelerator": 11510.2,
                        "official_fraction": 1.0254, "projected_minutes": 36.74})  # fmt: skip
    text = render(
        "home.md.j2", HomePage("index.md", "What trains fastest", "s", language_models=rows)
    )
    head, _, mine = text.partition("## Your servers on today's language models")
    assert "9,677" not in head and "not MLPerf results" in mine
    (sentence,) = [ln for ln in mine.splitlines() if ln.startswith("- **")]
    assert sentence.startswith(
        "- **[Llama 3.1 8B pre-training](benchmarks/llama31-8b.md)** on 4 x NVIDIA H200 "
        "(h200-x4-llm): 9,677 tokens/s per accelerator in bf16, 86.2% of the official v5.1 "
        "result of the same accelerator (XD670, 64 accelerators), so about 43.7 minutes to "
        "train on 64 accelerators; 11,510 tokens/s per accelerator in fp8, 103% of"
    )
