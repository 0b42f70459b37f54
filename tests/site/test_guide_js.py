"""The Guide's filter as its script runs it (node with a minimal DOM): a precision filter keeps
official results, which state no precision."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from tests.conftest import REPO

NODE = shutil.which("node")

HARNESS = r"""
const fs = require("fs");
const [script, data, values] = process.argv.slice(2).map((a, i) => i ? JSON.parse(a) : a);
function node(tag) {
  return {tag, textContent: "", children: [], attrs: {},
    appendChild(c) { this.children.push(c); return c; },
    setAttribute(k, v) { this.attrs[k] = v; },
    replaceChildren() { this.children = []; },
    addEventListener() {}};
}
const answer = node("div");
const form = node("form");
const dataNode = node("script");
dataNode.textContent = JSON.stringify(data);
global.document = {
  readyState: "complete",
  createElement: node,
  getElementById(id) {
    if (id === "guide-answer") return answer;
    if (id === "guide-form") return form;
    if (id === "guide-data") return dataNode;
    return id in values ? {value: values[id]} : null;
  },
};
eval(fs.readFileSync(script, "utf8"));
const text = [];
(function walk(n) {
  if (n.textContent) text.push(n.textContent);
  n.children.forEach(walk);
})(answer);
console.log(JSON.stringify(text));
"""


def row(evidence: str, precision: str | None, minutes: float) -> dict:
    return {
        "benchmark": "resnet", "evidence": evidence, "precision": precision,
        "score_minutes": minutes, "round": "v4.0", "accelerators": 8, "one_server": True,
        "hardware": f"8 x {evidence}", "fastest_minutes": minutes, "slowest_minutes": minutes,
        "submitter": "acme", "vendor": "NVIDIA", "accelerator_model": "NVIDIA H100",
    }  # fmt: skip


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_a_precision_filter_keeps_official_results_which_state_none(tmp_path):
    data = {"newest_round": "v4.0",
            "rows": [row("official", None, 12.0), row("projected", "fp32", 30.0),
                     row("projected", "bf16", 20.0)]}  # fmt: skip
    values = {"guide-workload": "resnet", "guide-hours": "4", "guide-max-accelerators": "",
              "guide-hardware": "", "guide-servers": "", "guide-precision": "bf16"}  # fmt: skip
    harness = tmp_path / "harness.js"
    harness.write_text(HARNESS)
    script = REPO / "site_src" / "assets" / "guide.js"
    out = subprocess.run(
        [NODE, str(harness), str(script), json.dumps(data), json.dumps(values)],
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    text = json.loads(out.stdout)
    assert "2 of 2 configurations train it within 4 h (240 min), fastest first:" in text
    assert "not stated" in text and "fp32" not in text
