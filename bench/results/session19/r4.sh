# session 19 call 4: the paper-60 twins' SpMV/SpMM with the fallback timed through its
# executor: <= 2e6 entries, then 2e6-2e7 (session 17's list), then the four 2e7-3e7
# (session 16's p60_big4 list).
B=build-gpu/sparseditto
OPS=spmv,spmm8,spmm32,spmm128,spmm256
run() { # name, set, ops, extra
  left=$(( ${SD_LANE_LEFT:-300} - SECONDS ))
  echo "== $1 (lane left $left s)"
  [ $left -lt 60 ] && { echo "skip $1"; return; }
  t0=$SECONDS
  SPARSEDITTO_CACHE=/tmp/c_$1 timeout $(( left - 5 )) $B bench --set $2 --ops $3 $4 --time-limit $(( left - 30 )) --out $OUT/$1 > $OUT/$1.log 2>&1
  echo "$1: $(( SECONDS - t0 )) s wall"
  tail -1 $OUT/$1.log; grep -E "^\| (spmv|spmm8|spmm32|spmm128|spmm256|spgemm|all) " $OUT/$1/bench_compile.md
}
run p60s paper60 $OPS "--max-nnz 2000000"
run p60_mid p60_mid.txt $OPS ""
run p60_big4 p60_big4.txt $OPS "--max-nnz 100000000"
