#!/bin/bash
# tests/cpu/cli_streams.sh: matrices that do not come from a regular file, and lines of
# pathological length. Pipes, '-' for standard input, /dev/stdin, process substitution,
# FIFOs and gzip from a pipe read like the file (info, convert, analyze, rank, reorder);
# an .sdm from a pipe is refused by name. A 200 MB comment line reads in bounded time
# and memory (timeout and ulimit -v guards, generated on the fly, nothing big on disk);
# an absurd data line, /dev/zero and an endless line end with an error naming the line.
# usage: bash cli_streams.sh <sparseditto> <matrices-dir> <tests/data-dir>
set -u
SD=$1
DATA=$3
T=$(mktemp -d /tmp/sd_cli_streams_XXXXXX)
trap 'rm -rf "$T"' EXIT
fails=0
passes=0

ok() { passes=$((passes + 1)); }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# What a command prints, less the lines that name the input or time the read.
strip() { grep -v -E '^(file|matrix|read|analysis) |^ *"(file|read_seconds)":' "$1"; }

# same NAME REF OUT: OUT's output equals REF's (both stripped).
same() {
    if diff <(strip "$2") <(strip "$3") >"$T/diff"; then ok; else fail "$1: output differs: $(head -c 400 "$T/diff")"; fi
}

banner() { echo '%%MatrixMarket matrix coordinate real general'; }

# ---------------------------------------------------------------- streams read like files
A="$DATA/symmetric.mtx"
gzip -c "$A" >"$T/A.mtx.gz"
for cmd in "info" "info --json" "analyze" "rank --op spmv"; do
    # shellcheck disable=SC2086
    set -- $cmd
    if ! timeout 60 "$SD" "$@" "$A" >"$T/ref" 2>"$T/err"; then
        fail "$cmd on the file: $(cat "$T/err")"
        continue
    fi
    timeout 60 "$SD" "$@" - <"$A" >"$T/out" 2>"$T/err" && same "$cmd - < file" "$T/ref" "$T/out" || fail "$cmd - < file: $(cat "$T/err")"
    cat "$A" | timeout 60 "$SD" "$@" - >"$T/out" 2>"$T/err" && same "cat | $cmd -" "$T/ref" "$T/out" || fail "cat | $cmd -: $(cat "$T/err")"
    cat "$A" | timeout 60 "$SD" "$@" /dev/stdin >"$T/out" 2>"$T/err" && same "cat | $cmd /dev/stdin" "$T/ref" "$T/out" || fail "cat | $cmd /dev/stdin: $(cat "$T/err")"
    timeout 60 "$SD" "$@" <(cat "$A") >"$T/out" 2>"$T/err" && same "$cmd <(cat)" "$T/ref" "$T/out" || fail "$cmd <(cat): $(cat "$T/err")"
    rm -f "$T/fifo" && mkfifo "$T/fifo" && { cat "$A" >"$T/fifo" & }
    timeout 60 "$SD" "$@" "$T/fifo" >"$T/out" 2>"$T/err" && same "$cmd FIFO" "$T/ref" "$T/out" || fail "$cmd FIFO: $(cat "$T/err")"
    wait
    # gzip recognised on the stream itself
    timeout 60 "$SD" "$@" "$T/A.mtx.gz" >"$T/refgz" 2>"$T/err" || fail "$cmd on the .gz file: $(cat "$T/err")"
    gzip -c "$A" | timeout 60 "$SD" "$@" - >"$T/out" 2>"$T/err" && same "gzip -c | $cmd -" "$T/refgz" "$T/out" || fail "gzip -c | $cmd -: $(cat "$T/err")"
    timeout 60 "$SD" "$@" <(zcat "$T/A.mtx.gz") >"$T/out" 2>"$T/err" && same "$cmd <(zcat)" "$T/ref" "$T/out" || fail "$cmd <(zcat): $(cat "$T/err")"
done
gzip -c "$A" | "$SD" info - 2>/dev/null | grep -q '^format  *Matrix Market, gzip-compressed' && ok ||
    fail "gzip from a pipe is not reported as gzip"

# Commands that write: the same files from a pipe as from the path.
"$SD" convert "$A" "$T/ref.mtx" >/dev/null 2>"$T/err" || fail "convert file: $(cat "$T/err")"
gzip -c "$A" | timeout 60 "$SD" convert - "$T/out.mtx" >/dev/null 2>"$T/err" || fail "gzip -c | convert -: $(cat "$T/err")"
cmp -s "$T/ref.mtx" "$T/out.mtx" && ok || fail "convert from a pipe wrote a different file"
"$SD" reorder "$A" "$T/ref_r.mtx" --method rcm >/dev/null 2>"$T/err" || fail "reorder file: $(cat "$T/err")"
cat "$A" | timeout 60 "$SD" reorder - "$T/out_r.mtx" --method rcm >/dev/null 2>"$T/err" || fail "cat | reorder -: $(cat "$T/err")"
cmp -s "$T/ref_r.mtx" "$T/out_r.mtx" && ok || fail "reorder from a pipe wrote a different file"

