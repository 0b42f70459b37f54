"""The canonical accelerator table: boards the system descriptions name map onto the right
model, power and form factor; every other accelerator table derives from it."""

from __future__ import annotations

from importlib import resources

import duckdb
import pytest

from collector.ingest import data
from collector.ingest.systems import canonical
from collector.queries.parameters import accelerators


@pytest.mark.parametrize(
    ("name", "key", "tdp_w", "form_factor"),
    [
        # v5.0 Dell XE7740x8H200-NVL-141GB: the 600 W PCIe board, not the 700 W SXM
        ("NVIDIA H200-NVL-141GB", "H200-NVL", 600, "NVL"),
        ("NVIDIA H200-SXM5-141GB", "H200-SXM", 700, "SXM5"),
        # v1.0, v1.1 systems run A100 SXM boards at 500 W
        ("NVIDIA A100-SXM4-80GB (500W)", "A100-SXM-80GB-500W", 500, "SXM4"),
        ("NVIDIA A100-SXM-80GB (500W)", "A100-SXM-80GB-500W", 500, "SXM4"),
        ("NVIDIA A100-SXM4-80GB (400W)", "A100-SXM-80GB", 400, "SXM4"),
        ("NVIDIA A100-PCIE-80GB (300W)", "A100-PCIe-80GB", 300, "PCIe"),
        ("NVIDIA A100-PCIe-40GB (250W)", "A100-PCIe-40GB", 250, "PCIe"),
        ("A100-SXM-80GB", "A100-SXM-80GB", 400, "SXM4"),
        # v0.7 DGX-2H: V100 SXM3 at 450 W
        ("NVIDIA V100-SXM3-32GB (450W)", "V100-SXM3-H-32GB", 450, "SXM3"),
        ("NVIDIA V100-SXM3-32GB (350W)", "V100-SXM3-32GB", 350, "SXM3"),
        ("NVIDIA Blackwell GPU (B200-SXM-180GB)", "B200-SXM", 1000, "SXM6"),
        ("AMD Instinct MI300X 192GB HBM3", "MI300X", 750, "OAM"),
        ("Intel(R) Gaudi(R) 2 AI Accelerator", "Gaudi2", 600, "OAM"),
    ],
)
def test_named_boards_map_onto_their_model_power_and_form_factor(name, key, tdp_w, form_factor):
    model = canonical(name)
    assert model is not None and model.key == key
    row = next(r for r in accelerators().to_pylist() if r["key"] == key)
    assert (row["tdp_w"], row["form_factor"]) == (tdp_w, form_factor)


def test_the_queries_read_the_canonical_table_and_keep_no_copy():
    keys = [m["key"] for m in data("accelerators.yml")["models"]]
    assert accelerators().column("key") == keys
    assert not resources.files("collector.queries").joinpath("accelerators.yml").is_file()


def test_every_model_has_chip_form_factor_words_and_vendor():
    for row in accelerators().to_pylist():
        assert row["chip"] and row["words"] and row["vendor"], row["key"]
        assert row["form_factor"] or row["key"] in ("V100", "A100"), row["key"]


NAMES = [
    "NVIDIA A100-SXM4-80GB (500W)",
    "NVIDIA H100 80GB HBM3",
    "H100 NVL Tensor Core GPU (PCIe)",
    "Intel(R) Gaudi(R) 2 AI Accelerator",
    "Habana Gaudi HL-205",
    "tpuv3-512",
    "TPU-trillium",
    "NVIDIA L40S",
    "NVIDIA L4",
    "Ascend910",
    "AMD Instinct MI325X 256GB HBM3E DLC",
]


@pytest.mark.parametrize("name", NAMES)
def test_the_queries_match_names_as_ingest_does(name):
    # observations and accelerator_words match in DuckDB (RE2); ingest in Python
    rows = accelerators().to_pylist()
    with duckdb.connect() as con:
        con.execute("CREATE TABLE m (key VARCHAR, rank BIGINT, match VARCHAR)")
        con.executemany(
            "INSERT INTO m VALUES (?, ?, ?)", [(r["key"], r["rank"], r["match"]) for r in rows]
        )
        found = con.execute(
            "SELECT key FROM m WHERE regexp_matches(?, match, 'i') ORDER BY rank LIMIT 1", [name]
        ).fetchone()
    assert found is not None and found[0] == canonical(name).key
