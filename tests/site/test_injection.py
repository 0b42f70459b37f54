"""Markup and script carried by names and values of the logs and system descriptions reach
the built pages as text, never as HTML: every field an attacker controls, every page."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from collector.ingest.pipeline import ingest
from tests.conftest import LOGS
from tests.site.conftest import build_site

PAYLOADS = {
    "submitter": "<img src=x onerror=alert(1)>",
    "system": '"><script>alert(2)</script>',
    "accelerator": "Tesla V100 <svg onload=alert(3)>",
    "field": "<b onmouseover=alert(4)>",
    "link": "[click](javascript:alert(5))",
    "file": "<iframe src=javascript:alert(6)>",
    "local": "<script>alert(7)</script>",
}
ACTIVE = re.compile(
    r"<script>alert|<img src=x|<svg onload|<b onmouseover|<iframe|href=\"javascript:"
)


def hostile_store(root: Path) -> Path:
    org = root / "tree" / "training_results_v0.7" / PAYLOADS["submitter"]
    (org / "systems").mkdir(parents=True)
    description = {
        "division": "closed",
        "system_name": PAYLOADS["system"],
        "number_of_nodes": "1",
        "accelerators_per_node": "8",
        "accelerator_model_name": PAYLOADS["accelerator"],
        PAYLOADS["field"]: PAYLOADS["link"],
        "framework": PAYLOADS["link"],
    }
    (org / "systems" / "sys.json").write_text(json.dumps(description))
    results = org / "results" / "sys" / "ssd"
    results.mkdir(parents=True)
    log = (LOGS / "v06_ssd.txt").read_bytes()
    for i in range(5):
        (results / f"result_{i}.txt").write_bytes(log + b"#%d\n" % i)
    local = root / "tree" / "local"
    local.mkdir()
    text = (LOGS / "mllog_local.txt").read_text()
    for i in range(2):
        hostile = (
            text.replace("testhost_1xcpu_fp32_none", PAYLOADS["local"])
            .replace('"framework": ', f'"framework": "{PAYLOADS["local"]}", "x": ')
            .replace('"scale": "tiny"', '"scale": "tiny_*1*"')
        )
        (local / f"{PAYLOADS['file']}_{i}.log").write_text(hostile + f"# {i}\n")
    store = root / "store"
    ingest([root / "tree"], store)
    return store


@pytest.mark.slow
def test_no_name_or_value_from_the_data_becomes_markup(tmp_path: Path):
    store = hostile_store(tmp_path)
    (tmp_path / "build").mkdir()
    built = build_site(store, tmp_path / "build")
    pages = list(built.rglob("*.html"))
    assert len(pages) > 10
    found = {str(p.relative_to(built)): ACTIVE.findall(p.read_text()) for p in pages}
    assert {page: hits for page, hits in found.items() if hits} == {}
    text = "".join(p.read_text() for p in pages)
    assert "&lt;img src=x onerror=alert(1)&gt;" in text  # shown, as text
    # escaped once, wherever it is printed: not shown with Markdown's backslashes
    assert "proxy scale tiny_*1*" in text and "tiny\\_" not in text
    assert all(p.resolve().is_relative_to(built) for p in built.rglob("*"))  # nothing outside
