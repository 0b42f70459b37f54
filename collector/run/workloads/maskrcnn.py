"""Mask R-CNN with a ResNet-50-FPN backbone (MLPerf v0.5 ``maskrcnn``): box and mask AP.

Compact but complete: FPN (P2-P6), an RPN with anchors at three aspect ratios per level,
proposal NMS, multi-level RoIAlign, a two-FC box head with class-specific regression, and a
four-conv mask head with a 2x deconvolution. Quality is box mAP; the run reaches its target only
when mask mAP also reaches ``mask_target`` (MLPerf requires both).
"""

from __future__ import annotations

import math
from typing import Any, cast

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from collector.run.types import Batch, RunContext
from collector.run.workloads.backbones import Bottleneck, ResNetTrunk, init_weights
from collector.run.workloads.boxes import (
    average_precision,
    batched_nms,
    box_iou,
    decode,
    detections,
    encode,
    grid_boxes,
    roi_align,
)
from collector.run.workloads.scenes import SceneWorkload

# feature maps, objectness, box deltas and anchors per level; targets: boxes, labels, masks
Outputs = tuple[list[Tensor], list[Tensor], list[Tensor], list[Tensor]]
Targets = tuple[Tensor, Tensor, Tensor]
RPN_W = (1.0, 1.0, 1.0, 1.0)
BOX_W = (10.0, 10.0, 5.0, 5.0)


def _sample(labels: torch.Tensor, n: int, pos_frac: float) -> torch.Tensor:
    """Up to ``n`` indices: positives (1) up to a ``pos_frac`` share, then negatives (0)."""
    pos = (labels == 1).nonzero().squeeze(1)
    neg = (labels == 0).nonzero().squeeze(1)
    n_pos = min(pos.numel(), int(n * pos_frac))
    pos = pos[torch.randperm(pos.numel(), device=labels.device)[:n_pos]]
    neg = neg[torch.randperm(neg.numel(), device=labels.device)[: n - n_pos]]
    return torch.cat([pos, neg])


