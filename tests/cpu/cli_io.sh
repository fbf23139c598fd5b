#!/bin/bash
# tests/cpu/cli_io.sh: `sparseditto info` and `sparseditto convert`: happy paths, --json
# fields, options after the file, exit codes 1/2/3, one-line errors on stderr, nothing
# on stdout after a failure, and no partial output after a failed convert.
# usage: bash cli_io.sh <sparseditto> <matrices-dir> <tests/data-dir>
set -u
SD=$1
MATS=$2
DATA=$3
T=$(mktemp -d /tmp/sd_cli_io_XXXXXX)
trap 'rm -rf "$T"' EXIT
fails=0
passes=0

ok() { passes=$((passes + 1)); }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# run EXPECTED_RC CMD...: runs CMD, keeps stdout/stderr in $T/out $T/err, checks the rc.
run() {
    local want=$1
    shift
    "$@" >"$T/out" 2>"$T/err"
    local rc=$?
    if [ "$rc" -ne "$want" ]; then
        fail "exit $rc (wanted $want): $*: $(head -c 300 "$T/err")"
        return 1
    fi
    ok
    return 0
}

# A failure: one stderr line "sparseditto: ..." containing $1, and nothing on stdout.
check_error() {
    local frag=$1
    if [ "$(wc -l <"$T/err")" -ne 1 ] || ! grep -q "^sparseditto: " "$T/err"; then
        fail "stderr is not one 'sparseditto: ' line: $(cat "$T/err")"
    elif ! grep -qF -- "$frag" "$T/err"; then
        fail "stderr lacks '$frag': $(cat "$T/err")"
    elif [ -s "$T/out" ]; then
        fail "stdout not empty after a failure: $(head -c 200 "$T/out")"
    else
        ok
    fi
}

# With --json a failure's stdout is one JSON error object, not empty: check that, then as above.
check_json_error() {
    if ! grep -q '^{"error":{"status":' "$T/out" || [ "$(wc -l <"$T/out")" -ne 1 ]; then
        fail "stdout is not one JSON error object: $(head -c 200 "$T/out")"
    else
        : >"$T/out"
        check_error "$1"
    fi
}

# json_field FILE KEY: the value of KEY in a JSON object (python3 when present).
json_field() {
    if command -v python3 >/dev/null 2>&1; then
        python3 -c 'import json,sys; v=json.load(open(sys.argv[1]))[sys.argv[2]]; print(str(v).lower() if isinstance(v,bool) else v)' "$1" "$2"
    else
        grep -o "\"$2\": *[^,}]*" "$1" | head -1 | sed 's/^[^:]*: *//; s/"//g'
    fi
}

expect_field() { # FILE KEY VALUE
    local got
    got=$(json_field "$1" "$2")
    if [ "$got" != "$3" ]; then fail "$2 = '$got', expected '$3' ($1)"; else ok; fi
}

# ---------------------------------------------------------------- info
run 0 "$SD" info "$DATA/symmetric.mtx" && {
    grep -q "^nnz  *6 " "$T/out" || fail "table lacks 'nnz 6': $(cat "$T/out")"
    grep -q "^nnz_stored  *5 " "$T/out" || fail "table lacks nnz_stored"
    grep -q "^symmetry  *symmetric" "$T/out" || fail "table lacks symmetry"
    grep -q "^row length  *min 2, mean 2.000, max 2" "$T/out" || fail "row stats: $(cat "$T/out")"
}
run 0 "$SD" info --json "$DATA/symmetric.mtx" && {
    cp "$T/out" "$T/sym.json"
    expect_field "$T/sym.json" rows 3
    expect_field "$T/sym.json" cols 3
    expect_field "$T/sym.json" nnz 6
    expect_field "$T/sym.json" nnz_stored 5
    expect_field "$T/sym.json" duplicates 2
    expect_field "$T/sym.json" symmetry symmetric
    expect_field "$T/sym.json" field real
    expect_field "$T/sym.json" format mtx
    expect_field "$T/sym.json" gzip false
    expect_field "$T/sym.json" empty_rows 0
    [ -s "$T/err" ] && fail "stderr not empty on success: $(cat "$T/err")"
}
# options after the file
run 0 "$SD" info "$DATA/empty_rows.mtx" --json && {
    expect_field "$T/out" rows 6
    expect_field "$T/out" cols 4
    expect_field "$T/out" nnz 5
    expect_field "$T/out" empty_rows 3
    expect_field "$T/out" row_max 2
    expect_field "$T/out" row_min 0
}
run 0 "$SD" info --json "$DATA/skew.mtx" && expect_field "$T/out" symmetry skew-symmetric
run 0 "$SD" info --json "$DATA/pattern.mtx" && expect_field "$T/out" field pattern
run 0 "$SD" info --json "$DATA/integer.mtx" && expect_field "$T/out" field integer
run 0 "$SD" info --json "$DATA/hermitian.mtx" && expect_field "$T/out" symmetry hermitian
run 0 "$SD" info --json "$DATA/empty_0x0.mtx" && expect_field "$T/out" nnz 0
run 0 "$SD" info --json "$DATA/gzip_named_plain.mtx" && expect_field "$T/out" gzip true
run 0 "$SD" info --json "$DATA/small.sdm" && {
    expect_field "$T/out" format sdm
    expect_field "$T/out" symmetry general
    expect_field "$T/out" field real
    expect_field "$T/out" nnz 5
    expect_field "$T/out" nnz_stored 5
}
run 0 "$SD" info --help && { grep -q "usage: sparseditto info" "$T/out" || fail "info --help"; }
run 0 "$SD" convert --help && { grep -q "usage: sparseditto convert" "$T/out" || fail "convert --help"; }
run 0 "$SD" --help && { grep -q "info" "$T/out" && grep -q "convert" "$T/out" || fail "commands not listed"; }

