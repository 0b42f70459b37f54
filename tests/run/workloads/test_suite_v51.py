"""The rest of v5.1 (RetinaNet, R-GAT, DLRM-DCNv2, Flux.1): the published sizes counted on the
meta device, a tiny step of each on CPU, the pieces written here (sampler, row-wise Adagrad,
table-wise model parallelism, AUC), and tiny runs over two processes whose logs ingest."""

from __future__ import annotations

import contextlib
import copy
import json
import socket
from dataclasses import replace
from pathlib import Path

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.utils.flop_counter import FlopCounterMode

from collector.ingest.pipeline import ingest
from collector.run import engine
from collector.run.plan import Options
from collector.run.runner import run_suite
from collector.run.suite import SUITE_V51, load_suite
from collector.run.types import RunContext
from collector.run.workloads import workload_class
from collector.run.workloads.dlrm import DLRM, HybridAdagrad, assign_tables, auc
from collector.run.workloads.flux import _rows, flux_config
from collector.run.workloads.retinanet import (
    FrozenBatchNorm2d,
    RetinaNet,
    focal_loss,
    focal_per_image,
)
from collector.run.workloads.rgat import RGAT
from tests.conftest import table

torch_geometric = pytest.importorskip("torch_geometric")
pytest.importorskip("diffusers")

CPU = torch.device("cpu")


def published(name: str) -> dict:
    return dict(load_suite("v5.1").benchmarks[name].scales["throughput"].params)


def tiny(name: str) -> dict:
    return copy.deepcopy(load_suite("v5.1").benchmarks[name].scales["tiny"].params)


def n_params(model: torch.nn.Module, trainable: bool = False) -> int:
    return sum(p.numel() for p in model.parameters() if p.requires_grad or not trainable)


def test_the_suite_holds_the_per_accelerator_batches_of_the_rounds_logs():
    batches = {n: published(n)["batch_size"] for n in SUITE_V51}
    # the most common global batch of the v5.1 logs over the accelerators it ran on
    assert batches == {
        "retinanet": 256 // 8,
        "rgat": 16384 // 8,
        "dlrm_dcnv2": 55296 // 8,
        "flux1": 512 // 16,
    }
    assert all(published(n)["batch_per_accelerator"] for n in SUITE_V51)
    assert published("retinanet")["image_size"] == 800
    flux = published("flux1")
    assert flux["latent_size"] ** 2 == flux["text_tokens"] == 256  # 256 px images, 256 T5 tokens


def test_retinanet_at_the_published_size_has_torchvisions_resnext50_trunk():
    p = published("retinanet")
    with torch.device("meta"):
        model = RetinaNet(p["num_classes"], p["layers"], p["groups"], p["group_width"], 3)
    trunk = model.backbone
    bn = sum(m.weight.numel() for m in trunk.modules() if isinstance(m, FrozenBatchNorm2d))
    # torchvision's resnext50_32x4d: 25,028,904 parameters with its batch norms and classifier
    assert n_params(trunk) + 2 * bn + 2048 * 1000 + 1000 == 25_028_904
    fpn = sum(c * 256 + 256 for c in (512, 1024, 2048)) + 5 * (256 * 256 * 9 + 256)
    heads = 8 * (256 * 256 * 9 + 256) + (256 * 9 + 1) * 9 * (264 + 4)
    assert n_params(model) == n_params(trunk) + fpn + heads == 37_060_652
    frozen = sum(p.numel() for m in (trunk.stem, trunk.stages[0]) for p in m.parameters())
    assert n_params(model, trainable=True) == n_params(model) - frozen


def test_rgat_at_the_published_size_has_the_references_25_million_parameters():
    p = published("rgat")
    w = workload_class("rgat")
    edge_types = [tuple(e[:3]) for e in p["edge_types"]]
    assert len(p["nodes"]) == 6 and len(edge_types) == 11
    with torch.device("meta"):
        model = RGAT(edge_types, 1024, 512, 2983, 3, 4, 0.2)
    per_type = [2 * 1024 * 512 + 3 * 512] + [2 * 512 * 512 + 3 * 512] * 2
    expected = 11 * sum(per_type) + 512 * 2983 + 2983
    assert n_params(model) == expected == 24_649_639
    assert w.name == "rgat" and p["fanout"] == [15, 10, 5]
    assert (p["feature_dim"], p["hidden"], p["heads"], p["layers"]) == (1024, 512, 4, 3)


