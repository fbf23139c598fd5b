# tests/gpu/cli_run.sh: `sparseditto compile` then `sparseditto run` on a GPU: run finds the
# cached kernel (no search), validates its first output and times it, for SpMV, SpMM and
# SpGEMM; with another option set (--no-vendor) or an uncompiled task it exits 3 naming the
# missing entry. Skipped (exit 77) without a device.
# Usage: bash cli_run.sh <sparseditto> <matrices-dir> <tests/data-dir>
set -u
BIN="$1"
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
if [ "$fails" -ne 0 ]; then echo "cli_run: $fails failed"; exit 1; fi
echo "cli_run: all passed"
