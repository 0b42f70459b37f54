import json

import torch

from collector.run.ceilings import ensure_ceilings
from collector.run.sysinfo import accel_short, config_name, link_class, parse_topology
from collector.run.system import describe_system
from collector.run.telemetry import COLUMNS, Telemetry

TOPO = """\
\tGPU0\tGPU1\tGPU2\tGPU3\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID
GPU0\t X \tNV18\tNV18\tSYS\tPIX\t0-47\t0\t\tN/A
GPU1\tNV18\t X \tNV18\tSYS\tPXB\t0-47\t0\t\tN/A
GPU2\tNV18\tNV18\t X \tNODE\tSYS\t48-95\t1\t\tN/A
GPU3\tSYS\tSYS\tNODE\t X \tPHB\t48-95\t1\t\tN/A
NIC0\tPIX\tPXB\tSYS\tPHB\t X

Legend:

  X    = Self
  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes
  NV#  = Connection traversing a bonded set of # NVLinks
"""


def test_parse_topology_matrix():
    t = parse_topology(TOPO)
    assert t["gpus"] == ["GPU0", "GPU1", "GPU2", "GPU3"]
    assert t["matrix"] == [
        ["X", "NV18", "NV18", "SYS"],
        ["NV18", "X", "NV18", "SYS"],
        ["NV18", "NV18", "X", "NODE"],
        ["SYS", "SYS", "NODE", "X"],
    ]
    assert parse_topology("") == {"gpus": [], "matrix": []}


def test_parse_topology_with_terminal_underline_and_link_class():
    raw = "\t\x1b[4mGPU0\tGPU1\tCPU Affinity\x1b[0m\nGPU0\t X \tNV18\t0-63\nGPU1\tNV18\t X \t0-63\n"
    t = parse_topology(raw)
    assert t == {"gpus": ["GPU0", "GPU1"], "matrix": [["X", "NV18"], ["NV18", "X"]]}
    assert link_class(t) == "NVLink (NV18 between every pair)"
    assert link_class(parse_topology(TOPO)) == "NVLink between some pairs, PCIe between others"
    assert link_class({"gpus": ["GPU0"], "matrix": [["X"]]}) == "none"


def test_config_names():
    assert accel_short("NVIDIA H200") == "h200"
    assert accel_short("NVIDIA A100-SXM4-80GB") == "a100-sxm4-80gb"
    assert config_name("Node.7", 8, "h200", "bf16", "no-p2p") == "node.7_8xh200_bf16_no-p2p"


def test_cpu_system_description_degrades_gracefully():
    d = describe_system("h_1xcpu_fp32_none", "h", 1, "fp32", "none")
    json.dumps(d)
    assert d["accelerators_per_node"] == 0 and d["accelerator_model_name"] == ""
    assert d["number_of_nodes"] == 1 and d["host_processor_core_count"] >= 1
    assert d["host_memory_capacity"].endswith(" GB")
    assert d["framework"] == f"PyTorch {torch.__version__}"
    c = d["collector"]
    assert c["versions"]["torch"] == torch.__version__
    assert c["topology"] == {"gpus": [], "matrix": []} and c["interconnect_env"] == {}


def test_cpu_ceilings_measure_fp32_and_skip_allreduce(tmp_path):
    path = tmp_path / "c.ceilings.json"
    data = ensure_ceilings(path, 0, quick=True)
    assert data["matmul_tflops"]["fp32"] > 0
    assert data["allreduce_busbw_gbps"] is None and "no GPUs" in data["allreduce_skipped"]
    assert json.loads(path.read_text()) == data
    assert ensure_ceilings(path, 0) == data  # measured once per system


def test_telemetry_samples_about_every_interval(tmp_path):
    import time

    path = tmp_path / "t.csv"
    with Telemetry(path, [], interval=0.05):
        time.sleep(0.3)
    rows = [r.split(",") for r in path.read_text().splitlines()]
    assert rows[0] == list(COLUMNS)
    assert len(rows) >= 4
    times = [float(r[0]) for r in rows[1:]]
    assert times == sorted(times) and all(r[2] == "cpu" for r in rows[1:])
    clock = [float(r[1]) for r in rows[1:]]
    assert clock == sorted(clock) and abs(clock[-1] - time.time()) < 60
    assert all(0 <= float(r[COLUMNS.index("cpu_util_pct")]) <= 100 for r in rows[1:])
    assert all(r[3:8] == [""] * 5 for r in rows[1:])
