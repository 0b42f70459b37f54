"""Sharded data parallelism (PyTorch FSDP2) for the workloads whose models do not fit one device.

Beside the replicated path of the engine (``DistributedDataParallel``), a workload that is
``sharded`` is built here in the order that lets a 70-billion-parameter model start on a few
GPUs: on the meta device (no memory), fp8 matrix products where the run asks for them
(torchao's float8 training), activation recomputation per decoder layer where the suite asks
for it, each decoder layer compiled, then every decoder layer and the whole model sharded with
``fully_shard`` across the data-parallel ranks, and only then materialised on the device and
given random weights, each rank drawing its own shard. bf16 is the compute dtype: FSDP2's mixed
precision policy gathers the weights in bf16 and reduces gradients in fp32 (one rank: autocast).
"""

from __future__ import annotations

import torch
from torch import nn
from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import checkpoint_wrapper
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
from torch.distributed.tensor import DTensor

from collector.run.spec import RunSpec
from collector.run.workloads import Workload

#: weights the fp8 conversion leaves in bf16: the output projection (its large logits keep
#: their precision, as usual in fp8 training) and the small LoRA adapters
FP8_SKIP = ("lm_head", "lora_")


def to_float8(model: nn.Module) -> None:
    """Swap the model's linear layers for torchao's float8 training layers (dynamic tensorwise
    scaling), except those named in FP8_SKIP."""
    from torchao.float8 import Float8LinearConfig, convert_to_float8_training

    def keep(module: nn.Module, fqn: str) -> bool:
        return isinstance(module, nn.Linear) and not any(s in fqn for s in FP8_SKIP)

    convert_to_float8_training(model, config=Float8LinearConfig(), module_filter_fn=keep)


def wrap_layers(
    model: nn.Module,
    layer: type[nn.Module] | tuple[type[nn.Module], ...],
    recompute: bool,
    compiled: bool,
) -> list:
    """Each decoder layer (an instance of ``layer``, a class or a tuple of classes) in place,
    wrapped for activation recomputation and compiled as asked; returns the wrapped layers
    (the units of sharding)."""
    torch._dynamo.config.suppress_errors = True  # a graph the compiler rejects runs eager
    wrapped = []
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if not isinstance(child, layer):
                continue
            unit = checkpoint_wrapper(child) if recompute else child
            unit = torch.compile(unit) if compiled else unit
            parent.register_module(name, unit)
            wrapped.append(unit)
    return wrapped


def init_weights(model: nn.Module, seed: int, rank: int, std: float = 0.02) -> None:
    """Random weights for a model materialised from the meta device: normal(0, std) for
    matrices and embeddings, ones for norm scales, zeros for biases and LoRA's B (an adapter
    starts as the identity); each rank draws its own shard with a generator of its own."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            local = p.to_local() if isinstance(p, DTensor) else p
            g = torch.Generator(device=local.device).manual_seed(seed * 1000003 + rank)
            if "lora_B" in name or name.endswith("bias"):
                local.zero_()
            elif local.dim() == 1:
                local.fill_(1.0)
            else:
                local.normal_(0.0, std, generator=g)


def build(
    spec: RunSpec, workload: Workload, world: int, device: torch.device, compiled: bool
) -> tuple[nn.Module, torch.dtype | None]:
    """``workload``'s model sharded across ``world`` ranks on ``device`` (each decoder layer
    compiled where ``compiled``), and the dtype autocast must compute in (None where the
    sharding policy casts, or in fp32)."""
    params = spec.params
    with torch.device("meta"):
        model = workload.build_model()
    if spec.precision == "fp8":
        to_float8(model)
    recompute = bool(params.get("activation_checkpointing", False))
    units = wrap_layers(model, workload.decoder_layers, recompute, compiled)
    amp = torch.bfloat16 if spec.precision in ("bf16", "fp8") else None
    if world > 1:
        policy = MixedPrecisionPolicy(param_dtype=amp, reduce_dtype=torch.float32)
        for unit in units:
            fully_shard(unit, mp_policy=policy)
        fully_shard(model, mp_policy=policy)
        amp = None  # the policy casts: no autocast
    model.to_empty(device=device)
    init_weights(model, spec.seed, torch.distributed.get_rank() if world > 1 else 0)
    workload.reset_buffers(model, device)
    return model, amp
