# tests/cpu/cli_cache.sh: `sparseditto cache`: counts of kernel entries (with sidecars),
# compiled variants (JIT cache, filled here by an offline compile) and stale version
# folders; --clear of each part and of all; an empty cache folder is empty; usage errors.
# Usage: bash cli_cache.sh <sparseditto> [<matrices-dir> <tests/data-dir>]
set -u
BIN="$1"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok   $*"; }
C="$TMP/cache"
command -v python3 > /dev/null || { echo "cli_cache: SKIPPED: python3 reads the JSON"; exit 77; }
field() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$1" "$2"; }

mkdir -p "$C" # --dir must exist (cli_outputs.sh checks the error); an empty folder is an empty cache
"$BIN" cache --dir "$C" --json > "$TMP/empty.json" && [ "$(field "$TMP/empty.json" entries)" = 0 ] &&
  [ "$(field "$TMP/empty.json" jit)" = 0 ] && ok "an empty cache is empty" || fail "empty cache: $(cat "$TMP/empty.json")"
# Compiled variants: an offline compile (no GPU needed) with the JIT cache on.
SPARSEDITTO_JIT_CACHE=1 SPARSEDITTO_CACHE="$C" "$BIN" compile --gen "uniform:rows=500,deg=4" --op spmv --gpu H200 \
  > /dev/null 2>&1
ver=$(find "$C" -maxdepth 1 -name 'sd-*' -type d | head -1)
[ -n "$ver" ] || { mkdir -p "$C/sd-$("$BIN" version | awk '{print $2}')"; ver=$(find "$C" -maxdepth 1 -name 'sd-*' -type d | head -1); }
# Kernel entries: two entries, one with a sidecar (the reader is not involved here).
mkdir -p "$ver/entries/ab" "$ver/entries/cd" "$ver/lock/ab" "$C/sd-0.0.0-old/entries/ef"
head -c 1000 /dev/zero > "$ver/entries/ab/sd_ab01.sde"
head -c 500 /dev/zero > "$ver/entries/cd/sd_cd02.sde"
echo '{}' > "$ver/entries/ab/sd_ab01.transcript.json"
: > "$ver/lock/ab/sd_ab01.lock"
head -c 300 /dev/zero > "$C/sd-0.0.0-old/entries/ef/sd_ef03.sde"
"$BIN" cache --dir "$C" --json > "$TMP/s.json" || fail "cache --json exit $?"
e=$(field "$TMP/s.json" entries); eb=$(field "$TMP/s.json" entry_bytes); j=$(field "$TMP/s.json" jit)
sd=$(field "$TMP/s.json" stale_dirs); sb=$(field "$TMP/s.json" stale_bytes); o=$(field "$TMP/s.json" other)
[ "$e" = 2 ] && [ "$eb" = 1503 ] && ok "entries: 2, 1503 bytes with the sidecar" || fail "entries $e / $eb"
if command -v nvcc > /dev/null || [ -d /usr/local/cuda ]; then
  [ "$j" -ge 1 ] && ok "compiled variants: $j" || fail "no compiled variant after an offline compile with the JIT cache"
fi
[ "$sd" = 1 ] && [ "$sb" = 300 ] && ok "one stale version folder, 300 bytes" || fail "stale $sd / $sb"
[ "$o" -ge 1 ] && ok "locks counted as other ($o)" || fail "other $o"
"$BIN" cache --dir "$C" | grep -q "2 entries" && ok "the table" || fail "table: $("$BIN" cache --dir "$C")"
"$BIN" cache --dir "$C" --clear jit --json > "$TMP/j.json" 2> "$TMP/j.err" && [ "$(field "$TMP/j.json" jit)" = 0 ] &&
  [ "$(field "$TMP/j.json" entries)" = 2 ] && grep -q "cleared jit" "$TMP/j.err" && ok "--clear jit keeps the entries" ||
  fail "--clear jit: $(cat "$TMP/j.json" "$TMP/j.err")"
"$BIN" cache --dir "$C" --clear stale --json > "$TMP/st.json" 2>/dev/null && [ "$(field "$TMP/st.json" stale_dirs)" = 0 ] &&
  [ ! -d "$C/sd-0.0.0-old" ] && ok "--clear stale" || fail "--clear stale: $(cat "$TMP/st.json")"
"$BIN" cache --dir "$C" --clear entries --json > "$TMP/en.json" 2>/dev/null && [ "$(field "$TMP/en.json" entries)" = 0 ] &&
  [ "$(field "$TMP/en.json" other)" = 0 ] && ok "--clear entries (and their locks)" || fail "--clear entries: $(cat "$TMP/en.json")"
"$BIN" cache --dir "$C" --clear all > /dev/null 2>&1 && ok "--clear all on an empty cache" || fail "--clear all"
"$BIN" cache --dir "$C" --clear everything > /dev/null 2> "$TMP/u.err"
rc=$?
[ $rc = 2 ] && grep -q "not entries, jit, stale or all" "$TMP/u.err" && ok "bad --clear: exit 2" || fail "bad --clear exit $rc"
"$BIN" cache extra-arg > /dev/null 2>&1
[ $? = 2 ] && ok "a stray argument: exit 2" || fail "stray argument"
if [ "$fails" -ne 0 ]; then echo "cli_cache: $fails failed"; exit 1; fi
echo "cli_cache: all passed"
