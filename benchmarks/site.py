"""Time `collector site` generation plus `mkdocs build --strict` on the shipped store.

Usage: python benchmarks/site.py  (target: 30 s or less in all)
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from collector import site

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    """Generate into a copy of site_src, build it, print the times."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        docs = root / "docs"
        shutil.copytree(REPO / "site_src", docs)
        start = time.perf_counter()
        result = site.generate()
        generated = time.perf_counter()
        site.write(result, docs)
        written = time.perf_counter()
        config = yaml.safe_load((REPO / "mkdocs.yml").read_text())
        config.update(docs_dir=str(docs), site_dir=str(root / "site"))
        config.pop("hooks")  # the pages are written above; the hook would generate them again
        (root / "mkdocs.yml").write_text(yaml.safe_dump(config))
        subprocess.run(
            [
                sys.executable,
                "-m",
                "mkdocs",
                "build",
                "--strict",
                "-q",
                "-f",
                str(root / "mkdocs.yml"),
            ],
            check=True,
            stderr=subprocess.DEVNULL,
        )
        built = time.perf_counter()
    print(f"generate (queries, pages, charts): {generated - start:.1f} s")
    print(f"write (files, static SVGs):        {written - generated:.1f} s")
    print(f"mkdocs build --strict:             {built - written:.1f} s")
    print(
        f"total:                             {built - start:.1f} s ({len(result.files)} files, "
        f"{len(result.charts)} charts)"
    )


if __name__ == "__main__":
    main()
