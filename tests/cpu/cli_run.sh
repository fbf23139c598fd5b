# tests/cpu/cli_run.sh: `sparseditto run` argument handling on any machine (usage errors exit
# 2 naming the option; a bad file exits 1) and, without a GPU, exit 3 with one line naming
# why. The GPU side (compile, then run the cached kernel) is tests/gpu/cli_run.sh.
# Usage: bash cli_run.sh <sparseditto> [<matrices-dir> <tests/data-dir>]
set -u
BIN="$1"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
export SPARSEDITTO_CACHE="$TMP/cache"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok   $*"; }
expect() { # expect CODE PATTERN ARGS...: exit code and a stderr pattern
    local code=$1 pat=$2
    shift 2
    "$BIN" run "$@" > "$TMP/out.txt" 2> "$TMP/err.txt"
    local rc=$?
    if [ "$rc" = "$code" ] && grep -q -- "$pat" "$TMP/err.txt"; then ok "run $*: exit $rc"; else
        fail "run $*: exit $rc (want $code), stderr: $(cat "$TMP/err.txt")"; fi
}
G="uniform:rows=300,deg=4"
"$BIN" run --help | grep -q "no search" && ok "help" || fail "help"
expect 2 "op is required" --gen "$G"
expect 2 "not spmv, spmm or spgemm" --gen "$G" --op spmx
expect 2 "K applies to --op spmm only" --gen "$G" --op spmv -K 8
expect 2 "iters" --gen "$G" --op spmv --iters 0
expect 2 "b is for --op spgemm" --gen "$G" --op spmv --b "$TMP/none.mtx"
expect 2 "FILE" --op spmv
expect 1 "no-such" "$TMP/no-such.mtx" --op spmv
if ! nvidia-smi -L >/dev/null 2>&1; then
    expect 3 "no usable CUDA device" --gen "$G" --op spmv
fi
if [ "$fails" -ne 0 ]; then echo "cli_run: $fails failed"; exit 1; fi
echo "cli_run: all passed"
