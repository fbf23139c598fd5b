# session 19 call 2: the quick set's SpGEMM searches with their candidates built at NVRTC
# --Ofast-compile min (the default), mid and max (SPARSEDITTO_SEARCH_FAST; the winner is
# rebuilt at full optimisation in each), back to back on one machine, fresh caches each.
B=build-gpu/sparseditto
run() { # name, set, ops, extra, env
  left=$(( ${SD_LANE_LEFT:-300} - SECONDS ))
  echo "== $1 (lane left $left s)"
  [ $left -lt 60 ] && { echo "skip $1"; return; }
  t0=$SECONDS
  env $5 SPARSEDITTO_CACHE=/tmp/c_$1 timeout $(( left - 5 )) $B bench --set $2 --ops $3 $4 --time-limit $(( left - 30 )) --out $OUT/$1 > $OUT/$1.log 2>&1
  echo "$1: $(( SECONDS - t0 )) s wall"
  tail -1 $OUT/$1.log; grep -E "^\| (spmv|spmm8|spmm32|spmm128|spmm256|spgemm|all) " $OUT/$1/bench_compile.md
}
run sg_max quick spgemm "" SPARSEDITTO_SEARCH_FAST=max
run sg_mid quick spgemm "" SPARSEDITTO_SEARCH_FAST=mid
run sg_min quick spgemm "" SPARSEDITTO_SEARCH_FAST=min
