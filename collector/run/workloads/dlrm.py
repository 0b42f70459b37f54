"""DLRM-DCNv2 (MLPerf v5.1 ``dlrm_dcnv2``) on synthetic click logs: quality is ROC AUC.

The model is the reference's (TorchRec's DLRM-DCN on Criteo 1TB multi-hot), built from the
PyTorch primitives TorchRec itself wraps: one embedding table per categorical feature of the
reference's sizes, each looked up with a fixed number of indices per sample (multi-hot) and
sum-pooled, a bottom MLP over the dense features, a low-rank DCNv2 cross
network over the bottom MLP's output and the pooled embeddings, and a top MLP to one logit.
The tables a rank holds are rows of one weight, looked up in one ``nn.EmbeddingBag`` call with
a bag per sample and table (TorchRec's table-batched embedding, in PyTorch's primitives).
TorchRec is not used: its kernels come from FBGEMM-GPU, whose wheels on the package index are
CUDA builds for one torch release each and do not install beside a CPU build of torch.

Parallelism is the reference's hybrid: the MLPs and cross network are replicated (data
parallel, gradients all-reduced), the tables are split whole across the ranks (table-wise
model parallelism, balanced by lookups per sample): every rank gathers all ranks' indices,
pools its own tables for the whole global batch and sends each rank its samples' pooled
vectors back (an all-to-all, whose backward pass returns the gradients). Tables are trained
with row-wise Adagrad on sparse gradients (one accumulator per row, as FBGEMM's fused
optimizer), the dense weights with Adagrad. The tables are created directly on the device
(the largest holds 40 million rows).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed._functional_collectives import all_to_all_single_autograd

from collector.run.types import Batch, RunContext, generator
from collector.run.workloads.base import Workload


def mlp(sizes: list[int], last_relu: bool = True) -> nn.Sequential:
    """Linear layers of ``sizes`` with ReLU between (and after the last where asked)."""
    mods: list[nn.Module] = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:], strict=True)):
        mods.append(nn.Linear(a, b))
        if last_relu or i < len(sizes) - 2:
            mods.append(nn.ReLU(inplace=True))
    return nn.Sequential(*mods)


class LowRankCross(nn.Module):
    """DCNv2's low-rank cross network: ``x_{l+1} = x_0 * (W_l (V_l x_l) + b_l) + x_l``."""

    def __init__(self, dim: int, layers: int, rank: int) -> None:
        super().__init__()
        self.v = nn.ModuleList(nn.Linear(dim, rank, bias=False) for _ in range(layers))
        self.w = nn.ModuleList(nn.Linear(rank, dim) for _ in range(layers))

    def forward(self, x0: torch.Tensor) -> torch.Tensor:
        x = x0
        for v, w in zip(self.v, self.w, strict=True):
            x = x0 * w(v(x)) + x
        return x


def assign_tables(rows: list[int], hots: list[int], world: int) -> list[list[int]]:
    """Table ids per rank, balanced by lookups: the tables with the most indices per sample
    first, each to the rank with the fewest lookups so far (among equals, the fewest rows).

    Every rank pools its tables for the whole global batch, so its step grows with the
    indices per sample it holds, not with its rows: balanced by rows, two GPUs held 42 and
    172 of the published 214 lookups per sample."""
    owned: list[list[int]] = [[] for _ in range(world)]
    lookups, load = [0] * world, [0] * world
    for t in sorted(range(len(rows)), key=lambda t: (-hots[t], -rows[t])):
        r = min(range(world), key=lambda r: (lookups[r], load[r]))
        owned[r].append(t)
        lookups[r] += hots[t]
        load[r] += rows[t]
    return [sorted(o) for o in owned]


