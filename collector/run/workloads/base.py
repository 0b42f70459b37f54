"""The contract every workload implements, and the data plumbing they share.

A workload owns its model, its data (synthetic at the proxy scales, a real data set at ``full``),
its loss and its quality metric. The training engine owns everything else: devices, DDP,
precision, the optimizer step, logging and the stop rule.
"""

from __future__ import annotations

import dataclasses
import importlib
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import torch
from torch import nn

from collector.run.types import Batch, RunContext, generator, on_device


def optional_module(name: str, needed_by: str, extra: str) -> Any:
    """The module ``name`` of an optional extra; where it is not installed, a RuntimeError
    saying that ``needed_by`` (what needs it) needs ``extra`` and how to install it."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:  # the optional extra is not installed
        raise RuntimeError(
            f"{needed_by} the {extra} extra: pip install 'collector[{extra}]'"
        ) from exc


def top1(batches: Iterable[tuple[torch.Tensor, torch.Tensor]]) -> float:
    """Top-1 accuracy over (scores, labels) batches: the share of rows whose highest score is
    their label's."""
    right = total = 0
    for scores, labels in batches:
        right += int((scores.argmax(-1) == labels).sum())
        total += int(labels.numel())
    return right / max(total, 1)


class TensorShards:
    """Batches over in-memory tensors, shuffled per epoch and sharded by data-parallel rank.

    Every rank draws the same permutation (seeded by epoch) and takes its own slice of each
    global batch, which is what DistributedSampler does for map-style data sets.
    """

    def __init__(
        self,
        tensors: Sequence[torch.Tensor],
        global_batch: int,
        ctx: RunContext,
        shuffle_seed: int,
    ) -> None:
        n = tensors[0].shape[0]
        if any(t.shape[0] != n for t in tensors):
            raise ValueError("all tensors must have the same number of samples")
        if global_batch % ctx.world:
            raise ValueError(f"global batch {global_batch} is not divisible by {ctx.world} ranks")
        self.tensors = [t.to(ctx.device) for t in tensors]
        self.n = n
        self.global_batch = min(global_batch, n - n % ctx.world)
        self.local_batch = self.global_batch // ctx.world
        self.ctx = ctx
        self.shuffle_seed = shuffle_seed

    def steps_per_epoch(self) -> int:
        """Optimizer steps in one pass over the data (the last partial batch dropped)."""
        return self.n // self.global_batch

    def epoch(self, epoch: int) -> Iterator[Batch]:
        """This rank's batches for ``epoch`` (1-based)."""
        perm = torch.randperm(self.n, generator=generator(self.shuffle_seed * 100003 + epoch))
        perm = perm.to(self.tensors[0].device)
        lo, hi = self.ctx.rank * self.local_batch, (self.ctx.rank + 1) * self.local_batch
        for s in range(self.steps_per_epoch()):
            idx = perm[s * self.global_batch : (s + 1) * self.global_batch][lo:hi]
            yield on_device([t[idx] for t in self.tensors], self.ctx)


