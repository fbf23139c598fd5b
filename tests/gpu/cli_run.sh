# tests/gpu/cli_run.sh: `sparseditto compile` then `sparseditto run` on a GPU: run finds the
# cached kernel (no search), validates its first output and times it, for SpMV, SpMM and
# SpGEMM; with another option set (--no-vendor) or an uncompiled task it exits 3 naming the
# missing entry; a compile whose PCSR branch starts from ParamSpMM's decider (a paramspmm.json
# in SPARSEDITTO_MODELS) validates and runs; a search ranked by the energy model
# (energy.json) names it in its record; a second process finds every kernel variant in the
# JIT cache. Skipped (exit 77) without a device.
# Usage: bash cli_run.sh <sparseditto> <matrices-dir> <tests/data-dir>
set -u
BIN="$1"
SRC="$(cd "$(dirname "$0")/../.." && pwd)" # the checkout: models/ holds the shipped decider
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
export SPARSEDITTO_CACHE="$TMP/cache"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok   $*"; }

if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "cli_run: SKIPPED: no GPU"
  exit 77
fi
G="uniform:rows=5000,deg=6"
"$BIN" run --gen "$G" --op spmv > "$TMP/none.txt" 2>&1
rc=$?
[ "$rc" = 3 ] && grep -q "no cached kernel" "$TMP/none.txt" && ok "nothing cached: exit 3, named" ||
  fail "nothing cached: exit $rc: $(cat "$TMP/none.txt")"
for task in "--op spmv" "--op spmm -K 16" "--op spgemm"; do
  # shellcheck disable=SC2086 # task is a list of words on purpose
  "$BIN" compile --gen "$G" $task --budget 4 > "$TMP/c.txt" 2>&1 || { fail "compile $task: $(tail -3 "$TMP/c.txt")"; continue; }
  # shellcheck disable=SC2086
  "$BIN" run --gen "$G" $task --iters 20 --json > "$TMP/r.json" 2> "$TMP/r.err"
  rc=$?
  if [ "$rc" = 0 ] && grep -q '"validated":true' "$TMP/r.json"; then
    ok "run $task: $(cat "$TMP/r.json")"
  else
    fail "run $task: exit $rc: $(cat "$TMP/r.json" "$TMP/r.err")"
  fi
done
"$BIN" run --gen "$G" --op spmv --no-vendor > "$TMP/nv.txt" 2>&1
rc=$?
[ "$rc" = 3 ] && grep -q "no vendor" "$TMP/nv.txt" && ok "--no-vendor selects another entry (none): exit 3" ||
  fail "--no-vendor: exit $rc: $(cat "$TMP/nv.txt")"
"$BIN" run --gen "$G" --op spmm -K 17 > "$TMP/k.txt" 2>&1
rc=$?
[ "$rc" = 3 ] && grep -q "spmm K=17" "$TMP/k.txt" && ok "another K: exit 3, named" || fail "another K: exit $rc"
# The decider as the PCSR preset, end to end (no cache: a fresh search). A uniform matrix:
# its first round holds the PCSR branch (`plan --branches 3`); on a skewed one PCSR may not
# be searched at all and the decider is never consulted.
mkdir -p "$TMP/pm" && cp "$SRC/models/paramspmm-h200-2026-11-30.json" "$TMP/pm/paramspmm.json"
SPARSEDITTO_MODELS="$TMP/pm" SPARSEDITTO_VERBOSE=1 "$BIN" compile --gen "uniform:rows=8000,deg=8" \
  --op spmm -K 32 --budget 8 --no-cache --json > "$TMP/pm.json" 2> "$TMP/pm.err"
rc=$?
[ "$rc" = 0 ] && grep -q "pcsr preset: decider $TMP/pm/paramspmm.json" "$TMP/pm.err" && grep -q '"op":"spmm"' "$TMP/pm.json" \
  && ok "compile with the decider's PCSR preset: $(grep -o 'pcsr preset: [^)]*>' "$TMP/pm.err" | head -1)" \
  || fail "decider preset: exit $rc: $(tail -3 "$TMP/pm.err") $(head -c 300 "$TMP/pm.json")"
# The energy model ranking the search (SPARSEDITTO_MODELS/energy.json): the search record
# names it, and the compile completes for a dense operator and SpGEMM.
mkdir -p "$TMP/em" && cp "$SRC/models/energy-h200-2026-11-29.json" "$TMP/em/energy.json"
for task in "--op spmv" "--op spgemm"; do
  # shellcheck disable=SC2086 # task is a list of words on purpose
  SPARSEDITTO_MODELS="$TMP/em" "$BIN" compile --gen "$G" $task --budget 6 --no-cache --report "$TMP/em.json" \
    > "$TMP/em.txt" 2>&1
  rc=$?
  [ "$rc" = 0 ] && grep -q '"model": *"energy-v1"' "$TMP/em.json" && grep -q "$TMP/em/energy.json" "$TMP/em.json" \
    && ok "compile $task ranked by the energy model" \
    || fail "energy model, $task: exit $rc: $(tail -3 "$TMP/em.txt") $(head -c 300 "$TMP/em.json" 2>/dev/null)"
done
# The JIT cache (on by default): a second process compiling the same task loads every
# kernel variant from disk (NVRTC near 0) and its candidates still validate. Budget 3: the
# first round's presets only, the same kernels in both passes (later rounds depend on the
# measured times, and a different candidate would compile).
J="uniform:rows=7000,deg=5"
for pass in 1 2; do
  SPARSEDITTO_CACHE="$TMP/jc" "$BIN" compile --gen "$J" --op spmm -K 8 --budget 3 --no-cache --report "$TMP/j$pass.json" \
    > "$TMP/j$pass.txt" 2>&1 || fail "JIT cache pass $pass: exit $?: $(tail -3 "$TMP/j$pass.txt")"
done
nv() { grep -o '"nvrtc": *[0-9.eE+-]*' "$1" | head -1 | sed 's/.*: *//'; }
n1=$(nv "$TMP/j1.json"); n2=$(nv "$TMP/j2.json")
awk -v a="${n1:-0}" -v b="${n2:-1e9}" 'BEGIN { exit !(a > 0 && b < a / 4) }' \
  && ok "JIT cache: NVRTC ${n1} ms, then ${n2} ms from disk, both validated" \
  || fail "JIT cache: NVRTC ${n1:-?} ms then ${n2:-?} ms"
if [ "$fails" -ne 0 ]; then echo "cli_run: $fails failed"; exit 1; fi
echo "cli_run: all passed"
