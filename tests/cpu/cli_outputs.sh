#!/bin/bash
# tests/cpu/cli_outputs.sh: where the command's output goes. `convert A OUT` writes OUT as
# a careful user expects: a device (null, full) or a FIFO in place, never replaced; a
# symbolic link's target, the link kept; an existing file's mode kept and a read-only file
# refused; '-' and /dev/fd/1 as standard output; a write error named, with nothing left
# behind. A standard output that cannot be written fails the command. With --json stdout
# is JSON in every outcome. `cache --dir` names a missing folder; `--clear all` says what
# it left.
# usage: bash cli_outputs.sh <sparseditto> <matrices-dir> <tests/data-dir>
set -u
SD=$1
DATA=$3
T=$(mktemp -d /tmp/sd_cli_outputs_XXXXXX)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1 # a writer that took '-' for a file name would write it here
fails=0
passes=0
ok() { passes=$((passes + 1)); }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
note() { echo "note: $*"; }

# run EXPECTED_RC CMD...: stdout/stderr into $T/out $T/err; checks the exit status.
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
has() { # FILE TEXT: FILE contains TEXT
    if grep -qF -- "$2" "$1"; then ok; else fail "$1 lacks '$2': $(head -c 300 "$1")"; fi
}
no_temporaries() { # DIR
    if ls -a "$1" | grep -q '\.tmp\.'; then fail "temporary files left in $1: $(ls -a "$1")"; else ok; fi
}
is_json() { # FILE: one JSON document
    if command -v python3 >/dev/null 2>&1; then
        python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$1" 2>/dev/null
    else
        [ "$(wc -l <"$1")" -eq 1 ] && grep -q '^{.*}$' "$1"
    fi
}

A=$DATA/symmetric.mtx
"$SD" convert "$A" "$T/ref.mtx" >/dev/null || { echo "cannot convert $A"; exit 1; }

# Device nodes: as root a writer that replaces its output would replace the machine's
# /dev/null, so root gets nodes of its own here (mknod); other users get the real ones,
# which they cannot replace. "" when there is none (a nodev mount).
dev_node() { # NAME MINOR
    if [ "$(id -u)" = 0 ]; then
        mknod "$T/$1" c 1 "$2" 2>/dev/null && head -c 1 "$T/$1" >/dev/null 2>&1 && echo "$T/$1"
    elif [ -c "/dev/$1" ]; then
        echo "/dev/$1"
    fi
}
NULLDEV=$(dev_node null 3)
FULLDEV=$(dev_node full 7)

# ---------------------------------------------------------------- special files
if [ -n "$NULLDEV" ]; then
    run 0 "$SD" convert "$A" "$NULLDEV"
    [ -c "$NULLDEV" ] && ok || fail "$NULLDEV is no longer a character device: $(ls -l "$NULLDEV")"
    no_temporaries "$(dirname "$NULLDEV")"
else
    note "no usable null device node: skipped"
fi
if [ -n "$FULLDEV" ]; then
    for out in "$FULLDEV"; do
        run 1 "$SD" convert "$A" "$out" && {
            has "$T/err" "'$out'"
            has "$T/err" "No space left on device"
        }
        [ -c "$out" ] && ok || fail "$out is no longer a character device"
    done
    no_temporaries "$(dirname "$FULLDEV")"
else
    note "no usable full device node: skipped"
fi

# A FIFO: written in place for its reader (a replaced FIFO would leave the reader waiting:
# timeout ends it).
mkfifo "$T/fifo"
timeout 20 cat "$T/fifo" >"$T/fifo.out" &
reader=$!
run 0 timeout 20 "$SD" convert "$A" "$T/fifo"
wait $reader
[ -p "$T/fifo" ] && ok || fail "the FIFO was replaced: $(ls -l "$T/fifo")"
cmp -s "$T/fifo.out" "$T/ref.mtx" && ok || fail "the FIFO's reader got $(wc -c <"$T/fifo.out") bytes"

# Symbolic links: the target is written, the link stays (relative targets resolved from
# the link's folder; a dangling link's target is created).
mkdir -p "$T/links" "$T/store"
echo old >"$T/store/t1.mtx"
ln -s ../store/t1.mtx "$T/links/l1.mtx"
ln -s ../store/t2.sdm "$T/links/l2.sdm"
run 0 "$SD" convert "$A" "$T/links/l1.mtx"
run 0 "$SD" convert "$A" "$T/links/l2.sdm"
[ -L "$T/links/l1.mtx" ] && [ "$(readlink "$T/links/l1.mtx")" = ../store/t1.mtx ] && ok ||
    fail "link l1 replaced: $(ls -l "$T/links")"
