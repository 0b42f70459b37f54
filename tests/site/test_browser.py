"""The built site in Chromium at a desktop (1280 px) and a phone (390 px) width: every page
loads cleanly, fits the screen's width and a bounded height, every chart draws its marks on
screen with round tick labels, the guide filters, nothing leaves the local server, the site
works opened from files, and a hostile system name never runs."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlparse

from tests.conftest import REPO
from tests.site.conftest import BROWSER_MARKS, WIDTHS, serve

SHOTS = REPO / "build" / "screenshots"

pytestmark = BROWSER_MARKS

MAX_HEIGHT_PX = 20_000  # at 1280 px: long tables, code and charts show their first rows

# Per page: how far the document scrolls sideways, its height, and per chart its marks (dots,
# lines, rules) and their horizontal extent, and its axis labels.
LAYOUT = """() => {
  const doc = document.documentElement;
  const charts = [...document.querySelectorAll('figure.vl-chart')].map(f => {
    const marks = [...f.querySelectorAll(
      '.vl-target svg g.mark-symbol > path, .vl-target svg g.mark-line > path,'
      + ' .vl-target svg g.mark-rule > line')].map(m => m.getBoundingClientRect())
      .filter(r => r.width > 0 || r.height > 0);
    return {id: f.id, error: f.dataset.error || null, marks: marks.length,
      left: Math.min(...marks.map(r => r.left)), right: Math.max(...marks.map(r => r.right)),
      axes: [...f.querySelectorAll('.vl-target svg g.role-axis')].map(a => [
        a.getAttribute('aria-label') || '',
        [...a.querySelectorAll('g.role-axis-label text')].map(t => t.textContent)])};
  });
  return {width: doc.clientWidth, overflow: doc.scrollWidth - doc.clientWidth,
    height: doc.scrollHeight, charts: charts};
}"""
NUMBER = re.compile(r"-?[\d,]*\.?\d+(e[+-]?\d+)?( ?(s|min|h|%|x))?")


def round_tick(text: str) -> bool:
    """Whether a tick label reads as people write numbers: no exponent, and a fraction with
    at most two significant digits (1, 2, 5, 10, 1024, 0.5, "45 s", "3.2 min", "1,000 h");
    not 1.58 or 1e+3. Labels that are not numbers (row labels) pass."""
    if not NUMBER.fullmatch(text):
        return True
    if "e" in text:
        return False
    return "." not in text or len(re.sub(r"\D", "", text).strip("0")) <= 2


class Visit:
    """A page at one width, with listeners for console errors, dialogs and requests that
    leave the machine (another host, or any scheme but the site's own)."""

    def __init__(self, browser: object, base: str, width: int = 1280) -> None:
        self.page = browser.new_page(viewport={"width": width, "height": 900})
        self.width = width
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.foreign: list[str] = []
        own = urlparse(base)
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))

        def route(r: object) -> None:
            url = urlparse(r.request.url)
            if (url.scheme, url.netloc) == (own.scheme, own.netloc) or url.scheme == "data":
                r.continue_()
            else:
                self.foreign.append(r.request.url)
                r.abort()

        self.page.route("**/*", route)

    def open(self, url: str) -> None:
        self.page.goto(url, wait_until="load")
        figures = self.page.locator("figure.vl-chart")
        if figures.count():
            self.page.wait_for_function(
                "[...document.querySelectorAll('figure.vl-chart')].every("
                "f => f.dataset.rendered || f.dataset.error)",
                timeout=20000,
            )

    def check_layout(self, rel: str) -> int:
        """Assert the page fits its width (and, at 1280 px, the height bound) and every chart
        draws marks within the screen with round tick labels; returns the charts seen."""
        got = self.page.evaluate(LAYOUT)
        where = (rel, self.width)
        assert got["overflow"] <= 0, (where, "scrolls sideways by", got["overflow"])
        if self.width >= 1280:
            assert got["height"] <= MAX_HEIGHT_PX, (where, "height", got["height"])
        for c in got["charts"]:
            assert c["error"] is None and c["marks"] > 0, (where, c["id"], c["error"])
            assert c["left"] >= 0 and c["right"] <= got["width"], (where, c["id"], c)
            for title, labels in c["axes"]:
                if "quality" in title:  # as logged; Vega's own round steps
                    continue
                bad = [t for t in labels if not round_tick(t)]
                assert not bad, (where, c["id"], title, bad)
        return len(got["charts"])


