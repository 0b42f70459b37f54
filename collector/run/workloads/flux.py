"""Flux.1 (MLPerf v5.1 ``flux1``) on synthetic latents and text-encoder outputs: quality is the
validation loss (lower is better).

The model is diffusers' ``FluxTransformer2DModel``, the reference's transformer: at the
published size 19 double-stream and 38 single-stream blocks of width 3072 (24 heads of 128),
image latents of 16 channels in 2 x 2 patches (64 features a token), T5-XXL text states of
width 4096 and a CLIP pooled vector of 768 as its conditioning, no guidance embedding, 11.9
billion parameters. Random weights; nothing is downloaded, and no VAE or text encoder runs: the
latents and text-encoder outputs are synthetic inputs of their published shapes. It trains with
the rectified-flow objective: a latent ``x`` and noise ``e`` mixed at a time ``t`` drawn from
a logit-normal distribution, ``(1 - t) x + t e``, and the velocity ``e - x`` regressed in mean
squared error. The model is built on the meta device and sharded with FSDP2 per block
(:mod:`collector.run.sharded`), as the reference shards it.

At ``tiny`` the latents are a fixed linear function of the pooled text vector, which a model can
learn; the quality is the held-out loss averaged over eight fixed times, as the reference
evaluates, a pipeline check, never evidence.
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import nn

from collector.run.types import Batch, RunContext, generator
from collector.run.workloads.base import Workload, optional_module

EVAL_TIMES = [(i + 0.5) / 8 for i in range(8)]


def _diffusers() -> Any:
    return optional_module("diffusers", "the v5.1 flux1 workload needs", "suite")


def flux_config(p: dict[str, Any]) -> dict[str, Any]:
    """The ``FluxTransformer2DModel`` arguments of the suite's ``params``."""
    return {
        "patch_size": 1,
        "in_channels": int(p["latent_channels"]),
        "num_layers": int(p["layers"]),
        "num_single_layers": int(p["single_layers"]),
        "attention_head_dim": int(p["head_dim"]),
        "num_attention_heads": int(p["heads"]),
        "joint_attention_dim": int(p["text_dim"]),
        "pooled_projection_dim": int(p["pooled_dim"]),
        "guidance_embeds": False,
        "axes_dims_rope": tuple(int(a) for a in p["rope_axes"]),
    }


def _rows(name: str) -> str:
    """What a linear layer of the Flux transformer transforms, by its name: one row per sample
    (the conditioning and the modulations computed from it), the image tokens, the text tokens,
    or both (the single-stream blocks)."""
    if name.startswith("time_text_embed") or name.endswith("norm.linear") or ".norm" in name:
        return "sample"
    if name.startswith("norm_out"):
        return "sample"
    if name.startswith("single_transformer_blocks"):
        return "joint"
    if name == "context_embedder" or "add_" in name or "ff_context" in name:
        return "text"
    return "image"