# bad input: exit 1, one line, no stdout (with --json: the error as JSON)
printf '%%%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1\n0 2 1\n' >"$T/bad.mtx"
run 1 "$SD" info --json "$T/bad.mtx" && check_json_error "line 4"
run 1 "$SD" info "$T/missing.mtx" && check_error "cannot open"
printf '%%%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n' >"$T/complex.mtx"
run 1 "$SD" info "$T/complex.mtx" --json && check_json_error "complex"
printf '%%%%MatrixMarket matrix coordinate real general\n2000000000 1 1\n1 1 1\n' >"$T/huge.mtx"
run 3 "$SD" info "$T/huge.mtx" && check_error "row pointers"
# usage: exit 2
run 2 "$SD" info && check_error "missing argument"
run 2 "$SD" info --bogus "$DATA/symmetric.mtx" && check_error "unknown option"
run 2 "$SD" info "$DATA/symmetric.mtx" "$DATA/skew.mtx" && check_error "unexpected argument"
run 2 "$SD" convert "$DATA/symmetric.mtx" && check_error "missing argument"
run 2 "$SD" convert --json "$DATA/symmetric.mtx" "$T/x.sdm" && check_error "unknown option"
[ -e "$T/x.sdm" ] && fail "usage error wrote a file"

# ---------------------------------------------------------------- convert
run 0 "$SD" convert "$DATA/symmetric.mtx" "$T/a.sdm"
run 0 "$SD" convert "$T/a.sdm" "$T/b.mtx.gz"
run 0 "$SD" convert "$T/b.mtx.gz" "$T/c.mtx"
run 0 "$SD" convert "$T/c.mtx" "$T/d.mtx"
cmp -s "$T/c.mtx" "$T/d.mtx" && ok || fail "mtx → mtx is not stable"
head -1 "$T/c.mtx" | grep -q "^%%MatrixMarket matrix coordinate real general" && ok || fail "banner of written file"
[ "$(head -c 2 "$T/b.mtx.gz" | od -An -tx1 | tr -d ' ')" = "1f8b" ] && ok || fail ".gz output is not gzip"
for f in a.sdm b.mtx.gz c.mtx; do
    run 0 "$SD" info --json "$T/$f" && {
        expect_field "$T/out" nnz 6
        expect_field "$T/out" rows 3
    }
done
run 0 "$SD" convert "$DATA/small.sdm" "$T/s.mtx" && run 0 "$SD" convert "$T/s.mtx" "$T/s.sdm" &&
    { cmp -s "$DATA/small.sdm" "$T/s.sdm" && ok || fail ".sdm → .mtx → .sdm is not byte-identical"; }

# a failed convert leaves no file, and an existing OUT untouched
run 1 "$SD" convert "$T/bad.mtx" "$T/out1.sdm" && check_error "line 4"
[ -e "$T/out1.sdm" ] && fail "partial output after a failed convert"
echo precious >"$T/keep.mtx"
run 1 "$SD" convert "$T/bad.mtx" "$T/keep.mtx" && check_error "line 4"
[ "$(cat "$T/keep.mtx")" = precious ] && ok || fail "existing output clobbered"
run 1 "$SD" convert "$DATA/symmetric.mtx" "$T/no/such/dir/out.mtx" && check_error "cannot create"
ls "$T" | grep -q '\.tmp\.' && fail "temporary files left: $(ls "$T")"

# ---------------------------------------------------------------- a real matrix
if [ -f "$MATS/suitesparse/lp1.mtx.gz" ]; then
    run 0 "$SD" info --json "$MATS/suitesparse/lp1.mtx.gz" && {
        expect_field "$T/out" rows 534388
        expect_field "$T/out" nnz_stored 1088904
        expect_field "$T/out" symmetry symmetric
        expect_field "$T/out" field pattern
        expect_field "$T/out" gzip true
    }
    run 0 "$SD" convert "$MATS/suitesparse/lp1.mtx.gz" "$T/lp1.sdm" &&
        run 0 "$SD" info --json "$T/lp1.sdm" && expect_field "$T/out" nnz_stored "$(json_field "$T/out" nnz)"
fi

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
