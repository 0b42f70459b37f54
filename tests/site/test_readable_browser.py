"""Readable pages in Chromium, at a desktop (1280 px) and a phone (390 px) width, on the site
built from the shipped store: a long chart draws its top rows and says so, and every row of the
derived table behind it is in a table beside it that sorts and filters; the columns that answer
a page's question lie inside the viewport; official logs link to their files."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from collector.site import charts
from tests.site.conftest import BROWSER_MARKS, WIDTHS, download

CHART_PX = 1000  # a chart of TOP_ROWS rows, its title and legend: under a phone's two screens
pytestmark = BROWSER_MARKS


def visit(browser: object, base: str, path: str, width: int) -> object:
    """A page at a width, its charts drawn, with no script error."""
    page = browser.new_page(viewport={"width": width, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(base + path, wait_until="load")
    page.wait_for_function(
        "[...document.querySelectorAll('figure.vl-chart')].every("
        "f => f.dataset.rendered || f.dataset.error)",
        timeout=30000,
    )
    assert errors == []
    return page


def long_charts(site: Path) -> list[tuple[str, str, list[dict], str]]:
    """(page, chart id, the derived table's rows behind it, a word to filter on) of two long
    charts: Compare's official scaling efficiency and Llama 2 70B's times to train."""
    scaling = [
        r
        for r in download(site, "site_comparisons")
        if r["topic"] == "scaling" and r["kind"] == "official MLPerf"
    ]
    scores = [
        r
        for r in download(site, "site_scores")
        if r["benchmark"] == "llama2_70b_lora"
        and r["evidence"] == "official"
        and r["newest_round"]
        and r["score_minutes"]
    ]
    return [
        ("compare.html", "compare-scaling-official-mlperf", scaling, "resnet"),
        ("benchmarks/llama2-70b-lora.html", "benchmarks-llama2-70b-lora-time-official-mlperf",
         scores, "nvidia"),
    ]  # fmt: skip


@pytest.mark.parametrize("width", WIDTHS)
def test_a_long_chart_draws_its_top_rows_beside_a_table_of_all(browser, base, site, width):
    for path, chart_id, rows, word in long_charts(site):
        assert len(rows) > charts.TOP_ROWS, chart_id  # a long chart in the shipped store
        page = visit(browser, base, path, width)
        figure = page.locator(f"#{chart_id}")
        got = figure.evaluate(
            "f => ({rows: JSON.parse(f.querySelector('script.vl-spec').textContent)"
            ".data.values.length,"
            " marks: f.querySelectorAll('g.mark-symbol.role-mark > path').length,"
            " boxes: f.querySelectorAll('input[type=checkbox]').length,"
            " height: f.getBoundingClientRect().height,"
            " caption: f.querySelector('figcaption').textContent})"
        )
        assert got["rows"] == charts.TOP_ROWS and got["marks"] == charts.TOP_ROWS, got
        assert got["height"] < CHART_PX, got
        assert got["boxes"] <= 1, got  # the log scale's at most: no box to draw every row
        assert f"the {charts.TOP_ROWS} " in got["caption"] and f" of {len(rows)}" in got["caption"]
        text = page.inner_text("article")
        assert f"The chart shows the {charts.TOP_ROWS} " in text and f"of {len(rows)} " in text
        # every row beside it, folded: opened, as many rows as the derived table has
        details = page.locator(f"details:has(#{chart_id}-rows)")
        assert not details.evaluate("d => d.open")
        details.locator("summary").click()
        table = page.locator(f"#{chart_id}-rows")
        assert table.locator("tbody tr").count() == len(rows)
        first = table.locator("tbody tr").first.locator("td.answer-value")
        box = first.bounding_box()
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= width, box
        assert table.evaluate("t => t.getBoundingClientRect().height") < 1000
        # it filters: the rows that hold the word typed, and sorts by rank, last first
        page.fill(f'input[data-for="{chart_id}-rows"]', word)
        shown = table.evaluate("t => [...t.tBodies[0].rows].filter(r => !r.hidden).length")
        label = "label" if "label" in rows[0] else "hardware"
        expected = [r for r in rows if word in (r[label] + " " + r.get("submitter", "")).lower()]
        assert shown == len(expected) > 0, (chart_id, shown, len(expected))
        page.fill(f'input[data-for="{chart_id}-rows"]', "")
        # the headings sort (on a phone a row of buttons above the cards)
        heading = table.locator("thead th", has_text="rank")
        heading.click()
        heading.click()
        last = table.locator("tbody tr").first.locator("td").first.inner_text()
        last = last.split(":")[-1]  # a card's cell leads with its heading
        assert int(last) == max(r.get("chart_rank") or r.get("rank_in_round") for r in rows)
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        page.close()


# The columns that answer each page's question, by heading: in view at every width.
ANSWERS = {
    "compare.html": (
        "efficiency, % (95% interval)", "gain, ratio (95% interval)",
        "speedup, ratio (95% interval)", "cost, USD", "energy at TDP, kWh",
    ),
    "rounds.html": ("speedup",),
    "full-size.html": (
        "tokens/s per accelerator", "% of linear (95% interval)",
        "with peer-to-peer disabled, of NVLink", "projected minutes (on)",
    ),
    "benchmarks/resnet.html": ("score, minutes", "times as fast (95% interval)"),
}  # fmt: skip
ANSWER_CELLS = """names => [...document.querySelectorAll('article table')].flatMap(t => {
  const heads = [...t.querySelectorAll('thead th')].map(h => h.textContent.trim());
  const row = t.tBodies[0] && [...t.tBodies[0].rows].find(r => !r.hidden);
  if (!row) return [];
  // the right edge of the box the table scrolls in: a cell past it is out of sight
  const box = t.closest('.md-typeset__scrollwrap');
  const edge = box ? box.getBoundingClientRect().right : innerWidth;
  return heads.map((h, i) => [h, row.cells[i]])
    .filter(([h, c]) => names.includes(h) && c && c.offsetParent !== null)
    .map(([h, c]) => { const r = c.getBoundingClientRect(); return [h, r.left, r.right, edge]; });
})"""


@pytest.mark.parametrize("width", WIDTHS)
def test_answer_columns_are_in_view(browser, base, width):
    for path, names in ANSWERS.items():
        page = visit(browser, base, path, width)
        cells = page.evaluate(ANSWER_CELLS, list(names))
        assert {h for h, *_ in cells} == set(names), (path, cells)
        # the whole cell shows, without scrolling the table sideways
        off = [(h, left, right) for h, left, right, edge in cells
               if left < 0 or right > min(width, edge) + 2]  # fmt: skip
        assert not off, (path, width, off)
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        page.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_a_system_links_its_logs_to_the_published_files(browser, base, site, width):
    runs = [r for r in download(site, "runs") if r["round"] == "v5.1" and r["source"] == "official"]
    system = runs[0]["system_id"]
    page = visit(browser, base, "systems/v5-1.html", width)
    section = page.locator("details.system", has_text=f"id {system}.").first
    section.locator("summary").click()
    links = section.locator("table a[href^='https://github.com/']")
    hrefs = set(links.evaluate_all("as => as.map(a => a.href)"))
    assert hrefs >= {r["log_url"] for r in runs if r["system_id"] == system}
    first = next(r for r in runs if r["system_id"] == system)
    assert first["log_url"].startswith("https://github.com/mlcommons/training_results_v5.1/blob/")
    cell = links.first.bounding_box()
    assert cell and cell["x"] >= 0 and cell["x"] + 40 <= width, cell
    page.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_a_long_table_in_a_closed_section_folds_when_it_opens(browser, base, site, width):
    runs = [r for r in download(site, "runs") if r["round"] == "v5.1" and r["source"] == "official"]
    system, n = Counter(r["system_id"] for r in runs).most_common(1)[0]
    page = visit(browser, base, "systems/v5-1.html", width)
    section = page.locator("details.system", has_text=f"id {system}.").first
    section.locator("summary").click()
    table = section.locator("table:has(a[href^='https://github.com/'])").first
    shown = "t => [...t.tBodies[0].rows].filter(r => !r.hidden).length"
    rows = table.locator("tbody tr").count()
    assert rows >= n > 20 and table.evaluate(shown) < rows, (system, n, rows)
    # its own "Show all" button, beside the box that scrolls it (the section folds others)
    table.evaluate("t => (t.closest('.md-typeset__scrollwrap') || t).nextElementSibling.click()")
    assert table.evaluate(shown) == rows
    page.close()


HIDDEN_COLUMNS = """() => [...document.querySelectorAll('.md-typeset__scrollwrap')]
  .filter(w => w.clientWidth && w.scrollWidth > w.clientWidth + 2)
  .map(w => {
    const edge = w.getBoundingClientRect().right;
    const hidden = [...w.querySelectorAll('thead th')]
      .filter(th => th.getBoundingClientRect().right > edge + 2).map(th => th.textContent.trim());
    const note = w.previousElementSibling;
    return [hidden, note && note.classList.contains('more-columns') ? note.textContent : null];
  })"""


def test_a_wide_table_shows_its_answer_first_and_its_other_columns_on_demand(browser, base):
    page = visit(browser, base, "compare.html", 1280)
    boxes = page.locator(".some-columns")
    assert boxes.count() >= 5  # a table per topic and kind of evidence
    box = boxes.first
    button = box.locator("button.more-columns-button")
    shown = "b => [...b.querySelectorAll('thead th')].filter(th => th.offsetParent).length"
    first = box.evaluate(shown)
    assert first == int(box.get_attribute("data-shown"))
    # what shows first fits a laptop's column: no heading out of sight
    assert all(not hidden for hidden, _ in page.evaluate(HIDDEN_COLUMNS))
    button.click()
    assert box.evaluate(shown) > first and button.get_attribute("aria-expanded") == "true"
    # shown, the columns that do not fit scroll sideways, and a line above names them
    wide = [(hidden, note) for hidden, note in page.evaluate(HIDDEN_COLUMNS) if hidden]
    assert wide
    for hidden, note in wide:
        assert note and note.startswith(f"{len(hidden)} more column"), (hidden, note)
        assert all(h in note for h in hidden), (hidden, note)
    button.click()
    assert box.evaluate(shown) == first
    page.close()
    # on a phone every row is a card that shows every column: nothing is out of sight
    page = visit(browser, base, "compare.html", 390)
    assert page.evaluate(HIDDEN_COLUMNS) == [] and page.locator("p.more-columns").count() == 0
    page.close()