class FluxWorkload(Workload):
    """The Flux.1 transformer trained with rectified flow on synthetic conditioning.

    ``params``: ``layers`` and ``single_layers`` (blocks), ``heads``, ``head_dim``,
    ``latent_channels`` (per token, after patching), ``latent_size`` (tokens per side),
    ``text_tokens``, ``text_dim``, ``pooled_dim``, ``rope_axes``, ``batch_size``,
    ``micro_batch`` and at ``tiny`` the sample counts."""

    name = "flux1"
    sharded = True

    def __init__(self, params: dict[str, Any], scale: str, ctx: RunContext) -> None:
        super().__init__(params, scale, ctx)
        p = params
        side = int(p["latent_size"])
        self.tokens, self.channels = side * side, int(p["latent_channels"])
        self.text_tokens, self.text_dim = int(p["text_tokens"]), int(p["text_dim"])
        self.pooled_dim = int(p["pooled_dim"])
        rows, cols = torch.meshgrid(torch.arange(side), torch.arange(side), indexing="ij")
        ids = torch.stack([torch.zeros_like(rows), rows, cols], -1).reshape(-1, 3)
        self.img_ids = ids.float().to(ctx.device)
        self.txt_ids = torch.zeros(self.text_tokens, 3, device=ctx.device)
        self.eval_batch = max(1, int(p.get("micro_batch", 1)))
        train, held_out = self.synthetic_sizes()
        self.hold_out(list(self._samples(train + held_out)), held_out)
        self.noise = generator(ctx.seed * 7919 + ctx.rank, ctx.device)
        if ctx.device.type == "cuda":
            # cuDNN's attention backward fails at the published size (torch 2.11 on an H200: an
            # illegal memory access); flash attention computes the same
            torch.backends.cuda.enable_cudnn_sdp(False)

    def _samples(self, n: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``n`` (latents, text states, pooled text vectors)."""
        g, device = generator(self.data_seed, self.ctx.device), self.ctx.device
        text = torch.randn(n, self.text_tokens, self.text_dim, generator=g, device=device)
        pooled = torch.randn(n, self.pooled_dim, generator=g, device=device)
        shape = (n, self.tokens, self.channels)
        if self.scale == "throughput":
            return torch.randn(shape, generator=g, device=device), text, pooled
        mix = torch.randn(self.pooled_dim, self.tokens * self.channels, generator=g, device=device)
        latents = (pooled @ mix / self.pooled_dim**0.5).reshape(shape)
        return latents, text, pooled

    def build_model(self) -> nn.Module:
        return _diffusers().FluxTransformer2DModel(**flux_config(self.params))

    @property
    def decoder_layers(self) -> tuple[type[nn.Module], ...]:
        """The block classes: the units of sharding, recomputation and compilation."""
        flux = _diffusers().models.transformers.transformer_flux
        return (flux.FluxTransformerBlock, flux.FluxSingleTransformerBlock)

    def reset_buffers(self, model: nn.Module, device: torch.device) -> None:
        """Nothing to recompute: the rotary embedding is computed in every forward pass."""

    def velocity_loss(
        self, model: nn.Module, batch: Batch, t: torch.Tensor, g: torch.Generator
    ) -> torch.Tensor:
        """Mean squared error of the predicted velocity at times ``t`` (one per sample), the
        noise drawn from ``g``."""
        latents, text, pooled = batch
        noise = torch.randn(latents.shape, generator=g, device=latents.device)
        tt = t[:, None, None]
        mixed = (1 - tt) * latents + tt * noise
        pred = model(
            hidden_states=mixed,
            encoder_hidden_states=text,
            pooled_projections=pooled,
            timestep=t,
            img_ids=self.img_ids,
            txt_ids=self.txt_ids,
            return_dict=False,
        )[0]
        return nn.functional.mse_loss(pred.float(), (noise - latents).float())

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        n, device = batch[0].shape[0], batch[0].device
        t = torch.sigmoid(torch.randn(n, generator=self.noise, device=device))
        return self.velocity_loss(model, batch, t, self.noise)

    def quality(self, model: nn.Module) -> float:
        """The held-out loss averaged over the eight evaluation times."""
        total, n = 0.0, 0
        g = generator(self.data_seed + 1, self.ctx.device)  # the same noise at every evaluation
        for batch in self.eval_batches():
            for t in EVAL_TIMES:
                times = torch.full((batch[0].shape[0],), t, device=batch[0].device)
                total += float(self.velocity_loss(model, batch, times, g)) * batch[0].shape[0]
                n += batch[0].shape[0]
        return total / max(1, n)

    def model_flops(self, batch: Batch) -> int:
        """Model FLOPs of one optimizer step on ``batch``: 6 per weight of every linear layer
        and row it transforms (image tokens, text tokens, both in the single-stream blocks, one
        row per sample for the time and pooled-text conditioning), and the joint attention's
        scores and values (12 x width x (image + text tokens)^2 per sample and block), as MFU
        is usually counted. Recomputed activations are not model FLOPs."""
        img, txt = self.tokens, self.text_tokens
        rows = {"sample": 1, "image": img, "text": txt, "joint": img + txt}
        linear = sum(6 * i * o * rows[kind] for kind, i, o in self.linears())
        p = self.params
        blocks = int(p["layers"]) + int(p["single_layers"])
        width = int(p["heads"]) * int(p["head_dim"])
        attention = 12 * width * (img + txt) ** 2 * blocks
        return int(batch[0].shape[0] * (linear + attention))

    def linears(self) -> list[tuple[str, int, int]]:
        """(rows it transforms, in, out) of every linear layer of the model (built once on the
        meta device)."""
        if not hasattr(self, "_linears"):
            with torch.device("meta"):
                model = self.build_model()
            self._linears = [
                (_rows(name), m.in_features, m.out_features)
                for name, m in model.named_modules()
                if isinstance(m, nn.Linear)
            ]
        return self._linears

    def target_reached(self, quality: float, target: float) -> bool:
        return math.isfinite(quality) and quality <= target