class MaskRCNN(nn.Module):
    """ResNet-50-FPN Mask R-CNN; sizes come from the suite file's ``params``."""

    def __init__(self, p: dict, num_classes: int) -> None:
        super().__init__()
        self.p, self.num_classes = p, num_classes
        width, fpn = int(p["width"]), int(p["fpn_channels"])
        self.backbone = ResNetTrunk(Bottleneck, list(p["layers"]), width)
        self.lateral = nn.ModuleList(nn.Conv2d(c, fpn, 1) for c in self.backbone.channels)
        self.smooth = nn.ModuleList(
            nn.Conv2d(fpn, fpn, 3, padding=1) for _ in self.backbone.channels
        )
        self.ratios = (0.5, 1.0, 2.0)
        a = len(self.ratios)
        self.rpn_conv = nn.Conv2d(fpn, fpn, 3, padding=1)
        self.rpn_obj = nn.Conv2d(fpn, a, 1)
        self.rpn_box = nn.Conv2d(fpn, a * 4, 1)
        rep = int(p["box_fc"])
        self.box_fc = nn.Sequential(
            nn.Flatten(),
            nn.Linear(fpn * 49, rep),
            nn.ReLU(inplace=True),
            nn.Linear(rep, rep),
            nn.ReLU(inplace=True),
        )
        self.cls = nn.Linear(rep, num_classes + 1)
        self.reg = nn.Linear(rep, 4 * (num_classes + 1))
        mc = int(p["mask_channels"])
        convs: list[nn.Module] = []
        for i in range(4):
            convs += [nn.Conv2d(fpn if i == 0 else mc, mc, 3, padding=1), nn.ReLU(inplace=True)]
        self.mask_head = nn.Sequential(
            *convs,
            nn.ConvTranspose2d(mc, mc, 2, 2),
            nn.ReLU(inplace=True),
            nn.Conv2d(mc, num_classes, 1),
        )
        init_weights(self)
        for m in (self.rpn_obj, self.rpn_box, self.cls, self.reg):
            nn.init.normal_(m.weight, std=0.01)
            nn.init.zeros_(m.bias)

    # -- backbone and RPN ---------------------------------------------------------------------
    def features(self, x: torch.Tensor) -> list[torch.Tensor]:
        """FPN maps P2..P6 (strides 4..64)."""
        cs = self.backbone(x)
        lat = [conv(c) for conv, c in zip(self.lateral, cs, strict=True)]
        for i in range(len(lat) - 2, -1, -1):
            lat[i] = lat[i] + F.interpolate(lat[i + 1], size=lat[i].shape[-2:], mode="nearest")
        ps = [s(t) for s, t in zip(self.smooth, lat, strict=True)]
        return [*ps, F.max_pool2d(ps[-1], 1, 2)]

    def anchors(self, feats: list[torch.Tensor], image_width: int) -> list[torch.Tensor]:
        """Anchors per level ``[H*W*A, 4]``, sizes from ``params['anchor_sizes']``."""
        out = []
        for f, size in zip(feats, self.p["anchor_sizes"], strict=True):
            h, w = f.shape[-2:]
            stride = image_width / w
            sizes = [[size * math.sqrt(1 / r), size * math.sqrt(r)] for r in self.ratios]
            out.append(grid_boxes(h, w, (stride, stride), torch.tensor(sizes, device=f.device)))
        return out

    def rpn(self, feats: list[torch.Tensor]) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
        """Objectness ``[B, HWA]`` and deltas ``[B, HWA, 4]`` per level."""
        objs, deltas = [], []
        for f in feats:
            t = F.relu(self.rpn_conv(f))
            b = f.shape[0]
            objs.append(self.rpn_obj(t).permute(0, 2, 3, 1).reshape(b, -1))
            deltas.append(self.rpn_box(t).permute(0, 2, 3, 1).reshape(b, -1, 4))
        return objs, deltas

    @torch.no_grad()
    def proposals(
        self,
        objs: list[Tensor],
        deltas: list[Tensor],
        anchors: list[Tensor],
        image_hw: tuple[int, int],
        train: bool,
    ) -> list[Tensor]:
        """Per image, the top proposals after per-level top-k and NMS at 0.7, clipped to the
        ``image_hw`` (height, width) image."""
        h, w = image_hw
        limit = torch.tensor([w, h, w, h], device=objs[0].device, dtype=torch.float32)
        pre = int(self.p["pre_nms"])
        post = int(self.p["post_nms_train" if train else "post_nms_test"])
        out = []
        for i in range(objs[0].shape[0]):
            boxes, scores, lvls = [], [], []
            for lv, (o, d, a) in enumerate(zip(objs, deltas, anchors, strict=True)):
                s, k = o[i].float().topk(min(pre, o.shape[1]))
                boxes.append(decode(d[i, k].float(), a[k], RPN_W).clamp(min=0).minimum(limit))
                scores.append(s)
                lvls.append(torch.full_like(k, lv))
            b, s, lv = torch.cat(boxes), torch.cat(scores), torch.cat(lvls)
            ok = ((b[:, 2] - b[:, 0]) > 1) & ((b[:, 3] - b[:, 1]) > 1)
            b, s, lv = b[ok], s[ok], lv[ok]
            keep = batched_nms(b, s, lv, 0.7)
            out.append(b[keep[:post]])
        return out

    # -- RoI heads ------------------------------------------------------------------------------
    def pool(
        self, feats: list[torch.Tensor], rois: torch.Tensor, out: int, image_width: int
    ) -> torch.Tensor:
        """Multi-level RoIAlign: each RoI is pooled from the FPN level that fits its size."""
        size = (rois[:, 3] - rois[:, 1]).clamp(min=1e-3) * (rois[:, 4] - rois[:, 2]).clamp(min=1e-3)
        lvl = torch.floor(4 + torch.log2(size.sqrt() / float(self.p["canonical_size"]) + 1e-6))
        lvl = lvl.clamp(2, 5).long() - 2
        res = feats[0].new_zeros(rois.shape[0], feats[0].shape[1], out, out)
        for k in range(4):
            sel = (lvl == k).nonzero().squeeze(1)
            if sel.numel():
                scale = feats[k].shape[-1] / image_width
                res[sel] = roi_align(feats[k], rois[sel], out, scale).to(res.dtype)
        return res

    def forward(self, x: Tensor, targets: Targets | None = None) -> Outputs | Tensor:
        """Backbone, FPN and RPN outputs (the heads run in :func:`infer`); given ``targets``
        (boxes, labels, masks), the training loss instead, so that a DistributedDataParallel
        wrapper sees the whole step as one forward."""
        feats = self.features(x)
        objs, deltas = self.rpn(feats)
        outputs = feats, objs, deltas, self.anchors(feats, x.shape[-1])
        if targets is None:
            return outputs
        return _training_loss(self, x, outputs, *targets)