def test_dlrm_at_the_published_size_counts_the_criteo_tables_and_the_dcn_layers():
    p = published("dlrm_dcnv2")
    assert len(p["tables"]) == len(p["multi_hot"]) == 26 and sum(p["multi_hot"]) == 214
    model = DLRM(p, [list(range(26))], 0, torch.device("meta"))
    emb = model.tables.weight.numel()
    assert emb == sum(p["tables"]) * 128 == 26_135_627_264
    width = 27 * 128
    bottom = 13 * 512 + 512 + 512 * 256 + 256 + 256 * 128 + 128
    cross = 3 * (2 * width * 512 + width)
    sizes = [width, 1024, 1024, 512, 256, 1]
    top = sum(a * b + b for a, b in zip(sizes[:-1], sizes[1:], strict=True))
    assert n_params(model) - emb == bottom + cross + top == 16_044_545


def test_flux_at_the_published_size_is_the_12_billion_parameter_transformer():
    import diffusers

    cfg = flux_config(published("flux1"))
    with torch.device("meta"):
        model = diffusers.FluxTransformer2DModel(**cfg)
    assert (cfg["num_layers"], cfg["num_single_layers"], cfg["in_channels"]) == (19, 38, 64)
    assert n_params(model) == 11_891_178_560  # Flux.1's published 12B
    blocks = (model.transformer_blocks, model.single_transformer_blocks)
    assert sum(n_params(b) for b in blocks) / n_params(model) > 0.99


def test_flux_model_flops_are_the_matrix_products_torch_counts():
    w = workload_class("flux1")(tiny("flux1"), "tiny", RunContext(CPU))
    torch.manual_seed(0)
    model = w.build_model()
    batch = next(iter(w.train_batches(1)))
    counter = FlopCounterMode(display=False)
    with counter:
        w.loss(model, batch).backward()
    counts = counter.get_flop_counts()["Global"]
    products = counts[torch.ops.aten.mm] + counts[torch.ops.aten.addmm]
    p, n = w.params, batch[0].shape[0]
    seq = w.tokens + w.text_tokens
    attention = 12 * p["heads"] * p["head_dim"] * seq**2 * (p["layers"] + p["single_layers"])
    # the layers that read the inputs need no input gradient: the convention counts it
    rows = {"sample": 1, "image": w.tokens, "text": w.text_tokens}
    first = {
        "x_embedder",
        "context_embedder",
        "time_text_embed.timestep_embedder.linear_1",
        "time_text_embed.text_embedder.linear_1",
    }
    saved = sum(
        2 * m.in_features * m.out_features * rows[_rows(name)]
        for name, m in model.named_modules()
        if name in first
    )
    assert products == w.model_flops(batch) - n * (attention + saved)


@pytest.mark.parametrize("name", SUITE_V51)
def test_tiny_model_builds_and_trains_one_step(name):
    torch.manual_seed(0)
    w = workload_class(name)(tiny(name), "tiny", RunContext(CPU))
    model = w.build_model()
    opt = w.make_optimizer(model)
    batch = next(iter(w.train_batches(1)))
    before = [p.detach().clone() for p in model.parameters()]
    loss = w.loss(model, batch)
    assert loss.ndim == 0 and torch.isfinite(loss)
    opt.zero_grad()
    loss.backward()
    opt.step()
    changed = sum(not torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=True))
    assert changed > 0
    q = w.evaluate(model)
    assert 0 <= q < 10


@pytest.mark.parametrize("name", SUITE_V51)
def test_tiny_step_under_bf16_autocast(name):
    params = tiny(name)
    if name == "rgat":
        params["feature_dtype"] = "float16"  # as the throughput graph stores them
    torch.manual_seed(0)
    w = workload_class(name)(params, "tiny", RunContext(CPU))
    model = w.build_model()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = w.loss(model, next(iter(w.train_batches(1))))
        q = w.evaluate(model)
    loss.backward()
    assert torch.isfinite(loss) and 0 <= q < 10
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    assert grads and all(g.dtype == torch.float32 for g in grads)


