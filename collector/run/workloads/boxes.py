"""Box geometry, NMS, RoIAlign and average precision, in plain torch (no torchvision).

Boxes are ``(x1, y1, x2, y2)`` in pixels. Everything here is vectorised so it runs on GPUs
without per-box Python loops, except the AP bookkeeping, which runs on CPU at evaluation.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import torch
import torch.nn.functional as F


def box_area(b: torch.Tensor) -> torch.Tensor:
    """Areas of boxes ``[..., 4]``."""
    return (b[..., 2] - b[..., 0]).clamp(min=0) * (b[..., 3] - b[..., 1]).clamp(min=0)


def box_iou(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Pairwise IoU of ``a [N, 4]`` and ``b [M, 4]`` -> ``[N, M]``."""
    lt = torch.maximum(a[:, None, :2], b[None, :, :2])
    rb = torch.minimum(a[:, None, 2:], b[None, :, 2:])
    inter = (rb - lt).clamp(min=0).prod(-1)
    return inter / (box_area(a)[:, None] + box_area(b)[None, :] - inter).clamp(min=1e-9)


def encode(gt: torch.Tensor, anchors: torch.Tensor, w: Sequence[float]) -> torch.Tensor:
    """Regression targets (dx, dy, dw, dh) of ``gt`` relative to ``anchors``, scaled by ``w``."""
    aw, ah = anchors[:, 2] - anchors[:, 0], anchors[:, 3] - anchors[:, 1]
    ax, ay = anchors[:, 0] + 0.5 * aw, anchors[:, 1] + 0.5 * ah
    gw, gh = (gt[:, 2] - gt[:, 0]).clamp(min=1e-3), (gt[:, 3] - gt[:, 1]).clamp(min=1e-3)
    gx, gy = gt[:, 0] + 0.5 * gw, gt[:, 1] + 0.5 * gh
    d = [(gx - ax) / aw, (gy - ay) / ah, torch.log(gw / aw), torch.log(gh / ah)]
    return torch.stack([wi * di for wi, di in zip(w, d, strict=True)], 1)


def decode(deltas: torch.Tensor, anchors: torch.Tensor, w: Sequence[float]) -> torch.Tensor:
    """Inverse of :func:`encode`; ``deltas [N, 4]`` on ``anchors [N, 4]``."""
    aw, ah = anchors[:, 2] - anchors[:, 0], anchors[:, 3] - anchors[:, 1]
    ax, ay = anchors[:, 0] + 0.5 * aw, anchors[:, 1] + 0.5 * ah
    clip = math.log(1000.0 / 16)
    dx, dy = deltas[:, 0] / w[0], deltas[:, 1] / w[1]
    dw, dh = (deltas[:, 2] / w[2]).clamp(max=clip), (deltas[:, 3] / w[3]).clamp(max=clip)
    cx, cy = ax + dx * aw, ay + dy * ah
    pw, ph = aw * torch.exp(dw), ah * torch.exp(dh)
    return torch.stack([cx - 0.5 * pw, cy - 0.5 * ph, cx + 0.5 * pw, cy + 0.5 * ph], 1)


