"""The runner's import graph: no cycles, no imports inside functions, planning without torch."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import collector.run

RUN = Path(collector.run.__file__).parent


def _module(path: Path) -> str:
    rel = path.relative_to(RUN.parent.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(tree: ast.AST, package: str) -> list[tuple[str, ast.AST]]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, node) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            base = node.module
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1])
                base = f"{base}.{node.module}"
            out.append((base, node))
            out += [(f"{base}.{a.name}", node) for a in node.names]
    return out


def _graph() -> dict[str, set[str]]:
    modules = {_module(p): p for p in RUN.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        deps = {m for m, _ in _imports(ast.parse(path.read_text()), package) if m in modules}
        graph[name] = deps - {name}
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(n: str) -> list[str] | None:
        state[n] = 1
        stack.append(n)
        for d in sorted(graph[n]):
            if state.get(d) == 1:
                return [*stack[stack.index(d) :], d]
            if d not in state and (found := visit(d)):
                return found
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state and (found := visit(n)):
            return found
    return None


def test_the_cycle_finder_finds_a_planted_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycles_inside_the_runner():
    graph = _graph()
    assert "collector.run.workloads.resnet" in graph["collector.run.workloads"]
    assert _cycle(graph) is None


def test_no_collector_module_is_imported_inside_a_function():
    late = []
    for path in RUN.rglob("*.py"):
        tree = ast.parse(path.read_text())
        for fn in ast.walk(tree):
            if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for name, node in _imports(fn, ""):
                if name.startswith("collector."):
                    late.append(f"{path.name}:{node.lineno} {name}")
    assert late == []


def test_planning_and_the_cli_import_without_torch(tmp_path):
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "import collector.run.plan, collector.run.launch, collector.run.suite, collector.cli\n"
        "from collector.run.plan import Machine, Options, plan_runs\n"
        "specs = plan_runs(Options(scale='throughput', benchmarks=['resnet']),"
        " Machine('h', 'cpu', 2))\n"
        "from typer.testing import CliRunner\n"
        "from collector.cli import app\n"
        "args = ['run', '--scale', 'throughput', '--dry-run', '--out', sys.argv[1]]\n"
        "res = CliRunner().invoke(app, args)\n"
        "assert res.exit_code == 0 and 'steps=' in res.output, res.output\n"
        "assert specs and 'torch' not in [m for m in sys.modules if sys.modules[m]]\n"
        "print('ok')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
