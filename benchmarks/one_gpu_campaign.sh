#!/usr/bin/env bash
# `collector run --suite v0.5 --scale small` on the one GPU of a lent single-GPU machine, so
# that accelerator models compare on the same code: bf16 first, then fp32 where time is left,
# three runs per benchmark, the shortest benchmarks first. Each call runs until its deadline
# and packs what it has into $OUT/campaign.tgz; a later call resumes from runs/local/<host>
# (unpack the archive there first) and runs only what is missing.
#
#   bash benchmarks/one_gpu_campaign.sh <host> [seconds] [precisions]
#
# <host> names the results folder (runs/local/<host>, for example h100-x1); precisions
# default to "bf16 fp32". The first configuration also measures the machine's ceilings.
set -uo pipefail
host=${1:?host}
limit=${2:-540}
precisions=${3:-bf16 fp32}
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
out=.out/$host
mkdir -p "$out" "${OUT:-.out}"
deadline=$(( $(date +%s) + limit ))
pack() { tar czf "${OUT:-.out}/campaign.tgz" -C .out "$host"; echo "packed $(du -sh "${OUT:-.out}/campaign.tgz" | cut -f1)"; }
trap pack EXIT

if [ ! -d "$out/results" ] && [ -d "runs/local/$host/results" ]; then
    cp -r "runs/local/$host/results" "runs/local/$host/systems" "$out/"
fi
mkdir -p "$out/logs"
[ -f "$out/logs/topology.txt" ] || { nvidia-smi; nvidia-smi topo -m; nvidia-smi -q | head -60; } > "$out/logs/topology.txt" 2>&1
flags=()
[ -d "$out/systems" ] && flags=(--no-ceilings)
for precision in $precisions; do
    left=$(( deadline - $(date +%s) ))
    if [ "$left" -lt 30 ]; then echo "no time left for $precision"; continue; fi
    timeout --signal=TERM --kill-after=30 "$left" \
        python3 -m collector.cli run --suite v0.5 --scale small \
        --benchmarks ncf,minigo,ssd,gnmt,maskrcnn,transformer,resnet --gpus 1 \
        --precision "$precision" --interconnect default --repeats 3 --resume --no-ingest \
        --out "$out" "${flags[@]}" >> "$out/logs/log-1-$precision.txt" 2>&1
    echo "$precision: exit $? at $(( $(date +%s) - deadline + limit )) s"
    flags=(--no-ceilings)
done
