"""Synthetic detection scenes: coloured rectangles and ellipses on a noisy background.

Each class has a fixed colour (from the data seed) and a shape (even classes rectangles, odd
classes ellipses), so boxes, labels and instance masks are all learnable from pixels. Targets are
padded to ``max_objects`` per image with label -1.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

from collector.run.data.coco import coco_loaders
from collector.run.types import Batch, RunContext, generator
from collector.run.workloads.base import Workload
from collector.run.workloads.boxes import COCO_THRESHOLDS, average_precision


@torch.no_grad()
def synthetic_scenes(
    n: int, params: dict[str, Any], num_classes: int, seed: int, device: torch.device
) -> tuple[torch.Tensor, ...]:
    """Draw ``n`` scenes of ``image_size`` x ``image_width`` pixels (square without a width)
    with 1..``max_objects`` objects each; later objects occlude earlier. Returns images
    ``[N, 3, H, W]``, boxes ``[N, M, 4]``, labels ``[N, M]`` (-1 pad) and masks
    ``[N, M, H, W]`` (bool, the visible pixels of each object)."""
    h = int(params["image_size"])
    w = int(params.get("image_width") or h)
    max_objects, min_size, max_size = (
        int(params[k]) for k in ("max_objects", "min_object", "max_object")
    )
    g = generator(seed, device)
    colors = torch.rand(num_classes, 3, generator=generator(seed + 7, device), device=device)
    colors = colors * 2 - 1
    images = torch.randn(n, 3, h, w, generator=g, device=device) * 0.25
    boxes = torch.zeros(n, max_objects, 4, device=device)
    labels = torch.full((n, max_objects), -1, dtype=torch.long, device=device)
    masks = torch.zeros(n, max_objects, h, w, dtype=torch.bool, device=device)
    count = torch.randint(1, max_objects + 1, (n,), generator=g, device=device)
    yy, xx = torch.meshgrid(
        torch.arange(h, device=device) + 0.5,
        torch.arange(w, device=device) + 0.5,
        indexing="ij",
    )
    for m in range(max_objects):
        live = count > m
        cls = torch.randint(0, num_classes, (n,), generator=g, device=device)
        wh = torch.randint(min_size, max_size + 1, (n, 2), generator=g, device=device).float()
        room = torch.tensor([w, h], device=device) - wh
        xy = torch.rand(n, 2, generator=g, device=device) * room
        x1, y1 = xy[:, 0, None, None], xy[:, 1, None, None]
        x2, y2 = x1 + wh[:, 0, None, None], y1 + wh[:, 1, None, None]
        rect = (xx >= x1) & (xx < x2) & (yy >= y1) & (yy < y2)
        cx, cy, rx, ry = (x1 + x2) / 2, (y1 + y2) / 2, (x2 - x1) / 2, (y2 - y1) / 2
        ell = ((xx - cx) / rx) ** 2 + ((yy - cy) / ry) ** 2 <= 1
        shape = torch.where((cls % 2 == 0)[:, None, None], rect, ell) & live[:, None, None]
        masks[:, :m] &= ~shape[:, None]
        masks[:, m] = shape
        fill = colors[cls][:, :, None, None] + 0.1 * torch.randn(
            n, 3, 1, 1, generator=g, device=device
        )
        images = torch.where(shape[:, None], fill.expand_as(images), images)
        boxes[:, m] = torch.where(
            live[:, None],
            torch.stack([xy[:, 0], xy[:, 1], xy[:, 0] + wh[:, 0], xy[:, 1] + wh[:, 1]], 1),
            0,
        )
        labels[:, m] = torch.where(live, cls, -1)
    return images, boxes, labels, masks


class SceneWorkload(Workload):
    """A detection workload: synthetic scenes at the proxy scales, COCO at ``full``; with
    ``masks`` the instance masks come along as the fourth tensor of every batch.

    Its loss is ``box_loss(*model(x), boxes, labels)`` and its quality the mAP of the boxes
    ``detector(*model(x))`` finds (Mask R-CNN, which scores masks too, has its own)."""

    masks: bool = False
    box_loss: Callable[..., torch.Tensor]
    #: per image, the (scores, labels, boxes) of the detections in the model's outputs
    detector: Callable[..., Sequence[tuple[Any, Any, Any]]]

    def __init__(self, params: dict[str, Any], scale: str, ctx: RunContext) -> None:
        super().__init__(params, scale, ctx)
        p = params
        self.num_classes = int(p["num_classes"])
        self.thresholds = COCO_THRESHOLDS if p.get("map", "coco") == "coco" else [0.5]
        if scale == "full":
            size, batch = int(p["image_size"]), self.global_batch_size
            self.loaders = coco_loaders(self.data_path(), size, batch, ctx, p, masks=self.masks)
            return
        n_train, n_eval = self.synthetic_sizes()
        scenes = synthetic_scenes(n_train + n_eval, p, self.num_classes, self.data_seed, ctx.device)
        self.hold_out(scenes[: 4 if self.masks else 3], n_eval)

    def loss(self, model: torch.nn.Module, batch: Batch) -> torch.Tensor:
        """The detector's loss on the batch's images, against their boxes and labels."""
        x, boxes, labels = batch[:3]
        return self.box_loss(*model(x), boxes, labels)

    def quality(self, model: torch.nn.Module) -> float:
        """mAP of the boxes the detector finds in the evaluation scenes (IoU 0.5 at the proxy
        scales, COCO 0.5:0.95 at ``full``)."""
        dets, gts = [], []
        for batch in self.eval_batches():
            x, boxes, labels = batch[:3]
            dets += self.detector(*model(x))
            for b, lab in zip(boxes.cpu(), labels.cpu(), strict=True):
                gts.append((lab[lab >= 0], b[lab >= 0]))
        return average_precision(dets, gts, self.num_classes, self.thresholds)
