# session 13 call 4: the cached cuSPARSE ALG1 winner of delaunay_n24 fails in a fresh process (call 3): which condition?
B=build-gpu/sparseditto
G=twin:name=DIMACS10_delaunay_n24,file=shared/matrices/paper60.tsv
export SPARSEDITTO_CACHE=/tmp/c_dbg
$B compile --gen $G --op spgemm > $OUT/c.log 2>&1; echo "compile rc $?"; grep -E "plan|time  " $OUT/c.log
for v in default default2 blocking eager; do
  case $v in blocking) E="CUDA_LAUNCH_BLOCKING=1";; eager) E="CUDA_MODULE_LOADING=EAGER";; *) E="X=1";; esac
  env $E $B run --gen $G --op spgemm --iters 2 --json > $OUT/run_$v.log 2>&1; echo "run $v rc $?: $(tail -c 300 $OUT/run_$v.log)"
done
$B baseline --gen $G --op spgemm --only spgemm_alg1 > $OUT/bl.log 2>&1; echo "baseline alg1 fresh rc $?"; tail -5 $OUT/bl.log
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1); echo "sanitizer: $CS"
[ -n "$CS" ] && timeout 150 $CS --tool memcheck --print-limit 5 $B profile --gen $G --op spgemm --runs 1 --cache /tmp/c_dbg --exec ours > $OUT/san.log 2>&1; echo "sanitizer rc $?"; head -60 $OUT/san.log | cut -c1-300
