"""The full-scale loaders, on miniature data sets written here in the real on-disk formats."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from collector.run.types import RunContext
from collector.run.workloads import workload_class

PIL = pytest.importorskip("PIL.Image")
CPU = RunContext(device=torch.device("cpu"))


def _image(path: Path, colour: tuple[int, int, int], size=(40, 30)) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    PIL.new("RGB", size, colour).save(path)


def test_imagenet_folder_layout_trains_resnet(tmp_path):
    for split in ("train", "val"):
        for c, colour in (("n01440764", (255, 0, 0)), ("n01443537", (0, 0, 255))):
            for i in range(4):
                _image(tmp_path / split / c / f"{c}_{i}.JPEG", colour)
    params = {
        "image_size": 32,
        "width": 8,
        "layers": [1, 1, 1, 1],
        "num_classes": 2,
        "batch_size": 4,
        "workers": 0,
    }
    w = workload_class("resnet")(
        params, "full", RunContext(device=torch.device("cpu"), data_root=tmp_path)
    )
    x, y = next(iter(w.train_batches(1)))
    assert x.shape == (4, 3, 32, 32) and set(y.tolist()) <= {0, 1}
    model = w.build_model()
    w.loss(model, (x, y)).backward()
    assert w.eval_size() == 8 and 0.0 <= w.evaluate(model) <= 1.0
    with pytest.raises(ValueError, match="2 classes, expected 1000"):
        workload_class("resnet")(
            {**params, "num_classes": 1000},
            "full",
            RunContext(device=torch.device("cpu"), data_root=tmp_path),
        )


def _coco(tmp_path: Path) -> None:
    cats = [{"id": 3, "name": "car"}, {"id": 7, "name": "train"}]
    for split in ("train2017", "val2017"):
        images, anns = [], []
        for k in range(2):
            _image(tmp_path / split / f"{k:012d}.jpg", (10, 200, 10), size=(200, 100))
            images.append({"id": k + 1, "file_name": f"{k:012d}.jpg", "width": 200, "height": 100})
            anns.append(
                {
                    "id": 10 + k,
                    "image_id": k + 1,
                    "category_id": 7,
                    "iscrowd": 0,
                    "bbox": [20, 10, 100, 50],
                    "segmentation": [[20, 10, 120, 10, 120, 60, 20, 60]],
                }
            )
            anns.append(
                {
                    "id": 20 + k,
                    "image_id": k + 1,
                    "category_id": 3,
                    "iscrowd": 1,
                    "bbox": [0, 0, 5, 5],
                    "segmentation": {"counts": [], "size": [100, 200]},
                }
            )
        (tmp_path / "annotations").mkdir(exist_ok=True)
        doc = {"images": images, "annotations": anns, "categories": cats}
        (tmp_path / "annotations" / f"instances_{split}.json").write_text(json.dumps(doc))


def test_coco_json_and_images(tmp_path):
    from collector.run.data.coco import CocoDetection

    _coco(tmp_path)
    ds = CocoDetection(tmp_path, "train2017", 64, max_objects=3, masks=True)
    assert len(ds) == 2
    img, boxes, labels, masks = ds[0]
    assert img.shape == (3, 64, 64)
    assert labels.tolist() == [1, -1, -1]  # category 7 -> 1; the crowd box is skipped
    assert torch.allclose(boxes[0], torch.tensor([20 * 0.32, 10 * 0.64, 120 * 0.32, 60 * 0.64]))
    area = masks[0].sum().item()
    assert abs(area - 32 * 32) <= 2 * (32 + 32)  # the 100x50 rectangle at 0.32 x 0.64 scale
    params = {
        "image_size": 64,
        "width": 8,
        "layers": [1, 1, 1],
        "extras": [16, 16, 16],
        "anchors": [4, 6, 4, 4],
        "num_classes": 2,
        "max_objects": 3,
        "batch_size": 2,
        "workers": 0,
        "map": "0.5",
    }
    w = workload_class("ssd")(
        params, "full", RunContext(device=torch.device("cpu"), data_root=tmp_path)
    )
    batch = next(iter(w.train_batches(1)))
    w.loss(w.build_model(), batch).backward()


def test_wmt_text_files_train_gnmt(tmp_path):
    (tmp_path / "vocab.bpe.32000").write_text("the\nhouse\nis\nsmall\ndas\nhaus\nist\nklein\n")
    en = ["the house is small", "the house", "is small"] * 2
    de = ["das haus ist klein", "das haus", "ist klein"] * 2
    for name, lines in (
        ("train.tok.clean.bpe.32000.en", en),
        ("train.tok.clean.bpe.32000.de", de),
        ("newstest2014.tok.bpe.32000.en", en[:3] + ["unknownword"]),
        ("newstest2014.tok.bpe.32000.de", de[:3] + ["x"]),
    ):
        (tmp_path / name).write_text("\n".join(lines) + "\n")
    params = {"max_len": 8, "hidden": 16, "layers": 2, "batch_size": 2, "dropout": 0.0}
    w = workload_class("gnmt")(
        params, "full", RunContext(device=torch.device("cpu"), data_root=tmp_path)
    )
    assert w.vocab == 12  # 4 reserved ids + 8 tokens
    src, tgt = w.eval_set
    assert src[0].tolist()[:5] == [4, 5, 6, 7, 2] and tgt[0].tolist()[:6] == [1, 8, 9, 10, 11, 2]
    assert src[3].tolist()[:2] == [3, 2]  # unknown word -> UNK, then EOS
    model = w.build_model()
    w.loss(model, next(iter(w.train_batches(1)))).backward()
    assert 0.0 <= w.evaluate(model) <= 100.0


def test_movielens_ratings_leave_one_out(tmp_path):
    from collector.run.data.movielens import load_movielens

    rows = [
        "userId,movieId,rating,timestamp",
        "10,100,4.0,5",
        "10,200,3.0,9",
        "10,300,5.0,1",
        "20,200,1.0,3",
        "20,100,2.0,2",
        "30,300,5.0,7",
        "30,400,4.0,7",
    ]
    (tmp_path / "ratings.csv").write_text("\n".join(rows) + "\n")
    train, test, users, items = load_movielens(tmp_path / "ratings.csv")
    assert (users, items) == (3, 4)
    # latest per user: 10 -> movie 200 (item 1), 20 -> 200 (1), 30 -> 400 (3, by file order)
    assert test.tolist() == [1, 1, 3]
    assert sorted(map(tuple, train.tolist())) == [(0, 0), (0, 2), (1, 0), (2, 2)]


SGF = "(;GM[1]SZ[9]RE[W+3.5];B[ba];W[aa];B[ca];W[ab];B[bb];W[tt];B[ac])"


def test_sgf_replay_with_capture(tmp_path):
    from collector.run.data.sgf import load_games, parse_sgf

    size, result, moves = parse_sgf(SGF)
    assert (size, result) == (9, "W+3.5") and moves[0] == (1, 1) and moves[5] == (-1, None)
    (tmp_path / "g").mkdir()
    (tmp_path / "g" / "one.sgf").write_text(SGF)
    (tmp_path / "g" / "big.sgf").write_text(SGF.replace("SZ[9]", "SZ[19]"))
    x, move, value = load_games(tmp_path, 9)
    assert x.shape == (7, 17, 9, 9) and move.tolist() == [1, 0, 2, 9, 10, 81, 18]
    assert value.tolist() == [-1, 1, -1, 1, -1, 1, -1]  # white won
    # before the last move (black at ac) black has captured nothing yet; after B[ac] white's
    # stones at aa and ab have no liberties. The last position (black to move) shows them.
    last = x[-1]
    assert last[1, 0, 0] == 1 and last[1, 1, 0] == 1  # opponent (white) stones at aa, ab
    from collector.run.data.sgf import play

    board = [0] * 81
    for colour, p in [(1, 1), (-1, 0), (1, 2), (-1, 9), (1, 10), (1, 18)]:
        play(board, p, colour, 9)
    assert board[0] == 0 and board[9] == 0  # captured
