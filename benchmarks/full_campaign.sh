#!/usr/bin/env bash
# `collector run --suite v0.5 --scale throughput` (compute throughput on synthetic data, data
# loading not included) over all seven benchmarks on one lent machine, in one command: per
# precision one `collector run` over every GPU count and interconnect asked for (the runs of
# each configuration share one set of worker processes), then, on one GPU, the ResNet-50
# harness-overhead check (benchmarks/harness.py). Every step has the time left before the
# deadline; a step stopped by it ends every process within seconds and logs its current run as
# aborted. What ran is packed into $OUT/campaign.tgz at the end (and on any exit). A later call
# resumes: unpack the archive into .out/ (or commit it to runs/local/<name>) and only the runs
# without a finished log run again.
#
#   bash benchmarks/full_campaign.sh <name> [seconds] [gpus] [interconnects] [precisions] [runs]
#
#   bash benchmarks/full_campaign.sh h200-x1-full 470                 # one GPU
#   bash benchmarks/full_campaign.sh h200-x4-full 330 1,4,2 default,no-p2p bf16 3
#   bash benchmarks/full_campaign.sh h200-x8-full 540 1,8,4,2 default,no-p2p bf16 3
#
# <name> names the results folder (.out/<name>, later runs/local/<name>). gpus (any counts the
# machine has, default 1; run in the order given) and interconnects (default "default"; no-p2p
# sets NCCL_P2P_DISABLE=1 for NCCL) are passed to --gpus and --interconnect; precisions default
# to "bf16 fp32"; runs (default 1) is --repeats, the runs of each benchmark in each
# configuration. Benchmarks run cheapest first and ResNet-50 (compiled) last, so that a deadline
# cuts the fewest cells (BENCHMARKS=a,b runs those alone). NVLink multicast stays off. RUN_ARGS
# and HARNESS_ARGS add arguments (a CPU rehearsal: RUN_ARGS="--steps 1 --warmup 0
# --batch-size 1" HARNESS_ARGS=--smoke).
set -uo pipefail
name=${1:?name}
limit=${2:-470}
gpus=${3:-1}
interconnects=${4:-default}
precisions=${5:-bf16 fp32}
runs=${6:-1}
source "$(dirname "$0")/campaign_common.sh"
[ -f "$out/logs/topology.txt" ] || {
    nvidia-smi; nvidia-smi topo -m; nvidia-smi -q | head -80
    python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.device_count(), "GPU(s)")'
} > "$out/logs/topology.txt" 2>&1

matrix() {  # matrix <precision> <benchmarks>: one `collector run` process
    local prec=$1 benches=$2 t
    t=$(left)
    if [ "$t" -lt 30 ]; then echo "no time left for $prec $benches"; return; fi
    timeout --signal=TERM --kill-after=30 "$t" \
        python3 -m collector.cli run --suite v0.5 --scale throughput \
        --benchmarks "$benches" --gpus "$gpus" \
        --precision "$prec" --interconnect "$interconnects" --repeats "$runs" --resume \
        --no-ingest --out "$out" ${RUN_ARGS:-} >> "$out/logs/log-$prec.txt" 2>&1
    echo "$prec $benches: exit $? at $(( limit - $(left) )) s"
}
harness() {  # bare loop against `collector run`, ResNet-50 bf16 on one GPU, same process
    if [ -f "$out/logs/harness.txt" ] || [ "$(left)" -lt 90 ]; then return; fi
    timeout --signal=TERM --kill-after=20 $(( $(left) - 60 )) \
        python3 benchmarks/harness.py --out "$out/harness" ${HARNESS_ARGS:-} \
        > "$out/logs/harness.part" 2>&1 \
        && mv "$out/logs/harness.part" "$out/logs/harness.txt"
    echo "harness: exit $? at $(( limit - $(left) )) s"
}

first=1
for prec in $precisions; do
    matrix "$prec" "${BENCHMARKS:-ncf,minigo,gnmt,transformer,ssd,maskrcnn,resnet}"
    if [ $first = 1 ] && [ "$gpus" = 1 ]; then harness; fi
    first=0
done
python3 benchmarks/throughput_summary.py "$out/results" > "$out/logs/summary.md" 2>&1
cat "$out/logs/summary.md"
[ -f "$out/logs/harness.txt" ] && tail -5 "$out/logs/harness.txt"
