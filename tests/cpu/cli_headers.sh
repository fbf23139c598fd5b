#!/usr/bin/env bash
# tests/cpu/cli_headers.sh: every header of src/runtime and src/vendor compiles on its own
# (includes what it uses), with the compiler, standard, warnings and include paths of the
# build, which CMake passes as SD_CC and SD_HEADER_FLAGS.
# Usage (ctest): bash cli_headers.sh <sparseditto> <matrices-dir> <tests/data-dir>
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
: "${SD_CC:?cli_headers: SD_CC (the C compiler) is not set; run through ctest}"
: "${SD_HEADER_FLAGS:?cli_headers: SD_HEADER_FLAGS (include paths) is not set; run through ctest}"
read -r -a flags <<<"$SD_HEADER_FLAGS"
fails=0 n=0
for h in "$repo"/src/runtime/*.h "$repo"/src/vendor/*.h; do
  n=$((n + 1))
  if out=$("$SD_CC" -std=gnu11 -fsyntax-only -Wall -Wextra -Werror -Wno-unused-parameter \
             "${flags[@]}" -x c "$h" 2>&1); then
    echo "ok   ${h#"$repo"/}"
  else
    echo "FAIL ${h#"$repo"/} does not compile alone:"
    echo "$out" | head -20
    fails=$((fails + 1))
  fi
done
[ $n -gt 0 ] || { echo "cli_headers: no header found under $repo/src"; exit 1; }
echo "cli_headers: $n headers, $fails failed"
[ $fails = 0 ]
