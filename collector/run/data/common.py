"""DataLoader plumbing shared by the image loaders: distributed sampling, device transfer."""

from __future__ import annotations

from collections.abc import Iterator, Sized
from typing import Any, cast

import torch
from torch.utils.data import DataLoader, Dataset, DistributedSampler

from collector.run.workloads.base import Batch, RunContext


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
        self.n_train, self.n_eval = len(cast(Sized, train)), len(cast(Sized, evals))

    def set_epoch(self, epoch: int) -> None:
        """Reshuffle for ``epoch``."""
        self.sampler.set_epoch(epoch)

    def _to_device(self, batch: Any) -> Batch:
        out = tuple(t.to(self.ctx.device, non_blocking=True) for t in batch)
        if self.ctx.channels_last and out[0].dim() == 4:
            out = (out[0].contiguous(memory_format=torch.channels_last), *out[1:])
        return out

    def train(self) -> Iterator[Batch]:
        """This rank's training batches."""
        for b in self._train:
            yield self._to_device(b)

    def eval(self) -> Iterator[Batch]:
        """All evaluation batches (rank 0 evaluates the whole set)."""
        for b in self._eval:
            yield self._to_device(b)


MEAN = torch.tensor([0.485, 0.456, 0.406]).view(3, 1, 1)
STD = torch.tensor([0.229, 0.224, 0.225]).view(3, 1, 1)


def to_tensor(img: Any) -> torch.Tensor:
    """A PIL RGB image as a normalised float tensor ``[3, H, W]``."""
    import numpy as np

    arr = torch.from_numpy(np.asarray(img, dtype=np.uint8).copy()).permute(2, 0, 1).float() / 255
    return (arr - MEAN) / STD