class DLRM(nn.Module):
    """DLRM-DCNv2 holding the tables ``owned`` by this rank (all of them on one rank).

    ``forward(dense [B, D], sparse [B, sum(hots)])`` returns one logit per sample; with
    ``world > 1`` it exchanges indices and pooled vectors with the other ranks."""

    def __init__(
        self,
        params: dict[str, Any],
        owned: list[list[int]],
        rank: int,
        device: torch.device,
    ) -> None:
        super().__init__()
        p = params
        self.rows = [int(r) for r in p["tables"]]
        self.hots = [int(h) for h in p["multi_hot"]]
        dim = int(p["embedding_dim"])
        self.dim, self.owned, self.rank = dim, owned, rank
        self.bottom = mlp([int(p["dense_features"]), *p["bottom_mlp"]])
        width = dim * (len(self.rows) + 1)
        self.cross = LowRankCross(width, int(p["dcn_layers"]), int(p["dcn_rank"]))
        self.top = mlp([width, *p["top_mlp"]], last_relu=False)
        # this rank's tables are rows of one weight, looked up in one call: a call per table
        # left the GPU waiting on the host (26 lookups, sparse gradients and updates a step)
        mine = owned[rank]
        self.starts: dict[int, int] = {}  # table -> its first row in the weight
        total = 0
        for t in mine:
            self.starts[t], total = total, total + self.rows[t]
        weight = torch.empty(total, dim, device=device)
        if device.type != "meta":
            # each table drawn from a generator of its own: the same weights on whichever rank
            # holds it, and the dense layers' draws independent of the placement
            seed = torch.initial_seed()
            for t in mine:
                g = torch.Generator(device).manual_seed(seed * 1009 + t)
                bound = math.sqrt(1.0 / self.rows[t])
                rows = weight[self.starts[t] : self.starts[t] + self.rows[t]]
                rows.uniform_(-bound, bound, generator=g)
        self.tables = nn.EmbeddingBag(total, dim, mode="sum", sparse=True, _weight=weight)
        bounds = [0]
        for h in self.hots:
            bounds.append(bounds[-1] + h)
        # plain tensors, not buffers: data parallelism would overwrite them with rank 0's
        self.columns = torch.tensor(
            [c for t in mine for c in range(bounds[t], bounds[t + 1])], device=device
        )
        self.shift = torch.tensor(
            [self.starts[t] for t in mine for _ in range(self.hots[t])], device=device
        )
        # where each of this rank's tables starts in a sample's row of its columns
        hots = [self.hots[t] for t in mine]
        self.bag_starts = torch.tensor([sum(hots[:i]) for i in range(len(hots))], device=device)
        # where table t lies among the pooled vectors the ranks send back (rank by rank)
        self.inverse = torch.argsort(torch.tensor([t for o in owned for t in o])).to(device)

    def pooled(self, sparse: torch.Tensor) -> torch.Tensor:
        """This rank's tables pooled over ``sparse``'s samples: ``[B, owned, dim]``."""
        b, mine = sparse.shape[0], self.owned[self.rank]
        if not mine:
            return torch.zeros(b, 0, self.dim, device=sparse.device)
        idx = sparse.index_select(1, self.columns) + self.shift
        offsets = torch.arange(b, device=sparse.device)[:, None] * len(self.columns)
        pooled = self.tables(idx.flatten(), (offsets + self.bag_starts).flatten())
        return pooled.view(b, len(mine), self.dim)

    def lookup(self, sparse: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
        """Every table pooled over this rank's samples, in table order, as ``dtype``:
        ``[B, tables, dim]``. Cast before the exchange, which then moves half the bytes in
        bf16: the values (and their gradients, cast back by autograd) are those of a cast after
        it."""
        world = len(self.owned)
        if world == 1:
            return self.pooled(sparse).to(dtype)
        b = sparse.shape[0]
        every = [torch.empty_like(sparse) for _ in range(world)]
        dist.all_gather(every, sparse)
        mine = self.pooled(torch.cat(every)).to(dtype)  # [world * b, owned, dim]
        sizes_in = [b * len(self.owned[self.rank]) * self.dim] * world
        sizes_out = [b * len(o) * self.dim for o in self.owned]
        flat = mine.flatten().contiguous()
        got = all_to_all_single_autograd(flat, sizes_out, sizes_in, dist.group.WORLD)
        parts = got.split(sizes_out)
        blocks = [p.reshape(b, len(o), self.dim) for p, o in zip(parts, self.owned, strict=True)]
        # in table order; built once: a tensor made here from a list waited for the GPU
        return torch.cat(blocks, 1)[:, self.inverse]

    def forward(self, dense: torch.Tensor, sparse: torch.Tensor) -> torch.Tensor:
        x = self.bottom(dense)
        emb = self.lookup(sparse, x.dtype)
        x0 = torch.cat([x, emb.flatten(1)], 1)
        return self.top(self.cross(x0)).squeeze(1)


class HybridAdagrad(torch.optim.Optimizer):
    """Adagrad for dense weights; row-wise Adagrad (one accumulator per row, the mean of the
    squared gradient) for the sparse gradients of embedding tables."""

    def __init__(self, params: Any, lr: float, eps: float = 1e-8) -> None:
        super().__init__(params, {"lr": lr, "eps": eps})

    @torch.no_grad()
    def step(self, closure: Any = None) -> None:  # noqa: ARG002 - the Optimizer signature
        for group in self.param_groups:
            lr, eps = group["lr"], group["eps"]
            dense = []
            for p in group["params"]:
                if p.grad is None:
                    continue
                if not p.grad.is_sparse:
                    dense.append(p)
                    continue
                g = p.grad.coalesce()
                if "rows" not in self.state[p]:  # not setdefault: it would fill a new one each step
                    self.state[p]["rows"] = p.new_zeros(p.shape[0])
                acc = self.state[p]["rows"]
                update = _rowwise_fused() if p.is_cuda else rowwise_adagrad
                # detached: the compiler traces plain tensors, not a parameter holding a sparse
                # gradient, nor values() (a view it cannot trace back to its sparse base)
                update(p.detach(), acc, g.indices()[0], g.values().detach(), lr, eps)
            if dense:  # one kernel per operation over all dense weights, not one per weight
                grads = [p.grad for p in dense]
                for p in dense:
                    if "sum" not in self.state[p]:
                        self.state[p]["sum"] = torch.zeros_like(p)
                sums = [self.state[p]["sum"] for p in dense]
                torch._foreach_addcmul_(sums, grads, grads)
                denominators = torch._foreach_sqrt(sums)
                torch._foreach_add_(denominators, eps)
                torch._foreach_addcdiv_(dense, grads, denominators, value=-lr)


def rowwise_adagrad(
    weight: torch.Tensor,
    acc: torch.Tensor,
    rows: torch.Tensor,
    grads: torch.Tensor,
    lr: float,
    eps: float,
) -> None:
    """Row-wise Adagrad on the ``rows`` of ``weight`` (distinct, as a coalesced gradient's):
    each row's accumulator grows by the mean square of its gradient ``grads``, and the row
    moves by ``-lr`` times its gradient over the accumulator's root."""
    # indexed assignments, not index_add_: rows are distinct, and stores need no atomic adds
    total = acc[rows] + grads.square().mean(1)
    acc[rows] = total
    weight[rows] += grads * (-lr / (total.sqrt() + eps)).unsqueeze(1)


@functools.cache
def _rowwise_fused() -> Callable[..., None]:
    # on a GPU one pass over the gradient: eager, five passes and the atomic adds of
    # index_add_ took more than half of an H200's step at the published size. No choosing
    # among kernel configurations by timing them: that copies the arguments a kernel writes
    # (the whole table, 104.5 GB at the published size) to host memory first.
    return torch.compile(
        rowwise_adagrad, dynamic=True, options={"triton.autotune_pointwise": False}
    )


def auc(scores: torch.Tensor, labels: torch.Tensor) -> float:
    """ROC AUC: the probability that a positive outscores a negative (ties count half)."""
    scores, labels = scores.double().cpu(), labels.bool().cpu()
    pos, neg = int(labels.sum()), int((~labels).sum())
    if pos == 0 or neg == 0:
        return float("nan")
    order = scores.argsort()
    ranks = torch.empty_like(scores)
    ranks[order] = torch.arange(1, len(scores) + 1, dtype=torch.double)
    uniq, inverse = scores.unique(return_inverse=True)  # average ranks over ties
    total = torch.zeros(len(uniq), dtype=torch.double).index_add_(0, inverse, ranks)
    ranks = (total / torch.bincount(inverse, minlength=len(uniq)))[inverse]
    return float((ranks[labels].sum() - pos * (pos + 1) / 2) / (pos * neg))


class DLRMWorkload(Workload):
    """DLRM-DCNv2 click-through prediction on synthetic samples. ``params``: ``tables`` (rows
    per table), ``multi_hot`` (indices per sample per table), ``embedding_dim``,
    ``dense_features``, ``bottom_mlp``, ``top_mlp``, ``dcn_layers``, ``dcn_rank``,
    ``batch_size`` and at ``tiny`` the sample counts.

    A sample's click is drawn from a logistic model of its dense features and of a fixed score
    per table row it looks up, so that the click can be learnt at ``tiny``."""

    name = "dlrm_dcnv2"
    eval_batch = 4096
    model_parallel = True

    def __init__(self, params: dict[str, Any], scale: str, ctx: RunContext) -> None:
        super().__init__(params, scale, ctx)
        rows, hots = ([int(v) for v in params[k]] for k in ("tables", "multi_hot"))
        self.owned = assign_tables(rows, hots, ctx.world)
        train, held_out = self.synthetic_sizes()
        self.hold_out(list(self._samples(train + held_out)), held_out)

    def _samples(self, n: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        p, device = self.params, self.ctx.device
        g = generator(self.data_seed, device)
        dense = torch.randn(n, int(p["dense_features"]), generator=g, device=device)
        cols, logit = [], dense @ torch.randn(dense.shape[1], generator=g, device=device) / 4
        for rows, hot in zip(p["tables"], p["multi_hot"], strict=True):
            idx = torch.randint(0, int(rows), (n, int(hot)), generator=g, device=device)
            cols.append(idx)
            if self.scale != "throughput":  # the rows' scores (small tables only)
                score = torch.randn(int(rows), generator=g, device=device)
                logit = logit + score[idx].mean(1)
        clicks = torch.rand(n, generator=g, device=device) < torch.sigmoid(logit)
        return dense, torch.cat(cols, 1), clicks.float()

    def build_model(self) -> nn.Module:
        return DLRM(self.params, self.owned, self.ctx.rank, self.ctx.device)

    @property
    def ddp_ignore(self) -> list[str]:
        """The parameters data parallelism leaves alone: the rows of each rank's own tables."""
        return ["tables.weight"]

    def make_optimizer(self, model: nn.Module) -> torch.optim.Optimizer:
        spec = self.params.get("optim", {})
        eps = float(spec.get("eps", 1e-8))
        return HybridAdagrad(model.parameters(), float(spec.get("lr", 0.004)), eps)

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        dense, sparse, clicks = batch
        logits = model(dense, sparse)
        return nn.functional.binary_cross_entropy_with_logits(logits.float(), clicks)

    def quality(self, model: nn.Module) -> float:
        """ROC AUC over the held-out samples."""
        scores, labels = [], []
        for dense, sparse, clicks in self.eval_batches():
            scores.append(model(dense, sparse).float())
            labels.append(clicks)
        return auc(torch.cat(scores), torch.cat(labels))
