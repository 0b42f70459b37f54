"""Shared pieces of the two translation workloads: data, corpus BLEU and the training loop hooks.

The synthetic language pair: a source sentence is a random token sequence; its translation maps
every token through a fixed, seeded permutation of the vocabulary and reverses word order in
chunks of three (so the model must attend, not copy position by position). Quality is corpus
BLEU (0-100, up to 4-grams, brevity penalty) of greedy decodes against the references.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any, cast

import torch
import torch.nn.functional as F
from torch import nn

from collector.run.data.wmt import load_wmt
from collector.run.types import BOS, EOS, PAD, SPECIALS, Batch, RunContext, generator, pad_batch
from collector.run.workloads.base import Workload


def corpus_bleu(hyps: Sequence[Sequence[int]], refs: Sequence[Sequence[int]], n: int = 4) -> float:
    """Corpus BLEU (Papineni et al.) in 0-100 with uniform weights and the brevity penalty."""
    match = [0] * n
    total = [0] * n
    hyp_len = ref_len = 0
    for h, r in zip(hyps, refs, strict=True):
        hyp_len += len(h)
        ref_len += len(r)
        for k in range(1, n + 1):
            hc = Counter(tuple(h[i : i + k]) for i in range(len(h) - k + 1))
            rc = Counter(tuple(r[i : i + k]) for i in range(len(r) - k + 1))
            match[k - 1] += sum(min(c, rc[g]) for g, c in hc.items())
            total[k - 1] += max(len(h) - k + 1, 0)
    if hyp_len == 0 or min(match) == 0:
        return 0.0
    log_p = sum(math.log(m / t) for m, t in zip(match, total, strict=True)) / n
    bp = 1.0 if hyp_len > ref_len else math.exp(1 - ref_len / hyp_len)
    return 100.0 * bp * math.exp(log_p)


@torch.no_grad()
def synthetic_pairs(
    n: int, vocab: int, min_len: int, max_len: int, seed: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` (source, target) pairs: target = source mapped by a permutation, chunk-reversed."""
    g = generator(seed)
    perm = torch.randperm(vocab - SPECIALS, generator=generator(seed + 1)) + SPECIALS
    lens = torch.randint(min_len, max_len + 1, (n,), generator=g)
    toks = torch.randint(SPECIALS, vocab, (n, max_len), generator=g)
    srcs, tgts = [], []
    for i in range(n):
        s = toks[i, : lens[i]].tolist()
        mapped = [int(perm[t - SPECIALS]) for t in s]
        t: list[int] = []
        for j in range(0, len(mapped), 3):
            t += mapped[j : j + 3][::-1]
        srcs.append([*s, EOS])
        tgts.append([BOS, *t, EOS])
    return pad_batch(srcs, max_len + 1), pad_batch(tgts, max_len + 2)


class TranslationWorkload(Workload):
    """Common data, loss and BLEU evaluation; subclasses build the model and its decoder."""

    def __init__(self, params: dict[str, Any], scale: str, ctx: RunContext) -> None:
        super().__init__(params, scale, ctx)
        p = params
        self.max_len = int(p["max_len"])
        if scale == "full":
            (tr_src, tr_tgt), (ev_src, ev_tgt), self.vocab = load_wmt(self.data_path(), p)
            src, tgt, n_ev = torch.cat([tr_src, ev_src]), torch.cat([tr_tgt, ev_tgt]), len(ev_src)
        else:
            self.vocab = int(p["vocab"])
            n_tr, n_ev = self.synthetic_sizes()
            src, tgt = synthetic_pairs(
                n_tr + n_ev, self.vocab, int(p["min_len"]), self.max_len, self.data_seed
            )
        self.hold_out((src, tgt), n_ev)

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        """Label-smoothed cross entropy under teacher forcing, ignoring padding."""
        src, tgt = batch
        logits = model(src, tgt[:, :-1])
        return F.cross_entropy(
            logits.float().reshape(-1, logits.shape[-1]),
            tgt[:, 1:].reshape(-1),
            ignore_index=PAD,
            label_smoothing=float(self.params.get("label_smoothing", 0.1)),
        )

    def quality(self, model: nn.Module) -> float:
        """Corpus BLEU of greedy decodes on the held-out pairs."""
        hyps, refs = [], []
        for src, tgt in self.eval_batches():
            out = cast(Any, model).greedy(src, self.max_len + 2).tolist()
            for h, r in zip(out, tgt.tolist(), strict=True):
                hyps.append(_strip(h))
                refs.append(_strip(r[1:]))
        return corpus_bleu(hyps, refs)


def _strip(seq: list[int]) -> list[int]:
    out = []
    for t in seq:
        if t == EOS:
            break
        if t not in (PAD, BOS):
            out.append(t)
    return out
