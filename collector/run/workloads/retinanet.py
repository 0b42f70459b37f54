"""RetinaNet (MLPerf v5.1 ``retinanet``) on synthetic detection scenes: quality is mAP.

The network is the one the MLPerf reference takes from torchvision
(``retinanet_resnext50_32x4d_fpn``), written here in plain torch because torchvision's wheel
on the package index is built for CUDA and does not load beside a CPU build of torch:
a ResNeXt50-32x4d trunk with frozen batch norm (the stem and first stage frozen: three
trainable stages), a feature pyramid on stages 3 to 5 with two extra levels (P6, P7), nine
anchors per location (three scales, three aspect ratios), a classification head trained with
the sigmoid focal loss and a box head trained with an L1 loss on the box offsets, anchors
matched to objects at IoU 0.5 (background below 0.4, each object's best anchors kept).
Random initialisation: nothing is downloaded. The images are drawn at the model's fixed input
size (800 x 800 in the reference), so no resizing step runs. The scenes
(:mod:`collector.run.workloads.scenes`) are coloured shapes whose boxes and classes can be
learnt from pixels; at ``throughput`` they are only a batch of the reference's image size.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.checkpoint import checkpoint

from collector.run.workloads.boxes import decode, detections, encode, grid_boxes
from collector.run.workloads.scenes import SceneWorkload

BOX_WEIGHTS = (1.0, 1.0, 1.0, 1.0)


class FrozenBatchNorm2d(nn.Module):
    """Batch norm with fixed statistics and affine terms (buffers, not parameters), as
    torchvision's detection backbones use."""

    def __init__(self, n: int) -> None:
        super().__init__()
        for name, fill in (("weight", 1.0), ("bias", 0.0), ("running_mean", 0.0)):
            self.register_buffer(name, torch.full((n,), fill))
        self.register_buffer("running_var", torch.ones(n))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scale = self.weight * (self.running_var + 1e-5).rsqrt()
        shift = self.bias - self.running_mean * scale
        return x * scale[None, :, None, None] + shift[None, :, None, None]


def conv_fbn(cin: int, cout: int, k: int, stride: int = 1, groups: int = 1) -> nn.Sequential:
    """Convolution without bias followed by frozen batch norm."""
    conv = nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False)
    return nn.Sequential(conv, FrozenBatchNorm2d(cout))


class ResNeXtBlock(nn.Module):
    """ResNeXt bottleneck: 1x1 to ``groups x group_width``, grouped 3x3 (strided), 1x1 to
    ``out``, with an identity or strided projection shortcut."""

    def __init__(self, cin: int, width: int, out: int, stride: int, groups: int) -> None:
        super().__init__()
        self.body = nn.Sequential(
            conv_fbn(cin, width, 1),
            nn.ReLU(inplace=True),
            conv_fbn(width, width, 3, stride, groups),
            nn.ReLU(inplace=True),
            conv_fbn(width, out, 1),
        )
        self.short = conv_fbn(cin, out, 1, stride) if stride != 1 or cin != out else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        idt = x if self.short is None else self.short(x)
        return torch.relu(self.body(x) + idt)


class ResNeXt(nn.Module):
    """Stem and four stages of ResNeXt (``layers`` blocks each, ``groups`` x ``group_width``
    channels in the first stage's grouped convolution and ``4 x base`` out of it, doubling per
    stage; ``base`` 64 is the published network); returns the outputs of stages 2 to 4
    (strides 8, 16, 32)."""

    def __init__(
        self, layers: list[int], groups: int = 32, group_width: int = 4, base: int = 64
    ) -> None:
        super().__init__()
        self.stem = nn.Sequential(
            conv_fbn(3, base, 7, 2), nn.ReLU(inplace=True), nn.MaxPool2d(3, 2, 1)
        )
        self.stages = nn.ModuleList()
        self.channels: list[int] = []
        cin = base
        for i, n in enumerate(layers):
            width, out = groups * group_width * 2**i, base * 4 * 2**i
            blocks = [
                ResNeXtBlock(cin if j == 0 else out, width, out, 2 if i and not j else 1, groups)
                for j in range(n)
            ]
            self.stages.append(nn.Sequential(*blocks))
            self.channels.append(out)
            cin = out

    def freeze(self, trainable_stages: int) -> None:
        """Freeze the stem and all but the last ``trainable_stages`` stages (the reference
        trains three of five: stages 2 to 4)."""
        frozen = [self.stem, *self.stages[: len(self.stages) - trainable_stages]]
        for module in frozen:
            for p in module.parameters():
                p.requires_grad_(False)

    def forward(self, x: torch.Tensor) -> list[torch.Tensor]:
        x = self.stem(x)
        outs = []
        for stage in self.stages:
            x = stage(x)
            outs.append(x)
        return outs[1:]


