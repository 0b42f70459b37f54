"""R-GAT (MLPerf v5.1 ``rgat``) on a synthetic heterogeneous graph: quality is accuracy.

The model is the reference's (graphlearn-for-pytorch's RGNN on IGBH-full) in PyTorch Geometric:
``layers`` heterogeneous layers, each a GAT convolution per edge type (``heads`` heads of
``hidden / heads`` channels, separate source and target projections, no self-loops), summed
over the edge types arriving at a node type, leaky ReLU and dropout between layers, then a
linear classifier of the seed papers. Every step first samples the seeds' neighbourhoods, as the
reference's loader does on the accelerator: for each hop, up to ``fanout[hop]`` in-neighbours
of every newly reached node along every edge type (all of them where a node has fewer, else
uniformly with replacement), then trains on the sampled subgraph with the sampled nodes'
features gathered from the feature tables.

The graph has the node types, edge types (the six relations and the reverses of the five
between different types) and feature width of IGBH-full, with ``nodes`` nodes per type and
``degree`` mean in-edges per node and edge type (the full graph's 547 million nodes do not fit
a test); papers cite papers of their own class, and a paper's features are its class's
centroid plus noise, so that the class can be learnt from the neighbourhood at ``tiny``.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import torch
import torch.nn.functional as F
from torch import nn

from collector.run.types import Batch, RunContext, generator
from collector.run.workloads.base import Workload, optional_module, top1

EdgeType = tuple[str, str, str]
#: rows of a feature table drawn at a time
CHUNK = 1 << 20


def _pyg() -> Any:
    return optional_module("torch_geometric", "the v5.1 rgat workload needs", "suite")


class _Gather(torch.autograd.Function):
    """Rows of ``src`` at ``index``, whose gradient is summed in fp32 and returned in the
    source's dtype. ``index_select``'s own backward adds bf16 gradients with ATen's
    ``index_add``, which PyTorch's compiler leaves eager for bf16 (a tenth of an H200's step);
    an fp32 sum compiles to atomic adds fused with the cast, and rounds once."""

    @staticmethod
    def forward(ctx: Any, src: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(index)
        ctx.rows = src.shape[0]
        return src.index_select(0, index)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, None]:
        (index,) = ctx.saved_tensors
        total = grad.new_zeros((ctx.rows, *grad.shape[1:]), dtype=torch.float32)
        return total.index_add_(0, index, grad.float()).to(grad.dtype), None


@functools.cache
def _gat_conv() -> type:
    """PyG's ``GATConv`` (separate source and target projections, no self-loops) with its
    per-edge gathers through :class:`_Gather`, and the target side's attention score computed
    without projecting the targets: PyG projects every target node to ``heads x channels``
    values only to reduce them with ``att_dst``; ``x_dst @ (W_dst^T att_dst)`` is the same
    score from the same parameters, at ``heads`` columns' cost instead of ``heads x
    channels`` (half of the layers' matrix products)."""

    # a name of its own: PyG's inspector caches class sources by class name
    class GATConvFP32Grad(_pyg().nn.GATConv):
        def _index_select(self, src: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
            return _Gather.apply(src, index)

        def forward(  # type: ignore[override]
            self, x: torch.Tensor | tuple[torch.Tensor, torch.Tensor], edge_index: torch.Tensor
        ) -> torch.Tensor:
            x_src, x_dst = (x, x) if isinstance(x, torch.Tensor) else x
            heads, channels = self.heads, self.out_channels
            src = self.lin_src(x_src).view(-1, heads, channels)
            att_dst = self.lin_dst.weight.view(heads, channels, -1) * self.att_dst.view(
                heads, channels, 1
            )
            alpha = (src * self.att_src).sum(-1), x_dst @ att_dst.sum(1).t()
            alpha = self.edge_updater(edge_index, alpha=alpha, edge_attr=None, size=None)
            size = (src.size(0), x_dst.size(0))
            out = self.propagate(edge_index, x=(src, None), alpha=alpha, size=size)
            return out.view(-1, heads * channels) + self.bias

    return GATConvFP32Grad


class Hops(NamedTuple):
    """How many nodes of each type (seeds first, then each hop's) and edges of each edge type
    (each hop's) a sampled subgraph holds, in the order they are stored."""

    nodes: dict[str, list[int]]
    edges: dict[EdgeType, list[int]]


class RGAT(nn.Module):
    """The reference's heterogeneous GAT: per layer a ``HeteroConv`` of ``GATConv`` per edge
    type (sum over edge types), leaky ReLU and dropout between layers, a linear classifier on
    the target node type."""

    def __init__(
        self,
        edge_types: list[EdgeType],
        in_dim: int,
        hidden: int,
        classes: int,
        layers: int,
        heads: int,
        dropout: float,
        target: str = "paper",
    ) -> None:
        super().__init__()
        pyg = _pyg().nn
        self.target, self.dropout, self.hidden = target, dropout, hidden
        self.convs = nn.ModuleList()
        for i in range(layers):
            width = in_dim if i == 0 else hidden
            convs = {
                et: _gat_conv()((width, width), hidden // heads, heads=heads, add_self_loops=False)
                for et in edge_types
            }
            self.convs.append(pyg.HeteroConv(convs, aggr="sum"))
        self.lin = nn.Linear(hidden, classes)

    def forward(
        self,
        x: dict[str, torch.Tensor],
        edges: dict[EdgeType, torch.Tensor],
        seeds: int,
        hops: Hops | None = None,
    ) -> torch.Tensor:
        """Class logits of the first ``seeds`` nodes of the target type. With ``hops`` (the
        subgraph stored hop by hop), layer ``i`` computes only the nodes and edges that the
        later layers read: the last ``i`` hops are cut off, as PyG's ``trim_to_layer`` does;
        the seeds' logits are the same."""
        trim = _pyg().utils.trim_to_layer
        for i, conv in enumerate(self.convs):
            if hops is not None:
                x, edges, _ = trim(i, hops.nodes, hops.edges, x, edges)
            out = conv(x, edges)
            # a type no sampled edge reaches keeps zero features
            x = {k: out[k] if k in out else v.new_zeros(len(v), self.hidden) for k, v in x.items()}
            if i < len(self.convs) - 1:
                x = {
                    k: F.dropout(F.leaky_relu(v), self.dropout, self.training) for k, v in x.items()
                }
        return self.lin(x[self.target][:seeds])


class HeteroGraph:
    """A synthetic heterogeneous graph held as compressed in-edge lists per edge type (for
    each target node, the sources of its in-edges), with a feature table per node type and
    a class per paper."""

    def __init__(self, params: dict[str, Any], device: torch.device, seed: int) -> None:
        g = generator(seed, device)
        self.nodes = {k: int(v) for k, v in params["nodes"].items()}
        self.classes = int(params["num_classes"])
        dim = int(params["feature_dim"])
        papers = self.nodes["paper"]
        self.labels = torch.arange(papers, device=device) % self.classes
        centroids = torch.randn(self.classes, dim, generator=g, device=device)
        dtype = getattr(torch, params.get("feature_dtype", "float32"))
        self.features = {}
        for k, n in self.nodes.items():
            feats = torch.empty(n, dim, dtype=dtype, device=device)
            for lo in range(0, n, CHUNK):  # drawn in slices: no full-size fp32 temporaries
                hi = min(n, lo + CHUNK)
                noise = torch.randn(hi - lo, dim, generator=g, device=device)
                if k == "paper":
                    noise += centroids[self.labels[lo:hi]]
                feats[lo:hi] = noise
            self.features[k] = feats
        self.csr: dict[EdgeType, tuple[torch.Tensor, torch.Tensor]] = {}
        for src, rel, dst, degree in params["edge_types"]:
            n_dst, n_src = self.nodes[dst], self.nodes[src]
            deg = torch.randint(0, 2 * int(degree) + 1, (n_dst,), generator=g, device=device)
            rowptr = torch.zeros(n_dst + 1, dtype=torch.long, device=device)
            rowptr[1:] = deg.cumsum(0)
            e = int(rowptr[-1])
            if src == dst == "paper":  # cite a paper of the same class
                owner = torch.repeat_interleave(torch.arange(n_dst, device=device), deg)
                k = torch.randint(
                    0, max(1, n_src // self.classes), (e,), generator=g, device=device
                )
                col = (self.labels[owner] + self.classes * k).clamp(max=n_src - 1)
            else:
                col = torch.randint(0, n_src, (e,), generator=g, device=device)
            self.csr[(src, rel, dst)] = (rowptr, col)

    @property
    def edge_types(self) -> list[EdgeType]:
        return list(self.csr)

    def sample(
        self, seeds: torch.Tensor, fanout: list[int], g: torch.Generator | None = None
    ) -> tuple[dict[str, torch.Tensor], dict[EdgeType, torch.Tensor], Hops]:
        """The sampled subgraph around ``seeds`` (paper ids): every type's nodes (global ids,
        the seeds first among the papers, then each hop's new nodes) and every edge type's
        edges as local ``[2, E]`` (source, target) indices, hop after hop, with their counts
        per hop."""
        device = seeds.device
        nodes = {k: [seeds if k == "paper" else seeds[:0]] for k in self.nodes}
        frontier = dict.fromkeys(self.nodes, seeds[:0])
        frontier["paper"] = seeds
        found: dict[EdgeType, list[tuple[torch.Tensor, torch.Tensor]]] = {}
        for hop, f in enumerate(fanout):
            reached: dict[str, list[torch.Tensor]] = {k: [] for k in self.nodes}
            for et, (rowptr, col) in self.csr.items():
                src_t, _, dst_t = et
                dst = frontier[dst_t]
                if dst.numel() == 0:
                    continue
                start, deg = rowptr[dst], rowptr[dst + 1] - rowptr[dst]
                draw = torch.rand(dst.numel(), f, generator=g, device=device)
                step = torch.arange(f, device=device).expand(dst.numel(), f)
                pick = torch.where(deg[:, None] <= f, step, (draw * deg[:, None]).long())
                keep = step < deg[:, None]
                src = col[(start[:, None] + pick)[keep]]
                parts = found.setdefault(et, [(src[:0], src[:0])] * len(fanout))
                parts[hop] = (src, dst[:, None].expand(-1, f)[keep])
                reached[src_t].append(src)
            for k, lists in reached.items():
                new = torch.cat(lists).unique() if lists else seeds[:0]
                new = new[~torch.isin(new, torch.cat(nodes[k]))]
                nodes[k].append(new)
                frontier[k] = new
        merged = {k: torch.cat(v) for k, v in nodes.items()}
        ordered = {k: v.sort() for k, v in merged.items()}  # once per type, not per edge type
        edges = {}
        for et, parts in found.items():
            src = torch.cat([s for s, _ in parts])
            dst = torch.cat([d for _, d in parts])
            edges[et] = torch.stack([_local(ordered[et[0]], src), _local(ordered[et[2]], dst)])
        hops = Hops(
            {k: [len(part) for part in v] for k, v in nodes.items()},
            {et: [len(s) for s, _ in parts] for et, parts in found.items()},
        )
        return merged, edges, hops


def _local(ordered: tuple[torch.Tensor, torch.Tensor], query: torch.Tensor) -> torch.Tensor:
    """Positions in ``ids`` (distinct; ``ordered`` is ``ids.sort()``) of each of ``query``
    (all present)."""
    values, order = ordered
    return order[torch.searchsorted(values, query)]


class RGATWorkload(Workload):
    """R-GAT node classification on a synthetic IGBH-like graph. ``params``: ``nodes`` (per
    node type), ``edge_types`` ([source, relation, target, mean in-degree]), ``feature_dim``,
    ``num_classes``, ``hidden``, ``heads``, ``layers``, ``fanout``, ``dropout``,
    ``batch_size`` (seed papers per step) and at ``tiny`` the seed counts."""

    name = "rgat"
    eval_batch = 256

    def __init__(self, params: dict[str, Any], scale: str, ctx: RunContext) -> None:
        super().__init__(params, scale, ctx)
        self.graph = HeteroGraph(params, ctx.device, self.data_seed)
        self.fanout = [int(f) for f in params["fanout"]]
        train, held_out = self.synthetic_sizes()
        g = generator(self.data_seed + 1, ctx.device)
        papers = self.graph.nodes["paper"]
        seeds = torch.randperm(papers, generator=g, device=ctx.device)[: train + held_out]
        self.hold_out([seeds], held_out)
        self.sampler = generator(ctx.seed * 7919 + ctx.rank, ctx.device)

    def build_model(self) -> nn.Module:
        p = self.params
        return RGAT(
            self.graph.edge_types,
            int(p["feature_dim"]),
            int(p["hidden"]),
            int(p["num_classes"]),
            int(p["layers"]),
            int(p["heads"]),
            float(p.get("dropout", 0.2)),
        )

    def forward(self, model: nn.Module, seeds: torch.Tensor) -> torch.Tensor:
        """Sample the seeds' neighbourhoods, gather their features and classify the seeds."""
        nodes, edges, hops = self.graph.sample(seeds, self.fanout, self.sampler)
        device = seeds.device.type
        # the gathered features in the dtype the layers compute in (two-byte tables: half the
        # memory of fp32 copies under bf16 autocast; bf16 tables need no conversion there)
        dtype = (
            torch.get_autocast_dtype(device) if torch.is_autocast_enabled(device) else torch.float32
        )
        x = {k: self.graph.features[k][v].to(dtype) for k, v in nodes.items()}
        return model(x, edges, seeds.numel(), hops)

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        seeds = batch[0]
        logits = self.forward(model, seeds)
        return F.cross_entropy(logits.float(), self.graph.labels[seeds])

    def quality(self, model: nn.Module) -> float:
        """Accuracy on the held-out seed papers."""
        labels = self.graph.labels
        return top1((self.forward(model, s), labels[s]) for (s,) in self.eval_batches())
