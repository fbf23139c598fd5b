# session 18 call 2: tall column-window panels (col_window cw_rpg): the paper-60 twins whose
# SpMM ceilings are highest (long, scattered rows), then the real set's SpMM, then the
# paper-60 twins <= 2e6 nnz SpMM.
B=build-gpu/sparseditto
OPS=spmm8,spmm32,spmm128,spmm256
run() { # name, set, ops, extra
  left=$(( ${SD_LANE_LEFT:-300} - SECONDS ))
  echo "== $1 (lane left $left s)"
  [ $left -lt 60 ] && { echo "skip $1"; return; }
  t0=$SECONDS
  SPARSEDITTO_CACHE=/tmp/c_$1 timeout $(( left - 5 )) $B bench --set $2 --ops $3 $4 --time-limit $(( left - 30 )) --out $OUT/$1 > $OUT/$1.log 2>&1
  echo "$1: $(( SECONDS - t0 )) s wall"
  tail -1 $OUT/$1.log; grep -E "^\| (spmv|spmm8|spmm32|spmm128|spmm256|spgemm|all) " $OUT/$1/bench_compile.md
}
run dense dense_rows.txt $OPS ""
run real_spmm real $OPS ""
run p60s_spmm paper60 $OPS "--max-nnz 2000000"
