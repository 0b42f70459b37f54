"""Harness overhead: ResNet-50 samples/s through `collector run`'s training engine vs a bare loop.

Both paths train the same model definition on the same synthetic images in the same process, with
bf16 autocast and channels_last on GPUs (fp32 on CPU). The harness figure is what the engine logs
as ``tracked_stats`` throughput (training steps only, synchronised), with the MLPerf logger and
the telemetry sampler running; the bare figure is a plain forward/backward/step loop timed the
same way. The first epoch of each is warm-up and not counted.

    python benchmarks/harness.py                 # one GPU, the suite's `small` ResNet-50
    python benchmarks/harness.py --compile       # with torch.compile (falls back if it fails)
    python benchmarks/harness.py --smoke         # tiny CPU configuration, for testing

Goal on one H200: overhead <= 3% and >= 6,000 img/s.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from collector.run import engine  # noqa: E402
from collector.run.plan import Machine, Options, plan_runs  # noqa: E402
from collector.run.spec import RunSpec  # noqa: E402
from collector.run.suite import load_suite  # noqa: E402
from collector.run.telemetry import Telemetry  # noqa: E402
from collector.run.workloads import RunContext, workload_class  # noqa: E402


def maybe_compile(model: torch.nn.Module, enabled: bool) -> torch.nn.Module:
    """``torch.compile(model)`` when asked and available; the eager model otherwise."""
    if not enabled:
        return model
    try:
        return torch.compile(model)  # type: ignore[return-value]
    except Exception as exc:  # pragma: no cover - depends on the toolchain
        print(f"torch.compile unavailable ({exc}); running eager")
        return model


def bare_loop(
    params: dict, device: torch.device, epochs: int, amp: torch.dtype | None, compile_: bool
) -> float:
    """Samples/s of a plain training loop over the workload's own data (epochs 2..N)."""
    torch.manual_seed(1)
    ctx = RunContext(device=device, seed=1, channels_last=device.type == "cuda")
    w = workload_class("resnet")(params, "small", ctx)
    model = w.build_model().to(device)
    if ctx.channels_last:
        model = model.to(memory_format=torch.channels_last)
    model = maybe_compile(model, compile_)
    opt = w.make_optimizer(model)
    rates = []
    for epoch in range(1, epochs + 1):
        n = 0
        if device.type == "cuda":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        for x, y in w.train_batches(epoch):
            with torch.autocast(device.type, dtype=amp, enabled=amp is not None):
                loss = F.cross_entropy(model(x), y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            n += x.shape[0]
        if device.type == "cuda":
            torch.cuda.synchronize()
        rates.append(n / (time.perf_counter() - t0))
    return sum(rates[1:]) / len(rates[1:])


def harness_spec(params: dict, epochs: int, precision: str) -> RunSpec:
    """The engine's run description for ResNet-50 with ``params`` and an unreachable target."""
    machine = Machine.detect()
    out = Path(tempfile.mkdtemp(prefix="harness-"))
    suite = copy.deepcopy(load_suite("v0.5"))
    scales = suite.benchmarks["resnet"].scales
    # an unreachable target, so every epoch runs; one evaluation at the end
    scales["small"] = replace(
        scales["small"], params=params, max_epochs=epochs, eval_every=epochs, target=2.0
    )
    opts = Options(benchmarks=["resnet"], scale="small", repeats=1, precisions=[precision], out=out)
    (spec,) = plan_runs(opts, machine, suite)
    return spec


def harness_loop(spec: RunSpec, device: torch.device) -> float:
    """Samples/s that the engine logs for ``spec`` (epochs 2..N)."""
    with Telemetry(spec.telemetry_path, list(range(spec.accelerators))):
        engine.train(spec, 0, 1, device)
    rates = []
    for line in spec.log_path.read_text().splitlines():
        rec = json.loads(line[len(":::MLLOG ") :])
        if rec["key"] == "tracked_stats":
            rates.append(rec["value"]["throughput"])
    return sum(rates[1:]) / len(rates[1:])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="tiny CPU configuration")
    ap.add_argument("--compile", action="store_true", help="torch.compile both loops")
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--samples", type=int, default=None, help="training images per epoch")
    ap.add_argument("--image-size", type=int, default=224, help="input side on a GPU (ImageNet)")
    ap.add_argument("--classes", type=int, default=1000, help="classes on a GPU (ImageNet)")
    ap.add_argument("--batch", type=int, default=256, help="images per step on a GPU")
    args = ap.parse_args()
    cuda = torch.cuda.is_available() and not args.smoke
    device = torch.device("cuda", 0) if cuda else torch.device("cpu")
    suite = load_suite("v0.5")
    params = copy.deepcopy(
        suite.benchmarks["resnet"].scales["tiny" if args.smoke else "small"].params
    )
    if not args.smoke:  # the real ResNet-50 training shape, not the proxy's smaller images
        params["image_size"] = args.image_size
        params["num_classes"] = args.classes
        params["batch_size"] = args.batch
    params["eval_samples"] = 256
    params["train_samples"] = args.samples or (1024 if args.smoke else 32768)
    params["compile"] = args.compile
    precision = "bf16" if cuda else "fp32"
    amp = torch.bfloat16 if cuda else None
    spec = harness_spec(params, args.epochs, precision)
    torch.set_num_threads(spec.threads)  # the engine uses the same count
    bare = bare_loop(params, device, args.epochs, amp, args.compile)
    harness = harness_loop(spec, device)
    name = torch.cuda.get_device_name(0) if cuda else "CPU"
    print(
        f"device: {name}  precision: {precision}  compile: {args.compile}  threads: {spec.threads}"
        f"  image: {params['image_size']}px  batch: {params['batch_size']}"
    )
    print(f"bare loop: {bare:,.0f} img/s")
    print(f"harness:   {harness:,.0f} img/s")
    print(f"overhead:  {(bare - harness) / bare * 100:+.2f}%")


if __name__ == "__main__":
    main()
