#!/usr/bin/env bash
# `collector run --suite v5.1 --scale throughput` for RetinaNet, R-GAT, DLRM-DCNv2 and Flux.1
# (compute throughput on synthetic data, data loading not included) on one lent GPU machine of
# 1, 2 or 4 GPUs, in one command: the steps named on the command line, in their order, each
# with the time left before the deadline (and at most its cap). What ran is packed into
# $OUT/campaign.tgz at the end (and on any exit). A later call resumes: unpack the archive into
# .out/ (or commit it to runs/local/<name>) and only the runs without a finished log run again.
# If the first run of a call ends aborted, the call stops there (its log says why).
#
#   bash benchmarks/suite_campaign.sh <name> <seconds> <step>...
#
# A step is `benchmark:gpus:precisions[:cap seconds]` (one `collector run`), or
# `harness-<benchmark>:gpus:precision[:cap]` (benchmarks/suite_harness.py: the engine against a
# bare loop over the same model, in the same processes). Flux.1 (11.9 billion parameters with
# fp32 AdamW states) needs at least 2 GPUs of 141 GB; DLRM-DCNv2's 104.5 GB of tables fit one.
# Examples:
#
#   bash benchmarks/suite_campaign.sh h200-x1-suite 1500 harness-retinanet:1:bf16:200 \
#       retinanet:1:bf16 rgat:1:bf16 dlrm_dcnv2:1:bf16 harness-rgat:1:bf16:200
#   bash benchmarks/suite_campaign.sh h200-x4-suite 1500 flux1:4:bf16 harness-flux1:4:bf16:300 \
#       retinanet:4:bf16 rgat:4:bf16 dlrm_dcnv2:4:bf16 harness-dlrm_dcnv2:4:bf16:200 flux1:2:bf16
#
# RUN_ARGS adds arguments to every `collector run` (a CPU rehearsal: RUN_ARGS="--steps 1"),
# HARNESS_ARGS to every harness step (HARNESS_ARGS="--profile 20": each rank's kernels).
# Needs the suite extra (torch_geometric, diffusers); NVLink multicast stays off.
set -uo pipefail
name=${1:?name}
limit=${2:?seconds}
shift 2
source "$(dirname "$0")/campaign_common.sh"
{
    date -u; nvidia-smi; nvidia-smi topo -m
    python3 -c 'import torch, torch_geometric, diffusers; print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.device_count(), "GPU(s); torch_geometric", torch_geometric.__version__, "diffusers", diffusers.__version__)'
} >> "$out/logs/topology.txt" 2>&1
tail -1 "$out/logs/topology.txt"

capped() {  # capped <cap>: seconds for the next step
    local t; t=$(left); [ "$t" -gt "$1" ] && t=$1; echo "$t"
}
first=1
for step in "$@"; do
    IFS=: read -r what gpus prec cap <<< "$step"
    t=$(capped "${cap:-100000}")
    if [ "$t" -lt 40 ]; then echo "no time left for $step"; continue; fi
    t0=$(date +%s)
    if [ "${what#harness-}" != "$what" ]; then
        bench=${what#harness-}
        done_file="$out/logs/harness-$bench-$gpus.txt"
        [ -f "$done_file" ] && continue
        timeout --signal=TERM --kill-after=15 "$t" python3 benchmarks/suite_harness.py \
            --benchmark "$bench" --gpus "$gpus" --precision "$prec" \
            --out "$out/harness-$bench-$gpus" ${HARNESS_ARGS:-} > "$done_file.part" 2>&1 \
            && mv "$done_file.part" "$done_file"
        echo "$step: exit $? in $(( $(date +%s) - t0 )) s"
        continue
    fi
    timeout --signal=TERM --kill-after=20 "$t" \
        python3 -m collector.cli run --suite v5.1 --scale throughput --benchmarks "$what" \
        --gpus "$gpus" --precision "$prec" --repeats 1 --resume --no-ingest --no-ceilings \
        --out "$out" ${RUN_ARGS:-} >> "$out/logs/log-$what.txt" 2>&1
    code=$?
    echo "$step: exit $code in $(( $(date +%s) - t0 )) s; $(tail -1 "$out/logs/log-$what.txt")"
    if [ $first = 1 ] && ! tail -1 "$out/logs/log-$what.txt" | grep -q " 0 not successful"; then
        echo "the first step failed: stopping"; tail -30 "$out/logs/log-$what.txt"; break
    fi
    first=0
done
python3 benchmarks/throughput_summary.py "$out" > "$out/logs/summary.md" 2>&1
cat "$out/logs/summary.md"
for f in "$out"/logs/harness-*.txt; do [ -f "$f" ] && { echo "$f"; tail -3 "$f"; }; done
exit 0
