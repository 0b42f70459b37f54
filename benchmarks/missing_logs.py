"""List the result logs each round's repository holds that its copy under --trees lacks.

Copies of the result repositories can lack their largest files (4 MiB and more); those
runs are reported as missing, never invented. For every round in runs/sources.csv, the
result logs of the commit (the results layout, as ingest reads it) are listed from the
repository's git data (`--git DIR` holds one bare repository per round, named
mlcommons+training_results_vX.Y/repo or training_results_vX.Y.git) and compared with the
files under --trees.

Usage: python benchmarks/missing_logs.py --trees DIR --git DIR [-o runs/official/missing.csv]
"""

from __future__ import annotations

import argparse
import csv
import subprocess
import sys
from pathlib import Path

from collector.ingest.trees import describe

SOURCES = Path(__file__).resolve().parents[1] / "runs" / "sources.csv"


def _git_dir(root: Path, tree: str) -> Path:
    for candidate in (root / f"mlcommons+{tree}" / "repo", root / f"{tree}.git", root / tree):
        if candidate.is_dir():
            return candidate
    raise SystemExit(f"no git data for {tree} under {root}")


def _listed(git: Path, commit: str) -> list[str]:
    """The path of every file of the commit."""
    out = subprocess.run(
        ["git", f"--git-dir={git}", "ls-tree", "-r", "--name-only", "-z", commit],
        capture_output=True,
        check=True,
    ).stdout.decode()
    return list(filter(None, out.split("\0")))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trees", type=Path, required=True)
    parser.add_argument("--git", type=Path, required=True)
    parser.add_argument("-o", "--output", type=Path, default=None)
    args = parser.parse_args()
    with SOURCES.open(newline="") as handle:
        sources = list(csv.DictReader(handle))
    rows = []
    for source in sources:
        tree = source["tree"]
        base = args.trees / tree
        for path in _listed(_git_dir(args.git, tree), source["commit"]):
            local = base / path
            if local.exists():
                continue
            entry = describe(local, args.trees)
            if entry is not None and entry.layout != "plain":
                rows.append([tree, path])
    out = args.output.open("w", newline="") if args.output else sys.stdout
    writer = csv.writer(out)
    writer.writerow(["tree", "path"])
    writer.writerows(sorted(rows))
    if args.output:
        out.close()
    print(f"{len(rows)} result logs missing", file=sys.stderr)


if __name__ == "__main__":
    main()