class FeaturePyramid(nn.Module):
    """FPN over C3..C5 (lateral 1x1, top-down nearest upsampling, 3x3 output convolutions),
    with P6 and P7 as strided 3x3 convolutions on P5 and ReLU(P6); ``fpn`` channels (256)."""

    def __init__(self, channels: list[int], fpn: int) -> None:
        super().__init__()
        self.inner = nn.ModuleList(nn.Conv2d(c, fpn, 1) for c in channels)
        self.layer = nn.ModuleList(nn.Conv2d(fpn, fpn, 3, padding=1) for _ in channels)
        self.p6 = nn.Conv2d(fpn, fpn, 3, 2, 1)
        self.p7 = nn.Conv2d(fpn, fpn, 3, 2, 1)

    def forward(self, feats: list[torch.Tensor]) -> list[torch.Tensor]:
        last = self.inner[-1](feats[-1])
        outs = [self.layer[-1](last)]
        for i in range(len(feats) - 2, -1, -1):
            lateral = self.inner[i](feats[i])
            last = lateral + F.interpolate(last, size=lateral.shape[-2:], mode="nearest")
            outs.insert(0, self.layer[i](last))
        p6 = self.p6(outs[-1])
        return [*outs, p6, self.p7(torch.relu(p6))]


def head(fpn: int, out: int, prior: float | None = None) -> nn.Sequential:
    """Four 3x3 convolutions of ``fpn`` channels with ReLU, then a 3x3 convolution to ``out``
    channels (its bias set to the focal loss's prior where given)."""
    mods: list[nn.Module] = []
    for _ in range(4):
        conv = nn.Conv2d(fpn, fpn, 3, padding=1)
        nn.init.normal_(conv.weight, std=0.01)
        nn.init.zeros_(conv.bias)
        mods += [conv, nn.ReLU(inplace=True)]
    last = nn.Conv2d(fpn, out, 3, padding=1)
    nn.init.normal_(last.weight, std=0.01)
    nn.init.constant_(last.bias, -math.log((1 - prior) / prior) if prior else 0.0)
    return nn.Sequential(*mods, last)


class RetinaNet(nn.Module):
    """RetinaNet: ResNeXt trunk, FPN P3..P7, classification and box heads shared across
    levels. ``forward`` returns class logits ``[N, A, K]``, box offsets ``[N, A, 4]`` and the
    anchors ``[A, 4]`` of the input size."""

    def __init__(
        self,
        num_classes: int,
        layers: list[int],
        groups: int,
        group_width: int,
        trainable: int,
        base: int = 64,
        fpn: int = 256,
    ) -> None:
        super().__init__()
        self.num_classes = num_classes
        self.backbone = ResNeXt(layers, groups, group_width, base)
        self.backbone.freeze(trainable)
        self.fpn = FeaturePyramid(self.backbone.channels[1:], fpn)
        scales = torch.tensor([2 ** (i / 3) for i in range(3)])
        ratios = torch.tensor([0.5, 1.0, 2.0])
        h = ratios.sqrt()
        self.register_buffer(
            "shapes", torch.stack([(scales[None] / h[:, None]), (scales[None] * h[:, None])], -1)
        )
        self.per_loc = len(scales) * len(ratios)
        self.cls_head = head(fpn, self.per_loc * num_classes, prior=0.01)
        self.box_head = head(fpn, self.per_loc * 4)

    def anchors(self, feats: list[torch.Tensor], size: tuple[int, int]) -> torch.Tensor:
        """Anchors of every level: base size 32 at P3 doubling per level."""
        out = []
        for i, f in enumerate(feats):
            h, w = f.shape[-2:]
            wh = self.shapes.reshape(-1, 2).to(f.device, torch.float32) * 32 * 2**i
            out.append(grid_boxes(h, w, (size[0] / h, size[1] / w), wh))
        return torch.cat(out)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        feats = self.fpn(self.backbone(x))
        n, a, k = x.shape[0], self.per_loc, self.num_classes
        logits = [
            self.cls_head(f).reshape(n, a, k, *f.shape[-2:]).permute(0, 3, 4, 1, 2).flatten(1, 3)
            for f in feats
        ]
        boxes = [
            self.box_head(f).reshape(n, a, 4, *f.shape[-2:]).permute(0, 3, 4, 1, 2).flatten(1, 3)
            for f in feats
        ]
        return torch.cat(logits, 1), torch.cat(boxes, 1), self.anchors(feats, x.shape[-2:])


