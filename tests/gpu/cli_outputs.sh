#!/bin/bash
# tests/gpu/cli_outputs.sh: `compile --report FILE` writes its report as every output file
# is written (tests/cpu/cli_outputs.sh has the rest): an existing file keeps its mode, and a
# report that cannot be written (the full device) fails the compile, naming the file and
# the cause, where it used to be lost without a word. Skipped (exit 77) without a device.
# Usage: bash cli_outputs.sh <sparseditto> <matrices-dir> <tests/data-dir>
set -u
BIN="$1"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
export SPARSEDITTO_CACHE="$TMP/cache"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok   $*"; }

if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "cli_outputs: SKIPPED: no GPU"
  exit 77
fi
G="uniform:rows=3000,deg=5"
echo old > "$TMP/r.json"
chmod 600 "$TMP/r.json"
"$BIN" compile --gen "$G" --op spmv --budget 4 --report "$TMP/r.json" > "$TMP/c.txt" 2>&1
rc=$?
[ "$rc" = 0 ] && grep -q '^{"plan":' "$TMP/r.json" && [ "$(stat -c %a "$TMP/r.json")" = 600 ] &&
  ok "report written, mode 600 kept" || fail "report: exit $rc, mode $(stat -c %a "$TMP/r.json"): $(tail -3 "$TMP/c.txt")"
if [ -c /dev/full ]; then
  "$BIN" compile --gen "$G" --op spmv --budget 4 --report /dev/full > "$TMP/f.txt" 2>&1
  rc=$?
  [ "$rc" = 1 ] && grep -q "the report: cannot write '/dev/full': No space left on device" "$TMP/f.txt" &&
    ok "an unwritable report fails the compile, named" || fail "report to /dev/full: exit $rc: $(tail -3 "$TMP/f.txt")"
  [ -c /dev/full ] && ok "/dev/full is still a device" || fail "/dev/full was replaced"
fi
if [ "$fails" -ne 0 ]; then echo "cli_outputs: $fails failed"; exit 1; fi
echo "cli_outputs: all passed"
