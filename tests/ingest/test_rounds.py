"""Every official round reads right: its round, submitter, runs, formats and accelerators."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from collector import store as stores
from collector.ingest import data
from collector.ingest.check import check
from collector.ingest.pipeline import ingest
from collector.ingest.systems import canonical
from collector.ingest.trees import find_logs
from tests.conftest import FIXTURES, LOGS

ROUNDS = FIXTURES / "rounds"
GB200 = ROUNDS / "v50_dell_gb200_stable_diffusion_aborted.txt"


def _put(root: Path, rel: str, source: Path) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, path)
    return path


def _dell_tree(root: Path, top: str = "training_results_v5.0") -> Path:
    """A v5.0-layout tree: Dell's GB200 system, one aborted run, and files that are not runs."""
    base = root / top / "Dell"
    _put(base, "results/9xXE9712x4GB200/stable_diffusion/result_9.txt", GB200)
    _put(base, "systems/9xXE9712x4GB200.json", ROUNDS / "v50_9xXE9712x4GB200.json")
    # logs outside the results layout: code, raw logs, helpers, checker output
    _put(base, "benchmarks/stable_diffusion/implementations/nemo/run.log", GB200)
    _put(base, "benchmarks/stable_diffusion/implementations/nemo/result_0.txt", GB200)
    _put(base, "utils/result_1.txt", GB200)
    _put(base, "results/9xXE9712x4GB200/stable_diffusion/raw_logs/result_2.txt", GB200)
    _put(base, "results/9xXE9712x4GB200/stable_diffusion/rcp_checker.log", GB200)
    return root / top


def _rows(store: Path, table: str) -> list[dict]:
    return stores.read(store).tables[table].to_pylist()


def test_only_result_logs_of_the_results_layout_are_runs(tmp_path):
    (entry,) = find_logs([_dell_tree(tmp_path)])
    assert entry.rel_path == (
        "training_results_v5.0/Dell/results/9xXE9712x4GB200/stable_diffusion/result_9.txt"
    )
    assert (entry.round, entry.round_source, entry.submitter, entry.system, entry.benchmark) == (
        "v5.0",
        "repository",
        "Dell",
        "9xXE9712x4GB200",
        "stable_diffusion",
    )


def test_round_from_the_repository_folder_and_an_aborted_run_kept(tmp_path, store):
    report = ingest([_dell_tree(tmp_path)], store=store)
    (run,) = _rows(store, "runs")
    assert (run["round"], run["round_source"], run["status"]) == ("v5.0", "repository", "aborted")
    assert not [i for i in report.issues if i.code == "round"]


def test_round_from_the_option_and_from_the_logs_signature(tmp_path, store):
    tree = _dell_tree(tmp_path, top="dell-copy")
    ingest([tree], store=store)
    (run,) = _rows(store, "runs")
    # stable_diffusion ran in v3.1 to v5.0; a run of 2025 before v5.0's publication is v5.0
    assert (run["round"], run["round_source"], run["submitter"]) == ("v5.0", "signature", "Dell")
    other = tmp_path / "stated"
    report = ingest([tree], store=other, round_="v5.0")
    (run,) = _rows(other, "runs")
    assert (run["round"], run["round_source"]) == ("v5.0", "option")
    assert not [i for i in report.issues if i.code == "round"]


def test_a_stated_round_the_log_disagrees_with_is_kept_and_reported(tmp_path, store):
    report = ingest([_dell_tree(tmp_path, top="x")], store=store, round_="v0.7")
    (run,) = _rows(store, "runs")
    assert (run["round"], run["round_source"]) == ("v0.7", "option")
    (issue,) = [i for i in report.issues if i.code == "round"]
    assert "looks like v5.0" in issue.message


