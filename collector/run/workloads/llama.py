"""Llama language models (MLPerf v5.1 ``llama31_8b`` and ``llama2_70b_lora``) on synthetic tokens.

Both are Hugging Face ``transformers`` Llama models built from a config with random weights
(throughput does not depend on their values; nothing is downloaded). ``llama31_8b`` pre-trains
every weight; ``llama2_70b_lora`` freezes the base model in bf16 and trains ``peft`` LoRA
adapters of the reference's rank and targets. The models are built on the meta device and
materialised by :mod:`collector.run.sharded`, already sharded over the data-parallel ranks.

At the ``throughput`` scale a batch is uniformly random token ids; at ``tiny`` the tokens follow
a fixed random successor table (each token's next one), which a model can learn: the quality is
the held-out loss (log perplexity, lower is better), a pipeline check, never evidence.
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import nn

from collector.run.types import Batch, RunContext, generator
from collector.run.workloads.base import Workload, optional_module

#: what a throughput run of these workloads measures, in the logs and on every page
TOKENS_LABEL = "compute throughput on synthetic tokens, data loading not included"


def _transformers() -> Any:
    return optional_module("transformers", "the Llama workloads need", "llm")


class LlamaWorkload(Workload):
    """A causal Llama language model trained on next-token prediction over synthetic tokens.

    ``params``: the architecture (``vocab``, ``d_model``, ``layers``, ``heads``, ``kv_heads``,
    ``ffn``, ``rope``: the ``transformers`` rope parameters), ``max_sequence_length``,
    ``batch_size`` (sequences per step), ``micro_batch`` (sequences per forward and backward
    pass), and at ``tiny`` the synthetic data sizes. Where the suite's
    ``activation_checkpointing`` is true every decoder layer recomputes its activations in the
    backward pass.
    """

    sharded = True
    measures = TOKENS_LABEL

    def __init__(self, params: dict[str, Any], scale: str, ctx: RunContext) -> None:
        super().__init__(params, scale, ctx)
        self.seq_len = int(params["max_sequence_length"])
        self.vocab = int(params["vocab"])
        self.tokens_per_sample = self.seq_len
        train, held_out = self.synthetic_sizes()
        tokens = self._tokens(train + held_out)
        self.hold_out([tokens], held_out)
        self.eval_batch = max(1, int(params.get("micro_batch", 1)))

    def config(self) -> Any:
        """The ``transformers`` LlamaConfig of ``params``."""
        p = self.params
        return _transformers().LlamaConfig(
            vocab_size=self.vocab,
            hidden_size=int(p["d_model"]),
            intermediate_size=int(p["ffn"]),
            num_hidden_layers=int(p["layers"]),
            num_attention_heads=int(p["heads"]),
            num_key_value_heads=int(p["kv_heads"]),
            max_position_embeddings=self.seq_len,
            rms_norm_eps=float(p.get("rms_norm_eps", 1e-5)),
            rope_parameters=dict(p["rope"]),
            tie_word_embeddings=False,
            use_cache=False,
            attn_implementation="sdpa",
        )

    def build_model(self) -> nn.Module:
        """The model with its trainable parameters marked (on the current default device)."""
        return _transformers().LlamaForCausalLM(self.config())

    @property
    def decoder_layers(self) -> type[nn.Module]:
        """The class of one decoder layer: the unit of sharding, recomputation and
        compilation."""
        return _transformers().models.llama.modeling_llama.LlamaDecoderLayer

    def reset_buffers(self, model: nn.Module, device: torch.device) -> None:
        """Recompute the rotary embedding's frequencies, which a model built on the meta device
        does not hold."""
        hf = _transformers()
        rotary = hf.models.llama.modeling_llama.LlamaRotaryEmbedding
        for m in model.modules():
            if isinstance(m, rotary):
                init = hf.modeling_rope_utils.ROPE_INIT_FUNCTIONS.get(m.rope_type)
                inv_freq, _ = (init or m.compute_default_rope_parameters)(m.config, device)
                m.inv_freq = inv_freq
                m.original_inv_freq = inv_freq.clone()

    def _tokens(self, n: int) -> torch.Tensor:
        """``n`` sequences of ``max_sequence_length + 1`` tokens (inputs and next tokens)."""
        g = generator(self.data_seed, self.ctx.device)
        shape = (n, self.seq_len + 1)
        if self.scale == "throughput":
            return torch.randint(0, self.vocab, shape, generator=g, device=self.ctx.device)
        successor = torch.randperm(self.vocab, generator=g, device=self.ctx.device)
        seqs = torch.empty(shape, dtype=torch.long, device=self.ctx.device)
        seqs[:, 0] = torch.randint(0, self.vocab, (n,), generator=g, device=self.ctx.device)
        for t in range(1, shape[1]):
            seqs[:, t] = successor[seqs[:, t - 1]]
        return seqs

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        tokens = batch[0]
        logits = model(input_ids=tokens[:, :-1]).logits
        return nn.functional.cross_entropy(
            logits.flatten(0, 1).float(), tokens[:, 1:].flatten(), reduction="mean"
        )

    def quality(self, model: nn.Module) -> float:
        """Mean next-token loss (log perplexity) over the held-out sequences."""
        total, n = 0.0, 0
        for batch in self.eval_batches():
            total += float(self.loss(model, batch)) * batch[0].shape[0]
            n += batch[0].shape[0]
        return total / max(1, n)

    def target_reached(self, quality: float, target: float) -> bool:
        return math.isfinite(quality) and quality <= target

    def log_params(self) -> dict[str, Any]:
        """Hyperparameters the round's logs state, logged as events of their own."""
        return {"max_sequence_length": self.seq_len}

    def model_flops(self, batch: Batch) -> int:
        """Model FLOPs of one optimizer step on ``batch`` (this rank's sequences): a forward and
        backward pass through every matrix product (6 per trained weight and token, 4 per
        frozen one, which needs no weight gradient) and the attention scores and values
        (12 x layers x width x sequence length per token, the causal mask not discounted), as
        MFU is usually counted. Recomputed activations are not model FLOPs."""
        p = self.params
        d, layers, seq = int(p["d_model"]), int(p["layers"]), self.seq_len
        per_token = 12 * layers * d * seq + self.flops_per_token_weights()
        return int(per_token * batch[0].shape[0] * seq)

    def flops_per_token_weights(self) -> int:
        """6 FLOPs per token for each weight of a matrix product (all trained)."""
        return 6 * self.matmul_weights()

    def matmul_weights(self) -> int:
        """Weights of the matrix products: the decoder layers and the output projection (the
        embedding is a lookup)."""
        p = self.params
        d, ffn, layers = int(p["d_model"]), int(p["ffn"]), int(p["layers"])
        kv = d * int(p["kv_heads"]) // int(p["heads"])
        per_layer = 2 * d * d + 2 * d * kv + 3 * d * ffn
        return layers * per_layer + d * self.vocab


