import torch

from collector.run.workloads.boxes import average_precision, box_iou, decode, encode, nms, roi_align
from collector.run.workloads.translation import corpus_bleu


def _greedy_nms(boxes, scores, t):
    order = scores.argsort(descending=True).tolist()
    keep = []
    for i in order:
        if all(box_iou(boxes[i : i + 1], boxes[j : j + 1])[0, 0] <= t for j in keep):
            keep.append(i)
    return keep


def test_nms_matches_the_greedy_definition():
    g = torch.Generator().manual_seed(0)
    xy = torch.rand(200, 2, generator=g) * 50
    boxes = torch.cat([xy, xy + 5 + torch.rand(200, 2, generator=g) * 20], 1)
    scores = torch.rand(200, generator=g)
    for t in (0.3, 0.5, 0.7):
        assert nms(boxes, scores, t).tolist() == _greedy_nms(boxes, scores, t)


def test_encode_decode_round_trip_and_iou():
    a = torch.tensor([[0.0, 0, 10, 10], [5, 5, 25, 15]])
    g = torch.tensor([[1.0, 2, 9, 12], [4, 6, 30, 14]])
    assert torch.allclose(decode(encode(g, a, (10, 10, 5, 5)), a, (10, 10, 5, 5)), g, atol=1e-4)
    assert torch.isclose(
        box_iou(a[:1], torch.tensor([[5.0, 0, 15, 10]]))[0, 0], torch.tensor(1 / 3)
    )


def test_roi_align_of_a_linear_ramp_is_exact():
    w = 16
    feat = torch.arange(w, dtype=torch.float32).repeat(w, 1)[None, None].repeat(2, 1, 1, 1)
    rois = torch.tensor([[1, 2.0, 2.0, 10.0, 10.0], [0, 4.0, 0.0, 8.0, 4.0]])
    out = roi_align(feat, rois, 4, 1.0)
    # value at continuous x is x - 0.5; bin centres of [2, 10] are 3, 5, 7, 9
    assert torch.allclose(out[0, 0, 0], torch.tensor([2.5, 4.5, 6.5, 8.5]), atol=1e-5)
    assert torch.allclose(out[1, 0, 0], torch.tensor([4.0, 5.0, 6.0, 7.0]), atol=1e-5)


def test_average_precision_perfect_and_half():
    gt = [(torch.tensor([0]), torch.tensor([[0.0, 0, 10, 10]]))] * 2
    perfect = [(torch.tensor([0.9]), torch.tensor([0]), torch.tensor([[0.0, 0, 10, 10]]))] * 2
    assert average_precision(perfect, gt, 1, [0.5]) == 1.0
    half = [
        perfect[0],
        (torch.tensor([0.8]), torch.tensor([0]), torch.tensor([[20.0, 20, 30, 30]])),
    ]
    ap = average_precision(half, gt, 1, [0.5])
    assert abs(ap - 51 / 101) < 1e-6  # precision 1 up to recall 0.5, then nothing


def test_corpus_bleu():
    ref = [[1, 2, 3, 4, 5, 6]]
    assert corpus_bleu(ref, ref) == 100.0
    assert corpus_bleu([[7, 8, 9]], ref) == 0.0
    short = corpus_bleu([[1, 2, 3, 4, 5]], ref)
    assert 0 < short < 100  # brevity penalty only: exp(1 - 6/5)
    assert abs(short - 100 * 2.718281828 ** (1 - 6 / 5)) < 1e-6
