# tests/cpu/cli_spgemm.sh: `sparseditto compile --op spgemm` and `sparseditto plan --op
# spgemm` without a GPU: everything up to measurement (analysis, ranking, the SpGEMM
# families' plans, lowering, NVRTC for sm_90), then exit 3 saying why it stopped; --b for
# a general A·B; usage and input errors. With a GPU the compile path is the GPU lane's
# (tests/gpu/test_compile_spgemm.c): the script then checks only `plan`.
# Usage: bash cli_spgemm.sh <sparseditto> [<matrices-dir> <tests/data-dir>]
set -u
BIN="$1"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok   $*"; }

# A: 3x4, B: 4x2 (A·B is 3x2); A is rectangular, so A alone means A·Aᵀ.
cat > "$TMP/a.mtx" <<'EOF'
%%MatrixMarket matrix coordinate real general
3 4 5
1 1 1
1 3 2
2 2 3
3 3 -1
3 4 2
EOF
cat > "$TMP/b.mtx" <<'EOF'
%%MatrixMarket matrix coordinate real general
4 2 4
1 1 1
2 2 1
3 1 2
4 2 -2
EOF

# plan: needs no GPU.
if "$BIN" plan "$TMP/a.mtx" --op spgemm --gpu H200 > "$TMP/plan.txt" 2> "$TMP/err.txt"; then
    grep -q "spgemm\." "$TMP/plan.txt" && grep -q "M_rep" "$TMP/plan.txt" &&
        ok "plan --op spgemm lists SpGEMM plans with bounds" || fail "plan output: $(cat "$TMP/plan.txt")"
    grep -Eq "^resident warps an SM, launch by launch \(of 64" "$TMP/plan.txt" &&
        grep -Eq "^  spgemm\.[a-z_]+ +[0-9]+( [0-9]+)*$" "$TMP/plan.txt" &&
        ok "plan --op spgemm: each launch's resident warps" || fail "plan residency: $(cat "$TMP/plan.txt")"
else
    fail "plan --op spgemm exit $? ($(cat "$TMP/err.txt"))"
fi
if "$BIN" plan --op spgemm --b "$TMP/b.mtx" "$TMP/a.mtx" --gpu H200 --json > "$TMP/plan.json" 2> "$TMP/err.txt"; then
    grep -q '"bins"' "$TMP/plan.json" && grep -q '"resident_warps":' "$TMP/plan.json" &&
        ok "plan --b --json" || fail "plan json: $(head -c 300 "$TMP/plan.json")"
else
    fail "plan --b exit $? ($(cat "$TMP/err.txt"))"
fi

# Usage and input errors: --b without spgemm (2), inner sizes that differ (1).
"$BIN" plan "$TMP/a.mtx" --op spmv --b "$TMP/b.mtx" > /dev/null 2> "$TMP/err.txt"
rc=$?
[ $rc -eq 2 ] && grep -q "^sparseditto: .*--b" "$TMP/err.txt" && ok "--b needs spgemm (exit 2)" ||
    fail "--b with spmv: exit $rc ($(cat "$TMP/err.txt"))"
"$BIN" plan "$TMP/b.mtx" --op spgemm --b "$TMP/b.mtx" > /dev/null 2> "$TMP/err.txt"
rc=$?
[ $rc -eq 1 ] && grep -q "inner sizes" "$TMP/err.txt" && ok "inner size mismatch (exit 1)" ||
    fail "mismatch: exit $rc ($(cat "$TMP/err.txt"))"

# compile without a GPU: the offline pipeline, exit 3, one line saying why.
"$BIN" compile "$TMP/a.mtx" --op spgemm --gpu H200 > "$TMP/out.txt" 2> "$TMP/err.txt"
rc=$?
if [ $rc -eq 3 ]; then
    grep -q "stopped after lowering and NVRTC compilation" "$TMP/err.txt" &&
        ok "compile --op spgemm without a GPU: exit 3, says why" || fail "message: $(cat "$TMP/err.txt")"
    grep -q "spgemm\." "$TMP/out.txt" && grep -q "NVRTC" "$TMP/out.txt" &&
        ok "compile --op spgemm lowered and compiled the first round" || fail "offline output: $(cat "$TMP/out.txt")"
    "$BIN" compile "$TMP/a.mtx" --op spgemm --b "$TMP/b.mtx" > "$TMP/out.txt" 2> "$TMP/err.txt"
    rc=$?
    [ $rc -eq 3 ] && grep -q "spgemm\." "$TMP/out.txt" && ok "compile --b without a GPU: exit 3" ||
        fail "compile --b: exit $rc ($(cat "$TMP/err.txt"))"
elif [ $rc -eq 0 ]; then
    echo "skip compile checks: a GPU is present (tests/gpu/test_compile_spgemm.c covers it)"
else
    fail "compile --op spgemm exit $rc ($(cat "$TMP/err.txt"))"
fi

echo "$fails failed"
[ $fails -eq 0 ]
