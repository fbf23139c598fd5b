#!/usr/bin/env bash
# scripts/gpu-dev/bench-run.sh: one `sparseditto bench` run of a device call's --run script, kept
# inside the time the GPU lane left it, so that a device call's run script lists its runs
# instead of each carrying this logic.
# usage (from the --run script; environment variables pass through to the run):
#   export SD_LANE_T0=$(date +%s)        # once, first: when the --run script started
#   bash scripts/gpu-dev/bench-run.sh NAME SET OPS [BENCH OPTIONS...]
#   SPARSEDITTO_SEARCH_FAST=mid bash scripts/gpu-dev/bench-run.sh sg_mid quick spgemm
# NAME names $OUT/NAME/ (bench_compile.{md,json}) and $OUT/NAME.log and the run's own cache
# (/tmp/c_NAME, so every run compiles from scratch). SD_LANE_LEFT (set by gpu-lane.sh) is
# the --run script's seconds before the deadline; a run is skipped when less than 60 s are
# left, and is given the rest less 30 s as its --time-limit. SD_BENCH_BIN overrides the
# binary (default build-gpu/sparseditto).
set -u
case "${1:-}" in -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
if [ $# -lt 3 ]; then
  echo "usage: scripts/gpu-dev/bench-run.sh NAME SET OPS [BENCH OPTIONS...]" >&2
  exit 2
fi
name=$1 set=$2 ops=$3
shift 3
bin=${SD_BENCH_BIN:-build-gpu/sparseditto}
out=${OUT:?bench-run.sh: OUT (the results folder) is not set}
t0=${SD_LANE_T0:-$(date +%s)}
left=$(( ${SD_LANE_LEFT:-300} - ($(date +%s) - t0) ))
echo "== $name (lane left $left s)"
if [ "$left" -lt 60 ]; then
  echo "skip $name"
  exit 0
fi
start=$(date +%s)
SPARSEDITTO_CACHE=/tmp/c_$name timeout $(( left - 5 )) "$bin" bench --set "$set" --ops "$ops" \
  --time-limit $(( left - 30 )) --out "$out/$name" "$@" >"$out/$name.log" 2>&1
rc=$?
echo "$name: $(( $(date +%s) - start )) s wall (exit $rc)"
tail -1 "$out/$name.log"
grep -E "^\| (spmv|spmm8|spmm32|spmm128|spmm256|spgemm|all) " "$out/$name/bench_compile.md" 2>/dev/null
exit 0
