#!/usr/bin/env bash
# tests/cpu/cli_bench_run.sh: scripts/gpu-dev/bench-run.sh, the benchmark step of a device call's run
# script, against a stand-in for the binary: the bench command it builds (set, ops, options,
# the time limit from the lane's time left, its own cache), the environment passed through,
# the summary rows printed, a run skipped when too little time is left, usage errors.
# Usage (ctest): bash cli_bench_run.sh <sparseditto-binary> <matrices-dir> <tests/data-dir>
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
fail() { echo "cli_bench_run: FAIL: $*"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sd-bench-run.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# The stand-in: records its arguments and environment, writes a summary where --out says.
cat >"$tmp/fake" <<'EOF'
#!/usr/bin/env bash
echo "args: $*"
echo "env: fast=${SPARSEDITTO_SEARCH_FAST:-} cache=${SPARSEDITTO_CACHE:-}"
while [ $# -gt 0 ]; do
  if [ "$1" = --out ]; then mkdir -p "$2"; printf '| spmm128 | 8 | 1.21x |\n| all | 8 | 1.21x |\n' >"$2/bench_compile.md"; fi
  shift
done
echo "sparseditto: 8 tasks (0 failed)"
EOF
chmod +x "$tmp/fake"
mkdir "$tmp/out"

# 1. A run: 400 s left at the script's start, 20 s already spent.
log=$(cd "$tmp" && OUT="$tmp/out" SD_LANE_LEFT=400 SD_LANE_T0=$(( $(date +%s) - 20 )) SD_BENCH_BIN="$tmp/fake" \
      SPARSEDITTO_SEARCH_FAST=mid bash "$repo/scripts/gpu-dev/bench-run.sh" dense dense_rows.txt spmm128 --max-nnz 2e7)
grep -q "^== dense (lane left 3[78][0-9] s)" <<<"$log" || fail "time left not reported: $log"
grep -q "^| all | 8 | 1.21x |" <<<"$log" || fail "summary rows not printed: $log"
grep -q "sparseditto: 8 tasks" <<<"$log" || fail "the run's last line not printed: $log"
args=$(grep "^args:" "$tmp/out/dense.log")
want="args: bench --set dense_rows.txt --ops spmm128 --time-limit 3[45][0-9] --out $tmp/out/dense --max-nnz 2e7"
grep -q "^$want\$" <<<"$args" || fail "bench command: $args"
grep -q "^env: fast=mid cache=/tmp/c_dense$" "$tmp/out/dense.log" || fail "environment: $(grep env: "$tmp/out/dense.log")"
echo "ok   a run: the bench command, the time limit, its cache, the environment, the summary"

# 2. Too little time left: skipped, named, nothing run.
log=$(OUT="$tmp/out" SD_LANE_LEFT=50 SD_BENCH_BIN="$tmp/fake" bash "$repo/scripts/gpu-dev/bench-run.sh" late quick spmv)
grep -q "^skip late$" <<<"$log" || fail "a late run not skipped: $log"
[ ! -e "$tmp/out/late.log" ] || fail "a skipped run ran"
echo "ok   a run past the deadline: skipped"

# 3. Usage errors: too few arguments (exit 2), no OUT.
set +e
bash "$repo/scripts/gpu-dev/bench-run.sh" x y >/dev/null 2>&1
rc=$?
env -u OUT bash "$repo/scripts/gpu-dev/bench-run.sh" x y z >/dev/null 2>"$tmp/err"
rc2=$?
set -e
[ $rc -eq 2 ] || fail "too few arguments: exit $rc"
[ $rc2 -ne 0 ] && grep -q "OUT" "$tmp/err" || fail "no OUT: exit $rc2, $(cat "$tmp/err")"
echo "ok   usage errors"
echo "cli_bench_run: all passed"
