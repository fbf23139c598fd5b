# session 17 call 5: same machine A/B of the graphs (SPARSEDITTO_GRAPHS=0 vs default) on the
# quick set's SpMV/SpMM and the real set's SpMV/SpMM; the default runs also time cuSPARSE's
# best captured into a graph (the second baseline).
B=build-gpu/sparseditto
OPS=spmv,spmm8,spmm32,spmm128,spmm256
run() { # name, env, set
  left=$(( ${SD_LANE_LEFT:-300} - SECONDS ))
  echo "== $1 (lane left $left s)"
  [ $left -lt 60 ] && { echo "skip $1"; return; }
  env $2 SPARSEDITTO_CACHE=/tmp/c_$1 timeout $(( left - 5 )) $B bench --set $3 --ops $OPS --time-limit $(( left - 30 )) --out $OUT/$1 > $OUT/$1.log 2>&1
  tail -1 $OUT/$1.log; grep -E "^\| (spmv|spmm8|spmm32|spmm128|spmm256|all) " $OUT/$1/bench_compile.md
}
run q_on SPARSEDITTO_GRAPHS=1 quick
run q_off SPARSEDITTO_GRAPHS=0 quick
run real_on SPARSEDITTO_GRAPHS=1 real
run real_off SPARSEDITTO_GRAPHS=0 real
