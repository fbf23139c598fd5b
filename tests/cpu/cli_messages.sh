# tests/cpu/cli_messages.sh: what `plan` and `compile` (without a GPU) report says what
# really happened. plan compiles no cubin and says so (it once claimed "cubins compiled
# earlier (memo or JIT cache)" on an empty cache, with a hint that changed nothing);
# compile without a GPU counts the cubins NVRTC compiled and those the JIT cache served.
# Configurations and ranking reasons are printed whole (they were cut mid-word). A SpGEMM
# whose C cannot fit the device is refused before any plan or NVRTC, with its numbers.
# Usage: bash cli_messages.sh <sparseditto> <matrices-dir> <tests/data-dir>
set -u
BIN="$1"
DATA="$3"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok   $*"; }
# An empty cache of this test's own: nothing compiled earlier can be in it.
export SPARSEDITTO_CACHE="$TMP/cache"
unset SPARSEDITTO_JIT_CACHE

# plan: lowering only, on an empty cache.
for op in spmv spmm spgemm; do
    if "$BIN" plan "$DATA/skew.mtx" --op "$op" --gpu H200 > "$TMP/plan.txt" 2> "$TMP/err.txt"; then
        grep -q "no cubin compiled (plan stops after lowering)" "$TMP/plan.txt" &&
            ! grep -q "compiled earlier" "$TMP/plan.txt" &&
            ! grep -q "SPARSEDITTO_JIT_CACHE" "$TMP/plan.txt" &&
            ! grep -q "NVRTC" "$TMP/plan.txt" &&
            ok "plan --op $op says it compiled nothing" || fail "plan --op $op: $(cat "$TMP/plan.txt")"
    else
        fail "plan --op $op: exit $? ($(cat "$TMP/err.txt"))"
    fi
done

# Every plan's configuration, as --json gives it, appears whole in the text; a reason
# printed for the tensor-core template ends as it should.
for m in skew.mtx symmetric.mtx dense_row.mtx small.mtx.gz; do
    for op in spmv spmm spgemm; do
        "$BIN" plan "$DATA/$m" --op "$op" --gpu H200 --branches 5 > "$TMP/plan.txt" 2> "$TMP/err.txt" &&
            "$BIN" plan "$DATA/$m" --op "$op" --gpu H200 --branches 5 --json > "$TMP/plan.json" 2>> "$TMP/err.txt"
        rc=$?
        [ $rc -eq 0 ] || { fail "plan $m --op $op: exit $rc ($(cat "$TMP/err.txt"))"; continue; }
        sed -n 's/^ *"config": "\(.*\)",\{0,1\}$/\1/p' "$TMP/plan.json" > "$TMP/configs.txt"
        [ -s "$TMP/configs.txt" ] || { fail "plan $m --op $op: no configuration in --json"; continue; }
        cut=0
        while IFS= read -r cfg; do
            grep -Fq -- " $cfg " "$TMP/plan.txt" || { cut=1; echo "  not whole: '$cfg'"; }
        done < "$TMP/configs.txt"
        if grep -q "tensor-core template" "$TMP/plan.txt" &&
            ! grep -q "(SPARSEDITTO_TC=1 searches it))$" "$TMP/plan.txt"; then
            cut=1
            echo "  reason cut: $(grep "tensor-core template" "$TMP/plan.txt")"
        fi
        [ $cut -eq 0 ] && ok "plan $m --op $op: configurations and reasons whole" ||
            fail "plan $m --op $op: $(cat "$TMP/plan.txt")"
    done
done

# A 320000 x 320000 arrow (dense first row and column, 640k entries): A·A has 1.02e11
# products and a dense C of 1.02e11 entries, 819 GB, beyond an H200's 150 GB.
awk -v n=320000 'BEGIN { print "%%MatrixMarket matrix coordinate pattern general"; print n, n, 2 * n - 1;
    for (j = 1; j <= n; j++) print 1, j; for (i = 2; i <= n; i++) print i, 1 }' > "$TMP/arrow.mtx"
for cmd in plan compile; do
    "$BIN" $cmd "$TMP/arrow.mtx" --op spgemm --gpu H200 > "$TMP/out.txt" 2> "$TMP/err.txt"
    rc=$?
    # (compile names the device it found, where there is one)
    [ $rc -eq 3 ] && grep -q "SpGEMM A·A does not fit the device: 1.02e+11 products; C holds at least 102400000000 entries (at most 102400000000), 819.2 GB with its row pointers, beyond the " "$TMP/err.txt" &&
        { [ $cmd = compile ] || grep -q "beyond the 150.1 GB of NVIDIA H200 (profile)$" "$TMP/err.txt"; } &&
        ! grep -q "spgemm\." "$TMP/out.txt" && ! grep -q "NVRTC" "$TMP/out.txt" &&
        ok "$cmd refuses a product whose C cannot fit, before planning" ||
        fail "$cmd arrow: exit $rc, $(cat "$TMP/out.txt" "$TMP/err.txt")"
done

# compile without a GPU: NVRTC runs, then the JIT cache serves the same cubins.
"$BIN" compile "$DATA/skew.mtx" --op spmv --gpu H200 > "$TMP/c1.txt" 2> "$TMP/err.txt"
rc=$?
if [ $rc -eq 3 ]; then
    grep -Eq "^stages: .*NVRTC [0-9.]+ ms \([1-9][0-9]* cubins? compiled, 0 from the JIT cache\)$" "$TMP/c1.txt" &&
        grep -Eq "^  spmv\..* lowered, NVRTC [0-9]+ ms$" "$TMP/c1.txt" &&
        ok "compile on an empty cache counts the cubins NVRTC compiled" ||
        fail "first compile: $(cat "$TMP/c1.txt")"
    "$BIN" compile "$DATA/skew.mtx" --op spmv --gpu H200 > "$TMP/c2.txt" 2> "$TMP/err.txt"
    grep -Eq "^stages: .*\(0 cubins compiled, [1-9][0-9]* from the JIT cache; SPARSEDITTO_JIT_CACHE=0 compiles them again\)$" "$TMP/c2.txt" &&
        grep -Eq "^  spmv\..* lowered, 1 cubin from the JIT cache$" "$TMP/c2.txt" &&
        ok "compile again: every cubin from the JIT cache, counted" || fail "second compile: $(cat "$TMP/c2.txt")"
    SPARSEDITTO_JIT_CACHE=0 "$BIN" compile "$DATA/skew.mtx" --op spmv --gpu H200 > "$TMP/c3.txt" 2> "$TMP/err.txt"
    grep -Eq "^stages: .*\([1-9][0-9]* cubins? compiled, 0 from the JIT cache\)$" "$TMP/c3.txt" &&
        ok "SPARSEDITTO_JIT_CACHE=0 compiles again" || fail "compile without the JIT cache: $(cat "$TMP/c3.txt")"
elif [ $rc -eq 0 ]; then
    echo "skip the offline compile checks: a GPU is present"
else
    fail "compile --op spmv: exit $rc ($(cat "$TMP/err.txt"))"
fi

echo "$fails failed"
[ $fails -eq 0 ]