def batched_iou(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """IoU of anchors ``a [A, 4]`` with each image's objects ``b [N, M, 4]`` -> ``[N, A, M]``."""
    lt = torch.maximum(a[None, :, None, :2], b[:, None, :, :2])
    rb = torch.minimum(a[None, :, None, 2:], b[:, None, :, 2:])
    inter = (rb - lt).clamp(min=0).prod(-1)
    area_a = (a[:, 2:] - a[:, :2]).prod(-1)
    area_b = (b[..., 2:] - b[..., :2]).clamp(min=0).prod(-1)
    return inter / (area_a[None, :, None] + area_b[:, None, :] - inter).clamp(min=1e-9)


def retinanet_loss(
    logits: torch.Tensor,
    deltas: torch.Tensor,
    anchors: torch.Tensor,
    gt_boxes: torch.Tensor,
    gt_labels: torch.Tensor,
) -> torch.Tensor:
    """Focal loss (alpha 0.25, gamma 2) over foreground and background anchors plus the L1
    loss of foreground box offsets, each summed per image over its foreground anchors' count,
    averaged over images (torchvision's RetinaNet losses)."""
    valid = gt_labels >= 0
    iou = batched_iou(anchors, gt_boxes).masked_fill(~valid[:, None, :], -1.0)
    best, idx = iou.max(-1)
    best_per_gt = iou.max(1, keepdim=True).values
    low_quality = ((iou == best_per_gt) & valid[:, None, :] & (best_per_gt > 0)).any(-1)
    fg = (best >= 0.5) | low_quality
    counted = fg | (best < 0.4)
    labels = torch.gather(gt_labels, 1, idx).clamp(min=0)
    n_fg = fg.sum(1).clamp(min=1)
    cls = focal_per_image(logits, labels, fg, counted) / n_fg
    matched = torch.gather(gt_boxes, 1, idx[..., None].expand(-1, -1, 4))
    b = anchors.shape[0]
    target = encode(matched.reshape(-1, 4), anchors.repeat(len(idx), 1), BOX_WEIGHTS)
    l1 = (deltas.float() - target.reshape(-1, b, 4)).abs().sum(-1)
    box = (l1 * fg).sum(1) / n_fg
    return (cls + box).mean()


def focal_per_image(
    logits: torch.Tensor, labels: torch.Tensor, fg: torch.Tensor, counted: torch.Tensor
) -> torch.Tensor:
    """The focal loss summed per image over its ``counted`` anchors, the class ``labels`` of
    the foreground (``fg``) anchors the positives. At the published size each elementwise
    intermediate holds anchors x classes x images (120,195 x 264 x 32) floats, 4 GB apiece: on
    a GPU the loss is compiled into fused kernels that keep none of them (eager, it took more
    than half of an H200's step), elsewhere it is recomputed in the backward pass."""
    if logits.is_cuda:
        return _focal_fused()(logits, labels, fg, counted)
    return checkpoint(_focal_per_image, logits, labels, fg, counted, use_reentrant=False)


def _focal_per_image(
    logits: torch.Tensor, labels: torch.Tensor, fg: torch.Tensor, counted: torch.Tensor
) -> torch.Tensor:
    classes = torch.arange(logits.shape[-1], device=logits.device)
    target = ((classes == labels[..., None]) & fg[..., None]).float()
    return (focal_loss(logits.float(), target).sum(-1) * counted).sum(1)


@functools.cache
def _focal_fused() -> Callable[..., torch.Tensor]:
    return torch.compile(_focal_per_image, dynamic=False)


def focal_loss(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """The sigmoid focal loss per element (alpha 0.25, gamma 2)."""
    p = torch.sigmoid(logits)
    ce = F.binary_cross_entropy_with_logits(logits, target, reduction="none")
    p_t = p * target + (1 - p) * (1 - target)
    alpha = 0.25 * target + 0.75 * (1 - target)
    return alpha * ce * (1 - p_t) ** 2


@torch.no_grad()
def detect(
    logits: torch.Tensor, deltas: torch.Tensor, anchors: torch.Tensor, max_det: int = 100
) -> list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    """Per image: (scores, labels, boxes) of the best 1000 anchor-class pairs over 0.05 after
    NMS at IoU 0.5 per class."""
    out = []
    k = logits.shape[-1]
    for i in range(logits.shape[0]):
        scores = torch.sigmoid(logits[i].float()).flatten()
        top = scores.topk(min(1000, scores.numel())).indices
        a, labels = top // k, top % k
        boxes = decode(deltas[i, a].float(), anchors[a], BOX_WEIGHTS)
        s, lab, bx = detections(boxes, scores[top], labels, 0.5, max_det)
        out.append((s.cpu(), lab.cpu(), bx.cpu()))
    return out


class RetinaNetWorkload(SceneWorkload):
    """RetinaNet-ResNeXt50-32x4d-FPN on synthetic scenes. ``params``: ``num_classes`` (264:
    the reference's OpenImages subset), ``image_size``, ``layers`` ([3, 4, 6, 3]),
    ``groups`` and ``group_width`` (32 x 4), ``width`` (64), ``fpn`` (256),
    ``trainable_stages`` (3), the scene sizes."""

    name = "retinanet"
    convolutional = True
    eval_batch = 32
    box_loss = staticmethod(retinanet_loss)
    detector = staticmethod(detect)

    def build_model(self) -> nn.Module:
        p = self.params
        return RetinaNet(
            self.num_classes,
            list(p["layers"]),
            int(p["groups"]),
            int(p["group_width"]),
            int(p["trainable_stages"]),
            int(p.get("width", 64)),
            int(p.get("fpn", 256)),
        )

    def log_params(self) -> dict[str, Any]:
        """The round's logs state the per-accelerator batch beside the global one."""
        return {"local_batch_size": self.global_batch_size // self.ctx.world}
