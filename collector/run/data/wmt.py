"""WMT English-German as tokenised (e.g. BPE) parallel text files and a vocabulary file.

Defaults are the MLPerf GNMT file names; override with ``params.files``. Tokens are separated by
whitespace; the vocabulary file has one token per line (first column). Ids 0-2 are PAD, BOS,
EOS and 3 is UNK.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from torch import Tensor

from collector.run.types import EOS, SPECIALS, pad_batch

DEFAULT_FILES = {
    "train_src": "train.tok.clean.bpe.32000.en",
    "train_tgt": "train.tok.clean.bpe.32000.de",
    "eval_src": "newstest2014.tok.bpe.32000.en",
    "eval_tgt": "newstest2014.tok.bpe.32000.de",
    "vocab": "vocab.bpe.32000",
}
UNK = SPECIALS


def read_vocab(path: Path) -> dict[str, int]:
    """Token -> id, after the four reserved ids."""
    vocab: dict[str, int] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        tok = line.split()[0] if line.split() else ""
        if tok and tok not in vocab:
            vocab[tok] = len(vocab) + SPECIALS + 1
    return vocab


def encode_file(path: Path, vocab: dict[str, int], max_len: int, bos: bool) -> list[list[int]]:
    """Each line as ids (truncated to ``max_len`` tokens), EOS-terminated, optionally BOS-led."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        ids = [vocab.get(t, UNK) for t in line.split()][:max_len]
        out.append(([1] if bos else []) + ids + [EOS])
    return out


def load_wmt(
    root: Path, params: dict[str, Any]
) -> tuple[tuple[Tensor, Tensor], tuple[Tensor, Tensor], int]:
    """((train_src, train_tgt), (eval_src, eval_tgt), vocab_size) as padded id tensors."""
    files = {**DEFAULT_FILES, **params.get("files", {})}
    vocab = read_vocab(root / files["vocab"])
    n = int(params["max_len"])
    splits = []
    for s, t in (("train_src", "train_tgt"), ("eval_src", "eval_tgt")):
        src = encode_file(root / files[s], vocab, n, bos=False)
        tgt = encode_file(root / files[t], vocab, n, bos=True)
        if len(src) != len(tgt):
            raise ValueError(f"{files[s]} and {files[t]} have different line counts")
        splits.append((pad_batch(src, n + 1), pad_batch(tgt, n + 2)))
    return splits[0], splits[1], len(vocab) + SPECIALS + 1
