#!/usr/bin/env bash
# bench/bench_jit_cache.sh: what the on-disk JIT cache (src/cache/jit_cache.c; on by default,
# SPARSEDITTO_JIT_CACHE=0 turns it off) saves in NVRTC time. For every matrix of a set and
# SpMV, SpMM K = 32 and SpGEMM, `sparseditto compile` lowers and NVRTC-compiles the search's
# first round; on a machine without a GPU that is where it stops (exit 3), so this runs
# anywhere the toolkit is installed. Three passes over the set, each in a fresh process per task: 'off' (no JIT
# cache: every task compiles its plans), 'cold' (an empty cache: a variant compiled for one
# matrix is loaded for the next), 'warm' (the same tasks again). On a GPU machine the
# searches also measure; the NVRTC column is the part the cache removes.
#
# usage: bench/bench_jit_cache.sh SPARSEDITTO SET_FILE MATRICES_DIR OUT_DIR
# Writes OUT_DIR/jit_cache.tsv (pass, matrix, task, NVRTC ms, wall s) and OUT_DIR/jit_cache.md.
set -u
bin=${1:?usage: bench_jit_cache.sh SPARSEDITTO SET_FILE MATRICES_DIR OUT_DIR}
set_file=${2:?set file}
mats_dir=${3:?matrices dir}
out=${4:?out dir}
mkdir -p "$out"
cache=$(mktemp -d "${TMPDIR:-/tmp}/sd-jit-bench.XXXXXX")
trap 'rm -rf "$cache"' EXIT
tsv=$out/jit_cache.tsv
printf "pass\tmatrix\ttask\tnvrtc_ms\twall_s\n" >"$tsv"
mats=$(grep -v '^#' "$set_file" | sed '/^$/d')
for pass in off cold warm; do
  for m in $mats; do
    if [[ "$m" == *:* ]]; then src=(--gen "$m"); else src=("$mats_dir/suitesparse/$m.mtx.gz"); fi
    for task in "spmv" "spmm 32" "spgemm"; do
      set -- $task
      args=(--op "$1")
      [ $# -gt 1 ] && args+=(-K "$2")
      t0=$(date +%s.%N)
      line=$( if [ "$pass" = off ]; then env SPARSEDITTO_JIT_CACHE=0 SPARSEDITTO_CACHE="$cache/off" \
                   "$bin" compile "${src[@]}" "${args[@]}" 2>/dev/null
              else SPARSEDITTO_JIT_CACHE=1 SPARSEDITTO_CACHE="$cache/on" \
                   "$bin" compile "${src[@]}" "${args[@]}" 2>/dev/null; fi | grep '^stages' )
      t1=$(date +%s.%N)
      nv=$(echo "$line" | sed -nE 's/.*NVRTC ([0-9.]+) ms.*/\1/p')
      printf "%s\t%s\t%s\t%s\t%s\n" "$pass" "$m" "$task" "${nv:-nan}" "$(echo "$t1 - $t0" | bc)" >>"$tsv"
    done
  done
done
python3 - "$tsv" "$out/jit_cache.md" "$set_file" <<'PY'
import sys, os, platform, datetime
tsv, md, set_file = sys.argv[1:4]
rows = [l.rstrip("\n").split("\t") for l in open(tsv)][1:]
L = ["# JIT disk cache: NVRTC time of the search's first round", "",
     "%s; a machine with %d CPU cores; set `%s`; `bench/bench_jit_cache.sh` (offline `sparseditto compile`: lowering "
     "and NVRTC of the first round, no GPU)." % (datetime.date.today(),
                                                 os.cpu_count() or 0, os.path.basename(set_file)), "",
     "| pass | tasks | NVRTC total s | SpGEMM NVRTC s | wall total s | tasks with nothing to compile |",
     "|---|---|---|---|---|---|"]
for p in ("off", "cold", "warm"):
    r = [x for x in rows if x[0] == p]
    nv = [float(x[3]) for x in r if x[3] != "nan"]
    sg = [float(x[3]) for x in r if x[2] == "spgemm" and x[3] != "nan"]
    L.append("| %s | %d | %.1f | %.1f | %.1f | %d |" % (p, len(r), sum(nv) / 1e3, sum(sg) / 1e3,
             sum(float(x[4]) for x in r), sum(1 for v in nv if v == 0)))
L += ["", "off: no JIT cache; cold: an empty cache filled as the set goes (a variant compiled for one matrix "
      "is loaded for the next); warm: the same tasks again. Per task: `jit_cache.tsv`."]
open(md, "w").write("\n".join(L) + "\n")
print("\n".join(L))
PY