[ -L "$T/links/l2.sdm" ] && ok || fail "link l2 replaced: $(ls -l "$T/links")"
cmp -s "$T/store/t1.mtx" "$T/ref.mtx" && ok || fail "the link's target was not written"
run 0 "$SD" info --json "$T/store/t2.sdm" && has "$T/out" '"nnz": 6'

# Modes: an existing file keeps its mode; a new one follows the umask.
for m in 600 640; do
    echo old >"$T/m$m.mtx"
    chmod "$m" "$T/m$m.mtx"
    run 0 "$SD" convert "$A" "$T/m$m.mtx"
    [ "$(stat -c %a "$T/m$m.mtx")" = "$m" ] && ok || fail "mode $m became $(stat -c %a "$T/m$m.mtx")"
    cmp -s "$T/m$m.mtx" "$T/ref.mtx" && ok || fail "mode $m file not rewritten"
done
(umask 077 && "$SD" convert "$A" "$T/private.mtx" >/dev/null)
[ "$(stat -c %a "$T/private.mtx")" = 600 ] && ok || fail "umask 077 gave $(stat -c %a "$T/private.mtx")"
# A read-only file (no write bit for anyone) is refused, not replaced behind its mode's
# back as rename() would; by its mode, so root (who passes access checks) is refused too.
echo precious >"$T/ro.mtx"
chmod 444 "$T/ro.mtx"
run 1 "$SD" convert "$A" "$T/ro.mtx" && { has "$T/err" "'$T/ro.mtx'"; has "$T/err" "read-only"; }
[ "$(cat "$T/ro.mtx")" = precious ] && [ "$(stat -c %a "$T/ro.mtx")" = 444 ] && ok || fail "read-only file changed"

# Folders that cannot take the file: named, nothing created.
run 1 "$SD" convert "$A" "$T/no/such/out.mtx" && {
    has "$T/err" "cannot create a file in '$T/no/such'"
    has "$T/err" "No such file or directory"
}
mkdir "$T/adir"
run 1 "$SD" convert "$A" "$T/adir" && has "$T/err" "Is a directory"
if [ "$(id -u)" != 0 ]; then
    mkdir "$T/locked" && chmod 555 "$T/locked"
    run 1 "$SD" convert "$A" "$T/locked/out.mtx" && has "$T/err" "Permission denied"
    [ -e "$T/locked/out.mtx" ] && fail "created in a read-only folder"
    chmod 755 "$T/locked"
else
    note "root writes any folder: the read-only folder case needs another user"
fi

# A write error in the middle (a file-size limit: write() fails with EFBIG once SIGXFSZ is
# ignored) leaves the existing file as it was and no temporary.
{
    echo '%%MatrixMarket matrix coordinate real general'
    echo '3000 3000 3000'
    for i in $(seq 3000); do echo "$i $i 1.25"; done
} >"$T/big.mtx"
echo precious >"$T/keep.mtx"
(trap '' XFSZ && ulimit -f 8 && "$SD" convert "$T/big.mtx" "$T/keep.mtx") >"$T/out" 2>"$T/err"
rc=$?
[ $rc -eq 1 ] && ok || fail "a write past the file-size limit: exit $rc"
has "$T/err" "File too large"
[ "$(cat "$T/keep.mtx")" = precious ] && ok || fail "the existing file was damaged by a failed write"
no_temporaries "$T"

# Standard output: '-' (the summary then goes to stderr), /dev/fd/1 opened by the shell
# to append (kept), and a full standard output.
run 0 "$SD" convert "$A" - && {
    cmp -s "$T/out" "$T/ref.mtx" && ok || fail "'-' did not write the matrix on stdout: $(head -c 200 "$T/out")"
    has "$T/err" "wrote -"
}
[ -e "$T/-" ] && fail "'-' was taken for a file name"
echo first >"$T/app.mtx"
"$SD" convert "$A" /dev/fd/1 >>"$T/app.mtx" 2>"$T/err" && ok || fail "convert to /dev/fd/1: $(cat "$T/err")"
[ "$(head -1 "$T/app.mtx")" = first ] && tail -n +2 "$T/app.mtx" | cmp -s - "$T/ref.mtx" && ok ||
    fail "/dev/fd/1 did not append: $(head -3 "$T/app.mtx")"
if [ -c /dev/full ]; then
    "$SD" convert "$A" - >/dev/full 2>"$T/err"
    rc=$?
    [ $rc -ne 0 ] && ok || fail "'-' to /dev/full: exit 0"
    has "$T/err" "No space left on device"
fi