def test_a_step_in_micro_batches_updates_as_one_pass_over_the_batch():
    # RetinaNet's loss is a mean over images: two passes of half the images, each backward
    # carrying half the weight, give the one-pass gradient and so the same update
    def stepped(micro: int) -> list[torch.Tensor]:
        torch.manual_seed(0)
        w = workload_class("retinanet")(
            dict(tiny("retinanet"), micro_batch=micro), "tiny", RunContext(CPU)
        )
        model = w.build_model()
        sess = engine.Session(
            w,
            model,
            model,
            torch.optim.SGD(model.parameters(), lr=0.1),
            contextlib.nullcontext,
            None,
        )
        batch = next(iter(w.train_batches(1)))
        assert len(w.micro_batches(batch)) == (1 if micro == 0 else len(batch[0]) // micro)
        sess.step(batch)
        return [p.detach() for p in model.parameters()]

    whole, halves = stepped(0), stepped(tiny("retinanet")["batch_size"] // 2)
    assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(whole, halves, strict=True))


def test_rgat_passes_its_seeds_in_micro_batches_where_asked():
    assert published("rgat")["batch_size"] == 2048
    w = workload_class("rgat")(dict(tiny("rgat"), micro_batch=8), "tiny", RunContext(CPU))
    (seeds,) = next(iter(w.train_batches(1)))
    parts = w.micro_batches((seeds,))
    assert [len(s) for (s,) in parts] == [8] * (len(seeds) // 8)
    assert torch.equal(torch.cat([s for (s,) in parts]), seeds)


def test_focal_loss_counts_the_foreground_class_as_the_one_positive():
    torch.manual_seed(0)
    logits = torch.randn(2, 50, 7)
    labels, fg = torch.randint(0, 7, (2, 50)), torch.rand(2, 50) > 0.7
    counted = fg | (torch.rand(2, 50) > 0.3)
    target = torch.nn.functional.one_hot(labels, 7).float() * fg[..., None]
    expected = (focal_loss(logits, target).sum(-1) * counted).sum(1)
    assert torch.allclose(focal_per_image(logits, labels, fg, counted), expected)


def test_sampling_takes_at_most_the_fanout_and_keeps_the_seeds_first():
    w = workload_class("rgat")(tiny("rgat"), "tiny", RunContext(CPU))
    seeds = torch.tensor([5, 17, 300])
    nodes, edges, hops = w.graph.sample(seeds, [4, 3, 2], torch.Generator().manual_seed(0))
    assert torch.equal(nodes["paper"][:3], seeds)
    assert {k: sum(v) for k, v in hops.nodes.items()} == {k: len(v) for k, v in nodes.items()}
    assert {k: sum(v) for k, v in hops.edges.items()} == {k: e.shape[1] for k, e in edges.items()}
    for ids in nodes.values():
        assert ids.unique().numel() == ids.numel()  # each node once
    for (src_t, rel, dst_t), e in edges.items():
        assert int(e[0].max()) < len(nodes[src_t]) and int(e[1].max()) < len(nodes[dst_t])
        # the seeds' in-edges were sampled once, at the first hop: at most 4 per edge type
        into_seeds = e[1][e[1] < 3] if dst_t == "paper" else e[1][:0]
        assert torch.bincount(into_seeds, minlength=3).max() <= 4
        rowptr, col = w.graph.csr[(src_t, rel, dst_t)]
        glob_src, glob_dst = nodes[src_t][e[0]], nodes[dst_t][e[1]]
        for s, d in zip(glob_src[:20].tolist(), glob_dst[:20].tolist(), strict=True):
            assert s in col[rowptr[d] : rowptr[d + 1]].tolist()  # a real in-edge


def test_rgat_sums_a_gathered_nodes_gradient_in_fp32_and_rounds_once():
    # a node that thousands of sampled edges read: summed in bf16 (as a GPU's bf16 atomic adds
    # do), its small per-edge gradients would stop counting once the sum outgrew them
    w = workload_class("rgat")(tiny("rgat"), "tiny", RunContext(CPU))
    conv = next(iter(w.build_model().convs[0].convs.values()))
    src = torch.randn(3, 4, dtype=torch.bfloat16, requires_grad=True)
    index = torch.zeros(4096, dtype=torch.long)
    grad = torch.full((4096, 4), 1e-3, dtype=torch.bfloat16)
    conv._index_select(src, index).backward(grad)
    assert torch.equal(src.grad[0], grad.float().sum(0).to(torch.bfloat16))
    assert src.grad.dtype == torch.bfloat16 and not src.grad[1:].any()


@pytest.mark.parametrize("same_type", [False, True])
def test_rgat_convolution_computes_pyg_gatconvs_outputs_and_gradients(same_type: bool):
    torch.manual_seed(0)
    widths = (5, 5) if same_type else (6, 5)
    model = RGAT([("paper", "cites", "paper")], 5, 12, 2, 1, 3, 0.0)
    ours = type(next(iter(model.convs[0].convs.values())))(widths, 4, heads=3, add_self_loops=False)
    theirs = torch_geometric.nn.GATConv(widths, 4, heads=3, add_self_loops=False)
    with torch.no_grad():
        for param in ours.parameters():
            param.normal_()
    theirs.load_state_dict(ours.state_dict())
    x_dst = torch.randn(9, 5)
    x = x_dst if same_type else (torch.randn(7, 6), x_dst)
    edges = torch.stack([torch.randint(0, 7, (40,)), torch.randint(0, 9, (40,))])
    out, expected = ours(x, edges), theirs(x, edges)
    assert torch.allclose(out, expected, atol=1e-5)
    out.square().sum().backward()
    expected.square().sum().backward()
    for (name, a), (_, b) in zip(ours.named_parameters(), theirs.named_parameters(), strict=True):
        assert torch.allclose(a.grad, b.grad, rtol=1e-4, atol=1e-4), name


def test_trimming_each_layer_to_the_hops_it_feeds_keeps_the_seeds_logits():
    w = workload_class("rgat")(tiny("rgat"), "tiny", RunContext(CPU))
    model = w.build_model().eval()
    seeds = torch.arange(0, 1000, 37)
    nodes, edges, hops = w.graph.sample(seeds, w.fanout, torch.Generator().manual_seed(1))
    x = {k: w.graph.features[k][v] for k, v in nodes.items()}
    assert max(len(v) for v in hops.nodes.values()) == len(w.fanout) + 1
    assert sum(hops.edges[("paper", "cites", "paper")][1:]) > 0  # later hops exist to cut
    full = model(x, edges, len(seeds))
    trimmed = model(x, edges, len(seeds), hops)
    assert torch.allclose(full, trimmed, atol=1e-5)


def test_rowwise_adagrad_updates_only_the_rows_looked_up():
    bag = torch.nn.EmbeddingBag(10, 4, mode="sum", sparse=True)
    dense = torch.nn.Linear(4, 1)
    opt = HybridAdagrad(list(bag.parameters()) + list(dense.parameters()), lr=0.1)
    before = bag.weight.detach().clone()
    dense(bag(torch.tensor([[1, 3], [3, 7]]))).sum().backward()
    opt.step()
    moved = (bag.weight.detach() != before).any(1).nonzero().flatten().tolist()
    assert moved == [1, 3, 7]
    assert opt.state[bag.weight]["rows"].shape == (10,)  # one accumulator per row


def test_dense_weights_follow_torch_adagrad():
    torch.manual_seed(0)
    ours, theirs = torch.nn.Linear(3, 2), torch.nn.Linear(3, 2)
    theirs.load_state_dict(ours.state_dict())
    a = HybridAdagrad(ours.parameters(), lr=0.1)
    b = torch.optim.Adagrad(theirs.parameters(), lr=0.1, eps=1e-8)
    x = torch.randn(5, 3)
    for _ in range(3):
        for model, opt in ((ours, a), (theirs, b)):
            opt.zero_grad()
            model(x).pow(2).sum().backward()
            opt.step()
    for p, q in zip(ours.parameters(), theirs.parameters(), strict=True):
        assert torch.allclose(p, q, atol=1e-6)


def test_tables_split_whole_and_balanced_by_lookups():
    p = published("dlrm_dcnv2")
    rows, hots = p["tables"], p["multi_hot"]
    for world in (2, 4, 8):
        owned = assign_tables(rows, hots, world)
        assert sorted(t for o in owned for t in o) == list(range(26))
    # 214 indices per sample: half each on two ranks
    assert [sum(hots[t] for t in o) for o in assign_tables(rows, hots, 2)] == [107, 107]
    # on four, the table of 100 indices alone on its rank, the others even
    lookups = sorted(sum(hots[t] for t in o) for o in assign_tables(rows, hots, 4))
    assert lookups == [38, 38, 38, 100]


def test_auc_is_the_probability_a_click_outscores_a_non_click():
    assert auc(torch.tensor([0.1, 0.4, 0.35, 0.8]), torch.tensor([0, 0, 1, 1])) == 0.75
    assert auc(torch.tensor([0.5, 0.5]), torch.tensor([0, 1])) == 0.5


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _dlrm_rank(rank: int, world: int, port: int, params: dict, out: Path) -> None:
    dist.init_process_group(
        "gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world
    )
    try:
        torch.save(_dlrm_outputs(params, rank, world), out / f"{rank}.pt")
    finally:
        dist.destroy_process_group()


def _dlrm_outputs(params: dict, rank: int, world: int) -> tuple[torch.Tensor, list]:
    """Logits of this rank's half of a fixed batch, and its tables' gradients."""
    owned = assign_tables(params["tables"], params["multi_hot"], world)
    torch.manual_seed(0)
    model = DLRM(params, owned, rank, CPU)
    g = torch.Generator().manual_seed(1)
    dense = torch.randn(8, 13, generator=g)
    sparse = torch.cat(
        [
            torch.randint(0, r, (8, h), generator=g)
            for r, h in zip(params["tables"], params["multi_hot"], strict=True)
        ],
        1,
    )
    lo, hi = rank * 8 // world, (rank + 1) * 8 // world
    logits = model(dense[lo:hi], sparse[lo:hi])
    logits.sum().backward()
    grad = model.tables.weight.grad.to_dense()
    rows = params["tables"]
    grads = {t: grad[s : s + rows[t]] for t, s in model.starts.items()}
    return logits.detach(), grads


@pytest.mark.slow
def test_table_wise_model_parallelism_matches_one_process(tmp_path):
    params = tiny("dlrm_dcnv2")
    alone_logits, alone_grads = _dlrm_outputs(params, 0, 1)
    mp.spawn(_dlrm_rank, args=(2, _free_port(), params, tmp_path), nprocs=2)
    parts = [torch.load(tmp_path / f"{r}.pt") for r in (0, 1)]
    assert torch.allclose(torch.cat([p[0] for p in parts]), alone_logits, atol=1e-5)
    split = {t: g for p in parts for t, g in p[1].items()}
    assert set(split) == set(alone_grads)  # every table on exactly one rank
    for t, g in alone_grads.items():  # the gradients of both halves reach the owner
        assert torch.allclose(split[t], g, atol=1e-5)


def events(log: Path) -> list[dict]:
    return [json.loads(ln[len(":::MLLOG ") :]) for ln in log.read_text().splitlines()]


def quick_suite():
    """v5.1's new benchmarks at tiny, two epochs each."""
    suite = copy.deepcopy(load_suite("v5.1"))
    kept = {}
    for n in SUITE_V51:
        b = suite.benchmarks[n]
        t = b.scales["tiny"]
        kept[n] = replace(b, scales={"tiny": replace(t, max_epochs=2, eval_every=1)})
    return replace(suite, benchmarks=kept, scales=("tiny",))


@pytest.mark.slow
def test_tiny_runs_over_two_processes_log_the_rounds_keys_and_ingest(cpu_machine, tmp_path):
    """A pipeline check (log, ingest, store), never evidence about hardware."""
    opts = Options(
        suite="v5.1",
        benchmarks=list(SUITE_V51),
        gpus=[2],
        repeats=1,
        out=tmp_path / "out",
        ingest=False,
        ceilings=False,
    )
    results = run_suite(opts, cpu_machine, suite=quick_suite()).results
    assert [r.spec.benchmark for r in results] == list(SUITE_V51)
    assert {r.status for r in results} <= {"success", "failed"}  # every run completes
    for r in results:
        one = {e["key"]: e["value"] for e in events(r.spec.log_path)}
        assert one["submission_benchmark"] == r.spec.benchmark
        assert one["submission_status"] == "proxy-tiny"
        assert one["global_batch_size"] == tiny(r.spec.benchmark)["batch_size"]
        assert "eval_accuracy" in one
    retina = {e["key"]: e["value"] for e in events(results[0].spec.log_path)}
    assert retina["local_batch_size"] * 2 == retina["global_batch_size"]
    report = ingest([tmp_path / "out"], store=tmp_path / "store")
    assert report.runs_added == 4 and not report.failed
    runs = table(tmp_path / "store", "runs").to_pylist()
    assert sorted(r["benchmark"] for r in runs) == sorted(SUITE_V51)


def test_throughput_scale_logs_samples_per_second(cpu_machine, tmp_path):
    """The throughput path at toy sizes: windows of tracked_stats, no evaluation."""
    suite = copy.deepcopy(load_suite("v5.1"))
    kept = {}
    for n in SUITE_V51:
        b = suite.benchmarks[n]
        params = dict(b.scales["tiny"].params, batch_size=4, batch_per_accelerator=True)
        params.pop("compile", None)
        thr = replace(b.scales["throughput"], params=params, max_epochs=2, eval_every=2)
        kept[n] = replace(b, scales={"throughput": replace(thr, warmup_steps=1, window_steps=1)})
    suite = replace(suite, benchmarks=kept, scales=("throughput",))
    opts = Options(
        suite="v5.1", scale="throughput", out=tmp_path, ingest=False, ceilings=False, repeats=1
    )
    results = run_suite(opts, cpu_machine, suite=suite).results
    assert [r.status for r in results] == ["success"] * 4
    for r in results:
        recs = events(r.spec.log_path)
        windows = [e["value"] for e in recs if e["key"] == "tracked_stats"]
        assert len(windows) == 2 and all(w["throughput"] > 0 for w in windows)
        assert not [e for e in recs if e["key"] == "eval_accuracy"]