def _rpn_loss(
    model: MaskRCNN,
    objs: list[Tensor],
    deltas: list[Tensor],
    anchors: list[Tensor],
    gt_boxes: Tensor,
    gt_labels: Tensor,
) -> Tensor:
    """Objectness BCE and box smooth-L1 over sampled anchors (pos IoU >= 0.7, neg < 0.3)."""
    obj, dlt, anc = torch.cat(objs, 1), torch.cat(deltas, 1), torch.cat(anchors)
    cls_l, box_l = [], []
    for i in range(obj.shape[0]):
        gt = gt_boxes[i][gt_labels[i] >= 0]
        iou = box_iou(anc, gt)
        best, arg = iou.max(1)
        lab = torch.where(best >= 0.7, 1.0, torch.where(best < 0.3, 0.0, -1.0))
        lab[iou.argmax(0)] = 1.0
        idx = _sample(lab, int(model.p["rpn_batch"]), 0.5)
        cls_l.append(
            F.binary_cross_entropy_with_logits(obj[i, idx].float(), lab[idx], reduction="sum")
            / max(idx.numel(), 1)
        )
        pos = (lab[idx] == 1).nonzero().squeeze(1)
        if pos.numel():
            p_idx = idx[pos]
            tgt = encode(gt[arg[p_idx]], anc[p_idx], RPN_W)
            box_l.append(
                F.smooth_l1_loss(dlt[i, p_idx].float(), tgt, beta=1 / 9, reduction="sum")
                / max(idx.numel(), 1)
            )
    return torch.stack(cls_l).mean() + (torch.stack(box_l).mean() if box_l else obj.sum() * 0)


def _training_loss(
    model: MaskRCNN,
    x: Tensor,
    outputs: Outputs,
    gt_boxes: Tensor,
    gt_labels: Tensor,
    gt_masks: Tensor,
) -> Tensor:
    """RPN, box-head and mask-head losses for one batch (targets padded with label -1; every
    image holds at least one object), from the backbone and RPN ``outputs``."""
    size = x.shape[-1]
    feats, objs, deltas, anchors = outputs
    loss = _rpn_loss(model, objs, deltas, anchors, gt_boxes, gt_labels)
    props = model.proposals(objs, deltas, anchors, (x.shape[-2], size), train=True)
    rois, labels, tgts, mask_tgts = [], [], [], []
    for i, pr in enumerate(props):
        valid = gt_labels[i] >= 0
        gt, gl, gm = gt_boxes[i][valid], gt_labels[i][valid], gt_masks[i][valid]
        cand = torch.cat([pr, gt])
        best, arg = box_iou(cand, gt).max(1)
        lab = (best >= 0.5).float()
        idx = _sample(lab, int(model.p["roi_batch"]), 0.25)
        cand, lab, arg = cand[idx], lab[idx], arg[idx]
        rois.append(torch.cat([torch.full_like(cand[:, :1], i), cand], 1))
        labels.append(torch.where(lab == 1, gl[arg] + 1, 0))
        tgts.append(encode(gt[arg], cand, BOX_W))
        pos = lab == 1
        # each object's mask, RoIAligned over its own box
        own = torch.arange(int(pos.sum()), device=x.device)[:, None].to(cand.dtype)
        masks = gm[arg[pos]].float()[:, None]
        mask_tgts.append(roi_align(masks, torch.cat([own, cand[pos]], 1), 28, 1.0)[:, 0])
    rois_t, labels_t, tgts_t = torch.cat(rois), torch.cat(labels), torch.cat(tgts)
    h = model.box_fc(model.pool(feats, rois_t, 7, size))
    logits, reg = model.cls(h), model.reg(h).reshape(-1, model.num_classes + 1, 4)
    loss = loss + F.cross_entropy(logits.float(), labels_t)
    pos = (labels_t > 0).nonzero().squeeze(1)
    if pos.numel():
        pred = reg[pos, labels_t[pos]].float()
        loss = (
            loss + F.smooth_l1_loss(pred, tgts_t[pos], beta=1.0, reduction="sum") / labels_t.numel()
        )
        mlog = model.mask_head(model.pool(feats, rois_t[pos], 14, size))
        mlog = mlog[torch.arange(pos.numel(), device=x.device), labels_t[pos] - 1]
        mt = torch.cat(mask_tgts)
        loss = loss + F.binary_cross_entropy_with_logits(mlog.float(), (mt >= 0.5).float())
    return loss


