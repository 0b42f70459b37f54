"""The method page's projection error section, from a store with a hand-computed error."""

from __future__ import annotations

from pathlib import Path

from collector import site
from tests.queries.test_projection import projection_store


def test_projection_error_is_a_section_of_the_method_page(tmp_path: Path) -> None:
    store = projection_store(tmp_path / "store")
    text = site.generate(store).files["method-sql.md"].decode()
    section = text.split("## Projection error", 1)[1].split("\n## ", 1)[0]
    # three GNMT submissions, out of sample: errors -47.1%, -16.3% and +125%
    assert "| gnmt | 21.8 | 3 | v0.5 | 47 | 109 | -16 | 59 | 33 |" in section


def test_without_timed_official_logs_the_section_says_so(small_store: Path) -> None:
    text = site.generate(small_store).files["method-sql.md"].decode()
    section = text.split("## Projection error", 1)[1].split("\n## ", 1)[0]
    assert "nothing to check yet" in section
