"""Transformer (MLPerf v0.5 ``transformer``): encoder-decoder self-attention; quality is BLEU.

The base architecture of Vaswani et al.: sinusoidal positions, post-layer-norm blocks, shared
source/target embeddings tied to the output projection (scaled by sqrt(d_model)). Attention uses
``scaled_dot_product_attention`` so fused kernels are used on GPUs.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from collector.run.types import BOS, PAD
from collector.run.workloads.translation import TranslationWorkload


class MultiHeadAttention(nn.Module):
    """Multi-head attention over ``[B, T, D]`` inputs."""

    def __init__(self, d: int, heads: int, dropout: float) -> None:
        super().__init__()
        self.h, self.dropout = heads, dropout
        self.q, self.kv, self.o = nn.Linear(d, d), nn.Linear(d, 2 * d), nn.Linear(d, d)

    def forward(
        self, x: Tensor, mem: Tensor, mask: Tensor | None = None, causal: bool = False
    ) -> Tensor:
        b, t, d = x.shape
        q = self.q(x).view(b, t, self.h, -1).transpose(1, 2)
        k, v = self.kv(mem).view(b, mem.shape[1], 2, self.h, -1).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(
            q,
            k,
            v,
            attn_mask=mask,
            is_causal=causal,
            dropout_p=self.dropout if self.training else 0.0,
        )
        return self.o(y.transpose(1, 2).reshape(b, t, d))


class Block(nn.Module):
    """Post-LN transformer block: self-attention, optional cross-attention, feed-forward."""

    def __init__(self, d: int, heads: int, ff: int, dropout: float, cross: bool) -> None:
        super().__init__()
        self.self_attn = MultiHeadAttention(d, heads, dropout)
        self.cross = MultiHeadAttention(d, heads, dropout) if cross else None
        self.ff = nn.Sequential(nn.Linear(d, ff), nn.ReLU(inplace=True), nn.Linear(ff, d))
        self.norms = nn.ModuleList(nn.LayerNorm(d) for _ in range(3 if cross else 2))
        self.drop = nn.Dropout(dropout)

    def forward(
        self,
        x: Tensor,
        self_mask: Tensor | None = None,
        causal: bool = False,
        mem: Tensor | None = None,
        mem_mask: Tensor | None = None,
    ) -> Tensor:
        x = self.norms[0](x + self.drop(self.self_attn(x, x, self_mask, causal)))
        if self.cross is not None:
            x = self.norms[1](x + self.drop(self.cross(x, mem, mem_mask)))
        return self.norms[-1](x + self.drop(self.ff(x)))


class Transformer(nn.Module):
    """Encoder-decoder Transformer (base: d=512, 8 heads, ff=2048, 6+6 layers)."""

    def __init__(
        self, vocab: int, d: int, heads: int, ff: int, layers: int, dropout: float
    ) -> None:
        super().__init__()
        self.d = d
        self.embed = nn.Embedding(vocab, d, padding_idx=PAD)
        nn.init.normal_(self.embed.weight, std=d**-0.5)
        self.enc = nn.ModuleList(Block(d, heads, ff, dropout, False) for _ in range(layers))
        self.dec = nn.ModuleList(Block(d, heads, ff, dropout, True) for _ in range(layers))
        self.drop = nn.Dropout(dropout)

    def _embed(self, tokens: torch.Tensor) -> torch.Tensor:
        t = tokens.shape[1]
        pos = torch.arange(t, device=tokens.device, dtype=torch.float32)[:, None]
        i = torch.arange(0, self.d, 2, device=tokens.device, dtype=torch.float32)
        ang = pos / torch.pow(10000.0, i / self.d)
        pe = torch.cat([ang.sin(), ang.cos()], 1)
        return self.drop(self.embed(tokens) * math.sqrt(self.d) + pe)

    def encode(self, src: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Encoder output and the key-padding mask (True = attend) for cross-attention."""
        keep = (src != PAD)[:, None, None, :]
        x = self._embed(src)
        for blk in self.enc:
            x = blk(x, self_mask=keep)
        return x, keep

    def decode(self, tgt_in: torch.Tensor, mem: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        """Logits ``[B, T, V]`` (weights tied to the embedding)."""
        y = self._embed(tgt_in)
        for blk in self.dec:
            y = blk(y, causal=True, mem=mem, mem_mask=keep)
        return y @ self.embed.weight.T

    def forward(self, src: torch.Tensor, tgt_in: torch.Tensor) -> torch.Tensor:
        mem, keep = self.encode(src)
        return self.decode(tgt_in, mem, keep)

    @torch.no_grad()
    def greedy(self, src: torch.Tensor, max_len: int) -> torch.Tensor:
        """Greedy decode ``[B, max_len]`` (starting after BOS)."""
        mem, keep = self.encode(src)
        seq = torch.full((src.shape[0], 1), BOS, dtype=torch.long, device=src.device)
        for _ in range(max_len):
            nxt = self.decode(seq, mem, keep)[:, -1].float().argmax(-1, keepdim=True)
            seq = torch.cat([seq, nxt], 1)
        return seq[:, 1:]


class TransformerWorkload(TranslationWorkload):
    """Transformer trained with Adam (beta2 0.98), warm-up and label smoothing."""

    name = "transformer"

    def build_model(self) -> nn.Module:
        """Transformer at the configured size."""
        p = self.params
        return Transformer(
            self.vocab,
            int(p["d_model"]),
            int(p["heads"]),
            int(p["ff"]),
            int(p["layers"]),
            float(p.get("dropout", 0.1)),
        )
