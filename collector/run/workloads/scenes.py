"""Synthetic detection scenes: coloured rectangles and ellipses on a noisy background.

Each class has a fixed colour (from the data seed) and a shape (even classes rectangles, odd
classes ellipses), so boxes, labels and instance masks are all learnable from pixels. Targets are
padded to ``max_objects`` per image with label -1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from collector.run.data.coco import coco_loaders
from collector.run.types import RunContext, generator
from collector.run.workloads.base import TensorShards, Workload
from collector.run.workloads.boxes import COCO_THRESHOLDS


@dataclass
class Scenes:
    """Images ``[N, 3, H, W]``, boxes ``[N, M, 4]``, labels ``[N, M]`` (-1 pad), masks."""

    images: torch.Tensor
    boxes: torch.Tensor
    labels: torch.Tensor
    masks: torch.Tensor  # [N, M, H, W] bool, visible pixels of each object

    def split(self, n: int) -> tuple[Scenes, Scenes]:
        """The first ``n`` scenes and the rest."""
        a = Scenes(self.images[:n], self.boxes[:n], self.labels[:n], self.masks[:n])
        b = Scenes(self.images[n:], self.boxes[n:], self.labels[n:], self.masks[n:])
        return a, b


@torch.no_grad()
def synthetic_scenes(
    n: int,
    size: int,
    num_classes: int,
    max_objects: int,
    min_size: int,
    max_size: int,
    seed: int,
    device: torch.device,
    width: int | None = None,
) -> Scenes:
    """Draw ``n`` scenes of ``size`` x ``width`` pixels (square by default) with
    1..``max_objects`` objects each; later objects occlude earlier."""
    h, w = size, width or size
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
    return Scenes(images, boxes, labels, masks)


def scene_sets(
    params: dict[str, Any],
    sizes: tuple[int, int],
    num_classes: int,
    seed: int,
    device: torch.device,
) -> tuple[Scenes, Scenes]:
    """``sizes`` (train, eval) synthetic scenes as a detection workload's params describe them
    (``image_width`` makes them rectangular)."""
    scenes = synthetic_scenes(
        sum(sizes),
        int(params["image_size"]),
        num_classes,
        int(params["max_objects"]),
        int(params["min_object"]),
        int(params["max_object"]),
        seed,
        device,
        params.get("image_width"),
    )
    return scenes.split(sizes[0])


class SceneWorkload(Workload):
    """A detection workload: synthetic scenes at the proxy scales, COCO at ``full``; with
    ``masks`` the instance masks come along as the fourth tensor of every batch."""

    masks: bool = False

    def __init__(self, params: dict[str, Any], scale: str, ctx: RunContext) -> None:
        super().__init__(params, scale, ctx)
        p = params
        self.num_classes = int(p["num_classes"])
        self.thresholds = COCO_THRESHOLDS if p.get("map", "coco") == "coco" else [0.5]
        if scale == "full":
            size, batch = int(p["image_size"]), self.global_batch_size
            self.loaders = coco_loaders(self.data_path(), size, batch, ctx, p, masks=self.masks)
            self.n_eval = self.loaders.n_eval
            return
        train, ev = scene_sets(
            p, self.synthetic_sizes(), self.num_classes, self.data_seed, ctx.device
        )
        tensors = 4 if self.masks else 3
        self.eval_set = (ev.images, ev.boxes, ev.labels, ev.masks)[:tensors]
        self.shards = TensorShards(
            (train.images, train.boxes, train.labels, train.masks)[:tensors],
            self.global_batch_size,
            ctx,
            ctx.seed,
        )
