#!/bin/bash
# tests/cpu/cli_gen.sh: `sparseditto gen`: help, sizes, determinism by seed, value modes,
# .sdm output, exit codes and messages of bad specs, twins from the default paper60.tsv
# (in gen and in another command's --gen).
# usage: cli_gen.sh <sparseditto> <matrices-dir> <tests/data-dir>
set -u
SD=$1
MATRICES=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok   $*"; }

# expect_rc RC NEEDLE cmd...: exit code RC and NEEDLE in stderr
expect_rc() {
    local want=$1 needle=$2
    shift 2
    "$@" >"$TMP/out" 2>"$TMP/err"
    local rc=$?
    if [ "$rc" != "$want" ]; then
        fail "'$*' exited $rc, want $want ($(cat "$TMP/err"))"
    elif [ -n "$needle" ] && ! grep -q -- "$needle" "$TMP/err"; then
        fail "'$*': stderr lacks '$needle': $(cat "$TMP/err")"
    else
        ok "'$*' -> $rc"
    fi
}

# size line of a Matrix Market file (first non-comment line)
size_line() { grep -v '^%' "$1" | head -1; }

# --help lists every family with its keys
"$SD" gen --help >"$TMP/help" 2>&1 || fail "gen --help exited $?"
for f in stencil2d stencil3d7 stencil3d27 banded blockdiag uniform powerlaw rmat knn bimodal twin; do
    grep -q "^  $f " "$TMP/help" || fail "gen --help lacks family $f"
done
grep -q "keys: rows, cols, nnz, deg" "$TMP/help" || fail "gen --help lacks the keys of uniform"
ok "gen --help"

# exact sizes
"$SD" gen stencil2d:nx=7,ny=5 -o "$TMP/s.mtx" >/dev/null || fail "stencil2d exited $?"
[ "$(size_line "$TMP/s.mtx")" = "35 35 151" ] || fail "stencil2d size line '$(size_line "$TMP/s.mtx")'"
"$SD" gen "uniform:rows=300,cols=50,nnz=1234" -o "$TMP/u.mtx" >/dev/null || fail "uniform exited $?"
[ "$(size_line "$TMP/u.mtx")" = "300 50 1234" ] || fail "uniform size line '$(size_line "$TMP/u.mtx")'"
ok "sizes"

# determinism: same seed identical, another seed different; options after or before SPEC
"$SD" gen rmat:scale=8 -o "$TMP/r1.mtx" --seed 5 >/dev/null
"$SD" gen --seed 5 -o "$TMP/r2.mtx" rmat:scale=8 >/dev/null
"$SD" gen rmat:scale=8 -o "$TMP/r3.mtx" --seed 6 >/dev/null
cmp -s <(grep -v '^%' "$TMP/r1.mtx") <(grep -v '^%' "$TMP/r2.mtx") || fail "same seed gave different files"
cmp -s <(grep -v '^%' "$TMP/r1.mtx") <(grep -v '^%' "$TMP/r3.mtx") && fail "seeds 5 and 6 gave the same file"
ok "determinism"

# value modes
"$SD" gen knn:n=200 -o "$TMP/k.mtx" --values int >/dev/null || fail "--values int exited $?"
bad=$(grep -v '^%' "$TMP/k.mtx" | tail -n +2 | awk '{ v = $3 + 0; if (v != int(v) || v < -2 || v > 2) n++ } END { print n + 0 }')
[ "$bad" = 0 ] || fail "--values int: $bad values outside {-2..2}"
"$SD" gen banded:n=50 -o "$TMP/o.mtx" --values ones >/dev/null
bad=$(grep -v '^%' "$TMP/o.mtx" | tail -n +2 | awk '$3 != 1 { n++ } END { print n + 0 }')
[ "$bad" = 0 ] || fail "--values ones: $bad values not 1"
"$SD" gen "banded:n=50,values=ones" -o "$TMP/o2.mtx" >/dev/null
cmp -s <(grep -v '^%' "$TMP/o.mtx") <(grep -v '^%' "$TMP/o2.mtx") || fail "values=ones key differs from --values ones"
ok "values"

# binary output by name
"$SD" gen stencil3d7:n=5 -o "$TMP/m.sdm" >/dev/null || fail ".sdm output exited $?"
[ -s "$TMP/m.sdm" ] || fail ".sdm file missing or empty"
head -c 64 "$TMP/m.sdm" | grep -q "MatrixMarket" && fail ".sdm output is Matrix Market text"
ok ".sdm output"

# bad specs and usage: exit 2, the cause named, no file written
expect_rc 2 "unknown family 'nosuch'" "$SD" gen nosuch -o "$TMP/bad1.mtx"
expect_rc 2 "no key 'bogus'" "$SD" gen stencil2d:bogus=3 -o "$TMP/bad2.mtx"
expect_rc 2 "key 'n'" "$SD" gen stencil2d:n=abc -o "$TMP/bad3.mtx"
expect_rc 2 "missing -o" "$SD" gen stencil2d
expect_rc 2 "--values" "$SD" gen stencil2d -o "$TMP/bad4.mtx" --values normal
expect_rc 2 "--seed" "$SD" gen stencil2d -o "$TMP/bad5.mtx" --seed -3
expect_rc 2 "" "$SD" gen
expect_rc 1 "cannot open twin table" "$SD" gen "twin:name=x,file=$TMP/none.tsv" -o "$TMP/bad6.mtx"
for k in 1 2 3 4 5 6; do
    [ -e "$TMP/bad$k.mtx" ] && fail "a failed gen left $TMP/bad$k.mtx"
done

# twins from the default table
if [ -r "$MATRICES/paper60.tsv" ]; then
    "$SD" gen twin:name=HB_str_0 -o "$TMP/t.mtx" >/dev/null || fail "twin exited $?"
    [ "$(size_line "$TMP/t.mtx")" = "363 363 2454" ] || fail "twin size line '$(size_line "$TMP/t.mtx")'"
    "$SD" gen "twin:name=QY_case39,scale=0.05" -o "$TMP/t2.mtx" >/dev/null || fail "scaled twin exited $?"
    [ "$(size_line "$TMP/t2.mtx")" = "2011 2011 52113" ] || fail "scaled twin size line '$(size_line "$TMP/t2.mtx")'"
    expect_rc 2 "no row named 'nope'" "$SD" gen twin:name=nope -o "$TMP/bad7.mtx"
    # every command's --gen knows the default table, not only gen
    "$SD" plan --gen twin:name=HB_str_0 --op spmv >"$TMP/plan.txt" 2>&1 &&
        grep -q "candidate plans" "$TMP/plan.txt" || fail "plan --gen twin: $(cat "$TMP/plan.txt")"
    # residency is SpGEMM's lowering's (SpMV launches carry none: no line of zeros)
    grep -q "resident warps" "$TMP/plan.txt" && fail "plan --op spmv prints a residency table"
    ok "twins"
else
    echo "SKIPPED: twins ($MATRICES/paper60.tsv missing)"
fi

if [ "$failures" -ne 0 ]; then
    echo "$failures failure(s)"
    exit 1
fi
echo "all passed"
exit 0
