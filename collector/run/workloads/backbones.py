"""ResNet building blocks shared by the ResNet-50, SSD (ResNet-34) and Mask R-CNN workloads.

ResNet v1.5: in a bottleneck block the stride sits on the 3x3 convolution, not the first 1x1.
``width`` scales every stage (64 is the published network); ``layers`` sets blocks per stage
([3, 4, 6, 3] for ResNet-34 and ResNet-50).
"""

from __future__ import annotations

import torch
from torch import nn


def conv_bn(cin: int, cout: int, k: int, stride: int = 1, relu: bool = True) -> nn.Sequential:
    """Convolution without bias, batch norm and (optionally) ReLU."""
    mods: list[nn.Module] = [
        nn.Conv2d(cin, cout, k, stride=stride, padding=k // 2, bias=False),
        nn.BatchNorm2d(cout),
    ]
    if relu:
        mods.append(nn.ReLU(inplace=True))
    return nn.Sequential(*mods)


class _Residual(nn.Module):
    """A residual block: ``relu(body(x) + shortcut(x))``, the shortcut an identity where the
    shape allows, else a strided 1x1 projection. The body's last batch norm starts at zero, so
    a new block passes its input through."""

    def __init__(self, body: nn.Sequential, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.body = body
        nn.init.zeros_(self.body[-1][1].weight)
        self.short = (
            conv_bn(cin, cout, 1, stride, relu=False) if stride != 1 or cin != cout else None
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        idt = x if self.short is None else self.short(x)
        return torch.relu(self.body(x) + idt)


class BasicBlock(_Residual):
    """Two 3x3 convolutions with an identity (or projection) shortcut: ResNet-18/34."""

    expansion = 1

    def __init__(self, cin: int, width: int, stride: int = 1) -> None:
        cout = width * self.expansion
        body = nn.Sequential(conv_bn(cin, width, 3, stride), conv_bn(width, cout, 3, 1, False))
        super().__init__(body, cin, cout, stride)


class Bottleneck(_Residual):
    """1x1 reduce, 3x3 (strided, v1.5), 1x1 expand by 4, with a shortcut: ResNet-50."""

    expansion = 4

    def __init__(self, cin: int, width: int, stride: int = 1) -> None:
        cout = width * self.expansion
        body = nn.Sequential(
            conv_bn(cin, width, 1),
            conv_bn(width, width, 3, stride),
            conv_bn(width, cout, 1, relu=False),
        )
        super().__init__(body, cin, cout, stride)


class ResNetTrunk(nn.Module):
    """Stem (7x7/2 conv, 3x3/2 max-pool) and four residual stages; returns every stage output.

    ``strides`` lets SSD keep the resolution of stage 3 (it sets that stage's stride to 1).
    """

    def __init__(
        self,
        block: type[BasicBlock] | type[Bottleneck],
        layers: list[int],
        width: int = 64,
        strides: tuple[int, ...] = (1, 2, 2, 2),
        in_ch: int = 3,
    ) -> None:
        super().__init__()
        self.stem = nn.Sequential(conv_bn(in_ch, width, 7, 2), nn.MaxPool2d(3, 2, 1))
        cin = width
        self.stages = nn.ModuleList()
        self.channels: list[int] = []
        for i, (n, s) in enumerate(zip(layers, strides, strict=False)):
            w = width * 2**i
            blocks = []
            for j in range(n):
                blocks.append(block(cin, w, s if j == 0 else 1))
                cin = w * block.expansion
            self.stages.append(nn.Sequential(*blocks))
            self.channels.append(cin)

    def forward(self, x: torch.Tensor) -> list[torch.Tensor]:
        x = self.stem(x)
        outs = []
        for stage in self.stages:
            x = stage(x)
            outs.append(x)
        return outs


def init_weights(module: nn.Module) -> None:
    """Kaiming-normal convolutions (fan-out), unit batch-norm scale (unless already zeroed)."""
    for m in module.modules():
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
