"""SSD with a ResNet-34 backbone (MLPerf v0.5 ``ssd``): quality is mAP.

The backbone is ResNet-34 up to stage 3 with that stage's stride set to 1 (as in the MLPerf
reference), followed by extra stride-2 blocks; each feature map gets a 3x3 multibox head for
box offsets and class scores over a set of default boxes. Training matches default boxes to
ground truth (IoU >= 0.5, plus each object's best box), with smooth-L1 localisation and
cross-entropy confidence losses using 3:1 hard-negative mining.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from collector.run.workloads.backbones import BasicBlock, ResNetTrunk, conv_bn, init_weights
from collector.run.workloads.boxes import (
    box_iou,
    decode,
    detections,
    encode,
    grid_boxes,
)
from collector.run.workloads.scenes import SceneWorkload

BOX_WEIGHTS = (10.0, 10.0, 5.0, 5.0)


class SSD(nn.Module):
    """SSD300-ResNet34 (``width=64, layers=[3, 4, 6]``) or a narrower/shallower variant."""

    def __init__(
        self,
        num_classes: int,
        image_size: int,
        width: int = 64,
        layers: list[int] | None = None,
        extras: list[int] | None = None,
        anchors: list[int] | None = None,
    ) -> None:
        super().__init__()
        self.num_classes = num_classes
        self.image_size = image_size
        self.backbone = ResNetTrunk(BasicBlock, layers or [3, 4, 6], width, strides=(1, 2, 1))
        chans = [self.backbone.channels[-1], *(extras or [512, 512, 256, 256, 256])]
        self.extras = nn.ModuleList(
            nn.Sequential(conv_bn(cin, cout // 2, 1), conv_bn(cout // 2, cout, 3, 2))
            for cin, cout in zip(chans[:-1], chans[1:], strict=True)
        )
        self.anchors_per_loc = anchors or [4, 6, 6, 6, 4, 4]
        if len(self.anchors_per_loc) != len(chans):
            raise ValueError("one anchor count per feature map is needed")
        self.loc = nn.ModuleList(
            nn.Conv2d(c, a * 4, 3, padding=1)
            for c, a in zip(chans, self.anchors_per_loc, strict=True)
        )
        self.conf = nn.ModuleList(
            nn.Conv2d(c, a * (num_classes + 1), 3, padding=1)
            for c, a in zip(chans, self.anchors_per_loc, strict=True)
        )
        init_weights(self)
        self._anchor_cache: dict[tuple, torch.Tensor] = {}

    def default_boxes(self, shapes: list[tuple[int, int]], device: torch.device) -> torch.Tensor:
        """Default boxes ``[A, 4]`` in pixels, in head output order."""
        key = (tuple(shapes), str(device))
        if key in self._anchor_cache:
            return self._anchor_cache[key]
        m = len(shapes)
        scales = [0.07 + (0.95 - 0.07) * k / max(m - 1, 1) for k in range(m)] + [1.05]
        out = []
        for k, ((h, w), a) in enumerate(zip(shapes, self.anchors_per_loc, strict=True)):
            ratios = [1.0, 2.0, 0.5, 3.0, 1 / 3][: a - 1]
            sizes = [(scales[k] * math.sqrt(r), scales[k] / math.sqrt(r)) for r in ratios]
            extra = math.sqrt(scales[k] * scales[k + 1])
            sizes.insert(1, (extra, extra))
            boxes = grid_boxes(h, w, (1 / h, 1 / w), torch.tensor(sizes, device=device))
            out.append(boxes.clamp(0, 1) * self.image_size)
        anchors = torch.cat(out)
        self._anchor_cache[key] = anchors
        return anchors

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Box offsets ``[B, A, 4]``, class logits ``[B, A, C+1]`` and default boxes ``[A, 4]``."""
        feats = [self.backbone(x)[-1]]
        for ex in self.extras:
            feats.append(ex(feats[-1]))
        b = x.shape[0]
        locs = [
            h(f).permute(0, 2, 3, 1).reshape(b, -1, 4) for h, f in zip(self.loc, feats, strict=True)
        ]
        confs = [
            h(f).permute(0, 2, 3, 1).reshape(b, -1, self.num_classes + 1)
            for h, f in zip(self.conf, feats, strict=True)
        ]
        anchors = self.default_boxes([tuple(f.shape[-2:]) for f in feats], x.device)
        return torch.cat(locs, 1), torch.cat(confs, 1), anchors