class Llama31Workload(LlamaWorkload):
    """Llama 3.1 8B pre-training from random initialisation (``llama31_8b``)."""

    name = "llama31_8b"


class Llama2LoRAWorkload(LlamaWorkload):
    """Llama 2 70B fine-tuned with LoRA adapters (``llama2_70b_lora``): the base model frozen in
    bf16, adapters of ``lora_rank`` and ``lora_alpha`` on ``lora_targets``."""

    name = "llama2_70b_lora"
    base_dtype = torch.bfloat16

    def build_model(self) -> nn.Module:
        import peft

        p = self.params
        base = super().build_model().to(self.base_dtype)
        lora = peft.LoraConfig(
            r=int(p["lora_rank"]),
            lora_alpha=int(p["lora_alpha"]),
            lora_dropout=float(p.get("lora_dropout", 0.0)),
            target_modules=list(p["lora_targets"]),
            bias="none",
        )
        return peft.get_peft_model(base, lora)

    def log_params(self) -> dict[str, Any]:
        p = self.params
        return super().log_params() | {
            "lora_rank": int(p["lora_rank"]),
            "lora_alpha": int(p["lora_alpha"]),
        }

    def flops_per_token_weights(self) -> int:
        """4 FLOPs per token for each frozen weight (forward and input gradient), 6 for each
        adapter weight."""
        p = self.params
        d, layers, rank = int(p["d_model"]), int(p["layers"]), int(p["lora_rank"])
        kv = d * int(p["kv_heads"]) // int(p["heads"])
        outputs = {"q_proj": d, "k_proj": kv, "v_proj": kv, "o_proj": d}
        adapters = layers * sum(rank * (d + outputs[t]) for t in p["lora_targets"])
        return 4 * self.matmul_weights() + 6 * adapters
