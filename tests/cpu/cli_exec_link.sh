#!/usr/bin/env bash
# tests/cpu/cli_exec_link.sh: the execution path stands alone (docs/ARCHITECTURE.md "From a
# call to a launch"). A static archive of the build's objects of src/api, src/runtime,
# src/core and src/formats (and the embedded templates) alone, and a program calling
# sd_spmv, sd_spmm, sd_spgemm and sd_kernel_update_values linked against it and the CUDA
# libraries: every symbol those calls reach must resolve there, so running a compiled kernel
# needs no planner, search, lowering, model or cache code. Each undefined symbol is printed
# with the objects that reference it. The program then runs: each call refuses a NULL
# kernel with a status (no device needed).
# Usage (ctest): bash cli_exec_link.sh <sparseditto-binary> <matrices-dir> <tests/data-dir>;
# CMakeLists.txt sets SD_CC, SD_OBJECTS_DIR (sd_objects' object folder), SD_EXEC_INCLUDES
# and SD_CUDA_LIBDIR, and SD_EXEC_LDFLAGS (a sanitized build's runtime: its objects call it);
# by hand they default from the binary's build folder.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
fail() { echo "cli_exec_link: FAIL: $*"; exit 1; }
build=$(cd "$(dirname "${1:?usage: cli_exec_link.sh <sparseditto-binary> ...}")" && pwd)
cc=${SD_CC:-cc}
objdir=${SD_OBJECTS_DIR:-$build/CMakeFiles/sd_objects.dir}
includes=${SD_EXEC_INCLUDES:-"-I$repo/include -I$build/include"}
cudalib=${SD_CUDA_LIBDIR:-/usr/local/cuda/lib64}
read -r -a ldflags <<<"${SD_EXEC_LDFLAGS:-}"
rooms="api runtime core formats"
command -v ar >/dev/null || { echo "cli_exec_link: SKIPPED: ar (binutils) is needed"; exit 77; }
[ -d "$objdir/src" ] || fail "no object folder $objdir/src (build the library first)"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

objects=()
for room in $rooms; do
  mapfile -t found < <(find "$objdir/src/$room" -name '*.o' 2>/dev/null | sort)
  [ "${#found[@]}" -gt 0 ] || fail "no object of src/$room under $objdir"
  objects+=("${found[@]}")
done
embedded=$(find "$objdir" -name 'sd_kernels_embedded.c.o' | head -1)
[ -n "$embedded" ] || fail "no embedded templates object under $objdir"
objects+=("$embedded")
# q, not r: objects of different folders may share a file name.
ar qcs "$tmp/libexec_path.a" "${objects[@]}"

cat >"$tmp/exec_path.c" <<'EOF'
#include <stdio.h>
#include "sparseditto.h"

/* Each call of the execution path with a NULL kernel: refused with a status. */
int main(void)
{
    sd_status s[4];
    s[0] = sd_spmv(NULL, NULL, NULL, NULL);
    s[1] = sd_spmm(NULL, NULL, NULL, NULL);
    s[2] = sd_spgemm(NULL, NULL, NULL);
    s[3] = sd_kernel_update_values(NULL, NULL);
    int ok = 1;
    for (int i = 0; i < 4; i++) {
        printf("call %d: %s\n", i, sd_status_string(s[i]));
        ok &= s[i] != SD_OK;
    }
    return ok ? 0 : 1;
}
EOF

# shellcheck disable=SC2086 # includes is a list of flags
if ! "$cc" -std=c11 $includes -c "$tmp/exec_path.c" -o "$tmp/exec_path.o" 2>"$tmp/cc.log"; then
  cat "$tmp/cc.log"
  fail "the program calling the execution path does not compile against include/sparseditto.h"
fi
libs=(-L"$cudalib" "-Wl,-rpath,$cudalib" -lcudart_static -lnvrtc -lnvJitLink -lcusparse -lz -fopenmp -lm -ldl
  -lpthread -lrt)
if ! "$cc" "${ldflags[@]}" -o "$tmp/exec_path" "$tmp/exec_path.o" "$tmp/libexec_path.a" "${libs[@]}" -Wl,--no-undefined \
  2>"$tmp/ld.log"; then
  mapfile -t missing < <(grep -o "undefined reference to \`[^']*'" "$tmp/ld.log" | sed "s/.*\`//; s/'$//" | sort -u)
  if [ "${#missing[@]}" -eq 0 ]; then
    cat "$tmp/ld.log"
    fail "the link failed (above)"
  fi
  echo "cli_exec_link: the execution path reaches ${#missing[@]} symbol(s) outside src/{${rooms// /,}}:"
  for o in "${objects[@]}"; do
    nm -u "$o" 2>/dev/null | awk -v o="${o#"$objdir"/}" '{print $2, o}'
  done >"$tmp/uses"
  for sym in "${missing[@]}"; do
    users=$(awk -v s="$sym" '$1 == s {printf "%s ", $2}' "$tmp/uses")
    echo "  $sym (referenced by ${users:-?})"
  done
  fail "the execution path does not link with src/{${rooms// /,}} alone"
fi
"$tmp/exec_path" >"$tmp/run.log" 2>&1 || { cat "$tmp/run.log"; fail "the linked program did not refuse NULL kernels"; }
echo "cli_exec_link: sd_spmv, sd_spmm, sd_spgemm and sd_kernel_update_values link against" \
  "$(ar t "$tmp/libexec_path.a" | wc -l) objects of src/{${rooms// /,}} and the CUDA libraries alone"
