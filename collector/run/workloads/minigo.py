"""MiniGo (MLPerf v0.5 ``minigo``): residual policy/value network; quality is move prediction.

The network is the AlphaGo Zero shape used by MiniGo: a 3x3 convolutional stem over the
feature planes, a tower of residual blocks, a policy head (1x1 conv, fully connected to
board points + pass) and a value head (1x1 conv, hidden layer, tanh). MLPerf v0.5 measures the
fraction of moves predicted correctly; ``full`` trains on SGF game records.

Proxy scales: random legal positions; a fixed, seeded shallow teacher network chooses the move
(best-scoring empty point) and the value; quality is top-1 agreement on held-out positions.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from collector.run.data.sgf import load_games
from collector.run.types import PLANES, Batch, RunContext, generator
from collector.run.workloads.backbones import conv_bn
from collector.run.workloads.base import Workload, top1


class Residual(nn.Module):
    """Two 3x3 conv-BN layers with an identity shortcut."""

    def __init__(self, c: int) -> None:
        super().__init__()
        self.body = nn.Sequential(conv_bn(c, c, 3), conv_bn(c, c, 3, relu=False))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(x + self.body(x))


class MiniGoNet(nn.Module):
    """Policy/value residual network for a ``board`` x ``board`` game."""

    def __init__(self, board: int, filters: int, blocks: int, value_hidden: int = 256) -> None:
        super().__init__()
        self.board = board
        self.stem = conv_bn(PLANES, filters, 3)
        self.tower = nn.Sequential(*(Residual(filters) for _ in range(blocks)))
        self.pol = conv_bn(filters, 2, 1)
        self.pol_fc = nn.Linear(2 * board * board, board * board + 1)
        self.val = conv_bn(filters, 1, 1)
        self.val_fc = nn.Sequential(
            nn.Linear(board * board, value_hidden), nn.ReLU(), nn.Linear(value_hidden, 1), nn.Tanh()
        )

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.tower(self.stem(x))
        return self.pol_fc(self.pol(h).flatten(1)), self.val_fc(self.val(h).flatten(1)).squeeze(1)


@torch.no_grad()
def synthetic_positions(
    n: int, board: int, seed: int, device: torch.device
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Feature planes ``[n, 17, B, B]``, teacher moves ``[n]`` and values ``[n]``."""
    g = generator(seed, device)
    density = torch.rand(n, 1, 1, generator=g, device=device) * 0.5
    u = torch.rand(n, board, board, generator=g, device=device)
    own = (u < density / 2).float()
    opp = ((u >= density / 2) & (u < density)).float()
    planes = torch.zeros(n, PLANES, board, board, device=device)
    planes[:, 0], planes[:, 1] = own, opp
    # earlier history: the same position with a few stones not yet played
    for t in range(1, 8):
        keep = (torch.rand(n, board, board, generator=g, device=device) > 0.05 * t).float()
        planes[:, 2 * t], planes[:, 2 * t + 1] = own * keep, opp * keep
    black = torch.rand(n, generator=g, device=device) < 0.5
    planes[:, 16] = black[:, None, None].float()
    tg = generator(seed + 1, device)
    w1 = torch.randn(8, 3, 5, 5, generator=tg, device=device) * 0.5
    w2 = torch.randn(1, 8, 3, 3, generator=tg, device=device) * 0.5
    base = torch.stack([own, opp, 1 - own - opp], 1)
    logits = F.conv2d(torch.tanh(F.conv2d(base, w1, padding=2)), w2, padding=1)[:, 0]
    logits = logits.masked_fill((own + opp) > 0, float("-inf")).flatten(1)
    moves = logits.argmax(1)
    values = torch.tanh((own.sum((1, 2)) - opp.sum((1, 2))) / 4)
    return planes, moves, values


class MiniGoWorkload(Workload):
    """MiniGo network trained with SGD on policy cross entropy + value MSE."""

    name = "minigo"
    convolutional = True
    eval_batch = 1024

    def __init__(self, params: dict[str, Any], scale: str, ctx: RunContext) -> None:
        super().__init__(params, scale, ctx)
        p = params
        self.board = int(p["board"])
        if scale == "full":
            x, m, v = load_games(self.data_path(), self.board)
            n_eval = max(1, int(len(m) * float(p.get("eval_fraction", 0.05))))
        else:
            n_train, n_eval = self.synthetic_sizes()
            x, m, v = synthetic_positions(n_train + n_eval, self.board, self.data_seed, ctx.device)
        self.hold_out((x, m, v), n_eval)

    def build_model(self) -> nn.Module:
        """The policy/value network at the configured size."""
        p = self.params
        return MiniGoNet(
            self.board, int(p["filters"]), int(p["blocks"]), int(p.get("value_hidden", 256))
        )

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        """Policy cross entropy plus value mean-squared error."""
        x, move, value = batch
        pol, val = model(x)
        return F.cross_entropy(pol.float(), move) + F.mse_loss(val.float(), value)

    def quality(self, model: nn.Module) -> float:
        """Fraction of held-out moves the policy ranks first."""
        return top1((model(x)[0], move) for x, move, _ in self.eval_batches())