# ---------------------------------------------------------------- standard output errors
# Buffered output fails only when flushed, after the command: checked at exit.
if [ -c /dev/full ]; then
    for cmd in "--help" "--version" "info --help" "info $A" "info --json $A" "analyze --json $A" \
        "plan --op spmv --gpu H200 $A" "cache --dir $T --json"; do
        # shellcheck disable=SC2086
        "$SD" $cmd >/dev/full 2>"$T/err"
        rc=$?
        [ $rc -ne 0 ] && ok || fail "$cmd >/dev/full: exit 0"
        has "$T/err" "cannot write standard output: No space left on device"
    done
else
    note "no /dev/full: the full-stdout cases skipped"
fi
# A file system that refuses more (the file-size limit again, 1 KiB: the JSON is longer,
# the message on stderr shorter): the JSON would be cut short.
(trap '' XFSZ && ulimit -f 1 && "$SD" analyze --json "$A") >"$T/cut.json" 2>"$T/err"
rc=$?
[ $rc -ne 0 ] && ok || fail "analyze --json past the file-size limit: exit 0"
has "$T/err" "File too large"
"$SD" --help >&- 2>"$T/err"
rc=$?
[ $rc -ne 0 ] && ok || fail "--help with stdout closed: exit 0"
has "$T/err" "cannot write standard output"

# ---------------------------------------------------------------- --json: JSON in every outcome
# compile without a GPU stops after NVRTC (exit 3); with one it succeeds. Either way stdout
# is one JSON document; the table goes to stderr.
SPARSEDITTO_CACHE="$T/cache" timeout 600 "$SD" compile --gen "uniform:rows=300,deg=4" --op spmv --json \
    >"$T/c.json" 2>"$T/c.err"
rc=$?
is_json "$T/c.json" && ok || fail "compile --json (exit $rc): stdout is not JSON: $(head -c 300 "$T/c.json")"
if [ $rc -ne 0 ]; then
    has "$T/c.json" "\"exit_code\":$rc"
    has "$T/c.json" '"error":{"status":'
    [ $rc -eq 3 ] && { has "$T/c.json" "no usable GPU"; has "$T/c.err" "candidate plans"; }
fi
run 2 "$SD" compile --json --op bogus "$A" && {
    is_json "$T/out" && ok || fail "usage error: stdout is not JSON"
    has "$T/out" '"status":"usage error"'
    has "$T/err" "sparseditto: --op"
}
# A failure reported by a command's own message rather than sdc_fail (bench's list check):
# the error object carries the library's message all the same.
printf 'stencil2d:n=8\nknn:n=100,k=4,dim=9\n' >"$T/badset.txt"
run 1 "$SD" bench --json --set "$T/badset.txt" --ops spmv --out "$T/res" && {
    is_json "$T/out" && ok || fail "bench --json: stdout is not JSON: $(cat "$T/out")"
    has "$T/out" "line 2"
}
for cmd in "info" "analyze" "rank" "plan --op spmv --gpu H200"; do
    # shellcheck disable=SC2086
    run 1 "$SD" $cmd --json "$T/missing.mtx" && {
        is_json "$T/out" && ok || fail "$cmd --json on a missing file: stdout is not JSON: $(cat "$T/out")"
        has "$T/out" "cannot open '$T/missing.mtx'"
    }
done

# ---------------------------------------------------------------- cache
run 3 "$SD" cache --dir "$T/nonexistent" && has "$T/err" "'$T/nonexistent'"
run 3 "$SD" cache --dir "$T/nonexistent" --clear all && has "$T/err" "No such file or directory"
run 3 "$SD" cache --dir "$T/ref.mtx" && has "$T/err" "is not a directory"
C=$T/kc
V=$C/sd-$("$SD" version | awk '{print $2}')
mkdir -p "$V/entries/ab" "$V/jit/cd"
head -c 100 /dev/zero >"$V/entries/ab/sd_ab01.sde"
head -c 200 /dev/zero >"$V/jit/cd/x.cubin"
echo "mine" >"$V/notes.txt"
run 0 "$SD" cache --dir "$C" --clear all --json && {
    has "$T/err" "cleared all but 1 item: removed 2 files"
    has "$T/err" "left '$V/notes.txt'"
    grep -q "cleared all:" "$T/err" && fail "claims all was cleared: $(cat "$T/err")"
    has "$T/out" '"left_items":1'
}
[ -f "$V/notes.txt" ] && ok || fail "--clear all removed a file the cache did not write"
[ -e "$V/entries/ab/sd_ab01.sde" ] && fail "--clear all kept an entry"
run 0 "$SD" cache --dir "$C" --clear all && has "$T/err" "cleared all but 1 item: removed 0 files"
rm "$V/notes.txt"
run 0 "$SD" cache --dir "$C" --clear all && has "$T/err" "cleared all: removed 0 files"

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
