#!/usr/bin/env bash
# scripts/gpu-dev/ab-tree.sh: the second tree of an A/B run in a device call: copies the sources of
# this tree to /tmp/NAME, applies PATCH to it (reversed by default: the tree without the
# change under test; --forward: a variant on top of it) and builds the CLI into /tmp/NAME/b,
# so that a run script then measures it with SD_BENCH_BIN=/tmp/NAME/b/sparseditto
# scripts/gpu-dev/bench-run.sh ...
# usage (from a device call's --run script): bash scripts/gpu-dev/ab-tree.sh NAME PATCH [--forward]
# Make PATCH with `git diff --no-renames OLD HEAD -- CMakeLists.txt cmake include src tools bench`
# (moved files as deletions and additions, which patch(1) reverses reliably).
# The build log goes to $OUT/NAME_build.log (or /tmp/NAME_build.log without OUT); exit 0
# when the binary was built.
set -u
case "${1:-}" in -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
if [ $# -lt 2 ]; then
  echo "usage: scripts/gpu-dev/ab-tree.sh NAME PATCH [--forward]" >&2
  exit 2
fi
name=$1 patch=$2 dir=-R
[ "${3:-}" = "--forward" ] && dir=
here=$PWD
case $patch in /*) ;; *) patch=$here/$patch ;; esac
if [ ! -f "$patch" ]; then
  echo "ab-tree: no patch file $patch" >&2
  exit 2
fi
tree=/tmp/$name
log=${OUT:-/tmp}/${name}_build.log
rm -rf "$tree" && mkdir -p "$tree"
for d in CMakeLists.txt cmake include src tools bench tests python examples models scripts; do
  [ -e "$d" ] && cp -r "$d" "$tree/"
done
# The copied tree finds the matrices where this one does (../shared beside it).
[ -e /tmp/shared ] || { [ -d shared ] && ln -s "$here/shared" /tmp/shared; }
prefix=/tmp/sdprefix
[ -d "$prefix" ] || prefix=
( cd "$tree" && patch --batch $dir -p1 < "$patch" ) > "$log" 2>&1 &&
  cmake -S "$tree" -B "$tree/b" -DCMAKE_BUILD_TYPE=Release ${prefix:+-DSD_EXTRA_PREFIX=$prefix} >> "$log" 2>&1 &&
  cmake --build "$tree/b" -j"$(nproc)" --target sparseditto_cli >> "$log" 2>&1
rc=$?
echo "ab-tree $name: $( [ $rc -eq 0 ] && echo "built $tree/b/sparseditto" || echo "FAILED (rc $rc, $log)")"
exit $rc
