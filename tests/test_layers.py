"""The package's layers run one way and its modules import each other without cycles."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[1]


def test_import_contracts_hold():
    """pyproject.toml's import-linter contracts: one-way layers, torch only in the run layer."""
    lint = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run(
        [str(lint)], cwd=ROOT, capture_output=True, text=True, env={"PYTHONPATH": str(ROOT)}
    )
    assert result.returncode == 0, result.stdout[-3000:]


def _cycle(graph: grimp.ImportGraph, modules: set[str]) -> list[str] | None:
    """One import cycle among `modules` (imports inside functions included), or None."""
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = 1
        path.append(module)
        for imported in sorted(graph.find_modules_directly_imported_by(module) & modules):
            if state.get(imported) == 1:
                return path[path.index(imported) :] + [imported]
            if imported not in state and (found := visit(imported)):
                return found
        state[module] = 2
        path.pop()
        return None

    for module in sorted(modules):
        if module not in state and (found := visit(module)):
            return found
    return None


def test_no_import_cycles():
    graph = grimp.build_graph("collector")
    # a package's __init__ importing its own submodules is how packages export; not a cycle
    modules = {m for m in graph.modules if m.startswith("collector")}
    for module in modules:
        for child in graph.find_children(module):
            if graph.direct_import_exists(importer=module, imported=child):
                graph.remove_import(importer=module, imported=child)
    assert _cycle(graph, modules) is None
