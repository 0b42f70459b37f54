import json

from collector.ingest.systems import classify_interconnect, read_description, system_row


def test_v05_entry_json():
    row = system_row(
        {
            "division": "closed",
            "hardware": "DGX-1V",
            "interconnect": "IB EDR",
            "nodes": [
                {
                    "num_nodes": 2,
                    "accelerator": "Tesla V100-SXM2-16GB",
                    "num_accelerators": 8,
                    "cpu": "Xeon",
                    "num_cores": "40",
                    "sys_mem_size": "512G",
                }
            ],
        }
    )
    assert (
        row["accelerators"],
        row["nodes"],
        row["interconnect"],
        row["interconnect_inferred"],
        row["host_memory_gib"],
    ) == (16, 2, "nvlink", True, 512.0)


def test_v05_cpu_only_system_has_no_accelerator():
    row = system_row(
        {
            "nodes": [
                {"num_nodes": 1, "accelerator": "NA", "num_accelerators": 0, "cpu": "Xeon 8180"}
            ]
        }
    )
    assert (row["accelerator"], row["accelerators"], row["interconnect"]) == (None, 0, "none")


def test_v07_system_json_with_stated_interconnect():
    row = system_row(
        {
            "number of nodes": "4",
            "accelerators_per_node": "4",
            "accelerator_model_name": "V100-SXM2-32GB",
            "accelerator_interconnect": "NVLINK2.0",
            "host_memory_capacity": "1.5TB",
            "accelerator_memory_capacity": "32 GB",
        }
    )
    assert (
        row["accelerators"],
        row["nodes"],
        row["interconnect"],
        row["interconnect_inferred"],
    ) == (16, 4, "nvlink", False)
    assert row["host_memory_gib"] == 1536.0
    assert row["accelerator_memory_gib"] == 32.0


def test_interconnect_classes():
    assert classify_interconnect("NVSwitch", None, None, None) == ("nvswitch", False)
    assert classify_interconnect("N/A", "V100S-PCIe-32GB", None, None) == ("pcie", True)
    assert classify_interconnect(None, None, "DGX-2H", None) == ("nvswitch", True)
    assert classify_interconnect(None, "Xeon", None, None) == (None, False)


def test_unreadable_and_bad_descriptions_are_issues(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    doc, digest, issues = read_description(bad)
    assert doc is None and digest and issues[0].code == "bad-description"
    doc, digest, issues = read_description(tmp_path / "missing.json")
    assert issues[0].code == "missing"
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"system_name": "x"}))
    assert read_description(good)[0] == {"system_name": "x"}


def test_a_comma_before_a_closing_brace_is_read_with_a_warning(tmp_path):
    # as Alibaba's v0.7 descriptions are written; a comma inside a string stays
    path = tmp_path / "n32.json"
    path.write_text(
        '{\n  "number_of_nodes": "32",\n  "hw_notes": "a, }",\n'
        '  "other_software_stack": {\n    "cuda_version": "10.1",\n  },\n}\n'
    )
    doc, digest, issues = read_description(path)
    assert doc == {
        "number_of_nodes": "32",
        "hw_notes": "a, }",
        "other_software_stack": {"cuda_version": "10.1"},
    }
    assert [i.severity for i in issues] == ["warning"] and digest
    assert issues[0].code == "description-trailing-comma" and "line 6" in issues[0].message
