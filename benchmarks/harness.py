"""Harness overhead at full size: ResNet-50 images/s through `collector run --scale throughput`
against a bare training loop, in the same process.

Both train the suite's throughput-scale ResNet-50 (224 px, 1,000 classes, 256 images per GPU)
on the same device-resident synthetic batch, with the same precision, channels_last, fused SGD
and torch.compile setting. The harness figure is the median of the samples/s that the engine
logs per timed window (``tracked_stats``), with the MLPerf logger and the telemetry sampler
running; the bare figure is the median over the same windows of a plain forward/backward/step
loop timed the same way (synchronised at each window's ends).

    python benchmarks/harness.py                      # one GPU, bf16
    python benchmarks/harness.py --smoke              # CPU, 2 images, 1 step per window

Goal on one H200: >= 6,500 img/s and overhead <= 3%.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from collector.run import engine  # noqa: E402
from collector.run.plan import Machine, Options, plan_runs  # noqa: E402
from collector.run.runner import execute  # noqa: E402
from collector.run.spec import RunSpec  # noqa: E402


def bare_loop(spec: RunSpec, device: torch.device) -> list[float]:
    """Samples/s per window of a plain loop over the spec's model and synthetic batch."""
    torch.manual_seed(spec.seed)
    amp = engine.setup_precision(spec.precision, device)
    sess = engine.setup(spec, 0, 1, device)  # the same model, batch and optimizer settings
    model, opt = sess.model, sess.opt
    x, y = next(iter(sess.workload.train_batches(1)))
    ls = float(spec.params.get("label_smoothing", 0.0))

    def step() -> None:
        with torch.autocast(device.type, dtype=amp or torch.float32, enabled=amp is not None):
            loss = F.cross_entropy(model(x), y, label_smoothing=ls)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    for _ in range(spec.warmup_steps):
        step()
    rates = []
    for _ in range(spec.max_epochs):
        sync()
        t0 = time.perf_counter()
        for _ in range(spec.window_steps):
            step()
        sync()
        rates.append(x.shape[0] * spec.window_steps / (time.perf_counter() - t0))
    return rates


def logged_rates(log: Path) -> tuple[list[float], dict]:
    """The windows' samples/s and the ``collector_run`` event of a throughput log."""
    rates, facts = [], {}
    for line in log.read_text().splitlines():
        rec = json.loads(line[len(":::MLLOG ") :])
        if rec["key"] == "tracked_stats":
            rates.append(rec["value"]["throughput"])
        elif rec["key"] == "collector_run":
            facts = rec["value"]
    return rates, facts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="CPU, tiny batch and steps")
    ap.add_argument("--precision", default=None, help="bf16 on a GPU, fp32 on CPU")
    ap.add_argument("--out", type=Path, default=None, help="results folder (default: temporary)")
    args = ap.parse_args()
    cuda = torch.cuda.is_available() and not args.smoke
    device = torch.device("cuda", 0) if cuda else torch.device("cpu")
    precision = args.precision or ("bf16" if cuda else "fp32")
    out = args.out or Path(tempfile.mkdtemp(prefix="harness-"))
    small = {"steps": 1, "warmup": 1, "batch": 2} if args.smoke else {}
    opts = Options(
        benchmarks=["resnet"], scale="throughput", precisions=[precision], out=out, **small
    )
    machine = Machine.detect() if cuda else Machine("harness", "cpu", 2)
    (spec,) = plan_runs(opts, machine)
    torch.set_num_threads(spec.threads)
    bare = statistics.median(bare_loop(spec, device))
    status = execute(spec)
    rates, facts = logged_rates(spec.log_path)
    harness = statistics.median(rates)
    name = torch.cuda.get_device_name(0) if cuda else "CPU"
    flops = facts.get("throughput", {}).get("step_flops_per_accelerator", 0)
    batch = int(spec.params["batch_size"])
    print(f"device: {name}  precision: {precision}  batch: {batch}  run: {status}")
    print(f"compiled: {facts.get('throughput', {}).get('compiled')}  log: {spec.log_path}")
    print(f"bare loop: {bare:,.2f} img/s")
    print(f"harness:   {harness:,.2f} img/s  ({harness * flops / batch / 1e12:.1f} TFLOP/s)")
    print(f"overhead:  {(bare - harness) / bare * 100:+.2f}%")


if __name__ == "__main__":
    main()