# .sdm: a regular file on standard input reads; a pipe is refused by name.
"$SD" convert "$A" "$T/A.sdm" >/dev/null 2>&1 || fail "convert to .sdm"
"$SD" info "$T/A.sdm" >"$T/ref" 2>&1 && "$SD" info - <"$T/A.sdm" >"$T/out" 2>"$T/err" &&
    same "info - < .sdm" "$T/ref" "$T/out" || fail "info - < A.sdm: $(cat "$T/err")"
cat "$T/A.sdm" | timeout 20 "$SD" info - >"$T/out" 2>"$T/err"
rc=$?
if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ] || [ -s "$T/out" ] ||
    ! grep -q "^sparseditto: standard input: .sdm files must be regular files: cannot read one from a pipe" "$T/err"; then
    fail ".sdm from a pipe: rc $rc: $(cat "$T/err")"
else
    ok
fi

# ---------------------------------------------------------------- line lengths
# expect_error NAME FRAGMENT RC-FILE ERR-FILE: a failure (not a timeout) naming FRAGMENT.
expect_error() {
    local rc
    rc=$(cat "$3")
    if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ] || [ "$rc" -ge 128 ]; then
        fail "$1: exit $rc: $(head -c 300 "$4")"
    elif [ "$(wc -l <"$4")" -ne 1 ] || ! grep -qF -- "$2" "$4"; then
        fail "$1: stderr lacks '$2': $(head -c 300 "$4")"
    else
        ok
    fi
}

timeout 20 "$SD" info /dev/zero >/dev/null 2>"$T/err"
echo $? >"$T/rc"
expect_error "/dev/zero" "/dev/zero: line 1: longer than 1048576 bytes" "$T/rc" "$T/err"
grep -q "NUL bytes" "$T/err" && ok || fail "/dev/zero: NUL bytes not named: $(cat "$T/err")"

yes | tr -d '\n' | head -c 300000000 | { timeout 20 "$SD" info - >/dev/null 2>"$T/err"; echo $? >"$T/rc"; }
expect_error "endless line" "standard input: line 1: longer than 1048576 bytes" "$T/rc" "$T/err"

{ banner; printf '3 3 1\n'; yes | tr -d '\n' | head -c 300000000; } |
    { timeout 20 "$SD" info - >/dev/null 2>"$T/err"; echo $? >"$T/rc"; }
expect_error "endless data line" "standard input: line 3: longer than 1048576 bytes" "$T/rc" "$T/err"

{ banner; printf '3 3 1\n1 1 '; head -c 5000000 /dev/zero | tr '\0' 0; printf '1\n'; } >"$T/absurd.mtx"
timeout 20 "$SD" info "$T/absurd.mtx" >/dev/null 2>"$T/err"
echo $? >"$T/rc"
expect_error "absurd data line" "absurd.mtx: line 3: longer than 1048576 bytes" "$T/rc" "$T/err"

# A long comment is legal. The guard on memory is a cap on the address space set a
# little above what the same binary needs for a tiny file (found by bisection); where
# no cap can be set at all (sanitizer builds reserve terabytes), timeout alone guards.
tiny_ok() { (ulimit -v "$1" && "$SD" info "$A" >/dev/null 2>&1) 2>/dev/null; }
cap=
if tiny_ok 8000000; then
    lo=65536 hi=8000000 # KiB: fails, works
    while [ $((hi - lo)) -gt 16384 ]; do
        mid=$(((lo + hi) / 2))
        if tiny_ok "$mid"; then hi=$mid; else lo=$mid; fi
    done
    cap=$((hi + 131072)) # 128 MiB above the need: far below the 200 MB comment
else
    echo "note: ulimit -v unusable here (sanitizer build?): the long comment runs under timeout only"
fi
lc_head() { banner; printf '%%'; }
lc_tail() { printf '\n3 3 1\n%% a short one\n2 3 1.5\n'; }
long_comment() { # the banner, a comment of 200 MB, then a valid rest
    lc_head
    head -c 200000000 /dev/zero | tr '\0' c
    lc_tail
}
bytes=$(($( { lc_head; lc_tail; } | wc -c) + 200000000))
run_capped() { # reads standard input under the caps
    if [ -n "$cap" ]; then (ulimit -v "$cap" && timeout 60 "$SD" info --json -); else timeout 60 "$SD" info --json -; fi
}
for how in plain gzip; do
    if [ "$how" = plain ]; then
        long_comment | run_capped >"$T/out" 2>"$T/err"
    else
        long_comment | gzip -1 | run_capped >"$T/out" 2>"$T/err"
    fi
    rc=$?
    if [ "$rc" -ne 0 ] || ! grep -q '"nnz": 1,' "$T/out" || ! grep -q "\"bytes_read\": $bytes," "$T/out"; then
        fail "200 MB comment ($how): exit $rc: $(head -c 300 "$T/err") $(head -c 300 "$T/out")"
    else
        ok
    fi
done

# profile reads the matrix again in every profiled process: a stream is refused by name.
printf '%s\n' '%%MatrixMarket matrix coordinate real general' '1 1 1' '1 1 2.0' |
    "$SD" profile - --op spmv >"$T/out" 2>"$T/err"
rc=$?
if [ "$rc" -eq 2 ] && grep -q "not a regular file" "$T/err"; then ok; else fail "profile -: exit $rc: $(head -c 300 "$T/err")"; fi

echo "cli_streams: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
