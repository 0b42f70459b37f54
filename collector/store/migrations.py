"""Explicit upgrades of stored tables from older schema versions.

A migration takes a table at version N and returns it at version N + 1. The store applies
them in order on read, so an old store keeps working after the schemas move on.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from collector.errors import StoreError

if TYPE_CHECKING:
    import pyarrow as pa

Migration = Callable[["pa.Table"], "pa.Table"]


def _add_columns(after: dict[str | None, list[str]], kind: str = "string") -> Migration:
    """A migration that inserts null columns, each list after the column named (at the end
    for None)."""

    def step(table: pa.Table) -> pa.Table:
        import pyarrow as pa

        for anchor, names in after.items():
            at = table.schema.get_field_index(anchor) + 1 if anchor else table.num_columns
            for offset, name in enumerate(names):
                table = table.add_column(at + offset, name, pa.nulls(table.num_rows, kind))
        return table

    return step


# (table, from_version) -> migration to from_version + 1. Version 1 is the first release.
MIGRATIONS: dict[tuple[str, int], Migration] = {
    # 2: what gave a run its round; the canonical accelerator model and vendor
    ("runs", 1): _add_columns(
        {"round": ["round_source"], "accelerator": ["accelerator_model", "accelerator_vendor"]}
    ),
    ("systems", 1): _add_columns({"accelerator": ["accelerator_model", "accelerator_vendor"]}),
    # 3: the RCP normalisation factor of the run's submission and its init time (unknown for
    # old rows)
    ("runs", 2): _add_columns({None: ["rcp_scaling_factor", "init_s"]}, "float64"),
    # 4: what a logged throughput counted (unknown for old rows)
    ("runs", 3): _add_columns({"throughput_samples_per_s": ["throughput_per"]}),
}


def stored_version(table: pa.Table) -> int:
    """The schema version recorded in a stored table's metadata."""
    meta = table.schema.metadata or {}
    raw = meta.get(b"schema_version")
    if raw is None:
        raise StoreError("stored table carries no schema_version")
    return int(raw)


def upgrade(name: str, table: pa.Table, target: int) -> pa.Table:
    """Apply the migrations that take `table` from its stored version to `target`."""
    version = stored_version(table)
    if version > target:
        raise StoreError(
            f"{name} is at schema version {version}, newer than this collector ({target})"
        )
    while version < target:
        step = MIGRATIONS.get((name, version))
        if step is None:
            raise StoreError(f"no migration for {name} from schema version {version}")
        table = step(table)
        version += 1
        meta = dict(table.schema.metadata or {})
        meta[b"schema_version"] = str(version).encode()
        table = table.replace_schema_metadata(meta)
    return table
