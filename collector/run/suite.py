"""Suite definitions: the YAML files under ``collector/suites/``, loaded and validated."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from collector.errors import RunError

SUITES_DIR = Path(__file__).resolve().parent.parent / "suites"
SCALES = ("tiny", "small", "full")


@dataclass(frozen=True)
class ScaleSpec:
    """One benchmark at one scale."""

    target: float
    max_epochs: int
    eval_every: int
    runs: int
    params: dict[str, Any]


@dataclass(frozen=True)
class BenchmarkSpec:
    """One benchmark of a suite."""

    name: str
    model: str
    quality_metric: str
    scales: dict[str, ScaleSpec]


@dataclass(frozen=True)
class Suite:
    """A suite: its name and benchmarks, in file order."""

    name: str
    benchmarks: dict[str, BenchmarkSpec]
    path: Path


def _need(d: Any, key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if not isinstance(d, dict) or key not in d:
        raise RunError(f"{where}: missing key {key!r}")
    v = d[key]
    if isinstance(v, bool) or not isinstance(v, kind):
        names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise RunError(f"{where}.{key}: expected {names}, got {type(v).__name__} ({v!r})")
    return v


def parse_suite(data: Any, path: Path) -> Suite:
    """Validate a parsed suite document; raises :class:`RunError` naming the bad field."""
    from collector.run.workloads import BENCHMARKS

    where = str(path)
    name = str(_need(data, "suite", (str, float, int), where))
    scales = _need(data, "scales", list, where)
    if sorted(scales) != sorted(SCALES):
        raise RunError(f"{where}.scales: expected {list(SCALES)}, got {scales}")
    raw = _need(data, "benchmarks", dict, where)
    if not raw:
        raise RunError(f"{where}.benchmarks: empty")
    benches: dict[str, BenchmarkSpec] = {}
    for bname, b in raw.items():
        w = f"{where}: benchmarks.{bname}"
        if bname not in BENCHMARKS:
            raise RunError(f"{w}: unknown benchmark (known: {', '.join(BENCHMARKS)})")
        runs = _need(b, "runs", dict, w)
        specs = {}
        for scale in SCALES:
            s = _need(b, scale, dict, w)
            ws = f"{w}.{scale}"
            n_runs = _need(runs, scale, int, f"{w}.runs")
            epochs = _need(s, "max_epochs", int, ws)
            every = _need(s, "eval_every", int, ws)
            params = _need(s, "params", dict, ws)
            if n_runs < 1 or epochs < 1 or every < 1:
                raise RunError(f"{ws}: runs, max_epochs and eval_every must be >= 1")
            bs = _need(params, "batch_size", int, f"{ws}.params")
            if bs < 1:
                raise RunError(f"{ws}.params.batch_size: must be >= 1")
            specs[scale] = ScaleSpec(
                float(_need(s, "target", (int, float), ws)), epochs, every, n_runs, params
            )
        benches[bname] = BenchmarkSpec(
            bname, str(_need(b, "model", str, w)), _need(b, "quality_metric", str, w), specs
        )
    return Suite(name, benches, path)


def load_suite(name_or_path: str) -> Suite:
    """Load a suite by name (``v0.5``) from ``collector/suites`` or from a YAML path."""
    path = Path(name_or_path)
    if path.suffix not in (".yml", ".yaml"):
        path = SUITES_DIR / f"{name_or_path}.yml"
    if not path.is_file():
        known = sorted(p.stem for p in SUITES_DIR.glob("*.yml"))
        raise RunError(f"unknown suite {name_or_path!r} (known: {', '.join(known)})")
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise RunError(f"{path}: not valid YAML: {exc}") from exc
    return parse_suite(data, path)
