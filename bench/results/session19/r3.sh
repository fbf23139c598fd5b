# session 19 call 3: the search times cuSPARSE's fallback through its own executor (replays
# of its graph): the quick set (all 84 tasks, its wall time), then the real set's SpMV/SpMM.
B=build-gpu/sparseditto
run() { # name, set, ops, extra
  left=$(( ${SD_LANE_LEFT:-300} - SECONDS ))
  echo "== $1 (lane left $left s)"
  [ $left -lt 60 ] && { echo "skip $1"; return; }
  t0=$SECONDS
  SPARSEDITTO_CACHE=/tmp/c_$1 timeout $(( left - 5 )) $B bench --set $2 --ops $3 $4 --time-limit $(( left - 30 )) --out $OUT/$1 > $OUT/$1.log 2>&1
  echo "$1: $(( SECONDS - t0 )) s wall"
  tail -1 $OUT/$1.log; grep -E "^\| (spmv|spmm8|spmm32|spmm128|spmm256|spgemm|all) " $OUT/$1/bench_compile.md
}
run quick quick spmv,spmm8,spmm32,spmm128,spmm256,spgemm ""
run real real spmv,spmm8,spmm32,spmm128,spmm256 ""