class Workload(ABC):
    """One benchmark at one scale: model, data, loss and quality metric.

    ``params`` is the scale's block from the suite file (model sizes, batch size, data sizes,
    optimizer settings). Subclasses read what they need and raise ``KeyError`` on a missing key,
    which the suite validator turns into a clear message.
    """

    name: str = ""
    #: whether the model is convolutional (then channels_last helps on GPUs)
    convolutional: bool = False
    #: the training data: in-memory shards, or a real data set's loaders at ``full``
    shards: TensorShards | None = None
    loaders: Any = None
    #: the held-out tensors of the synthetic data, and how many samples an eval batch holds
    eval_set: Sequence[torch.Tensor] = ()
    n_eval: int = 0
    eval_batch: int = 512
    #: whether the engine shards the model across the ranks (FSDP2) instead of replicating it
    sharded: bool = False
    #: what a throughput run measures, where it says more than the engine's label
    measures: str = ""
    #: tokens in one sample, for the workloads that count tokens
    tokens_per_sample: int | None = None
    #: whether parts of the model live on one rank each (model parallelism beside data
    #: parallelism): the forward pass then communicates, and every rank evaluates
    model_parallel: bool = False
    #: the parameters this rank holds alone, which DDP leaves out
    ddp_ignore: list[str] = []

    def __init__(self, params: dict[str, Any], scale: str, ctx: RunContext) -> None:
        self.params = params
        self.scale = scale
        self.ctx = ctx
        self.data_seed = int(params.get("data_seed", 1234))

    @property
    def global_batch_size(self) -> int:
        """Samples per optimizer step across all ranks.

        With ``batch_per_accelerator`` the suite's batch is per accelerator and the global
        batch grows with the data-parallel width (weak scaling, as MLPerf submissions at scale
        do); otherwise it is the global batch, split across the ranks (strong scaling).
        """
        batch = int(self.params["batch_size"])
        if self.params.get("batch_per_accelerator") and self.ctx.world > 1:
            return batch * self.ctx.world
        return batch

    def synthetic_sizes(self) -> tuple[int, int]:
        """Training and held-out samples of the synthetic data: at ``throughput`` one
        accelerator's batch and a single held-out sample; otherwise the suite's
        ``train_samples`` and ``eval_samples``."""
        if self.scale == "throughput":
            return self.global_batch_size // self.ctx.world, 1
        return int(self.params["train_samples"]), int(self.params["eval_samples"])

    def hold_out(self, tensors: Sequence[torch.Tensor], n_eval: int) -> None:
        """Evaluate on the last ``n_eval`` samples of ``tensors`` (moved to the device); train
        on the others, shuffled and sharded by rank.

        At ``throughput`` every rank draws the same batch, the one a one-accelerator run trains
        on, and trains on all of it: where a step's work depends on the data (Mask R-CNN's
        objects and proposals), each rank then does the work of that run, and the efficiency
        against it measures the parallel run, not a different draw of images."""
        n = tensors[0].shape[0] - n_eval
        self.eval_set = [t[n:].to(self.ctx.device) for t in tensors]
        self.n_eval = n_eval
        train = [t[:n] for t in tensors]
        if self.scale == "throughput":
            alone = dataclasses.replace(self.ctx, rank=0, world=1)
            self.shards = TensorShards(train, n, alone, self.ctx.seed)
            return
        self.shards = TensorShards(train, self.global_batch_size, self.ctx, self.ctx.seed)

    @abstractmethod
    def build_model(self) -> nn.Module:
        """The model, on CPU, initialised from the current torch seed."""

    def train_batches(self, epoch: int) -> Iterator[Batch]:
        """This rank's training batches for ``epoch`` (1-based), already on the device: the
        synthetic shards, or the data set's training loader."""
        if self.shards is not None:
            yield from self.shards.epoch(epoch)
            return
        self.loaders.set_epoch(epoch)
        yield from self.loaders.train()

    def eval_batches(self) -> Iterator[Batch]:
        """The held-out batches: consecutive slices of ``eval_set``, or the eval loader."""
        if self.loaders is not None:
            yield from self.loaders.eval()
            return
        n = self.eval_set[0].shape[0]
        for i in range(0, n, self.eval_batch):
            yield tuple(t[i : i + self.eval_batch] for t in self.eval_set)

    @abstractmethod
    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        """The scalar training loss for one batch."""

    @abstractmethod
    def quality(self, model: nn.Module) -> float:
        """The quality metric of ``model`` (in eval mode, without gradients) on the held-out
        set."""

    def evaluate(self, model: nn.Module) -> float:
        """The quality metric on the held-out set; called on rank 0 with the unwrapped model."""
        model.eval()
        try:
            with torch.no_grad():
                return float(self.quality(model))
        finally:
            model.train()

    def eval_size(self) -> int:
        """Number of held-out samples evaluated."""
        return self.n_eval if self.loaders is None else int(self.loaders.n_eval)

    def target_reached(self, quality: float, target: float) -> bool:
        """Whether ``quality`` meets the run's target (a workload may add conditions)."""
        return quality >= target

    def eval_metadata(self) -> dict[str, float]:
        """Extra metadata for the ``eval_accuracy`` event (secondary metrics)."""
        return {}

    def fp32_operations(self, precision: str) -> list[str]:
        """Operations this workload keeps in fp32 under ``precision`` on this run's device,
        beyond autocast's own policy (the run's ``collector_run`` event lists them)."""
        return []

    def batch_samples(self, batch: Batch) -> int:
        """Number of samples in ``batch`` (for throughput)."""
        return int(batch[0].shape[0])

    def micro_batches(self, batch: Batch) -> list[Batch]:
        """``batch`` cut into the forward and backward passes of one optimizer step, of
        ``params['micro_batch']`` samples each (one pass where it is not set)."""
        micro = int(self.params.get("micro_batch", 0))
        if micro <= 0:
            return [batch]
        return list(zip(*(t.split(micro) for t in batch), strict=True))

    def model_flops(self, batch: Batch) -> int | None:
        """Model FLOPs of one step on ``batch`` where the workload counts them itself; None lets
        the engine count them with torch's FLOP counter."""
        return None

    def log_params(self) -> dict[str, Any]:
        """Hyperparameters logged as events of their own beside ``global_batch_size``."""
        return {}

    def make_optimizer(self, model: nn.Module) -> torch.optim.Optimizer:
        """The optimizer named in ``params['optim']`` (sgd, adam or adamw)."""
        spec = dict(self.params.get("optim", {"name": "sgd", "lr": 0.1}))
        name = spec.pop("name", "sgd")
        spec.pop("warmup_steps", None)
        max_lr = spec.pop("max_lr", None)
        if spec.pop("fused", False) and self.ctx.device.type == "cuda":
            spec["fused"] = True  # one kernel for the whole update: less host work per step
        if self.params.get("batch_per_accelerator") and "lr" in spec and self.scale != "throughput":
            # linear scaling with the batch, up to max_lr where plain SGD stops converging. Not
            # at throughput: there every rank trains on the one-GPU run's batch, the averaged
            # gradient is that run's, and so is its rate; scaled, Mask R-CNN's ranks drew other
            # proposals than the run they are compared with (half its kernel time a step)
            spec["lr"] = float(spec["lr"]) * self.ctx.world
            if max_lr is not None:
                spec["lr"] = min(spec["lr"], float(max_lr))
        optimizers = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam, "adamw": torch.optim.AdamW}
        if name not in optimizers:
            raise ValueError(f"unknown optimizer {name!r}")
        if name == "sgd":
            spec.setdefault("momentum", 0.9)
        trainable = [p for p in model.parameters() if p.requires_grad]
        return optimizers[name](trainable, **spec)

    def lr_factor(self, step: int) -> float:
        """Multiplier on the base learning rate at optimizer ``step`` (linear warm-up)."""
        warm = int(self.params.get("optim", {}).get("warmup_steps", 0))
        return min(1.0, (step + 1) / warm) if warm > 0 else 1.0

    def data_path(self, *parts: str) -> Path:
        """A path under ``--data-root``; a clear error when the root is not given or missing."""
        if self.ctx.data_root is None:
            raise FileNotFoundError(f"{self.name} at scale 'full' needs --data-root")
        path = self.ctx.data_root.joinpath(*parts)
        if not path.exists():
            raise FileNotFoundError(f"{self.name}: expected {path}")
        return path