def test_google_v05_sub_submissions_are_google_of_v05(tmp_path):
    log = LOGS / "v05_resnet.txt"
    root = tmp_path / "training_results_v0.5" / "v0.5.0" / "google"
    _put(root, "cloud_v2.512/resnet-tpuv2-512/results/tpu/resnet/result_0.txt", log)
    _put(root, "cloud_v3.8/resnet-tpuv3-8/results/tpu/resnet/result_0.txt", log)
    (root / "cloud_v3.8/resnet-tpuv3-8/submission.json").write_text('{"org": "Google Inc."}')
    entries = find_logs([tmp_path / "training_results_v0.5"])
    assert [(e.round, e.submitter, e.system, e.system_folder) for e in entries] == [
        ("v0.5", "google", "resnet-tpuv2-512/tpu", "cloud_v2.512/resnet-tpuv2-512/tpu"),
        ("v0.5", "google", "resnet-tpuv3-8/tpu", "cloud_v3.8/resnet-tpuv3-8/tpu"),
    ]


def test_google_tpu_slices_count_chips(tmp_path, store):
    log = LOGS / "v05_resnet.txt"
    root = tmp_path / "training_results_v0.5" / "v0.5.0" / "google"
    _put(root, "cloud_v2.512/resnet-tpuv2-512/results/tpu/resnet/result_0.txt", log)
    tree = tmp_path / "training_results_v0.6" / "Google"
    _put(tree, "results/tpu-v3-512/mask/result_0.txt", LOGS / "v06_ssd.txt")
    described = (ROUNDS / "v06_tpu-v3-512.json").read_text()
    assert '"accelerators_per_node": "256"' in described
    # broken on purpose: the description counts the slice's 512 TensorCores
    (tree / "systems").mkdir()
    (tree / "systems" / "tpu-v3-512.json").write_text(described.replace('"256"', '"512"'))
    report = ingest([tmp_path / "training_results_v0.5", tmp_path / "training_results_v0.6"], store)
    runs = {r["round"]: r for r in _rows(store, "runs")}
    v05, v06 = runs["v0.5"], runs["v0.6"]
    # no description: the slice name tpuv2-512 gives 256 chips (not 512, nor 64 x 512)
    assert (v05["accelerator_model"], v05["accelerators"]) == ("TPU-v2", 256)
    assert (v06["accelerator_model"], v06["accelerators"], v06["benchmark"]) == (
        "TPU-v3",
        256,
        "maskrcnn",
    )
    assert [i.code for i in report.issues if i.code == "accelerator-count"] == ["accelerator-count"]


def test_v06_org_level_submission_json_is_still_v06(tmp_path, store):
    org = tmp_path / "training_results_v0.6" / "Alibaba"
    _put(org, "results/sinian/resnet/result_1.txt", ROUNDS / "v06_alibaba_resnet.txt")
    (org / "submission.json").write_text('{"org": "Alibaba"}')
    report = ingest([tmp_path / "training_results_v0.6"], store=store)
    (run,) = _rows(store, "runs")
    assert (run["round"], run["submitter"], run["log_format"]) == (
        "v0.6",
        "Alibaba",
        "mlperf-bench",
    )
    # MLPerf: bench [date] lines: dates as UTC, percentages as fractions, v0.6's target
    assert (run["time_to_train_s"], run["quality_best"], run["status"]) == (
        1465.0,
        0.7598,
        "success",
    )
    assert not report.failed


def test_a_broken_v06_bench_log_is_recorded_not_invented(tmp_path, store):
    text = (ROUNDS / "v06_alibaba_resnet.txt").read_text()
    cut = tmp_path / "logs" / "result_1.txt"
    cut.parent.mkdir()
    cut.write_text(text[: text.index("run_stop")])
    report = ingest([cut.parent], store=store)
    (run,) = _rows(store, "runs")
    assert (run["status"], run["time_to_train_s"]) == ("incomplete", None)
    assert "missing-run-stop" in {i.code for i in report.issues}


def test_alibaba_v07_time_s_and_system_level_results(tmp_path, store):
    org = tmp_path / "training_results_v0.7" / "Alibaba"
    _put(org, "results/v100-512/result_1.txt", ROUNDS / "v07_alibaba_time_s.txt")
    ingest([tmp_path / "training_results_v0.7"], store=store)
    (run,) = _rows(store, "runs")
    assert (run["benchmark"], run["system"], run["status"]) == ("resnet", "v100-512", "success")
    assert run["run_start_unix_s"] == pytest.approx(1593354079.0, abs=100)
    assert 100 < run["time_to_train_s"] < 200


