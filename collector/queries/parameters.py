"""Parameter tables of the derived tables: bootstrap settings, deadlines, baselines,
accelerator models, hardware in words and data set sizes, each registered in DuckDB under its
name. (Accelerator-hour prices are reference data in the store.)"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, partial
from importlib import resources
from typing import Any

import yaml

from collector.ingest import data as ingest_data

# DuckDB's types of the parameter columns; a column is VARCHAR unless its table says otherwise
INT, FLOAT, BOOL, TEXTS = "BIGINT", "DOUBLE", "BOOLEAN", "VARCHAR[]"


@dataclass(frozen=True)
class Table:
    """A small table of plain Python values: its columns (name: DuckDB type) and rows. Plain,
    not Arrow: building an Arrow array from Python values loads pandas, which would take
    longer than the query that reads the table."""

    types: dict[str, str]
    rows: tuple[dict[str, Any], ...]

    def to_pylist(self) -> list[dict[str, Any]]:
        """The rows, as dicts."""
        return [dict(row) for row in self.rows]

    def column(self, name: str) -> list[Any]:
        """One column's values."""
        return [row[name] for row in self.rows]


def _doc(name: str) -> dict[str, Any]:
    return yaml.load(resources.files(__package__).joinpath(name).read_text(), yaml.CSafeLoader)


def table(names: list[str], rows: list[Any], types: dict[str, str]) -> Table:
    """A table of `rows` (lists of values in the order of `names`, or dicts by name, missing
    keys null); a column is VARCHAR unless `types` gives its type."""
    rows = [row if isinstance(row, dict) else dict(zip(names, row, strict=True)) for row in rows]
    return Table(
        {name: types.get(name, "VARCHAR") for name in names},
        tuple({name: row.get(name) for name in names} for row in rows),
    )


@cache
def bootstrap_params() -> Table:
    """One row: seed, resamples, level and least runs of the percentile bootstrap
    (parameters.yml)."""
    boot = _doc("parameters.yml")["bootstrap"]
    types = {"seed": INT, "resamples": INT, "level": FLOAT, "min_runs": INT}
    return table(list(types), [[boot[name] for name in types]], types)


@cache
def definitions() -> Table:
    """Benchmark definitions: what a benchmark name meant in the rounds it was used (benchmark,
    data set, quality target, allowed run-to-run variance; definitions.yml). last_round is null
    while the definition holds."""
    doc = _doc("definitions.yml")
    return table(
        doc["columns"], doc["definitions"], {"quality_target": FLOAT, "variance_pct": FLOAT}
    )


@cache
def study_benchmarks() -> Table:
    """The workloads the published studies name, in words (definitions.yml)."""
    doc = _doc("definitions.yml")
    return table(doc["study_benchmark_columns"], doc["study_benchmarks"], {})


@cache
def quality_targets() -> Table:
    """The quality target of each benchmark in each round its definition held (definitions.yml
    over the rounds of collector/ingest/rounds.yml): one definition of each benchmark serves
    every table that needs a target the logs do not state."""
    from collector.ingest.rounds import rounds  # its log-reading helpers load only here

    names = [r.name for r in rounds()]
    rows = []
    for d in definitions().to_pylist():
        if d["quality_target"] is None or d["first_round"] not in names:
            continue
        first = names.index(d["first_round"])
        last = names.index(d["last_round"]) if d["last_round"] else len(names) - 1
        target = [d["quality_target"], d["quality_metric"]]
        rows += [[r, d["benchmark"], *target] for r in names[first : last + 1]]
    columns = ["round", "benchmark", "quality_target", "quality_metric"]
    return table(columns, rows, {"quality_target": FLOAT})


@cache
def comparison_rules() -> dict[str, Table]:
    """Which official results a model ratio may rest on (comparisons.yml): one row of rules,
    and the submitters that are an accelerator vendor's own."""
    doc = _doc("comparisons.yml")
    rules = doc["model_ratios"]
    types = {"divisions": TEXTS, "not_available": TEXTS, "min_submitters": INT}
    vendors = doc["vendor_submitters"]
    return {
        "model_ratio_rules": table(list(types), [rules], types),
        "vendor_submitters": table(vendors["columns"], vendors["rows"], {}),
    }


@cache
def deadlines() -> Table:
    """The deadlines of deadline_fit, in hours (parameters.yml)."""
    hours = [[float(h)] for h in _doc("parameters.yml")["deadlines_hours"]]
    return table(["deadline_hours"], hours, {"deadline_hours": FLOAT})


