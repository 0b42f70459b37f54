"""Generating the site from small stores: Home's findings, the Guide's answers, numbers that
equal their downloads, escaping, the staleness check and the CLI."""

from __future__ import annotations

import csv
import functools
import gzip
import hashlib
import http.server
import io
import json
import re
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

import collector
from collector import site
from collector.cli import app
from collector.ingest.pipeline import ingest
from collector.site.common import num
from collector.site.data import load
from collector.site.pages import guide
from tests.conftest import LOGS, REPO
from tests.site.conftest import XSS, build_site

CHROMIUM = Path("/usr/bin/chromium")

# Official v0.7 systems of the guide store: name -> (accelerator as submitted, count, nodes,
# seconds of the five runs). The v0.6-format SSD log is copied with these run times.
SYSTEMS = {
    "nv4": ("Tesla V100-PCIe-32GB", 4, 1, (590, 600, 605, 610, 620)),
    "nv8": ("Tesla V100-SXM2-32GB", 8, 1, (300, 305, 310, 312, 320)),
    "nv16": ("Tesla V100-SXM2-32GB", 16, 2, (170, 175, 180, 182, 190)),
    "amd8": ("AMD Instinct MI300X 192GB HBM3", 8, 1, (230, 236, 240, 244, 250)),
}


def _official(root: Path) -> None:
    org = root / "training_results_v0.7" / "Acme"
    (org / "systems").mkdir(parents=True)
    log = (LOGS / "v06_ssd.txt").read_text()
    start = float(re.search(r"([\d.]+) run_start", log).group(1))
    stop = re.search(r"([\d.]+) run_stop", log).group(1)
    for name, (accelerator, count, nodes, seconds) in SYSTEMS.items():
        description = {
            "submitter": "Acme",
            "division": "closed",
            "status": "available",
            "system_name": name,
            "number_of_nodes": str(nodes),
            "accelerators_per_node": str(count // nodes),
            "accelerator_model_name": accelerator,
            "accelerator_interconnect": "NVLink" if "SXM" in accelerator else "N/A",
            "host_processor_model_name": "Xeon",
            "host_memory_capacity": "384GB",
        }
        (org / "systems" / f"{name}.json").write_text(json.dumps(description))
        results = org / "results" / name / "ssd"
        results.mkdir(parents=True)
        for i, s in enumerate(seconds):
            text = log.replace(f"{stop} run_stop", f"{start + s:.3f} run_stop")
            (results / f"result_{i}.txt").write_text(text)


def _proxies(root: Path) -> None:
    """Three tiny-scale local SSD runs on an NVLink server with peer-to-peer off, named by a
    hostile platform string: seconds long, so they would meet any deadline."""
    local = root / "local"
    local.mkdir(parents=True)
    text = (
        (LOGS / "mllog_local.txt")
        .read_text()
        .replace('"value": "ncf"', '"value": "ssd"')
        .replace('"benchmark": "ncf"', '"benchmark": "ssd"')
        .replace(
            '"accelerator": "Test CPU", "accelerators": 0',
            '"accelerator": "NVIDIA H200", "accelerators": 4',
        )
        .replace('"interconnect": "none"', '"interconnect": "no-p2p"')
        .replace("testhost_1xcpu_fp32_none", XSS)
    )
    for i in range(3):
        (local / f"run_{i}.log").write_text(text + f"# run {i}\n")


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("guide")
    _official(root / "tree")
    _proxies(root / "tree")
    ingest([root / "tree"], root / "store")
    return root / "store"


@pytest.fixture(scope="module")
def generated(store: Path) -> site.Result:
    return site.generate(store)


def _text(result: site.Result, path: str) -> str:
    return result.files[path].decode()


def _csv(result: site.Result, path: str) -> list[dict[str, str]]:
    """The rows of a download, data/<table>.csv.gz."""
    return list(csv.DictReader(io.StringIO(gzip.decompress(result.files[path]).decode())))


def _findings(result: site.Result) -> list[str]:
    return [line for line in _text(result, "index.md").splitlines() if line.startswith("- ")]


def test_home_has_at_most_twelve_findings_all_from_official_results(
    generated: site.Result,
) -> None:
    findings = _findings(generated)
    assert 0 < len(findings) <= 12
    official = {r["hardware"] for r in _csv(generated, "data/site_scores.csv.gz")}
    for line in findings:
        assert "H200" not in line and "script" not in line, line  # the proxy runs' hardware
    assert any("16 x NVIDIA V100, 2 nodes, NVLink" in line for line in findings)
    assert "8 x NVIDIA V100, 1 node, NVLink" in official


def test_home_names_the_fastest_per_family_with_the_numbers_of_its_table(
    generated: site.Result,
) -> None:
    rows = [r for r in _csv(generated, "data/site_scores.csv.gz") if r["evidence"] == "official"]
    fastest = {r["one_server"]: r for r in rows if r["rank_in_class"] == "1"}
    (vision,) = [f for f in _findings(generated) if f.startswith("- **Vision**")]
    one, several = fastest["true"], fastest["false"]
    assert one["hardware"] == "8 x AMD Instinct MI300X, 1 node"
    expected = (
        f"fastest on one server, {one['hardware']} (Acme) in **{num(float(one['score_minutes']))} "
        f"min** (runs {num(float(one['fastest_minutes']))}–{num(float(one['slowest_minutes']))}"
    )
    assert expected in vision
    assert (
        f"at scale, {several['hardware']} (Acme) in **{num(float(several['score_minutes']))}"
        in (vision)
    )
    assert "the only such result" in vision.split("at scale")[1]  # one multi-node system


def test_home_compares_accelerator_models_with_the_ratio_of_its_table(
    generated: site.Result,
) -> None:
    (ratio,) = _csv(generated, "data/site_model_ratios.csv.gz")
    assert (ratio["model"], ratio["other_model"]) == ("AMD Instinct MI300X", "NVIDIA V100")
    speedup = float(ratio["other_minutes"]) / float(ratio["minutes"])
    assert float(ratio["speedup"]) == pytest.approx(speedup)
    low, high = float(ratio["speedup_ci_low"]), float(ratio["speedup_ci_high"])
    assert low <= speedup <= high
    sentence = (
        f"AMD Instinct MI300X trains {num(float(ratio['speedup']))}x ({num(low)}–{num(high)}) "
        "as fast as NVIDIA V100"
    )
    assert sum(sentence in f for f in _findings(generated)) == 1
    row = next(
        line for line in _text(generated, "benchmarks/ssd.md").splitlines() if "MI300X \\(" in line
    )
    assert f"| {num(float(ratio['speedup']))}x \\({num(low)}–{num(high)}\\) |" in row


def test_benchmark_page_scores_equal_the_downloaded_table(generated: site.Result) -> None:
    page = _text(generated, "benchmarks/ssd.md")
    official = page.split("### Official MLPerf results", 1)[1].split("\n### ", 1)[0]
    shown = [line.split(" | ")[2] for line in official.splitlines() if line.startswith("| [")]
    rows = [r for r in _csv(generated, "data/site_scores.csv.gz") if r["evidence"] == "official"]
    assert sorted(shown) == sorted(num(float(r["score_minutes"])) for r in rows)


def test_guide_table_holds_no_proxy_run_and_equals_its_downloads(
    generated: site.Result, store: Path
) -> None:
    with collector.open(store, threads=1) as wh:
        rows = guide.rows(load(wh))
    assert {r["evidence"] for r in rows} == {"official"}
    assert len(rows) == len(SYSTEMS)
    downloaded = _csv(generated, "data/site_guide.csv.gz")
    assert [(r["system_id"], float(r["score_minutes"])) for r in downloaded] == [
        (r["system_id"], r["score_minutes"]) for r in rows
    ]
    assert [r["score_minutes"] for r in rows] == sorted(r["score_minutes"] for r in rows)
    page = _text(generated, "guide.md")
    embedded = json.loads(page.split('id="guide-data">', 1)[1].split("</script>", 1)[0])
    assert [r["score_minutes"] for r in embedded["rows"]] == [r["score_minutes"] for r in rows]


NO_P2P = "NVLink peer-to-peer disabled (traffic through host memory)"


def test_local_checks_page_lists_the_proxy_runs_and_names_peer_to_peer_off(
    generated: site.Result,
) -> None:
    page = _text(generated, "local-checks.md")
    assert "answer no deadline" in page
    assert f"4 x NVIDIA H200, 1 node, {NO_P2P}" in page.replace("\\(", "(").replace("\\)", ")")
    assert "PCIe" not in page


def test_a_system_is_named_in_words_with_what_its_runs_used(generated: site.Result) -> None:
    (proxy,) = [r for r in _csv(generated, "data/site_systems.csv.gz") if r["source"] == "local"]
    assert (proxy["scale"], proxy["run_interconnect"]) == ("tiny", "no-p2p")
    assert proxy["hardware"] == "4 x NVIDIA H200, 1 node"  # no description: no link class
    page = _text(generated, "systems/v0-7.md")  # every system of the round, a section each
    assert page.startswith("---\n")  # front matter: no table of contents, not searched
    assert "\n## 16 x NVIDIA V100, 2 nodes, NVLink \\(Acme, v0.7\\) { #v0-7-acme-nv16-" in page


def test_pages_carry_no_generated_note_at_the_top(generated: site.Result) -> None:
    for page in ("index.md", "guide.md"):
        assert "Generated by" not in _text(generated, page), page
    assert "data/scores.csv.gz" in generated.files and "data/site_scores.parquet" in generated.files


def test_hostile_system_name_is_escaped_in_every_page(generated: site.Result) -> None:
    pages = {k: v.decode() for k, v in generated.files.items() if k.endswith(".md")}
    assert any("&lt;script&gt;alert" in t or "\\u003cscript" in t for t in pages.values())
    for path, text in pages.items():
        assert XSS not in text, path
        assert "<script>alert" not in text, path


@pytest.mark.slow  # builds a site with MkDocs
def test_pages_are_generated_and_the_snapshot_is_named_in_the_footer(
    small_store: Path, small_site: Path
) -> None:
    result = site.generate(small_store)
    for page in (
        "index.md",
        "guide.md",
        "benchmarks/ssd.md",
        "systems/index.md",
        "compare.md",
        "rounds.md",
        "sources.md",
        "data.md",
        "method-sql.md",
        "local-checks.md",
    ):
        assert "Generated by" not in result.files[page].decode(), page
        html = (small_site / page.replace(".md", ".html")).read_text()
        footer = html.split('<footer class="md-footer">', 1)[1]
        assert f"from store snapshot {result.snapshot}" in footer, page
        assert "Generated by" not in html.split('<footer class="md-footer">', 1)[0], page
    assert "data/scores.csv.gz" in result.files and "data/scores.parquet" in result.files


def test_generated_files_are_not_sources_of_the_repository(small_store: Path) -> None:
    """The site's sources in the repository are static; `mkdocs build` writes the generated
    pages beside copies of them in an ignored folder, so building never rewrites a source."""
    sources = {p.relative_to(REPO / "site_src").as_posix() for p in (REPO / "site_src").rglob("*")}
    assert not sources & set(site.generate(small_store).files)
    assert "/.collector/" in (REPO / ".gitignore").read_text().splitlines()


def test_site_command_writes_static_and_generated_pages(small_store: Path, tmp_path: Path) -> None:
    static = tmp_path / "static"
    (static / "assets").mkdir(parents=True)
    (static / "about.md").write_text("# About\n")
    (static / "assets" / "x.css").write_text("a {}\n")
    out = tmp_path / "docs"
    run = CliRunner().invoke(
        app,
        ["site", "--store", str(small_store), "--static", str(static), "--out", str(out)],
    )
    assert run.exit_code == 0, run.output
    assert (out / "about.md").read_text() == "# About\n" and (out / "assets" / "x.css").exists()
    assert (out / "rounds.md").exists() and (out / "charts").is_dir()
    before = {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file()}
    CliRunner().invoke(
        app,
        ["site", "--store", str(small_store), "--static", str(static), "--out", str(out)],
    )
    after = {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file()}
    assert before == after  # nothing rewritten: `mkdocs serve` sees no change


def test_write_removes_pages_no_longer_generated(small_store: Path, tmp_path: Path) -> None:
    site.write(site.generate(small_store), tmp_path)
    index = tmp_path / ".generated.json"
    record = json.loads(index.read_text())
    record["files"]["old.md"] = hashlib.sha256(b"x").hexdigest()
    index.write_text(json.dumps(record))
    (tmp_path / "old.md").write_text("x")
    site.write(site.generate(small_store), tmp_path)
    assert not (tmp_path / "old.md").exists()


@pytest.mark.slow  # builds a site with MkDocs
def test_built_html_has_no_raw_tag(small_site: Path) -> None:
    for html in small_site.rglob("*.html"):
        assert "<script>alert" not in html.read_text(), html


# The Guide in Chromium, from the built files: its answers to three scenarios.


@pytest.fixture(scope="module")
def guide_page(store: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    if not CHROMIUM.exists():
        pytest.skip("/usr/bin/chromium is absent (apt-get install -y chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    built = build_site(store, tmp_path_factory.mktemp("guide-site"))
    for html in built.rglob("*.html"):
        assert "<script>alert" not in html.read_text(), html
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(built))
        handler.log_message = lambda *a: None  # type: ignore[method-assign]
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            page.goto(f"http://127.0.0.1:{server.server_address[1]}/guide.html")
            yield page
        finally:
            server.shutdown()
            browser.close()
        assert not errors, errors


def _answer(page: object, hours: str, **choices: str) -> tuple[str, list[list[str]]]:
    for field, value in {"max-accelerators": "", "hardware": "", "servers": ""}.items():
        target = f"#guide-{field}"
        wanted = choices.get(field.replace("-", "_"), value)
        if field == "max-accelerators":
            page.fill(target, wanted)
        else:
            page.select_option(target, wanted)
    page.fill("#guide-hours", hours)
    summary = page.locator(".guide-summary").inner_text()
    cells = page.eval_on_selector_all(
        ".guide-table tbody tr", "rs => rs.map(r => [...r.cells].map(c => c.textContent))"
    )
    return summary, cells


@pytest.mark.slow  # builds a site with MkDocs, opens it in Chromium
def test_guide_says_when_nothing_meets_the_deadline_and_shows_the_closest(
    guide_page: object,
) -> None:
    summary, cells = _answer(guide_page, "0.01")  # 36 s: shorter than every official run
    assert summary.startswith("Nothing meets 0.01 h (0.6 min) among 4 configurations")
    assert cells[0][0] == "16 x NVIDIA V100, 2 nodes, NVLink"
    assert all(c[2].endswith("late") for c in cells)
    assert all("H200" not in c[0] for c in cells)  # a proxy run never answers


@pytest.mark.slow  # builds a site with MkDocs, opens it in Chromium
def test_guide_lists_official_results_meeting_the_deadline_by_time(guide_page: object) -> None:
    summary, cells = _answer(guide_page, "0.09")  # 5.4 min: all but the 4-accelerator system
    assert summary.startswith("3 of 4 configurations train it within 0.09 h (5.4 min)")
    assert [c[0] for c in cells] == [
        "16 x NVIDIA V100, 2 nodes, NVLink",
        "8 x AMD Instinct MI300X, 1 node",
        "8 x NVIDIA V100, 1 node, NVLink",
    ]
    assert {c[6] for c in cells} == {"official MLPerf"}
    assert all(c[5] == "v0.7" for c in cells)


@pytest.mark.slow  # builds a site with MkDocs, opens it in Chromium
def test_guide_constraints_exclude_a_vendor_multi_node_and_large_systems(
    guide_page: object,
) -> None:
    _, cells = _answer(guide_page, "2", hardware="vendor:NVIDIA", servers="one")
    assert [c[0] for c in cells] == [
        "8 x NVIDIA V100, 1 node, NVLink",
        "4 x NVIDIA V100, 1 node, PCIe",
    ]
    _, cells = _answer(guide_page, "2", max_accelerators="4")
    assert [c[0] for c in cells] == ["4 x NVIDIA V100, 1 node, PCIe"]
    assert cells[0][2] == "110 min" and cells[0][3] == "yes"  # 2 h less 10.1 min


def test_update_does_only_what_changed(
    small_store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "docs"
    (tmp_path / "static").mkdir()
    (tmp_path / "static" / "about.md").write_text("# About\n")
    monkeypatch.chdir(tmp_path)
    assert site.update(out, Path("static"), small_store).generated  # collector site
    assert not site.update(out, tmp_path / "static", small_store).generated  # then the hook
    made = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    stamp = out / ".stamp"
    tables, _pages = stamp.read_text().split("\n", 1)
    stamp.write_text(f"{tables}\nanother template")  # as after a template edit
    again = site.update(out, Path("static"), small_store)  # tables read from the downloads
    assert again.generated
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == made
