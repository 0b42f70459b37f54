"""Parameter tables of the derived tables: bootstrap settings, deadlines, baselines,
accelerator models, hardware in words, accelerator-hour prices and data set sizes, each
registered in DuckDB under its name."""

from __future__ import annotations

import csv
import io
import os
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import pyarrow as pa
import yaml

INT, FLOAT, BOOL = pa.int64(), pa.float64(), pa.bool_()


def _doc(name: str) -> dict[str, Any]:
    return yaml.safe_load(resources.files(__package__).joinpath(name).read_text())


def _table(names: list[str], rows: list[Any], types: dict[str, pa.DataType]) -> pa.Table:
    """A table of `rows` (lists of values in the order of `names`, or dicts by name); a column
    is a string column unless `types` gives its type."""
    schema = pa.schema([(name, types.get(name, pa.string())) for name in names])
    rows = [row if isinstance(row, dict) else dict(zip(names, row, strict=True)) for row in rows]
    return pa.Table.from_pylist(rows, schema=schema)


@cache
def bootstrap_params() -> pa.Table:
    """One row: seed, resamples and level of the percentile bootstrap (parameters.yml)."""
    boot = _doc("parameters.yml")["bootstrap"]
    types = {"seed": INT, "resamples": INT, "level": FLOAT}
    return _table(list(types), [[boot[name] for name in types]], types)


@cache
def deadlines() -> pa.Table:
    """The deadlines of deadline_fit, in hours (parameters.yml)."""
    hours = [[float(h)] for h in _doc("parameters.yml")["deadlines_hours"]]
    return _table(["deadline_hours"], hours, {"deadline_hours": FLOAT})


@cache
def baselines() -> pa.Table:
    """Enabled speedup baselines (baselines.yml)."""
    rows = [
        {"baseline": b["name"], "across_sources": False, "across_rounds": False, **b}
        for b in _doc("baselines.yml")["baselines"]
        if b.get("enabled", True)
    ]
    types = {"accelerators": INT, "across_sources": BOOL, "across_rounds": BOOL}
    types["accelerator_keys"] = pa.list_(pa.string())
    names = ["baseline", "kind", "accelerators", "precision", "system_id", "across_sources"]
    return _table([*names, "accelerator_keys", "across_rounds"], rows, types)


@cache
def accelerators() -> pa.Table:
    """Accelerator models: name pattern, chip, form factor, TDP and its source."""
    doc = _doc("accelerators.yml")
    return _table(doc["columns"], doc["models"], {"tdp_w": FLOAT})


@cache
def datasets() -> dict[str, pa.Table]:
    """Data set sizes, quality targets and per-accelerator batch rules (datasets.yml)."""
    doc = _doc("datasets.yml")
    return {
        "dataset_sizes": _table(
            doc["columns"], doc["datasets"], {"samples_per_epoch": INT, "projectable": BOOL}
        ),
        "quality_targets": _table(doc["target_columns"], doc["targets"], {"quality_target": FLOAT}),
        "per_accelerator_batch": _table(
            doc["per_accelerator_batch_columns"], doc["per_accelerator_batch"], {}
        ),
    }


@cache
def language_models() -> dict[str, pa.Table]:
    """The language-model benchmarks' tokens per sample and model FLOPs per token, dense bf16
    peaks (language_models.yml), and the samples each official run of them trained
    (language_model_runs.csv)."""
    doc = _doc("language_models.yml")
    text = resources.files(__package__).joinpath("language_model_runs.csv").read_text()
    runs = [
        {
            k: int(v) if v and k not in ("log_path", "log_sha256") else v or None
            for k, v in r.items()
        }
        for r in csv.DictReader(io.StringIO(text))
    ]
    names = ["log_path", "log_sha256", "global_batch", "max_sequence_length", "samples_to_target"]
    counts = {"global_batch": INT, "max_sequence_length": INT, "samples_to_target": INT}
    return {
        "token_benchmarks": _table(
            doc["columns"],
            doc["benchmarks"],
            {"tokens_per_sample": INT, "model_flops_per_token": INT},
        ),
        "peak_tflops": _table(doc["peak_columns"], doc["peaks"], {"bf16_dense_tflops": FLOAT}),
        "language_model_runs": _table(names, runs, counts),
    }


@cache
def hardware_words() -> dict[str, pa.Table]:
    """Accelerator models and interconnect classes in words (hardware_words.yml)."""
    doc = _doc("hardware_words.yml")
    return {
        "accelerator_names": _table(doc["model_columns"], doc["models"], {}),
        "link_names": _table(doc["link_columns"], doc["links"], {}),
    }


def prices() -> pa.Table:
    """Accelerator-hour prices: the package's `prices.csv`, or the file $COLLECTOR_PRICES names."""
    path = os.environ.get("COLLECTOR_PRICES")
    source = Path(path) if path else resources.files(__package__).joinpath("prices.csv")
    names = ["accelerator_key", "usd_per_accelerator_hour", "label", "note"]
    rows = []
    if source.is_file():
        with source.open(newline="", encoding="utf-8") as handle:
            rows = [
                {**r, "usd_per_accelerator_hour": float(r["usd_per_accelerator_hour"])}
                for r in csv.DictReader(handle)
            ]
    return _table(names, rows, {"usd_per_accelerator_hour": FLOAT})


@cache
def quality_direction() -> pa.Table:
    """Benchmarks whose quality improves downwards, or that log two metrics (quality.yml)."""
    doc = _doc("quality.yml")
    rows = [[b, "lower"] for b in doc["lower_is_better"]] + [[b, "mixed"] for b in doc["mixed"]]
    return _table(["benchmark", "better"], rows, {})


def tables() -> dict[str, pa.Table]:
    """Every parameter table, by the name the SQL uses."""
    return {
        "bootstrap_params": bootstrap_params(),
        "deadlines": deadlines(),
        "baselines": baselines(),
        "accelerator_models": accelerators(),
        "prices": prices(),
        **datasets(),
        **language_models(),
        **hardware_words(),
        "quality_direction": quality_direction(),
    }
