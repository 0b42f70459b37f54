#!/usr/bin/env bash
# Rebuild the shipped store runs/warehouse from the thirteen official result trees.
#
# Usage: benchmarks/build_store.sh TREES [GIT]
#   TREES  folder holding training_results_v0.5 ... training_results_v5.1, checked out at the
#          commits in runs/sources.csv
#   GIT    optional: folder of the repositories' git data, to list in
#          runs/official/missing.csv the result logs the copies under TREES lack
# Official logs from v1.1 on are stored without their per-event rows (runs, evals, systems,
# compliance and ingest issues are kept); v0.5 to v1.0 and local runs keep theirs. Ingest and check exit 1 when any log has an
# error (a truncated or missing log): those are recorded as ingest issues, and the build goes on.
set -euo pipefail
TREES=${1:?usage: benchmarks/build_store.sh TREES [GIT]}
cd "$(dirname "$0")/.."
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
PY=${PYTHON:-python}
ROUNDS="v0.5 v0.6 v0.7 v1.0 v1.1 v2.0 v2.1 v3.0 v3.1 v4.0 v4.1 v5.0 v5.1"
STORE=runs/warehouse
rm -rf "$STORE"
# the rounds of the v0.5 benchmarks keep their per-event rows: samples to target and the
# projection's check read their epoch and evaluation times
for r in $ROUNDS; do
  case $r in v0.5|v0.6|v0.7|v1.0) events="" ;; *) events="--no-events" ;; esac
  $PY -m collector.cli ingest -q $events --store "$STORE" "$TREES/training_results_$r" || true
done
if [ -n "${2:-}" ]; then
  $PY benchmarks/missing_logs.py --trees "$TREES" --git "$2" -o runs/official/missing.csv
fi
# the local runs with their measured ceilings, and the reference tables: the trees' origins,
# the logs their copies lack, the published studies (example prices come with the first ingest)
$PY -m collector.cli ingest --store "$STORE" runs/sources.csv runs/official/missing.csv \
  runs/published runs/local/*/
for r in $ROUNDS; do
  $PY -m collector.cli check --store "$STORE" "$TREES/training_results_$r" > /dev/null || true
done
$PY -m collector.cli check --store "$STORE" runs/local/*/ > /dev/null || true
$PY -m collector.cli query --store "$STORE" manifest -f csv -o runs/official/manifest.csv
# ship the live snapshot alone (writers keep the last few for their readers)
live=$(cat "$STORE/CURRENT")
find "$STORE" -mindepth 1 -maxdepth 1 ! -name "$live" ! -name CURRENT -exec rm -rf {} +
# the shipped snapshot matches its manifest (row counts, sizes, sha256)
$PY -m collector.cli verify --store "$STORE"
