"""Suite definitions: the YAML files under ``collector/suites/``, loaded and validated."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from collector.errors import RunError
from collector.run.spec import PRECISIONS

SUITES_DIR = Path(__file__).resolve().parent.parent / "suites"
SCALES = ("tiny", "small", "full", "throughput")
#: the benchmarks a suite may name (each has a workload in collector.run.workloads): the
#: seven of MLPerf Training v0.5, the language models of v5.1 and the rest of v5.1's suite
BENCHMARKS = ("resnet", "ssd", "maskrcnn", "gnmt", "transformer", "ncf", "minigo")
LANGUAGE_MODELS = ("llama31_8b", "llama2_70b_lora")
SUITE_V51 = ("retinanet", "rgat", "dlrm_dcnv2", "flux1")
#: the precisions a benchmark runs in unless its suite entry lists its own
DEFAULT_PRECISIONS = ("fp32", "tf32", "bf16", "fp16")


@dataclass(frozen=True)
class ScaleSpec:
    """One benchmark at one scale.

    At ``throughput`` there is no target: ``warmup_steps`` untimed steps, then ``max_epochs``
    timed windows of ``window_steps`` steps each (``eval_every`` equals ``max_epochs``).
    """

    target: float
    max_epochs: int
    eval_every: int
    runs: int
    params: dict[str, Any]
    warmup_steps: int = 0
    window_steps: int = 0


@dataclass(frozen=True)
class BenchmarkSpec:
    """One benchmark of a suite, at the suite's scales, in the precisions it supports."""

    name: str
    quality_metric: str
    scales: dict[str, ScaleSpec]
    precisions: tuple[str, ...] = DEFAULT_PRECISIONS


@dataclass(frozen=True)
class Suite:
    """A suite: its name and benchmarks, in file order, and the scales it offers."""

    name: str
    benchmarks: dict[str, BenchmarkSpec]
    path: Path
    scales: tuple[str, ...] = SCALES


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
    where = str(path)
    name = str(_need(data, "suite", (str, float, int), where))
    scales = _need(data, "scales", list, where)
    if not scales or any(s not in SCALES for s in scales) or len(set(scales)) != len(scales):
        raise RunError(f"{where}.scales: expected some of {list(SCALES)}, got {scales}")
    raw = _need(data, "benchmarks", dict, where)
    if not raw:
        raise RunError(f"{where}.benchmarks: empty")
    benches: dict[str, BenchmarkSpec] = {}
    for bname, b in raw.items():
        w = f"{where}: benchmarks.{bname}"
        if bname not in BENCHMARKS + LANGUAGE_MODELS + SUITE_V51:
            known = ", ".join(BENCHMARKS + LANGUAGE_MODELS + SUITE_V51)
            raise RunError(f"{w}: unknown benchmark (known: {known})")
        runs = _need(b, "runs", dict, w)
        specs = {}
        for scale in scales:
            specs[scale] = _scale(b, scale, _need(runs, scale, int, f"{w}.runs"), f"{w}.{scale}")
        _need(b, "model", str, w)
        precisions = tuple(b.get("precisions", DEFAULT_PRECISIONS))
        if not precisions or any(p not in PRECISIONS for p in precisions):
            raise RunError(f"{w}.precisions: expected some of {list(PRECISIONS)}, got {precisions}")
        metric = _need(b, "quality_metric", str, w)
        benches[bname] = BenchmarkSpec(bname, metric, specs, precisions)
    return Suite(name, benches, path, tuple(scales))


def _scale(bench: dict[str, Any], scale: str, n_runs: int, where: str) -> ScaleSpec:
    s = _need(bench, scale, dict, where.rpartition(".")[0])
    params = _need(s, "params", dict, where)
    bs = _need(params, "batch_size", int, f"{where}.params")
    if bs < 1:
        raise RunError(f"{where}.params.batch_size: must be >= 1")
    if scale == "throughput":
        warmup = _need(s, "warmup_steps", int, where)
        windows = _need(s, "windows", int, where)
        steps = _need(s, "window_steps", int, where)
        if n_runs < 1 or warmup < 0 or windows < 1 or steps < 1:
            raise RunError(f"{where}: runs, windows and window_steps must be >= 1, warmup >= 0")
        return ScaleSpec(0.0, windows, windows, n_runs, params, warmup, steps)
    epochs = _need(s, "max_epochs", int, where)
    every = _need(s, "eval_every", int, where)
    if n_runs < 1 or epochs < 1 or every < 1:
        raise RunError(f"{where}: runs, max_epochs and eval_every must be >= 1")
    return ScaleSpec(float(_need(s, "target", (int, float), where)), epochs, every, n_runs, params)


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
