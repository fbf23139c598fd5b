#!/usr/bin/env bash
# scripts/gpu-dev/device-snapshot.sh: prepares .snap/, the ignored folder a `device` call carries
# (carry [".snap"]), so that the GPU machine builds exactly this working tree: the tracked
# files and the untracked ones git does not ignore, as they are now, plus what the machine
# lacks and the carry must bring: the .deb/ and .whl/ packages and a copy of the shared
# matrices (../shared does not travel). Then, for example:
#   command: bash .snap/scripts/gpu-dev/gpu-lane.sh --no-tests --pack --run "build-gpu/bench_spmv --out \$OUT/spmv --set real"
# (gpu-lane.sh builds into .snap/build-gpu; --run commands start in .snap/).
# usage: scripts/gpu-dev/device-snapshot.sh [--corpus | --in-place]
#   --corpus   also unpack models/corpus/corpus.jsonl.gz into the snapshot, for a resumed
#              `sparseditto corpus --out models/corpus/corpus.jsonl` run
#   --in-place no snapshot: the call runs the checkout itself (carry [".deb"], plus ".whl"
#              when present; command `bash scripts/gpu-dev/gpu-lane.sh ...`). The tracked tree
#              travels anyway, so a snapshot of it would carry the sources twice. Copies
#              ../shared/matrices into the checkout's shared/ (ignored; it travels by itself).
set -euo pipefail
case "${1:-}" in -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
# What travels without a snapshot: the tracked and untracked-not-ignored files and shared/.
# (file sizes in bytes, summed, then rounded up to MiB: disk usage would round every small
# file up to a block)
mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
bytes_of() { du -cb "$@" 2>/dev/null | tail -1 | cut -f1; }
tree_bytes() {
  local b
  b=$(git ls-files -co --exclude-standard -z | du -cb --files0-from=- 2>/dev/null | tail -1 | cut -f1)
  [ -d shared ] && b=$(( b + $(bytes_of shared) ))
  echo "$b"
}
if [ "${1:-}" = "--in-place" ]; then
  rm -rf .snap
  if [ ! -d shared/matrices ] && [ -d ../shared/matrices ]; then
    mkdir -p shared && cp -r ../shared/matrices shared/
  fi
  [ -d shared/matrices ] || echo "device-snapshot: no shared matrices found (tests that need them will skip)" >&2
  bytes=$(tree_bytes)
  for d in .deb .whl; do
    [ -d "$d" ] && bytes=$(( bytes + $(bytes_of "$d") ))
  done
  size=$(( (bytes + 1048575) / 1048576 ))
  echo "device-snapshot: in place; $(mib "$bytes") MiB travel with a call carrying .deb/.whl (the limit is 64 MiB)"
  [ "$size" -lt 64 ] || { echo "device-snapshot: too large to carry" >&2; exit 1; }
  exit 0
fi
snap=.snap
rm -rf "$snap"
mkdir "$snap"
# Files deleted in the working tree but still in the index are skipped, and so are the
# committed results (bench/results/) and the training corpora (models/corpus/): the working
# tree carries them already and no GPU run reads them (copies would push a call past the
# carry limit; --corpus unpacks the one a corpus run resumes).
git ls-files -co --exclude-standard -z | while IFS= read -r -d '' f; do
  case "$f" in bench/results/* | models/corpus/*) continue ;; esac
  [ -e "$f" ] && printf '%s\0' "$f"
done | xargs -0 -r cp --parents -t "$snap"
for d in .deb .whl; do
  if [ -d "$d" ]; then cp -r "$d" "$snap/"; fi
done
# A checkout's own shared/ (ignored) travels with every call by itself, so copying it into the
# snapshot too would carry the matrices twice (and past the limit); gpu-lane.sh finds it there
# as ../shared and links .snap/shared to it.
if [ -d shared/matrices ]; then
  echo "device-snapshot: shared/matrices travels as the checkout's shared/ (not copied)"
elif [ -d ../shared/matrices ]; then
  mkdir -p "$snap/shared" && cp -r ../shared/matrices "$snap/shared/"
else
  echo "device-snapshot: no shared matrices found (tests that need them will skip)" >&2
fi
if [ "${1:-}" = "--corpus" ]; then
  mkdir -p "$snap/models/corpus"
  gunzip -c models/corpus/corpus.jsonl.gz >"$snap/models/corpus/corpus.jsonl"
fi
# What travels: the snapshot, the tracked and untracked-not-ignored files, the checkout's shared/.
bytes=$(( $(bytes_of "$snap") + $(tree_bytes) ))
size=$(( (bytes + 1048575) / 1048576 ))
echo "device-snapshot: $snap holds $(find "$snap" -type f | wc -l) files; $(mib "$bytes") MiB travel with a call (the limit is 64 MiB)"
[ "$size" -lt 64 ] || { echo "device-snapshot: too large to carry" >&2; exit 1; }