def multibox_loss(
    loc: torch.Tensor,
    conf: torch.Tensor,
    anchors: torch.Tensor,
    gt_boxes: torch.Tensor,
    gt_labels: torch.Tensor,
) -> torch.Tensor:
    """SSD loss over a batch; ground truth padded with label -1."""
    b, a = conf.shape[:2]
    valid = gt_labels >= 0  # [B, M]
    iou = torch.stack([box_iou(anchors, gt_boxes[i]) for i in range(b)])  # [B, A, M]
    iou = iou.masked_fill(~valid[:, None, :], -1)
    best_iou, best_gt = iou.max(2)  # per anchor
    # each object keeps its best default box
    forced = iou.argmax(1)  # [B, M]
    bi = torch.arange(b, device=conf.device)[:, None].expand_as(forced)
    best_iou[bi[valid], forced[valid]] = 2.0
    best_gt[bi[valid], forced[valid]] = torch.nonzero(valid)[:, 1]
    pos = best_iou >= 0.5
    labels = torch.gather(gt_labels, 1, best_gt) + 1
    labels = torch.where(pos, labels, 0)
    matched = torch.gather(gt_boxes, 1, best_gt[..., None].expand(-1, -1, 4))
    target = encode(matched.reshape(-1, 4), anchors.repeat(b, 1), BOX_WEIGHTS).reshape(b, a, 4)
    n_pos = pos.sum(1).clamp(min=1)
    l_loc = (F.smooth_l1_loss(loc.float(), target, reduction="none").sum(2) * pos).sum(1)
    ce = F.cross_entropy(
        conf.float().reshape(-1, conf.shape[-1]), labels.reshape(-1), reduction="none"
    )
    ce = ce.reshape(b, a)
    neg_ce = ce.masked_fill(pos, 0)
    rank = neg_ce.argsort(1, descending=True).argsort(1)
    hard = rank < (3 * n_pos)[:, None]
    l_conf = (ce * (pos | hard)).sum(1)
    return ((l_loc + l_conf) / n_pos).mean()


@torch.no_grad()
def detect(
    loc: torch.Tensor, conf: torch.Tensor, anchors: torch.Tensor, max_det: int = 100
) -> list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    """Per image: (scores, labels 0-based, boxes) after score threshold and per-class NMS."""
    out = []
    probs = conf.float().softmax(-1)[..., 1:]
    for i in range(loc.shape[0]):
        boxes = decode(loc[i].float(), anchors, BOX_WEIGHTS)
        scores, labels = probs[i].max(1)
        top = scores.argsort(descending=True)[:400]  # the best 400 before NMS
        scores, labels, boxes = detections(boxes[top], scores[top], labels[top], 0.45, max_det)
        out.append((scores.cpu(), labels.cpu(), boxes.cpu()))
    return out


class SSDWorkload(SceneWorkload):
    """SSD-ResNet34 on synthetic scenes (proxy scales) or COCO (``full``)."""

    name = "ssd"
    convolutional = True
    eval_batch = 256
    box_loss = staticmethod(multibox_loss)
    detector = staticmethod(detect)

    def build_model(self) -> nn.Module:
        """SSD-ResNet34 at the configured size."""
        p = self.params
        return SSD(
            self.num_classes,
            int(p["image_size"]),
            int(p["width"]),
            list(p["layers"]),
            list(p["extras"]),
            list(p["anchors"]),
        )