@torch.no_grad()
def infer(
    model: MaskRCNN, x: Tensor, max_det: int = 100
) -> list[tuple[Tensor, Tensor, Tensor, Tensor]]:
    """Per image: (scores, labels 0-based, boxes, masks ``[D, H, W]`` bool)."""
    size = x.shape[-1]
    feats, objs, deltas, anchors = cast(Outputs, model(x))
    props = model.proposals(objs, deltas, anchors, (x.shape[-2], size), train=False)
    rois = torch.cat([torch.cat([torch.full_like(p[:, :1], i), p], 1) for i, p in enumerate(props)])
    h = model.box_fc(model.pool(feats, rois, 7, size))
    probs = model.cls(h).float().softmax(1)
    reg = model.reg(h).float().reshape(-1, model.num_classes + 1, 4)
    out = []
    for i in range(x.shape[0]):
        sel = (rois[:, 0] == i).nonzero().squeeze(1)
        c = model.num_classes
        sc = probs[sel, 1:].reshape(-1)
        lab = torch.arange(c, device=x.device).repeat(sel.numel())
        base = rois[sel, 1:].repeat_interleave(c, 0)
        bx = decode(reg[sel, 1:].reshape(-1, 4), base, BOX_W).clamp(0, size)
        sc, lab, bx = detections(bx, sc, lab, 0.5, max_det)
        m_rois = torch.cat([torch.full_like(bx[:, :1], i), bx], 1)
        ml = model.mask_head(model.pool(feats, m_rois, 14, size)).float()
        ml = ml[torch.arange(lab.numel(), device=x.device), lab].sigmoid()
        out.append((sc.cpu(), lab.cpu(), bx.cpu(), paste_masks(ml, bx, size).cpu()))
    return out


def paste_masks(masks: torch.Tensor, boxes: torch.Tensor, size: int) -> torch.Tensor:
    """Resize ``[D, m, m]`` mask probabilities into their boxes on a ``size``^2 canvas (> 0.5)."""
    if masks.shape[0] == 0:
        return torch.zeros(0, size, size, dtype=torch.bool)
    pix = torch.arange(size, device=masks.device, dtype=torch.float32) + 0.5
    w = (boxes[:, 2] - boxes[:, 0]).clamp(min=1e-3)[:, None]
    h = (boxes[:, 3] - boxes[:, 1]).clamp(min=1e-3)[:, None]
    gx = (pix[None] - boxes[:, :1]) / w * 2 - 1
    gy = (pix[None] - boxes[:, 1:2]) / h * 2 - 1
    grid = torch.stack(torch.broadcast_tensors(gx[:, None, :], gy[:, :, None]), -1)
    return F.grid_sample(masks[:, None], grid, align_corners=False)[:, 0] > 0.5


def mask_iou(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Pairwise IoU of boolean masks ``[D, H, W]`` and ``[G, H, W]``."""
    a, b = a.flatten(1).float(), b.flatten(1).float()
    inter = a @ b.T
    return inter / (a.sum(1)[:, None] + b.sum(1)[None] - inter).clamp(min=1)


class MaskRCNNWorkload(SceneWorkload):
    """Mask R-CNN on synthetic scenes with instance masks (proxy scales) or COCO (``full``)."""

    name = "maskrcnn"
    convolutional = True
    masks = True
    eval_batch = 64

    def __init__(self, params: dict[str, Any], scale: str, ctx: RunContext) -> None:
        super().__init__(params, scale, ctx)
        self.mask_target = float(params["mask_target"])
        self.last_mask_ap = 0.0

    def build_model(self) -> nn.Module:
        """Mask R-CNN at the configured size."""
        return MaskRCNN(self.params, self.num_classes)

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        """Sum of RPN, box and mask losses, through ``model``'s forward (which a
        DistributedDataParallel wrapper then sees as one)."""
        x, boxes, labels, masks = batch
        return model(x, (boxes, labels, masks))

    def quality(self, model: nn.Module) -> float:
        """Box mAP; mask mAP is kept in :attr:`last_mask_ap` for the stop rule and the log."""
        dets, mdets, gts, mgts = [], [], [], []
        for x, boxes, labels, masks in self.eval_batches():
            for sc, lab, bx, mk in infer(cast(MaskRCNN, model), x):
                dets.append((sc, lab, bx))
                mdets.append((sc, lab, mk))
            for b, lab, m in zip(boxes.cpu(), labels.cpu(), masks.cpu(), strict=True):
                gts.append((lab[lab >= 0], b[lab >= 0]))
                mgts.append((lab[lab >= 0], m[lab >= 0]))
        box_ap = average_precision(dets, gts, self.num_classes, self.thresholds)
        self.last_mask_ap = average_precision(
            mdets, mgts, self.num_classes, self.thresholds, lambda _i, a, b: mask_iou(a, b)
        )
        return box_ap

    def target_reached(self, quality: float, target: float) -> bool:
        """Both box and mask mAP must reach their targets."""
        return quality >= target and self.last_mask_ap >= self.mask_target

    def eval_metadata(self) -> dict[str, float]:
        """Extra metadata for the ``eval_accuracy`` event."""
        return {"mask_ap": round(self.last_mask_ap, 6)}
