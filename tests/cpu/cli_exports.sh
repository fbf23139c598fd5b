#!/usr/bin/env bash
# tests/cpu/cli_exports.sh: what the libraries hold. The shared library exports the public
# API and nothing else (cmake/sparseditto.map): every SD_API function of
# include/sparseditto.h, no other symbol. Neither library holds the research tools
# (tools/: corpus builder, model training, ranker evaluation, benchmark suite): no object
# of tools/ is in the static archive and no symbol the tools define is defined in either
# library.
# Usage (ctest): bash cli_exports.sh <sparseditto-binary> <matrices-dir> <tests/data-dir>,
# with SD_SHARED_LIBRARY, SD_STATIC_LIBRARY and SD_TOOLS_LIBRARY naming the three libraries.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
fail() { echo "cli_exports: FAIL: $*"; exit 1; }
so=${SD_SHARED_LIBRARY:?SD_SHARED_LIBRARY names libsparseditto.so (set by CMakeLists.txt)}
archive=${SD_STATIC_LIBRARY:?SD_STATIC_LIBRARY names libsparseditto.a (set by CMakeLists.txt)}
tools=${SD_TOOLS_LIBRARY:?SD_TOOLS_LIBRARY names the tools archive (set by CMakeLists.txt)}
if ! command -v nm >/dev/null || ! command -v ar >/dev/null; then
  echo "cli_exports: SKIPPED: nm and ar (binutils) are needed"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# 1. The dynamic symbol table: sd_* only, and every public function among them.
nm -D --defined-only "$so" | awk '{print $NF}' | sort -u >"$tmp/exported"
grep -v '^sd_' "$tmp/exported" >"$tmp/extra" || true
[ ! -s "$tmp/extra" ] || fail "libsparseditto.so exports symbols outside sd_*: $(tr '\n' ' ' <"$tmp/extra")"
grep -o 'SD_API [^(]*(' "$repo/include/sparseditto.h" | grep -o 'sd_[a-z0-9_]*($' | tr -d '(' |
  sort -u >"$tmp/public"
[ -s "$tmp/public" ] || fail "no SD_API function found in include/sparseditto.h"
missing=$(comm -23 "$tmp/public" "$tmp/exported")
[ -z "$missing" ] || fail "public functions not exported: $missing"
echo "cli_exports: libsparseditto.so exports $(wc -l <"$tmp/exported") symbols, all sd_*, the $(wc -l <"$tmp/public") public functions among them"

# 2. No object of tools/ in the static archive (objects are named after their sources).
ar t "$archive" | sort -u >"$tmp/objects"
find "$repo/tools" -name '*.c' -printf '%f.o\n' | sort -u >"$tmp/tool_objects"
[ -s "$tmp/tool_objects" ] || fail "no source under tools/"
both=$(comm -12 "$tmp/objects" "$tmp/tool_objects")
[ -z "$both" ] || fail "the static library holds objects of tools/: $(echo $both)"

# 3. No symbol the tools define is defined in either library (the shared library's full
# symbol table, hidden symbols included).
nm --defined-only "$tools" 2>/dev/null | awk '$2 ~ /^[TDBR]$/ {print $3}' | sort -u >"$tmp/tool_syms"
# The training side of the models too: the library only loads and evaluates them.
for sym in sdi_corpus_build sdi_forest_fit sdi_paramspmm_decider_fit sdi_paramspmm_deciders_fit \
  sdi_paramspmm_decider_save sdi_paramspmm_deciders_save sdi_energy_model_init sdi_rank_loss \
  sdi_energy_task_loss sdi_energy_save; do
  grep -qx "$sym" "$tmp/tool_syms" || fail "the tools archive does not define $sym"
done
for lib in "$archive" "$so"; do
  nm --defined-only "$lib" 2>/dev/null | awk '{print $NF}' | sort -u >"$tmp/lib_syms"
  both=$(comm -12 "$tmp/lib_syms" "$tmp/tool_syms")
  [ -z "$both" ] || fail "$(basename "$lib") defines symbols of tools/: $(echo $both)"
done
echo "cli_exports: neither library holds any of the $(wc -l <"$tmp/tool_syms") symbols of tools/"
