"""NCF / NeuMF (MLPerf v0.5 ``ncf``): implicit-feedback recommendation; quality is HR@10.

NeuMF fuses a generalised matrix factorisation branch (element-wise product of user and item
factors) and an MLP branch over concatenated embeddings. Training uses every positive with
``negatives`` sampled negatives (fresh each epoch) and binary cross entropy; evaluation is
leave-one-out: the held-out item is ranked among ``eval_negatives`` sampled non-interacted items.

Proxy scales draw interactions from a seeded latent-factor "teacher": each user's items are
sampled with probability increasing in the teacher score; ``full`` reads MovieLens ratings.csv.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from collector.run.data.movielens import load_movielens
from collector.run.types import Batch, RunContext, generator
from collector.run.workloads.base import TensorShards, Workload


class NeuMF(nn.Module):
    """GMF (``factors``) + MLP (``layers``, first = concatenated embedding width)."""

    def __init__(self, users: int, items: int, factors: int, layers: list[int]) -> None:
        super().__init__()
        self.gmf_u, self.gmf_i = nn.Embedding(users, factors), nn.Embedding(items, factors)
        self.mlp_u = nn.Embedding(users, layers[0] // 2)
        self.mlp_i = nn.Embedding(items, layers[0] // 2)
        mlp: list[nn.Module] = []
        for a, b in zip(layers[:-1], layers[1:], strict=True):
            mlp += [nn.Linear(a, b), nn.ReLU(inplace=True)]
        self.mlp = nn.Sequential(*mlp)
        self.head = nn.Linear(factors + layers[-1], 1)
        for e in (self.gmf_u, self.gmf_i, self.mlp_u, self.mlp_i):
            nn.init.normal_(e.weight, std=0.01)

    def forward(self, u: torch.Tensor, i: torch.Tensor) -> torch.Tensor:
        g = self.gmf_u(u) * self.gmf_i(i)
        m = self.mlp(torch.cat([self.mlp_u(u), self.mlp_i(i)], -1))
        return self.head(torch.cat([g, m], -1)).squeeze(-1)


@torch.no_grad()
def synthetic_interactions(
    users: int, items: int, per_user: int, dim: int, seed: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Teacher-sampled positives: ``train [N, 2]`` (user, item) and held-out ``test [U]``."""
    g = generator(seed)
    pu = torch.randn(users, dim, generator=g)
    qi = torch.randn(items, dim, generator=g)
    pop = torch.randn(items, generator=g)
    score = (pu @ qi.T) / dim**0.5 * 2.0 + pop
    picks = torch.multinomial(score.softmax(1), per_user + 1, replacement=False, generator=g)
    train = torch.stack(
        [torch.arange(users).repeat_interleave(per_user), picks[:, :per_user].reshape(-1)], 1
    )
    return train, picks[:, per_user]


def eval_candidates(seen: torch.Tensor, test: torch.Tensor, n_neg: int, seed: int) -> torch.Tensor:
    """``[U, 1 + n_neg]`` item ids per user: the held-out item, then negatives never
    interacted (neither ``seen [U, I]`` in training nor held out)."""
    seen = seen.clone()
    seen[torch.arange(seen.shape[0]), test] = True
    negs = torch.multinomial((~seen).float(), n_neg, replacement=False, generator=generator(seed))
    return torch.cat([test[:, None], negs], 1)


def random_pairs(n: int, users: int, items: int, seed: int, device: torch.device) -> Batch:
    """``n`` uniformly drawn (user, item) pairs with one positive label in five (one positive
    to four negatives, as NCF trains), drawn on ``device``."""
    g = generator(seed, device)
    u = torch.randint(0, users, (n,), generator=g, device=device)
    i = torch.randint(0, items, (n,), generator=g, device=device)
    y = (torch.rand(n, generator=g, device=device) < 0.2).float()
    return u, i, y


class NCFWorkload(Workload):
    """NeuMF trained with Adam on positives plus sampled negatives."""

    name = "ncf"

    def __init__(self, params: dict[str, Any], scale: str, ctx: RunContext) -> None:
        super().__init__(params, scale, ctx)
        p = params
        if scale == "throughput":
            self.users, self.items = int(p["users"]), int(p["items"])
            self.batch = random_pairs(
                self.global_batch_size // ctx.world, self.users, self.items, ctx.seed, ctx.device
            )
            self.n_eval = 0
            return
        if scale == "full":
            self.train_pos, test, self.users, self.items = load_movielens(
                self.data_path("ratings.csv")
            )
        else:
            self.users, self.items = int(p["users"]), int(p["items"])
            self.train_pos, test = synthetic_interactions(
                self.users, self.items, int(p["per_user"]), int(p["teacher_dim"]), self.data_seed
            )
        self.seen = torch.zeros(self.users, self.items, dtype=torch.bool)
        self.seen[self.train_pos[:, 0], self.train_pos[:, 1]] = True
        cand = eval_candidates(self.seen, test, int(p["eval_negatives"]), self.data_seed + 1)
        self.candidates = cand.to(ctx.device)
        self.n_eval = self.users
        self.negatives = int(p["negatives"])
        self.topk = int(p.get("topk", 10))

    def train_batches(self, epoch: int) -> Iterator[Batch]:
        """Positives plus ``negatives`` fresh negatives each, shuffled and sharded (at
        ``throughput``, the one synthetic batch)."""
        if self.scale == "throughput":
            yield self.batch
            return
        g = generator(self.ctx.seed * 7919 + epoch)
        n = self.train_pos.shape[0] * self.negatives
        users = self.train_pos[:, 0].repeat(self.negatives)
        items = torch.randint(0, self.items, (n,), generator=g)
        clash = self.seen[users, items]
        items[clash] = torch.randint(0, self.items, (int(clash.sum()),), generator=g)
        u = torch.cat([self.train_pos[:, 0], users])
        i = torch.cat([self.train_pos[:, 1], items])
        y = torch.cat([torch.ones(self.train_pos.shape[0]), torch.zeros(n)])
        shards = TensorShards((u, i, y), self.global_batch_size, self.ctx, self.ctx.seed + epoch)
        yield from shards.epoch(epoch)

    def build_model(self) -> nn.Module:
        """NeuMF at the configured size."""
        p = self.params
        return NeuMF(self.users, self.items, int(p["factors"]), list(p["layers"]))

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        """Binary cross entropy on (user, item, clicked)."""
        u, i, y = batch
        return F.binary_cross_entropy_with_logits(model(u, i).float(), y)

    def quality(self, model: nn.Module) -> float:
        """Hit rate at ``topk``: the held-out item ranks in the top ``topk`` of its candidates."""
        hits = 0
        for lo in range(0, self.users, 4096):
            c = self.candidates[lo : lo + 4096]
            u = torch.arange(lo, lo + c.shape[0], device=c.device)[:, None].expand_as(c)
            s = model(u.reshape(-1), c.reshape(-1)).float().view_as(c)
            # rank of the positive (column 0); ties count against it
            rank = (s[:, 1:] >= s[:, :1]).sum(1)
            hits += int((rank < self.topk).sum())
        return hits / self.users
