#!/usr/bin/env bash
# `collector run --suite v5.1 --scale throughput` (compute throughput on synthetic tokens, data
# loading not included) on one lent multi-GPU machine, in one command: the steps named on the
# command line, in their order, each with the time left before the deadline (and at most its
# cap). What ran is packed into $OUT/campaign.tgz at the end (and on any exit). A later call
# resumes: unpack the archive into .out/ (or commit it to runs/local/<name>) and only the runs
# without a finished log run again. If the first run of a call ends aborted, the call stops
# there (its log says why) rather than spend the machine on the rest.
#
#   bash benchmarks/llm_campaign.sh <name> <seconds> <step>...
#
# A step is `benchmark:gpus:precisions[:cap seconds]` (one `collector run`), or
# `harness:gpus:precision[:cap]` (benchmarks/llm_harness.py, Llama 3.1 8B: the engine against
# a bare loop over the same sharded model, in the same processes). Example (4 x H200):
#
#   bash benchmarks/llm_campaign.sh h200-x4-llm 380 llama31_8b:4:bf16 \
#       llama2_70b_lora:4:bf16:150 llama31_8b:4:fp8
#   bash benchmarks/llm_campaign.sh h200-x4-llm 250 harness:4:bf16:80 llama31_8b:2:bf16,fp8 \
#       llama2_70b_lora:2:bf16
#
# RUN_ARGS adds arguments to every `collector run` (a CPU rehearsal: RUN_ARGS="--steps 1").
# Needs the llm extra (transformers, peft, torchao); NVLink multicast stays off.
set -uo pipefail
name=${1:?name}
limit=${2:?seconds}
shift 2
source "$(dirname "$0")/campaign_common.sh"
{
    date -u; nvidia-smi; nvidia-smi topo -m
    python3 -c 'import torch, transformers, peft, torchao; print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.device_count(), "GPU(s); transformers", transformers.__version__, "peft", peft.__version__, "torchao", torchao.__version__)'
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
    if [ "$what" = harness ]; then
        [ -f "$out/logs/harness.txt" ] && continue
        timeout --signal=TERM --kill-after=15 "$t" python3 benchmarks/llm_harness.py \
            --gpus "$gpus" --precision "$prec" --out "$out/harness" > "$out/logs/harness.part" 2>&1 \
            && mv "$out/logs/harness.part" "$out/logs/harness.txt"
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
python3 benchmarks/llm_summary.py "$out" > "$out/logs/summary.md" 2>&1
cat "$out/logs/summary.md"
[ -f "$out/logs/harness.txt" ] && tail -4 "$out/logs/harness.txt"
