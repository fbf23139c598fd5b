# session 13 call 3: why `profile --exec ours` faulted on delaunay_n24 SpGEMM (call 2), then paper-60 SpMV/SpMM of the 4 largest twins
B=build-gpu/sparseditto
G=twin:name=DIMACS10_delaunay_n24,file=shared/matrices/paper60.tsv
export SPARSEDITTO_CACHE=/tmp/c_dbg
SPARSEDITTO_VERBOSE=1 $B compile --gen $G --op spgemm > $OUT/dbg_compile.log 2>&1; echo "compile rc $?"
grep -vE "^\s+[0-9.]+ s \[" $OUT/dbg_compile.log | tail -8
$B run --gen $G --op spgemm --iters 3 --json > $OUT/dbg_run.log 2>&1; echo "run (cache hit) rc $?"; tail -3 $OUT/dbg_run.log
$B profile --gen $G --op spgemm --runs 1 --cache /tmp/c_dbg --exec ours > $OUT/dbg_exec.log 2>&1; echo "exec ours rc $?"; tail -3 $OUT/dbg_exec.log
CUDA_LAUNCH_BLOCKING=1 $B profile --gen $G --op spgemm --runs 1 --cache /tmp/c_dbg --exec ours > $OUT/dbg_exec_blocking.log 2>&1; echo "exec ours blocking rc $?"; tail -3 $OUT/dbg_exec_blocking.log
unset SPARSEDITTO_CACHE
tl=$(( ${SD_LANE_LEFT:-300} - SECONDS - 30 ))
echo "paper60 --from 56: $tl s"
SPARSEDITTO_CACHE=/tmp/c_p60 build-gpu/bench_compile --set paper60 --ops spmv,spmm8,spmm32,spmm128,spmm256 --from 56 --max-nnz 2e8 --time-limit $tl --out $OUT/p60big > $OUT/p60big.log 2>&1
tail -25 $OUT/p60big.log