# pages of one template (a round's systems, a benchmark) read: a spread of this many of each
SPREAD = {"systems/": 4, "benchmarks/": 6}


def spread(pages: list[str], n: int) -> list[str]:
    """`n` of `pages` spread over them, the first and the last included."""
    if len(pages) <= n:
        return pages
    return [pages[round(i * (len(pages) - 1) / (n - 1))] for i in range(n)]


def crawl(browser: object, site: Path, shots: str) -> None:
    server, base = serve(site)
    try:
        every = sorted(
            p.relative_to(site).as_posix() for p in site.rglob("*.html") if p.name != "404.html"
        )
        # every page but those that share a template with many others: of those a spread
        # (the small site's crawl reads every page of every template)
        pages = [p for p in every if not p.startswith(tuple(SPREAD)) or "index" in p]
        for folder, n in SPREAD.items():
            pages += spread([p for p in every if p.startswith(folder) and "index" not in p], n)
        bench = next(p for p in pages if p.startswith("benchmarks/") and "index" not in p)
        system = next(p for p in pages if p.startswith("systems/") and "index" not in p)
        shot = {"index.html": "home", "guide.html": "guide", bench: "benchmark", system: "system"}
        SHOTS.mkdir(parents=True, exist_ok=True)
        # on a phone every page of the list; on a desktop, where less breaks, one of each
        # template that many pages share
        desktop = [p for p in pages if not p.startswith(tuple(SPREAD)) or "index" in p]
        desktop += [bench, system]
        for width in WIDTHS:
            visit = Visit(browser, base, width)
            charts = 0
            for rel in pages if width == min(WIDTHS) else desktop:
                visit.open(base + rel)
                charts += visit.check_layout(rel)
                assert not visit.errors, (rel, width, visit.errors)
                if rel in shot:
                    path = SHOTS / f"{shots}-{shot[rel]}-{width}.png"
                    visit.page.screenshot(path=str(path), full_page=True)
            assert charts > 0
            if width == WIDTHS[0]:
                _guide_filters(visit, base)
            assert not visit.errors and not visit.dialogs and not visit.foreign, (
                visit.errors,
                visit.dialogs,
                visit.foreign,
            )
            visit.page.close()
    finally:
        server.shutdown()


def _guide_filters(visit: Visit, base: str) -> None:
    visit.open(base + "guide.html")
    summary = visit.page.locator(".guide-summary")
    options = visit.page.eval_on_selector_all(
        "#guide-workload option", "os => os.map(o => o.value)"
    )
    answers = set()
    for value in options:
        visit.page.select_option("#guide-workload", value)
        answers.add(summary.inner_text())
    visit.page.fill("#guide-hours", "25")
    assert "within 25 h (1500 min)" in summary.inner_text()
    fits = int(summary.inner_text().split(" of ")[0])
    more = visit.page.locator(".guide-more button")
    if fits > 10:  # the answer lists ten, and shows every one on asking
        assert more.inner_text() == f"show all {fits}"
        more.click()
        assert visit.page.locator("#guide-answer tbody tr").count() == fits
    visit.page.fill("#guide-hours", "0.0001")  # 0.36 s: below every run
    assert summary.inner_text().startswith("Nothing meets 0.0001 h (0.006 min)")
    assert len(answers) > 1 or len(options) == 1, answers


def test_small_site_in_browser(browser: object, small_site: Path) -> None:
    crawl(browser, small_site, "small")
    pages = [p.read_text() for p in (small_site / "systems").glob("v*.html")]
    assert any("&lt;script&gt;alert(1)&lt;/script&gt;" in page for page in pages)


def test_shipped_site_in_browser(browser: object, shipped_site: Path) -> None:
    crawl(browser, shipped_site, "shipped")


def test_site_works_opened_from_files(browser: object, small_site: Path) -> None:
    """Charts carry their specs and the search index is a script: nothing needs a server."""
    page = next(p for p in (small_site / "benchmarks").glob("*.html") if p.name != "index.html")
    visit = Visit(browser, page.as_uri(), 390)
    visit.open(page.as_uri())
    assert visit.check_layout(page.name) > 0
    visit.page.fill("input.md-search__input", "ssd")
    visit.page.wait_for_selector(".md-search-result__item", timeout=10000)
    assert not visit.errors and not visit.foreign, (visit.errors, visit.foreign)
    visit.page.close()
