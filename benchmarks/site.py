"""Time the site over the shipped store, as a user builds and serves it, beside a baseline.

    python benchmarks/site.py [--checkout DIR] [--serve]

Measures, in a copy of the checkout (DIR: another checkout of collector, e.g. an older commit,
timed with this interpreter):
  1. `collector site` (generate and write the pages), then `mkdocs build --strict` of them,
     the built site's size and file count;
  2. with --serve: `mkdocs serve` until its first page answers, and after a template change
     until the page shows it.
Baseline in the same run: `mkdocs build --strict` of the checkout's static pages alone (no
hook), the same theme and plugins: what MkDocs costs before collector generates anything.
Wall and CPU seconds of each step (CPU: the processes' own, which other work on a shared
machine stretches less than the wall time).
Goals: site + build <= 60 s, first served page <= 60 s, rebuild <= 15 s, site <= 80 MB.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]


def run(args: list[str], cwd: Path, env: dict[str, str]) -> str:
    """Wall and CPU seconds a command took, as text; it must succeed."""
    before = _children_cpu()
    start = time.perf_counter()
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"{' '.join(args[1:])} failed:\n{done.stderr[-3000:]}")
    return f"{time.perf_counter() - start:.1f} s wall, {_children_cpu() - before:.1f} s CPU"


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _cpu(pid: int) -> float:
    """CPU seconds process `pid` has used so far (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def size(folder: Path) -> tuple[int, int]:
    """Bytes and files under a folder."""
    files = [p for p in folder.rglob("*") if p.is_file()]
    return sum(p.stat().st_size for p in files), len(files)


def baseline(root: Path, env: dict[str, str]) -> str:
    """`mkdocs build --strict` of the static pages alone, without the hook."""
    config = yaml.safe_load((root / "mkdocs.yml").read_text())
    config.pop("hooks", None)
    config.pop("nav", None)
    config.update(site_dir=str(root / "site-static"), strict=False)
    (root / "static.yml").write_text(yaml.safe_dump(config))
    return run([sys.executable, "-m", "mkdocs", "build", "-q", "-f", "static.yml"], root, env)


def serve(root: Path, env: dict[str, str]) -> tuple[str, str]:
    """Wall and CPU seconds until `mkdocs serve` answers its first page, and until a template
    change shows."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/about.html"
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "mkdocs", "serve", "-a", f"127.0.0.1:{port}"],
        cwd=root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        first = _until(url, lambda page: True) - start
        first_cpu = _cpu(proc.pid)
        template = root / "collector" / "site" / "templates" / "data.md.j2"
        marker = f"rebuilt-{os.getpid()}"
        changed = time.perf_counter()
        template.write_text(template.read_text() + f"\n{marker}\n")
        data = url.replace("about.html", "data.html")
        rebuilt = _until(data, lambda page: marker in page) - changed
        rebuilt_cpu = _cpu(proc.pid) - first_cpu
    finally:
        proc.terminate()
        proc.wait(30)
    return (
        f"{first:.1f} s wall, {first_cpu:.1f} s CPU",
        f"{rebuilt:.1f} s wall, {rebuilt_cpu:.1f} s CPU",
    )


def _until(url: str, ready: object, limit_s: float = 600.0) -> float:
    """Poll `url` until `ready(text)`; the time it answered."""
    deadline = time.perf_counter() + limit_s
    while time.perf_counter() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=5) as reply:
                if ready(reply.read().decode()):  # type: ignore[operator]
                    return time.perf_counter()
        except OSError:
            pass
        time.sleep(0.2)
    raise TimeoutError(url)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--checkout", type=Path, default=REPO, help="collector checkout to time")
    ap.add_argument("--serve", action="store_true", help="also time mkdocs serve")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "collector"
        top = str(args.checkout.resolve())
        skipped = {".git", ".venv", ".collector", "site"}  # at the top only: built or installed
        shutil.copytree(
            top, root, ignore=lambda folder, names: skipped & set(names) if folder == top else ()
        )
        env = {**os.environ, "PYTHONPATH": str(root), "NO_MKDOCS_2_WARNING": "1"}
        env["COLLECTOR_CACHE"] = str(Path(tmp) / "cache")  # every table computed at first
        env.pop("COLLECTOR_STORE", None)
        static = baseline(root, env)
        site = run([sys.executable, "-m", "collector.cli", "site"], root, env)
        build = run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q"], root, env)
        total, files = size(root / "site")
        data, _ = size(root / "site" / "data")
        print(f"checkout: {args.checkout}; load average {os.getloadavg()[0]:.2f}")
        print(f"baseline, mkdocs build of the static pages: {static}")
        print(f"collector site:                             {site}")
        print(f"mkdocs build --strict (hook included):      {build}")
        print(f"built site: {total / 1e6:.1f} MB in {files} files ({data / 1e6:.1f} MB downloads)")
        if args.serve:
            first, rebuilt = serve(root, env)
            print(f"mkdocs serve, first page:                   {first}")
            print(f"mkdocs serve, template change shown:        {rebuilt}")


if __name__ == "__main__":
    main()
