# tests/cpu/cli_analyze.sh: `sparseditto analyze`: help lists the 36 features, JSON shape
# and values on a hand-checked matrix, options before/after the file, exit codes, the GPU
# context's source. Usage: bash cli_analyze.sh <sparseditto> <matrices-dir> <tests/data-dir>
set -u
BIN="$1"
MATRICES="${2:-}"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok   $*"; }

# M1 of tests/cpu/test_features.c: rows {0,1,3}, {1}, {}, {0,2,3}.
cat > "$TMP/m1.mtx" <<'EOF'
%%MatrixMarket matrix coordinate real general
4 4 7
1 1 1
1 2 2
1 4 3
2 2 4
4 1 5
4 3 6
4 4 7
EOF

# --help lists every feature with a definition, in the canonical order.
"$BIN" analyze --help > "$TMP/help.txt" 2>&1 || fail "--help exit $?"
names="rows cols nnz density row_mean row_max row_cv row_q25 row_q50 row_q75 empty_row_frac col_max col_cv row_span col_gap diag_frac dense_tile_frac dense_tile_nnz_frac rho_ell rho_sell16 rho_sell32 rho_sell512 rho_bsr4 rho_bsr8 rho_bsr16 rho_bell16 u_total u_max u_p95 u_cv ut_total ut_cv fit_512 fit_4k fit_32k gamma"
listed=$(awk '$1 ~ /^[a-z_0-9]+$/ && NF >= 3 && $0 ~ /^    [a-z]/ {print $1}' "$TMP/help.txt" | tr '\n' ' ' | sed 's/ $//')
[ "$listed" = "$names" ] && ok "help lists the 36 features in order" || fail "help lists: $listed"
grep -q "intrinsic" "$TMP/help.txt" && grep -q "representation-induced" "$TMP/help.txt" &&
    grep -q "operator-induced" "$TMP/help.txt" && ok "help groups" || fail "help groups"

# JSON: stdout only, exact keys, values of M1 (A·A: gamma = 14/9).
if "$BIN" analyze "$TMP/m1.mtx" --op spgemm --json > "$TMP/out.json" 2> "$TMP/err.txt"; then
    ok "json exit 0"
else
    fail "json exit $? ($(cat "$TMP/err.txt"))"
fi
if command -v python3 > /dev/null; then
    python3 - "$TMP/out.json" "$names" <<'EOF' && ok "json content" || fail "json content"
import json, math, sys
d = json.load(open(sys.argv[1]))
names = sys.argv[2].split()
f = d["features"]
assert list(f.keys()) == names, list(f.keys())
assert d["shape_class"] in ("uniform", "moderate", "skewed", "power-law", "bimodal")
assert d["op"] == "spgemm"
g = d["gpu"]
assert g["source"] in ("device", "profile") and g["sm_count"] > 0 and g["l2_bytes"] > 0
want = {"rows": 4, "nnz": 7, "row_q50": 1 / 1.75, "diag_frac": 0.75, "rho_ell": 12 / 7,
        "rho_bsr4": 16 / 7, "u_total": 14, "ut_total": 13, "gamma": 14 / 9}
for k, v in want.items():
    assert math.isclose(f[k], v, rel_tol=1e-12), (k, f[k], v)
assert d["spgemm"]["nnz_c"] == 9 and d["spgemm"]["nnz_c_exact"] is True
EOF
else
    grep -q '"gamma": 1.5555555555555' "$TMP/out.json" && ok "json gamma (grep)" || fail "json gamma"
fi

# Options before the file; spmv zeroes the operator features; -K for spmm.
"$BIN" analyze --json --op spmv "$TMP/m1.mtx" > "$TMP/spmv.json" || fail "options first"
grep -q '"gamma": 0' "$TMP/spmv.json" && ok "spmv: operator features 0" || fail "spmv gamma"
"$BIN" analyze "$TMP/m1.mtx" --op spmm -K 64 --json > "$TMP/spmm.json" || fail "spmm"
grep -q '"k": 64' "$TMP/spmm.json" && grep -q '"log2_k": 6' "$TMP/spmm.json" &&
    ok "spmm records K" || fail "spmm K"

# Human table: groups, shape, GPU context and its source.
"$BIN" analyze "$TMP/m1.mtx" --op spgemm > "$TMP/table.txt" || fail "table exit"
for w in "intrinsic" "representation-induced" "operator-induced" "shape " "gpu " "gamma"; do
    grep -q "$w" "$TMP/table.txt" || fail "table lacks '$w'"
done
if grep -q '"source": "profile"' "$TMP/out.json"; then
    grep -q "built-in profile 'H200'" "$TMP/table.txt" && ok "no GPU: says built-in profile" ||
        fail "no GPU note"
    "$BIN" analyze "$TMP/m1.mtx" --gpu a100 --json > "$TMP/a100.json" || fail "--gpu a100"
    grep -q '"sm_count": 108' "$TMP/a100.json" && ok "--gpu a100 profile" || fail "a100 profile"
else
    grep -q "read from device 0" "$TMP/table.txt" && ok "device context" || fail "device note"
fi

# Exit codes: 1 bad input (with --json, stdout is the error as JSON), 2 usage.
"$BIN" analyze "$TMP/missing.mtx" --json > "$TMP/o.txt" 2> "$TMP/e.txt"
rc=$?
[ $rc -eq 1 ] && grep -q '^{"error":{"status":"I/O error"' "$TMP/o.txt" && grep -q '^sparseditto: ' "$TMP/e.txt" &&
    [ "$(wc -l < "$TMP/e.txt")" -eq 1 ] && ok "missing file: exit 1" || fail "missing file rc $rc"
printf '%%%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1\n5 1 1\n' > "$TMP/bad.mtx"
"$BIN" analyze "$TMP/bad.mtx" > /dev/null 2>&1
[ $? -eq 1 ] && ok "bad file: exit 1" || fail "bad file"
for args in "--op spmx" "-K 0" "-K 70000" "--gpu V100" "--bogus" ""; do
    # shellcheck disable=SC2086
    "$BIN" analyze "$TMP/m1.mtx" $args > /dev/null 2> "$TMP/e.txt"
    rc=$?
    if [ -z "$args" ]; then
        [ $rc -eq 0 ] || fail "plain run rc $rc"
        continue
    fi
    [ $rc -eq 2 ] && ok "usage error: $args" || fail "'$args' rc $rc"
done
"$BIN" analyze > /dev/null 2>&1
[ $? -eq 2 ] && ok "no file: exit 2" || fail "no file"

# A real matrix, when the shared set is there.
real="$MATRICES/suitesparse/bcsstk13.mtx.gz"
if [ -f "$real" ]; then
    "$BIN" analyze "$real" --op spgemm --json > "$TMP/real.json" && ok "real matrix" ||
        fail "real matrix"
fi

echo "$fails failed"
[ $fails -eq 0 ]
