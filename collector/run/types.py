"""Types and constants shared by the runner's workloads and data loaders.

The workloads (``collector.run.workloads``) and the real data sets' readers
(``collector.run.data``) both build on these; neither imports the other's internals, so the
dependency runs one way: ``workloads -> data -> types``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence, Sized
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset, DistributedSampler

Batch = tuple[torch.Tensor, ...]

#: token ids reserved by both translation workloads (ids from SPECIALS on are words)
PAD, BOS, EOS = 0, 1, 2
SPECIALS = 3

#: MiniGo input planes: 8 history steps x (own, opponent) stones + side to move
PLANES = 17

#: ImageNet channel statistics used to normalise images
MEAN = torch.tensor([0.485, 0.456, 0.406]).view(3, 1, 1)
STD = torch.tensor([0.229, 0.224, 0.225]).view(3, 1, 1)


@dataclass(frozen=True)
class RunContext:
    """Where and how a workload runs: device, data-parallel rank and seeds."""

    device: torch.device
    rank: int = 0
    world: int = 1
    seed: int = 0
    data_root: Path | None = None
    channels_last: bool = False


def generator(seed: int, device: torch.device | str = "cpu") -> torch.Generator:
    """A generator on ``device`` seeded with ``seed``.

    Synthetic data sets are drawn from a generator on the run's device, so a data set is the same
    for every run on one kind of device (and large sets are not built on the host).
    """
    return torch.Generator(device=device).manual_seed(int(seed))


def pad_batch(seqs: Sequence[Sequence[int]], length: int) -> torch.Tensor:
    """Right-pad integer sequences with PAD to ``length``."""
    out = torch.full((len(seqs), length), PAD, dtype=torch.long)
    for i, s in enumerate(seqs):
        out[i, : len(s)] = torch.tensor(s[:length], dtype=torch.long)
    return out


def to_tensor(img: Any) -> torch.Tensor:
    """A PIL RGB image as a normalised float tensor ``[3, H, W]``."""
    arr = torch.from_numpy(np.asarray(img, dtype=np.uint8).copy()).permute(2, 0, 1).float() / 255
    return (arr - MEAN) / STD


def on_device(batch: Sequence[torch.Tensor], ctx: RunContext) -> Batch:
    """``batch`` on the run's device; images (a 4-d first tensor) channels-last where the run
    uses that layout (gathering rows returns NCHW: converted once here, not in every conv)."""
    out = tuple(t.to(ctx.device, non_blocking=True) for t in batch)
    if ctx.channels_last and out[0].dim() == 4:
        out = (out[0].contiguous(memory_format=torch.channels_last), *out[1:])
    return out


class Loaders:
    """Train and eval DataLoaders for one rank; batches come out on the run's device."""

    def __init__(
        self,
        train: Dataset,
        evals: Dataset,
        global_batch: int,
        ctx: RunContext,
        params: dict[str, Any],
    ) -> None:
        self.ctx = ctx
        self.sampler = DistributedSampler(
            train, ctx.world, ctx.rank, shuffle=True, seed=ctx.seed, drop_last=True
        )
        workers = int(params.get("workers", 4))
        pin = ctx.device.type == "cuda"
        self._train = DataLoader(
            train,
            batch_size=global_batch // ctx.world,
            sampler=self.sampler,
            num_workers=workers,
            pin_memory=pin,
            drop_last=True,
            persistent_workers=workers > 0,
        )
        self._eval = DataLoader(
            evals, batch_size=max(1, global_batch // ctx.world), num_workers=workers, pin_memory=pin
        )
        self.n_eval = len(cast(Sized, evals))

    def set_epoch(self, epoch: int) -> None:
        """Reshuffle for ``epoch``."""
        self.sampler.set_epoch(epoch)

    def train(self) -> Iterator[Batch]:
        """This rank's training batches."""
        return (on_device(b, self.ctx) for b in self._train)

    def eval(self) -> Iterator[Batch]:
        """All evaluation batches (rank 0 evaluates the whole set)."""
        return (on_device(b, self.ctx) for b in self._eval)
