"""Parameter tables of the derived tables: bootstrap settings, deadlines, baselines,
accelerator models, hardware in words, accelerator-hour prices and data set sizes, each
registered in DuckDB under its name."""

from __future__ import annotations

import csv
import os
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import pyarrow as pa
import yaml


def _doc(name: str) -> dict[str, Any]:
    return yaml.safe_load(resources.files(__package__).joinpath(name).read_text())


@cache
def bootstrap_params() -> pa.Table:
    """One row: seed, resamples and level of the percentile bootstrap (parameters.yml)."""
    boot = _doc("parameters.yml")["bootstrap"]
    return pa.table(
        {
            "seed": pa.array([int(boot["seed"])], pa.int64()),
            "resamples": pa.array([int(boot["resamples"])], pa.int64()),
            "level": pa.array([float(boot["level"])], pa.float64()),
        }
    )


@cache
def deadlines() -> pa.Table:
    """The deadlines of deadline_fit, in hours (parameters.yml)."""
    hours = [float(h) for h in _doc("parameters.yml")["deadlines_hours"]]
    return pa.table({"deadline_hours": pa.array(hours, pa.float64())})


@cache
def baselines() -> pa.Table:
    """Enabled speedup baselines (baselines.yml)."""
    rows = [b for b in _doc("baselines.yml")["baselines"] if b.get("enabled", True)]
    schema = pa.schema(
        [
            ("baseline", pa.string()),
            ("kind", pa.string()),
            ("accelerators", pa.int64()),
            ("precision", pa.string()),
            ("system_id", pa.string()),
            ("across_sources", pa.bool_()),
            ("accelerator_keys", pa.list_(pa.string())),
            ("across_rounds", pa.bool_()),
        ]
    )
    return pa.Table.from_pylist(
        [
            {
                "baseline": b["name"],
                "kind": b["kind"],
                "accelerators": b.get("accelerators"),
                "precision": b.get("precision"),
                "system_id": b.get("system_id"),
                "across_sources": bool(b.get("across_sources", False)),
                "accelerator_keys": b.get("accelerator_keys"),
                "across_rounds": bool(b.get("across_rounds", False)),
            }
            for b in rows
        ],
        schema=schema,
    )


@cache
def accelerators() -> pa.Table:
    """Accelerator models: name pattern, chip, form factor, TDP and its source."""
    doc = _doc("accelerators.yml")
    rows = [dict(zip(doc["columns"], model, strict=True)) for model in doc["models"]]
    schema = pa.schema(
        [
            ("key", pa.string()),
            ("pattern", pa.string()),
            ("chip", pa.string()),
            ("form_factor", pa.string()),
            ("tdp_w", pa.float64()),
            ("source", pa.string()),
        ]
    )
    return pa.Table.from_pylist(rows, schema=schema)


def _rows(doc: dict[str, Any], columns: str, rows: str) -> list[dict[str, Any]]:
    return [dict(zip(doc[columns], row, strict=True)) for row in doc[rows]]


@cache
def datasets() -> dict[str, pa.Table]:
    """Data set sizes, quality targets and per-accelerator batch rules (datasets.yml)."""
    doc = _doc("datasets.yml")
    sizes = pa.schema(
        [
            ("benchmark", pa.string()),
            ("samples_per_epoch", pa.int64()),
            ("sample", pa.string()),
            ("projectable", pa.bool_()),
            ("source", pa.string()),
        ]
    )
    targets = pa.schema(
        [("round", pa.string()), ("benchmark", pa.string()), ("quality_target", pa.float64())]
    )
    per_accelerator = pa.schema(
        [("round", pa.string()), ("submitter", pa.string()), ("benchmark", pa.string())]
    )
    return {
        "dataset_sizes": pa.Table.from_pylist(_rows(doc, "columns", "datasets"), schema=sizes),
        "quality_targets": pa.Table.from_pylist(
            _rows(doc, "target_columns", "targets"), schema=targets
        ),
        "per_accelerator_batch": pa.Table.from_pylist(
            _rows(doc, "per_accelerator_batch_columns", "per_accelerator_batch"),
            schema=per_accelerator,
        ),
    }


@cache
def hardware_words() -> dict[str, pa.Table]:
    """Accelerator models and interconnect classes in words (hardware_words.yml)."""
    doc = _doc("hardware_words.yml")
    return {
        "accelerator_names": pa.Table.from_pylist(
            _rows(doc, "model_columns", "models"),
            schema=pa.schema([(c, pa.string()) for c in doc["model_columns"]]),
        ),
        "link_names": pa.Table.from_pylist(
            _rows(doc, "link_columns", "links"),
            schema=pa.schema([(c, pa.string()) for c in doc["link_columns"]]),
        ),
    }


def prices() -> pa.Table:
    """Accelerator-hour prices: the package's `prices.csv`, or the file $COLLECTOR_PRICES names."""
    path = os.environ.get("COLLECTOR_PRICES")
    source = Path(path) if path else resources.files(__package__).joinpath("prices.csv")
    schema = pa.schema(
        [
            ("accelerator_key", pa.string()),
            ("usd_per_accelerator_hour", pa.float64()),
            ("label", pa.string()),
            ("note", pa.string()),
        ]
    )
    if not source.is_file():
        return pa.Table.from_pylist([], schema=schema)
    with source.open(newline="", encoding="utf-8") as handle:
        rows = [
            {**r, "usd_per_accelerator_hour": float(r["usd_per_accelerator_hour"])}
            for r in csv.DictReader(handle)
        ]
    return pa.Table.from_pylist(rows, schema=schema)


@cache
def quality_direction() -> pa.Table:
    """Benchmarks whose quality improves downwards, or that log two metrics (quality.yml)."""
    doc = _doc("quality.yml")
    rows = [{"benchmark": b, "better": "lower"} for b in doc["lower_is_better"]]
    rows += [{"benchmark": b, "better": "mixed"} for b in doc["mixed"]]
    schema = pa.schema([("benchmark", pa.string()), ("better", pa.string())])
    return pa.Table.from_pylist(rows, schema=schema)


def tables() -> dict[str, pa.Table]:
    """Every parameter table, by the name the SQL uses."""
    return {
        "bootstrap_params": bootstrap_params(),
        "deadlines": deadlines(),
        "baselines": baselines(),
        "accelerator_models": accelerators(),
        "prices": prices(),
        **datasets(),
        **hardware_words(),
        "quality_direction": quality_direction(),
    }
