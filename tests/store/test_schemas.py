import pyarrow as pa
import pytest

from collector.errors import SchemaError
from collector.store.schemas import STORED_TABLES, all_schemas, load


def test_every_stored_table_has_a_versioned_documented_schema():
    for name, schema in all_schemas().items():
        assert schema.table == name
        assert schema.schema_version >= 1
        assert set(schema.key) <= set(schema.names)
        for column in schema.columns:
            assert column["description"], f"{name}.{column['name']} lacks a description"
    assert set(STORED_TABLES) >= {"systems", "runs", "events", "evals", "ingest_issues"}


def test_units_live_in_column_names():
    for schema in all_schemas().values():
        for column in schema.columns:
            unit = column.get("unit")
            if unit == "s":
                assert column["name"].endswith("_s"), column["name"]
            if unit == "GiB":
                assert column["name"].endswith("_gib"), column["name"]


def test_validation_rejects_nulls_wrong_types_and_wrong_columns():
    schema = load("evals")
    ok = schema.table_from_rows(
        [{"run_id": "a", "seq": 0, "line": 1, "time_unix_s": 1.0, "quality": 0.5}]
    )
    assert ok.num_rows == 1
    with pytest.raises(SchemaError):
        schema.table_from_rows(
            [{"run_id": None, "seq": 0, "line": 1, "time_unix_s": 1.0, "quality": 0.5}]
        )
    with pytest.raises(SchemaError):
        schema.validate(pa.table({"run_id": ["a"]}))
    with pytest.raises(SchemaError):
        schema.table_from_rows(
            [{"run_id": "a", "seq": "zero", "line": 1, "time_unix_s": 1.0, "quality": 0.5}]
        )
