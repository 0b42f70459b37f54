"""GNMT (MLPerf v0.5 ``gnmt``): LSTM encoder-decoder with attention; quality is BLEU.

Following the MLPerf PyTorch reference: the encoder's first layer is bidirectional, the rest
unidirectional with residual connections from the third layer on; the decoder's first LSTM layer
feeds a normalised Bahdanau attention whose context is concatenated to the input of every later
decoder layer and to the classifier.

Under bf16 autocast on a CPU whose oneDNN has no bf16 kernels (one without AVX-512), the LSTMs
run in fp32, as if autocast's policy listed them among its fp32 operations: oneDNN has no bf16
LSTM there, and autocast would hand it bf16 inputs. The rest of the model runs in bf16, and the
run's ``collector_run`` event lists ``lstm`` under ``fp32_operations``.
"""

from __future__ import annotations

from functools import cache

import torch
from torch import nn

from collector.run.types import BOS, PAD
from collector.run.workloads.translation import TranslationWorkload


@cache
def cpu_has_bf16() -> bool:
    """Whether this CPU's oneDNN runs bf16 kernels (the LSTM among them)."""
    supported = getattr(torch.ops.mkldnn, "_is_mkldnn_bf16_supported", None)
    return True if supported is None else bool(supported())


def lstm_in_fp32(device_type: str, bf16: bool) -> bool:
    """Whether the LSTMs run in fp32 on `device_type` under autocast (to bf16 if `bf16`): on a
    CPU without bf16 kernels, under bf16."""
    return device_type == "cpu" and bf16 and not cpu_has_bf16()


def recur(lstm: nn.LSTM, x: torch.Tensor, state: tuple | None = None) -> tuple:
    """``lstm(x, state)``; in fp32 where `lstm_in_fp32` says so."""
    cpu_bf16 = (
        torch.is_autocast_enabled("cpu") and torch.get_autocast_dtype("cpu") == torch.bfloat16
    )
    if lstm_in_fp32(x.device.type, cpu_bf16):
        with torch.autocast("cpu", enabled=False):
            return lstm(x.float(), state)
    return lstm(x, state)


class BahdanauAttention(nn.Module):
    """Normalised additive attention (``v`` scaled to a learned norm ``g``)."""

    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.q = nn.Linear(hidden, hidden, bias=False)
        self.k = nn.Linear(hidden, hidden, bias=False)
        self.v = nn.Parameter(torch.empty(hidden).uniform_(-0.1, 0.1))
        self.g = nn.Parameter(torch.tensor(1.0 / hidden**0.5))
        self.b = nn.Parameter(torch.zeros(hidden))

    def forward(self, q: torch.Tensor, keys: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """``q [B,T,H]``, ``keys [B,S,H]``, ``mask [B,S]`` (True = pad) -> ``[B,T,H]``."""
        v = self.g * self.v / self.v.norm()
        e = torch.tanh(self.q(q)[:, :, None] + self.k(keys)[:, None] + self.b) @ v
        w = e.masked_fill(mask[:, None], float("-inf")).softmax(-1)
        return w @ keys


class GNMT(nn.Module):
    """GNMT with ``layers`` encoder and decoder layers of width ``hidden``."""

    def __init__(self, vocab: int, hidden: int, layers: int, dropout: float = 0.2) -> None:
        super().__init__()
        self.embed_src = nn.Embedding(vocab, hidden, padding_idx=PAD)
        self.embed_tgt = nn.Embedding(vocab, hidden, padding_idx=PAD)
        self.enc0 = nn.LSTM(hidden, hidden // 2, batch_first=True, bidirectional=True)
        self.enc = nn.ModuleList(
            nn.LSTM(hidden, hidden, batch_first=True) for _ in range(layers - 1)
        )
        self.dec0 = nn.LSTM(hidden, hidden, batch_first=True)
        self.attn = BahdanauAttention(hidden)
        self.dec = nn.ModuleList(
            nn.LSTM(2 * hidden, hidden, batch_first=True) for _ in range(layers - 1)
        )
        self.out = nn.Linear(2 * hidden, vocab)
        self.drop = nn.Dropout(dropout)

    def encode(self, src: torch.Tensor) -> torch.Tensor:
        """Encoder outputs ``[B, S, H]``."""
        x, _ = recur(self.enc0, self.drop(self.embed_src(src)))
        for i, lstm in enumerate(self.enc):
            y, _ = recur(lstm, self.drop(x))
            x = y + x if i >= 1 else y
        return x

    def decode(
        self,
        tgt_in: torch.Tensor,
        keys: torch.Tensor,
        mask: torch.Tensor,
        state: list | None = None,
    ) -> tuple[torch.Tensor, list]:
        """Logits ``[B, T, V]`` and the new recurrent state (for step-by-step decoding)."""
        state = state or [None] * (1 + len(self.dec))
        new_state = []
        x, s = recur(self.dec0, self.drop(self.embed_tgt(tgt_in)), state[0])
        new_state.append(s)
        ctx = self.attn(x, keys, mask)
        for i, lstm in enumerate(self.dec):
            y, s = recur(lstm, self.drop(torch.cat([x, ctx], -1)), state[i + 1])
            new_state.append(s)
            x = y + x if i >= 1 else y
        return self.out(self.drop(torch.cat([x, ctx], -1))), new_state

    def forward(self, src: torch.Tensor, tgt_in: torch.Tensor) -> torch.Tensor:
        keys = self.encode(src)
        return self.decode(tgt_in, keys, src == PAD)[0]

    @torch.no_grad()
    def greedy(self, src: torch.Tensor, max_len: int) -> torch.Tensor:
        """Greedy decode ``[B, max_len]`` (starting after BOS)."""
        keys, mask = self.encode(src), src == PAD
        tok = torch.full((src.shape[0], 1), BOS, dtype=torch.long, device=src.device)
        state, out = None, []
        for _ in range(max_len):
            logits, state = self.decode(tok, keys, mask, state)
            tok = logits[:, -1:].float().argmax(-1)
            out.append(tok)
        return torch.cat(out, 1)


class GNMTWorkload(TranslationWorkload):
    """GNMT trained with Adam and label smoothing."""

    name = "gnmt"

    def fp32_operations(self, precision: str) -> list[str]:
        """The LSTMs, where `lstm_in_fp32` says so."""
        return ["lstm"] if lstm_in_fp32(self.ctx.device.type, precision == "bf16") else []

    def build_model(self) -> nn.Module:
        """GNMT at the configured width and depth."""
        p = self.params
        return GNMT(self.vocab, int(p["hidden"]), int(p["layers"]), float(p.get("dropout", 0.2)))