def test_python_dict_metadata_gives_the_run_stop_status(tmp_path, store):
    tree = tmp_path / "training_results_v0.6" / "Intel"
    _put(tree, "results/clx-8260l-2s-x32/minigo/result_4.txt", ROUNDS / "v06_intel_minigo.txt")
    report = ingest([tmp_path / "training_results_v0.6"], store=store)
    (run,) = _rows(store, "runs")
    assert (run["status"], run["quality_best"]) == ("success", 0.62)
    assert not [i for i in report.issues if i.code == "bad-value"]


def test_v06_descriptions_written_as_log_lines(tmp_path, store):
    tree = tmp_path / "training_results_v0.6" / "NVIDIA"
    _put(tree, "results/dgx1_ngc19.05_mxnet/ssd/result_0.txt", LOGS / "v06_ssd.txt")
    _put(tree, "systems/dgx1_ngc19.05_mxnet.json", ROUNDS / "v06_dgx1_ngc19.05_mxnet.json")
    report = ingest([tmp_path / "training_results_v0.6"], store=store)
    (system,) = _rows(store, "systems")
    assert (system["division"], system["accelerator_model"], system["accelerators"]) == (
        "closed",
        "V100-SXM2-16GB",
        8,
    )
    assert not [i for i in report.issues if i.code == "bad-description"]


def test_gb200_nodes_mi300x_and_cpu_only_systems(tmp_path, store):
    ingest([_dell_tree(tmp_path)], store=store)
    (gb200,) = _rows(store, "systems")
    assert (gb200["accelerator_model"], gb200["accelerator_vendor"]) == ("GB200", "NVIDIA")
    assert (gb200["nodes"], gb200["accelerators_per_node"], gb200["accelerators"]) == (9, 4, 36)
    amd = tmp_path / "training_results_v5.0" / "AMD"
    log = ROUNDS / "v50_amd_mi300x_llama2_70b_lora.txt"
    _put(amd, "results/MI300X_EPYC_9575F_pytorch/llama2_70b_lora/result_1.txt", log)
    _put(
        amd, "systems/MI300X_EPYC_9575F_pytorch.json", ROUNDS / "v50_MI300X_EPYC_9575F_pytorch.json"
    )
    intel = tmp_path / "training_results_v2.1" / "Intel"
    _put(
        intel, "results/8-nodes-SPR-pytorch/resnet/result_0.txt", ROUNDS / "v07_alibaba_time_s.txt"
    )
    _put(intel, "systems/8-nodes-SPR-pytorch.json", ROUNDS / "v21_8-nodes-SPR-pytorch.json")
    other = tmp_path / "more"
    ingest([tmp_path / "training_results_v5.0" / "AMD", intel.parent], store=other)
    systems = {s["submitter"]: s for s in _rows(other, "systems")}
    assert (systems["AMD"]["accelerator_model"], systems["AMD"]["accelerators"]) == ("MI300X", 8)
    cpu = systems["Intel"]
    assert (cpu["accelerator"], cpu["accelerators"], cpu["accelerator_model"]) == (
        None,
        0,
        "Xeon-Platinum-8480+",
    )
    assert cpu["division"] == "closed"


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("NVIDIA H100 80GB HBM3", "H100-SXM"),
        ("NVIDIA H100-PCIe-80GB", "H100-PCIe"),
        ("H100 NVL Tensor Core GPU (PCIe)", "H100-NVL"),
        ("NVIDIA H200-SXM5-141GB", "H200-SXM"),
        ("NVIDIA H200 NVL 141GB", "H200-NVL"),
        ("NVIDIA GH200 Grace Hopper Superchip", "GH200"),
        ("NVIDIA Blackwell GPU (B200-SXM-180GB)", "B200-SXM"),
        ("NVIDIA Blackwell Ultra GPU (B300-SXM-270GB)", "B300-SXM"),
        ("NVIDIA Blackwell Ultra GPU (GB300)", "GB300"),
        ("NVIDIA A100-SXM4-80GB (400W)", "A100-SXM-80GB"),
        ("NVIDIA A100-PCIe-40GB", "A100-PCIe-40GB"),
        ("Tesla V100-SXM3-32GB-H", "V100-SXM3-H-32GB"),
        ("AMD Instinct MI325X 256GB HBM3E", "MI325X"),
        ("AMD Instinct MI355X", "MI355X"),
        ("AMD Instinct MI250", "MI250"),
        ("Intel(R) Gaudi(R) 2 AI Accelerator", "Gaudi2"),
        ("Intel Gaudi 3", "Gaudi3"),
        ("TPU-trillium", "TPU-v6e"),
        ("TPU-v5p", "TPU-v5p"),
        ("TPU-v5e", "TPU-v5e"),
        ("TPU v3", "TPU-v3"),
        ("TPU7x", "TPU-v7"),
        ("Intel(R) Xeon(R) Platinum 8380H CPU @ 2.90GHz", "Xeon-Platinum-8380H"),
    ],
)
def test_accelerator_names_map_onto_the_canonical_table(name, key):
    model = canonical(name)
    assert model is not None and model.key == key
    row = next(m for m in data("accelerators.yml")["models"] if m["key"] == key)
    assert row["year"] >= 2017 and model.vendor


