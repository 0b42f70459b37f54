"""A small store for the site tests: two v0.7-layout systems and local runs whose platform
name is an HTML injection attempt; a helper that builds the site from a store with MkDocs; the
site built from the shipped store, served, and a Chromium for the browser tests."""

from __future__ import annotations

import functools
import http.server
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from collector.ingest.pipeline import ingest
from tests.conftest import LOGS, REPO

XSS = "<script>alert(1)</script>"


def make_store(root: Path) -> Path:
    """Ingest a v0.7 tree (4- and 8-GPU PCIe systems, ssd) and three local MLLOG runs."""
    org = root / "tree" / "training_results_v0.7" / "Acme"
    for name, count in (("node4", 4), ("node8", 8)):
        (org / "systems").mkdir(parents=True, exist_ok=True)
        (org / "systems" / f"{name}.json").write_text(
            json.dumps(
                {
                    "submitter": "Acme",
                    "division": "closed",
                    "status": "available",
                    "system_name": name,
                    "number_of_nodes": "1",
                    "accelerators_per_node": str(count),
                    "accelerator_model_name": "Tesla V100-PCIe-32GB",
                    "accelerator_interconnect": "N/A",
                    "host_processor_model_name": "Xeon",
                    "host_memory_capacity": "384GB",
                }
            )
        )
        results = org / "results" / name / "ssd"
        results.mkdir(parents=True)
        for i in range(5):
            log = (LOGS / "v06_ssd.txt").read_bytes() + f"# {name} run {i}\n".encode()
            (results / f"result_{i}.txt").write_bytes(log)
    local = root / "tree" / "local"
    local.mkdir(parents=True)
    text = (LOGS / "mllog_local.txt").read_text()
    assert "testhost_1xcpu_fp32_none" in text
    for i in range(3):
        hostile = text.replace("testhost_1xcpu_fp32_none", XSS) + f"# run {i}\n"
        (local / f"run_{i}.log").write_text(hostile)
    store = root / "store"
    ingest([root / "tree"], store)
    return store


def build_site(store: Path | None, root: Path) -> Path:
    """Build the site as `mkdocs build` does, through the project's hook, from `store` (the
    default store when None) into root/site; returns the built site folder."""
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text())
    config.update(
        docs_dir=str(REPO / "site_src"),
        site_dir=str(root / "site"),
        hooks=[str(REPO / h) for h in config["hooks"]],
    )
    (root / "mkdocs.yml").write_text(yaml.safe_dump(config))
    env = {k: v for k, v in os.environ.items() if k != "COLLECTOR_STORE"}
    if store is not None:
        env["COLLECTOR_STORE"] = str(store)
    subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-f", str(root / "mkdocs.yml")],
        check=True,
        env={**env, "NO_MKDOCS_2_WARNING": "1"},
    )
    return root / "site"


@pytest.fixture(scope="session")
def small_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_store(tmp_path_factory.mktemp("small"))


@pytest.fixture(scope="session")
def small_site(small_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_site(small_store, tmp_path_factory.mktemp("small-site"))


@pytest.fixture(scope="session")
def shipped_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site built from the shipped store, once a session: the browser tests read it. Where
    COLLECTOR_TEST_SITE names a folder (CI: its own `mkdocs build` of this checkout, made just
    before the tests), that build is read instead of making another."""
    built = os.environ.get("COLLECTOR_TEST_SITE")
    if built:
        assert (Path(built) / "index.html").is_file(), f"COLLECTOR_TEST_SITE={built}: no site"
        return Path(built).resolve()
    return build_site(None, tmp_path_factory.mktemp("shipped-site"))


CHROMIUM = Path("/usr/bin/chromium")
BROWSER_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
WIDTHS = (1280, 390)  # a desktop and a phone
# the browser tests' marks: slow, and skipped with the reason where Chromium is absent
BROWSER_MARKS = [
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="/usr/bin/chromium is absent (apt-get install -y chromium)"
    ),
    pytest.mark.slow,
]


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


def serve(folder: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    """Serve a folder on 127.0.0.1 on a free port, in a thread."""
    handler = functools.partial(QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


@pytest.fixture(scope="session")
def shipped_base(shipped_site: Path) -> Iterator[str]:
    """The address of the shipped site, served for the session."""
    server, base = serve(shipped_site)
    yield base
    server.shutdown()


@pytest.fixture(scope="session")
def site(shipped_site: Path) -> Path:
    """The site a browser test reads: the shipped store's."""
    return shipped_site


@pytest.fixture(scope="session")
def base(shipped_base: str) -> str:
    """The address it is served at."""
    return shipped_base


def download(site: Path, table: str) -> list[dict]:
    """A derived table as the site publishes it (its Parquet download)."""
    return pq.read_table(site / "data" / f"{table}.parquet").to_pylist()


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """A headless Chromium (Debian's), for a test module: Playwright's synchronous API runs
    one at a time, and other modules start their own."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=BROWSER_ARGS)
        yield b
        b.close()
