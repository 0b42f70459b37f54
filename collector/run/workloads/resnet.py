"""ResNet-50 v1.5 image classification (MLPerf v0.5 ``resnet``): quality is top-1 accuracy.

Proxy scales label random, spatially correlated images with a fixed, seeded convolutional
"teacher"; quality is top-1 agreement with the teacher on held-out images. ``full`` trains on
ImageNet in the standard folder layout.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from collector.run.data.imagenet import imagenet_loaders
from collector.run.types import Batch, RunContext, generator
from collector.run.workloads.backbones import Bottleneck, ResNetTrunk, init_weights
from collector.run.workloads.base import Workload, top1


class ResNet50(nn.Module):
    """ResNet-50 v1.5 (``width=64, layers=[3, 4, 6, 3]``) or a narrower/shallower variant."""

    def __init__(self, num_classes: int, width: int = 64, layers: list[int] | None = None) -> None:
        super().__init__()
        self.trunk = ResNetTrunk(Bottleneck, layers or [3, 4, 6, 3], width)
        self.fc = nn.Linear(self.trunk.channels[-1], num_classes)
        init_weights(self)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        feats = self.trunk(x)[-1]
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(feats, 1), 1))


@torch.no_grad()
def synthetic_images(
    n: int, size: int, num_classes: int, seed: int, device: torch.device
) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` smoothed-noise images labelled by a fixed random teacher.

    The teacher is conv 3x3, ReLU, global average pool, linear: a texture statistic that a
    convolutional student can learn from a few thousand examples.
    """
    g = generator(seed, device)
    tg = generator(seed + 1, device)
    w1 = torch.randn(16, 3, 3, 3, generator=tg, device=device) / (3 * 9) ** 0.5
    w2 = torch.randn(num_classes, 16, generator=tg, device=device) / 4.0
    xs, logits = [], []
    for i in range(0, n, 4096):
        m = min(4096, n - i)
        x = torch.randn(m, 3, size, size, generator=g, device=device)
        x = F.avg_pool2d(x, 3, 1, 1) * 2.0
        h = F.relu(F.conv2d(x, w1, padding=1))
        logits.append(h.mean((2, 3)) @ w2.T)
        xs.append(x)
    z = torch.cat(logits)
    labels = (z - z.mean(0)).argmax(1)  # centring balances the classes
    return torch.cat(xs), labels


class ResNetWorkload(Workload):
    """ResNet-50 v1.5 trained with SGD and label-smoothed cross entropy."""

    name = "resnet"
    convolutional = True

    def __init__(self, params: dict[str, Any], scale: str, ctx: RunContext) -> None:
        super().__init__(params, scale, ctx)
        p = params
        self.num_classes = int(p["num_classes"])
        if scale == "full":
            self.loaders = imagenet_loaders(
                self.data_path(), int(p["image_size"]), self.global_batch_size, ctx, p
            )
        else:
            dev = ctx.device
            n_train, n_eval = self.synthetic_sizes()
            x, y = synthetic_images(
                n_train + n_eval, int(p["image_size"]), self.num_classes, self.data_seed, dev
            )
            if ctx.channels_last:
                x = x.contiguous(memory_format=torch.channels_last)
            self.hold_out((x, y), n_eval)

    def build_model(self) -> nn.Module:
        """ResNet-50 v1.5 at the configured width and depth."""
        return ResNet50(self.num_classes, int(self.params["width"]), list(self.params["layers"]))

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        """Cross entropy with the configured label smoothing."""
        x, y = batch
        ls = float(self.params.get("label_smoothing", 0.0))
        return F.cross_entropy(model(x), y, label_smoothing=ls)

    def quality(self, model: nn.Module) -> float:
        """Top-1 accuracy on the held-out set."""
        return top1((model(x), y) for x, y in self.eval_batches())
