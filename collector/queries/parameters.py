"""Parameter tables of the derived tables: bootstrap settings, deadlines, baselines,
accelerator models and accelerator-hour prices, each registered in DuckDB under its name."""

from __future__ import annotations

import csv
import os
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import pyarrow as pa
import yaml

PRICES_CSV = Path(__file__).resolve().parents[2] / "runs" / "prices.csv"


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


def prices() -> pa.Table:
    """Accelerator-hour prices the user edits: runs/prices.csv, or $COLLECTOR_PRICES."""
    path = Path(os.environ.get("COLLECTOR_PRICES", PRICES_CSV))
    schema = pa.schema(
        [
            ("accelerator_key", pa.string()),
            ("usd_per_accelerator_hour", pa.float64()),
            ("label", pa.string()),
            ("note", pa.string()),
        ]
    )
    if not path.exists():
        return pa.Table.from_pylist([], schema=schema)
    with path.open(newline="", encoding="utf-8") as handle:
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
        "quality_direction": quality_direction(),
    }
