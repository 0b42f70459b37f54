"""Stored tables' schemas (package data in `tables/*.yml`) as pyarrow schemas, and validation."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, cached_property
from importlib import resources
from typing import TYPE_CHECKING, Any

import yaml

from collector.errors import SchemaError

if TYPE_CHECKING:
    import pyarrow as pa

# each column type's pyarrow type, by the name of its factory (pyarrow loads when used)
_TYPES = {"string": "string", "int64": "int64", "float64": "float64", "bool": "bool_"}


def _arrow_type(name: str) -> pa.DataType:
    import pyarrow as pa

    return getattr(pa, _TYPES[name])()


@dataclass(frozen=True)
class TableSchema:
    """One stored table: its version, key and columns (its YAML states its grain too)."""

    table: str
    schema_version: int
    key: tuple[str, ...]
    columns: tuple[dict[str, Any], ...]

    @property
    def names(self) -> list[str]:
        return [c["name"] for c in self.columns]

    @cached_property
    def arrow(self) -> pa.Schema:
        """The pyarrow schema, with the version in its metadata."""
        import pyarrow as pa

        fields = [
            pa.field(c["name"], _arrow_type(c["type"]), nullable=c["nullable"])
            for c in self.columns
        ]
        meta = {"table": self.table, "schema_version": str(self.schema_version)}
        return pa.schema(fields, metadata=meta)

    def empty(self) -> pa.Table:
        """A table with these columns and no rows."""
        return self.arrow.empty_table()

    def table_from_rows(self, rows: list[dict[str, Any]]) -> pa.Table:
        """Build a table from dict rows (missing keys are null), validated."""
        return self.table_from_arrays([[row.get(name) for row in rows] for name in self.names])

    def table_from_arrays(self, arrays: list[pa.Array] | list[list[Any]]) -> pa.Table:
        """Build a table from one Arrow array (or list of values) per column, in schema
        order, validated."""
        import pyarrow as pa

        try:
            table = pa.Table.from_arrays(arrays, schema=self.arrow)
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise SchemaError(f"{self.table}: {exc}") from exc
        self.validate(table)
        return table

    def validate(self, table: pa.Table) -> None:
        """Raise SchemaError unless the table has exactly these columns, types and nullability."""
        if table.schema.names != self.names:
            raise SchemaError(f"{self.table}: columns {table.schema.names} != {self.names}")
        for column in self.columns:
            field = table.schema.field(column["name"])
            if field.type != _arrow_type(column["type"]):
                raise SchemaError(f"{self.table}.{column['name']}: type {field.type}")
            if not column["nullable"] and table.column(column["name"]).null_count:
                raise SchemaError(f"{self.table}.{column['name']}: nulls in a non-null column")


@cache
def load(name: str) -> TableSchema:
    """Load `tables/<name>.yml` of this package."""
    path = resources.files(__package__).joinpath("tables", f"{name}.yml")
    try:
        doc = yaml.load(path.read_text(), yaml.CSafeLoader)
    except OSError as exc:
        raise SchemaError(f"{path}: cannot read schema ({exc.strerror})") from exc
    for column in doc["columns"]:
        if column.get("type") not in _TYPES:
            raise SchemaError(f"{path}: column {column.get('name')} has unknown type")
    return TableSchema(
        table=doc["table"],
        schema_version=int(doc["schema_version"]),
        key=tuple(doc["key"]),
        columns=tuple(doc["columns"]),
    )


# Reference data the derived tables read by these names: the official trees' origins, the logs
# their copies lacked, the published studies, the measured matmul ceilings and the prices.
REFERENCE_TABLES = ("sources", "missing_logs", "studies", "measured_ceilings", "prices")
STORED_TABLES = (
    "runs",
    "systems",
    "events",
    "evals",
    "ingest_issues",
    "compliance",
    "published",
    "telemetry",
    *REFERENCE_TABLES,
)


def all_schemas() -> dict[str, TableSchema]:
    """Every stored table's schema, by table name."""
    return {name: load(name) for name in STORED_TABLES}
