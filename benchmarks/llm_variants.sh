#!/usr/bin/env bash
# One v5.1 throughput run (benchmark, GPU count, precision) under several settings of its
# suite parameters, in the same call on the same machine. Each variant is the v5.1 suite with
# the named `params` of the benchmark's throughput configuration replaced
# (benchmarks/suite_variant.py), run by `collector run --suite <that file>` into
# .out/<name>/<label>; the folder is packed into $OUT/campaign.tgz at the end, and
# `benchmarks/llm_summary.py` prints a table per variant.
#
#   bash benchmarks/llm_variants.sh <name> <seconds> <benchmark:gpus:precision> <variant>...
#
# A variant is `label` (the suite as shipped) or `label=key:value,key:value` (values in YAML,
# without commas). Example (2 x H200): the shipped 8B in bf16 against two sequences a pass:
#
#   bash benchmarks/llm_variants.sh micro-ab 400 llama31_8b:2:bf16 shipped micro2=micro_batch:2
set -uo pipefail
name=${1:?name}
limit=${2:?seconds}
IFS=: read -r bench gpus prec <<< "${3:?benchmark:gpus:precision}"
shift 3
source "$(dirname "$0")/campaign_common.sh"
nvidia-smi --query-gpu=name,memory.total,power.limit --format=csv > "$out/gpus.csv" 2>&1

for variant in "$@"; do
    label=${variant%%=*}
    overrides=${variant#"$label"}; overrides=${overrides#=}
    suite="$out/$label.yml"
    args=()
    IFS=, read -ra items <<< "$overrides"
    for item in "${items[@]}"; do args+=("params.${item%%:*}=${item#*:}"); done
    python3 benchmarks/suite_variant.py v5.1 "$bench" throughput "$suite" "${args[@]}"
    t=$(left)
    if [ "$t" -lt 60 ]; then echo "$label: no time left"; continue; fi
    t0=$(date +%s)
    timeout --signal=TERM --kill-after=20 "$t" \
        python3 -m collector.cli run --suite "$suite" --scale throughput --benchmarks "$bench" \
        --gpus "$gpus" --precision "$prec" --repeats 1 --no-ingest --no-ceilings \
        --out "$out/$label" > "$out/$label.log" 2>&1
    echo "$label ($overrides): exit $? in $(( $(date +%s) - t0 )) s; $(tail -1 "$out/$label.log")"
done
for variant in "$@"; do
    label=${variant%%=*}
    echo "## $label"
    python3 benchmarks/llm_summary.py "$out/$label" 2>&1
done
