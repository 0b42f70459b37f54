"""COCO detection/segmentation: ``<root>/annotations/instances_{train,val}2017.json`` + images.

Images are resized to a square ``size`` (the SSD300 convention; Mask R-CNN here uses the same
square input for batching); boxes scale with them, polygons are rasterised at that size, and
targets are padded to ``max_objects`` with label -1. Crowd annotations are skipped.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch
from PIL import Image, ImageDraw
from torch.utils.data import Dataset

from collector.run.types import Loaders, RunContext, to_tensor


class CocoDetection(Dataset):
    """One split of COCO as (image, boxes, labels[, masks])."""

    def __init__(self, root: Path, split: str, size: int, max_objects: int, masks: bool) -> None:
        ann = json.loads((root / "annotations" / f"instances_{split}.json").read_text())
        self.cats = {
            c["id"]: i for i, c in enumerate(sorted(ann["categories"], key=lambda c: c["id"]))
        }
        self.images = {im["id"]: im for im in ann["images"]}
        self.anns: dict[int, list[dict]] = {i: [] for i in self.images}
        for a in ann["annotations"]:
            if not a.get("iscrowd", 0) and a["image_id"] in self.anns:
                self.anns[a["image_id"]].append(a)
        self.ids = sorted(i for i, a in self.anns.items() if a)
        self.dir, self.size, self.max_objects, self.masks = root / split, size, max_objects, masks

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, i: int) -> tuple[torch.Tensor, ...]:
        info = self.images[self.ids[i]]
        img = Image.open(self.dir / info["file_name"]).convert("RGB")
        sx, sy = self.size / img.width, self.size / img.height
        img = img.resize((self.size, self.size), Image.Resampling.BILINEAR)
        anns = self.anns[self.ids[i]][: self.max_objects]
        boxes = torch.zeros(self.max_objects, 4)
        labels = torch.full((self.max_objects,), -1, dtype=torch.long)
        masks = torch.zeros(self.max_objects, self.size, self.size, dtype=torch.bool)
        for k, a in enumerate(anns):
            x, y, w, h = a["bbox"]
            boxes[k] = torch.tensor([x * sx, y * sy, (x + w) * sx, (y + h) * sy])
            labels[k] = self.cats[a["category_id"]]
            if self.masks and isinstance(a.get("segmentation"), list):
                canvas = Image.new("L", (self.size, self.size), 0)
                for poly in a["segmentation"]:
                    pts = [(poly[j] * sx, poly[j + 1] * sy) for j in range(0, len(poly) - 1, 2)]
                    if len(pts) >= 3:
                        ImageDraw.Draw(canvas).polygon(pts, fill=1)
                masks[k] = torch.from_numpy(np.array(canvas)) > 0
        out = (to_tensor(img), boxes, labels)
        return (*out, masks) if self.masks else out


def coco_loaders(
    root: Path, size: int, global_batch: int, ctx: RunContext, params: dict, masks: bool
) -> Loaders:
    """Train (train2017) and eval (val2017) loaders."""
    m = int(params.get("max_objects", 100))
    return Loaders(
        CocoDetection(root, "train2017", size, m, masks),
        CocoDetection(root, "val2017", size, m, masks),
        global_batch,
        ctx,
        params,
    )
