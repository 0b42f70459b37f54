"""The built site in Chromium: pages load cleanly, charts draw, the guide filters, nothing
leaves the local server, and a hostile system name never runs."""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

import pytest

from tests.conftest import REPO
from tests.site.conftest import build_site

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SHOTS = REPO / "build" / "screenshots"

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="/usr/bin/chromium is absent (apt-get install -y chromium)"
)
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield b
        b.close()


def serve(folder: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    """Serve a folder on 127.0.0.1 on a free port, in a thread."""
    handler = functools.partial(QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


class Visit:
    """A page with listeners for console errors, dialogs and requests to other hosts."""

    def __init__(self, browser: object, base: str) -> None:
        self.page = browser.new_page(viewport={"width": 1280, "height": 900})
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.foreign: list[str] = []
        host = urlparse(base).netloc
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))

        def route(r: object) -> None:
            if urlparse(r.request.url).netloc == host:
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

    def chart_widths(self) -> list[tuple[int, int, int]]:
        """Per chart: the width Vega laid it out at, the width drawn, and its figure's width."""
        return [
            tuple(w)
            for w in self.page.eval_on_selector_all(
                "figure.vl-chart",
                "fs => fs.map(f => { const svg = f.querySelector('.vl-target svg');"
                " return [Number(svg.getAttribute('width')),"
                " Math.round(svg.getBoundingClientRect().width), f.clientWidth]; })",
            )
        ]

    def chart_marks(self) -> list[int]:
        return self.page.eval_on_selector_all(
            "figure.vl-chart",
            "fs => fs.map(f => f.querySelectorAll('svg g.mark-symbol path, svg g.mark-line path,"
            " svg g.mark-rule line, svg g.mark-symbol > path').length)",
        )


def crawl(browser: object, site: Path, shots: str) -> None:
    server, base = serve(site)
    try:
        visit = Visit(browser, base)
        pages = sorted(
            p.relative_to(site).as_posix() for p in site.rglob("*.html") if p.name != "404.html"
        )
        charts = 0
        for rel in pages:
            visit.open(base + rel)
            marks = visit.chart_marks()
            assert all(n > 0 for n in marks), (rel, marks)
            # drawn at the size their text was laid out for, and on a desktop screen (1280 px)
            # within the content column, with no sideways scrolling
            widths = visit.chart_widths()
            assert all(abs(laid - drawn) <= 1 and laid <= room for laid, drawn, room in widths), (
                rel,
                widths,
            )
            charts += len(marks)
            assert not visit.errors, (rel, visit.errors)
        assert charts > 0
        assert not visit.dialogs and not visit.foreign, (visit.dialogs, visit.foreign)
        _guide_filters(visit, base)
        SHOTS.mkdir(parents=True, exist_ok=True)
        bench = next(p for p in pages if p.startswith("benchmarks/") and "index" not in p)
        system = next(p for p in pages if p.startswith("systems/") and "index" not in p)
        for name, rel in (
            ("home", "index.html"),
            ("guide", "guide.html"),
            ("benchmark", bench),
            ("system", system),
        ):
            visit.open(base + rel)
            visit.page.screenshot(path=str(SHOTS / f"{shots}-{name}.png"), full_page=True)
        assert not visit.errors and not visit.dialogs and not visit.foreign
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
    visit.page.fill("#guide-hours", "0.0001")  # 0.36 s: below every run
    assert summary.inner_text().startswith("Nothing meets 0.0001 h (0.006 min)")
    assert len(answers) > 1 or len(options) == 1, answers


def test_small_site_in_browser(browser: object, small_site: Path) -> None:
    crawl(browser, small_site, "small")
    system = next(p for p in small_site.rglob("*.html") if "script-alert" in str(p))
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in system.read_text()


def test_shipped_site_in_browser(browser: object, tmp_path: Path) -> None:
    crawl(browser, build_site(None, tmp_path), "shipped")