@cache
def baselines() -> Table:
    """Enabled speedup baselines (baselines.yml)."""
    rows = [
        {"baseline": b["name"], "across_sources": False, "across_rounds": False, **b}
        for b in _doc("baselines.yml")["baselines"]
        if b.get("enabled", True)
    ]
    types = {"accelerators": INT, "across_sources": BOOL, "across_rounds": BOOL}
    types["accelerator_keys"] = TEXTS
    names = ["baseline", "kind", "accelerators", "precision", "system_id", "across_sources"]
    return table([*names, "accelerator_keys", "across_rounds"], rows, types)


@cache
def accelerators() -> Table:
    """The canonical accelerator table (collector/ingest/accelerators.yml), one row per model
    in matching order (`rank`): its name pattern (`match`, a case-insensitive regular
    expression), vendor, kind, chip, form factor, link, memory, board power and its source,
    and the model in words."""
    names = ["key", "rank", "match", "vendor", "kind", "chip", "form_factor", "link"]
    names += ["memory_gb", "tdp_w", "source", "words"]
    rows = [
        {**m, "rank": rank, "source": m.get("tdp_source")}
        for rank, m in enumerate(ingest_data("accelerators.yml")["models"])
    ]
    return table(names, rows, {"rank": INT, "memory_gb": FLOAT, "tdp_w": FLOAT})


@cache
def datasets() -> dict[str, Table]:
    """Data set sizes, per-accelerator batch rules and convolutional workloads (datasets.yml)."""
    doc = _doc("datasets.yml")
    return {
        "dataset_sizes": table(
            doc["columns"], doc["datasets"], {"samples_per_epoch": INT, "projectable": BOOL}
        ),
        "per_accelerator_batch": table(
            doc["per_accelerator_batch_columns"], doc["per_accelerator_batch"], {}
        ),
        "convolutional_benchmarks": table(
            ["benchmark"], [[b] for b in doc.get("convolutional", [])], {}
        ),
    }


@cache
def language_models() -> dict[str, Table]:
    """The language-model benchmarks' tokens per sample and model FLOPs per token, dense bf16
    peaks (language_models.yml), and the samples each official run of them trained
    (language_model_runs.csv)."""
    doc = _doc("language_models.yml")
    text = resources.files(__package__).joinpath("language_model_runs.csv").read_text()
    reader = csv.DictReader(io.StringIO(text))
    counts = {"global_batch": INT, "max_sequence_length": INT, "samples_to_target": INT}
    runs = [{k: int(v) if v and k in counts else v or None for k, v in r.items()} for r in reader]
    return {
        "token_benchmarks": table(
            doc["columns"],
            doc["benchmarks"],
            {"tokens_per_sample": INT, "model_flops_per_token": INT},
        ),
        "peak_tflops": table(doc["peak_columns"], doc["peaks"], {"bf16_dense_tflops": FLOAT}),
        "language_model_runs": table(list(reader.fieldnames or ()), runs, counts),
    }


@cache
def hardware_words() -> dict[str, Table]:
    """Interconnect classes in words (hardware_words.yml); accelerator models are named by
    the canonical accelerator table."""
    doc = _doc("hardware_words.yml")
    return {"link_names": table(doc["link_columns"], doc["links"], {})}


@cache
def evidence_kinds() -> Table:
    """The kinds of evidence: key, label, heading and order (evidence.yml)."""
    doc = _doc("evidence.yml")
    return table(doc["columns"], doc["kinds"], {"rank": INT})


@cache
def quality_direction() -> Table:
    """Benchmarks whose quality improves downwards, or that log two metrics (quality.yml)."""
    doc = _doc("quality.yml")
    rows = [[b, "lower"] for b in doc["lower_is_better"]] + [[b, "mixed"] for b in doc["mixed"]]
    return table(["benchmark", "better"], rows, {})


@cache
def answers() -> dict[str, Table]:
    """The counts a buyer may ask about and the sibling models that may stand in (answers.yml)."""
    doc = _doc("answers.yml")
    counts = [[int(n)] for n in doc["asked_counts"]]
    return {
        "asked_counts": table(["accelerators"], counts, {"accelerators": INT}),
        "model_siblings": table(doc["sibling_columns"], doc["siblings"], {}),
    }


def tables() -> dict[str, Callable[[], Table]]:
    """How to make each parameter table, by the name the SQL uses (each is read once)."""
    made: dict[str, Callable[[], Table]] = {
        "bootstrap_params": bootstrap_params,
        "deadlines": deadlines,
        "benchmark_definitions": definitions,
        "quality_targets": quality_targets,
        "baselines": baselines,
        "accelerator_models": accelerators,
        "quality_direction": quality_direction,
        "evidence_kinds": evidence_kinds,
    }
    for group in (comparison_rules, datasets, language_models, hardware_words, answers):
        made |= {name: partial(_one, group, name) for name in group()}
    return made


def _one(tables: Callable[[], dict[str, Table]], name: str) -> Table:
    return tables()[name]
