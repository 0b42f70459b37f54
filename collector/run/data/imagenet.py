"""ImageNet in the standard folder layout: ``<root>/{train,val}/<class>/<image>``."""

from __future__ import annotations

import math
import random
from pathlib import Path
from typing import Any

import torch
from PIL import Image
from torch.utils.data import Dataset

from collector.run.types import Loaders, RunContext, to_tensor

EXTS = {".jpeg", ".jpg", ".png"}


class ImageFolder(Dataset):
    """Images under one folder per class; classes are the sorted names from ``train``."""

    def __init__(self, root: Path, classes: list[str], size: int, train: bool) -> None:
        self.items = [
            (p, i)
            for i, c in enumerate(classes)
            for p in sorted((root / c).iterdir())
            if (root / c).is_dir() and p.suffix.lower() in EXTS
        ]
        if not self.items:
            raise FileNotFoundError(f"no images under {root}")
        self.size, self.train = size, train

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, i: int) -> tuple[torch.Tensor, int]:
        path, label = self.items[i]
        img = Image.open(path).convert("RGB")
        if self.train:
            img = random_resized_crop(img, self.size)
            if random.random() < 0.5:
                img = img.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
        else:
            short = round(self.size * 256 / 224)
            w, h = img.size
            s = short / min(w, h)
            img = img.resize(
                (max(short, round(w * s)), max(short, round(h * s))), Image.Resampling.BILINEAR
            )
            w, h = img.size
            left, top = (w - self.size) // 2, (h - self.size) // 2
            img = img.crop((left, top, left + self.size, top + self.size))
        return to_tensor(img), label


def random_resized_crop(
    img: Any,
    size: int,
    scale: tuple[float, float] = (0.08, 1.0),
    ratio: tuple[float, float] = (3 / 4, 4 / 3),
) -> Any:
    """The Inception-style crop used by the MLPerf ResNet reference."""
    w, h = img.size
    for _ in range(10):
        area = w * h * random.uniform(*scale)
        r = math.exp(random.uniform(math.log(ratio[0]), math.log(ratio[1])))
        cw, ch = round(math.sqrt(area * r)), round(math.sqrt(area / r))
        if 0 < cw <= w and 0 < ch <= h:
            x, y = random.randint(0, w - cw), random.randint(0, h - ch)
            return img.resize((size, size), Image.Resampling.BILINEAR, box=(x, y, x + cw, y + ch))
    m = min(w, h)
    x, y = (w - m) // 2, (h - m) // 2
    return img.resize((size, size), Image.Resampling.BILINEAR, box=(x, y, x + m, y + m))


def imagenet_loaders(
    root: Path, size: int, global_batch: int, ctx: RunContext, params: dict
) -> Loaders:
    """Train/val loaders over ``root/train`` and ``root/val``."""
    classes = sorted(p.name for p in (root / "train").iterdir() if p.is_dir())
    if len(classes) != int(params["num_classes"]):
        raise ValueError(
            f"{root / 'train'}: {len(classes)} classes, expected {params['num_classes']}"
        )
    return Loaders(
        ImageFolder(root / "train", classes, size, True),
        ImageFolder(root / "val", classes, size, False),
        global_batch,
        ctx,
        params,
    )