def test_the_canonical_table_states_memory_and_power_of_every_gpu():
    rows = data("accelerators.yml")["models"]
    gpus = [m for m in rows if m["kind"] == "gpu" and m["key"] not in ("V100", "A100")]
    assert gpus and all(m["memory_gb"] and m["tdp_w"] for m in gpus)


def test_check_takes_the_ruleset_from_the_same_source(tmp_path):
    log = ROUNDS / "v50_amd_mi300x_llama2_70b_lora.txt"
    unnamed = _put(tmp_path / "copy", "AMD/results/MI300X/llama2_70b_lora/result_1.txt", log)
    named = tmp_path / "training_results_v5.1" / "AMD/results/MI300X/llama2_70b_lora/result_1.txt"
    _put(named.parents[4], "AMD/results/MI300X/llama2_70b_lora/result_1.txt", log)
    (by_signature,) = check([unnamed.parents[3]], save=False)
    (by_folder,) = check([named.parents[4]], save=False)
    (by_option,) = check([unnamed.parents[3]], save=False, round_="v5.1")
    assert by_signature.ruleset == "mlperf-logging training 5.0.0"
    assert by_folder.ruleset == by_option.ruleset == "mlperf-logging training 5.1.0"


def test_a_log_submitted_again_in_the_next_round_is_a_run_of_both(tmp_path, store):
    log = ROUNDS / "v50_amd_mi300x_llama2_70b_lora.txt"
    for top in ("training_results_v5.0", "training_results_v5.1"):
        _put(tmp_path / top, "AMD/results/MI300X/llama2_70b_lora/result_1.txt", log)
    first = ingest([tmp_path / "training_results_v5.0"], store=store)
    second = ingest([tmp_path / "training_results_v5.1"], store=store)
    again = ingest([tmp_path / "training_results_v5.1"], store=store)
    assert (first.runs_added, second.runs_added, again.runs_unchanged) == (1, 1, 1)
    runs = _rows(store, "runs")
    assert sorted(r["round"] for r in runs) == ["v5.0", "v5.1"]
    assert len({r["run_id"] for r in runs}) == 2 and len({r["log_sha256"] for r in runs}) == 1


def test_one_log_published_for_two_systems_is_a_run_of_each(tmp_path, store):
    log = ROUNDS / "v50_amd_mi300x_llama2_70b_lora.txt"
    tree = tmp_path / "training_results_v5.1"
    for system in ("1xXE9680Lx8B200-SXM-180GB", "1xXE9780x8B200-SXM-180GB"):
        _put(tree, f"Dell/results/{system}/llama2_70b_lora/result_1.txt", log)
    ingest([tree], store=store)
    verdicts = check([tree], store=store)
    runs = _rows(store, "runs")
    assert sorted(r["system"] for r in runs) == [
        "1xXE9680Lx8B200-SXM-180GB",
        "1xXE9780x8B200-SXM-180GB",
    ]
    assert {v.run_id for v in verdicts} == {r["run_id"] for r in runs}