def detections(
    boxes: torch.Tensor, scores: torch.Tensor, labels: torch.Tensor, iou: float, max_det: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The ``max_det`` best (scores, labels, boxes) of those scoring over 0.05, after NMS at
    ``iou`` per class."""
    keep = (scores > 0.05).nonzero().squeeze(1)
    k = keep[batched_nms(boxes[keep], scores[keep], labels[keep], iou)[:max_det]]
    return scores[k], labels[k], boxes[k]


def nms(boxes: torch.Tensor, scores: torch.Tensor, thresh: float) -> torch.Tensor:
    """Greedy non-maximum suppression; indices of kept boxes, highest score first.

    Computed as the fixed point of ``keep[i] = not any(keep[j] and iou[j, i] > t, j < i)`` over
    the score-sorted boxes: the greedy answer is that system's unique solution, and iterating
    from "keep all" reaches it, usually in a handful of matrix-vector steps.
    """
    if boxes.numel() == 0:
        return torch.zeros(0, dtype=torch.long, device=boxes.device)
    order = scores.argsort(descending=True)
    iou = box_iou(boxes[order], boxes[order])
    over = torch.triu(iou > thresh, diagonal=1).float()  # over[j, i]: j ranks above i
    keep = torch.ones(order.numel(), device=boxes.device)
    for _ in range(order.numel()):
        new = (keep @ over == 0).float()
        if torch.equal(new, keep):
            break
        keep = new
    return order[keep.bool()]


def batched_nms(
    boxes: torch.Tensor, scores: torch.Tensor, classes: torch.Tensor, thresh: float
) -> torch.Tensor:
    """NMS applied independently per class (by offsetting each class's boxes apart)."""
    if boxes.numel() == 0:
        return torch.zeros(0, dtype=torch.long, device=boxes.device)
    offset = classes.to(boxes.dtype)[:, None] * (boxes.max() + 1)
    return nms(boxes + offset, scores, thresh)


def roi_align(
    feat: torch.Tensor,
    rois: torch.Tensor,
    out: int,
    scale: float,
    sampling: int = 2,
) -> torch.Tensor:
    """RoIAlign (aligned, average of ``sampling``^2 bilinear samples per bin).

    Samples that fall in the outer half-cell of the map take the edge value (as RoIAlign clamps).

    ``feat [B, C, H, W]``; ``rois [K, 5]`` as (batch index, x1, y1, x2, y2) in image pixels;
    ``scale`` maps pixels to feature cells. Returns ``[K, C, out, out]``.
    """
    k = rois.shape[0]
    c, h, w = feat.shape[1:]
    if k == 0:
        return feat.new_zeros(0, c, out, out)
    n = out * sampling
    rois = rois.float()
    steps = (torch.arange(n, device=feat.device, dtype=torch.float32) + 0.5) / n
    x1, y1 = rois[:, 1:2] * scale, rois[:, 2:3] * scale
    bw = (rois[:, 3:4] * scale - x1).clamp(min=1e-3)
    bh = (rois[:, 4:5] * scale - y1).clamp(min=1e-3)
    gx = (x1 + steps[None] * bw) / w * 2 - 1  # [K, n]
    gy = (y1 + steps[None] * bh) / h * 2 - 1
    grid = torch.stack(torch.broadcast_tensors(gx[:, None, :], gy[:, :, None]), -1)  # [K,n,n,2]
    # One grid_sample over the whole batch: RoIs are laid out per image in a padded grid.
    idx = rois[:, 0].long()
    counts = torch.bincount(idx, minlength=feat.shape[0])
    starts = torch.cumsum(counts, 0) - counts
    order = torch.argsort(idx, stable=True)
    slot = torch.empty_like(idx)
    slot[order] = torch.arange(k, device=feat.device) - starts[idx[order]]
    kmax = int(counts.max())
    padded = grid.new_full((feat.shape[0], kmax, n, n, 2), -2.0)
    padded[idx, slot] = grid
    grid_all = padded.view(feat.shape[0], kmax * n, n, 2)
    s = F.grid_sample(feat.float(), grid_all, padding_mode="border", align_corners=False)
    result = s.view(feat.shape[0], c, kmax, n, n).permute(0, 2, 1, 3, 4)[idx, slot]
    result = F.avg_pool2d(result, sampling) if sampling > 1 else result
    return result.to(feat.dtype)


def average_precision(
    dets: Sequence[tuple[torch.Tensor, torch.Tensor, torch.Tensor]],
    gts: Sequence[tuple[torch.Tensor, torch.Tensor]],
    num_classes: int,
    thresholds: Sequence[float],
    overlap: Callable[[int, torch.Tensor, torch.Tensor], torch.Tensor] | None = None,
) -> float:
    """COCO-style mean AP (101-point interpolation) averaged over classes and IoU thresholds.

    ``dets[i] = (scores [D], labels [D], items [D, ...])`` and ``gts[i] = (labels [G], items)``
    per image; ``overlap(i, det_items, gt_items)`` gives the ``[D, G]`` IoU matrix (box IoU by
    default; mask IoU for segmentation). Classes with no ground truth are skipped.
    """
    overlap = overlap or (lambda _i, a, b: box_iou(a, b))
    ious = []
    for i, ((_, dl, di), (_gl, gi)) in enumerate(zip(dets, gts, strict=True)):
        ious.append(overlap(i, di, gi) if len(dl) and len(gi) else None)
    aps = []
    recall_pts = torch.linspace(0, 1, 101)
    for cls in range(num_classes):
        n_gt = sum(int((gl == cls).sum()) for gl, _ in gts)
        if n_gt == 0:
            continue
        for t in thresholds:
            scores, hits = [], []
            for i, ((ds, dl, _), (gl, _)) in enumerate(zip(dets, gts, strict=True)):
                dmask = (dl == cls).nonzero().squeeze(1)
                if dmask.numel() == 0:
                    continue
                dmask = dmask[ds[dmask].argsort(descending=True)]
                gmask = (gl == cls).nonzero().squeeze(1)
                taken = torch.zeros(gmask.numel(), dtype=torch.bool)
                for d in dmask.tolist():
                    hit = False
                    if gmask.numel() and ious[i] is not None:
                        cand = ious[i][d, gmask].clone()
                        cand[taken] = -1
                        j = int(cand.argmax())
                        if cand[j] >= t:
                            taken[j] = hit = True
                    scores.append(float(ds[d]))
                    hits.append(hit)
            if not scores:
                aps.append(0.0)
                continue
            order = torch.tensor(scores).argsort(descending=True)
            tp = torch.tensor(hits, dtype=torch.float)[order].cumsum(0)
            prec = tp / torch.arange(1, len(hits) + 1)
            rec = tp / n_gt
            prec = torch.flip(torch.cummax(torch.flip(prec, [0]), 0).values, [0])
            pos = torch.searchsorted(rec, recall_pts, right=False)
            ok = pos < prec.numel()
            aps.append(float(torch.where(ok, prec[pos.clamp(max=prec.numel() - 1)], 0).mean()))
    return sum(aps) / len(aps) if aps else 0.0


COCO_THRESHOLDS = [0.5 + 0.05 * i for i in range(10)]


def grid_boxes(h: int, w: int, step: tuple[float, float], wh: torch.Tensor) -> torch.Tensor:
    """Boxes ``[h * w * A, 4]`` centred on the cells of an ``h`` x ``w`` grid whose cells
    measure ``step`` (height, width), one of each size ``wh [A, 2]``; row by row, sizes
    innermost (the order of a detection head's outputs)."""
    ys = (torch.arange(h, device=wh.device) + 0.5) * step[0]
    xs = (torch.arange(w, device=wh.device) + 0.5) * step[1]
    ys, xs = torch.meshgrid(ys, xs, indexing="ij")
    centres = torch.stack([xs, ys], -1).reshape(-1, 1, 2)
    return torch.cat([centres - wh / 2, centres + wh / 2], -1).reshape(-1, 4)
