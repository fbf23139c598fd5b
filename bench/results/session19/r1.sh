# session 19 call 1: column-split tall column windows A/B on the dense-row twins (default
# sweep vs SPARSEDITTO_CW_TALL=1, same machine, back to back), then SpGEMM NVRTC unit times.
B=build-gpu/sparseditto
OPS=spmm8,spmm32,spmm128,spmm256
run() { # name, set, ops, extra, env
  left=$(( ${SD_LANE_LEFT:-300} - SECONDS ))
  echo "== $1 (lane left $left s)"
  [ $left -lt 60 ] && { echo "skip $1"; return; }
  t0=$SECONDS
  env $5 SPARSEDITTO_CACHE=/tmp/c_$1 timeout $(( left - 5 )) $B bench --set $2 --ops $3 $4 --time-limit $(( left - 30 )) --out $OUT/$1 > $OUT/$1.log 2>&1
  echo "$1: $(( SECONDS - t0 )) s wall"
  tail -1 $OUT/$1.log; grep -E "^\| (spmv|spmm8|spmm32|spmm128|spmm256|spgemm|all) " $OUT/$1/bench_compile.md
}
run dense_tall dense_rows.txt $OPS "" SPARSEDITTO_CW_TALL=1
run dense_def dense_rows.txt $OPS "" SPARSEDITTO_CW_TALL=0
M=shared/matrices/suitesparse
[ -d $M ] || M=../shared/matrices/suitesparse
for m in bcsstk13 dblp-2010; do
  f=$M/$m.mtx.gz
  left=$(( ${SD_LANE_LEFT:-300} - SECONDS )); [ $left -lt 40 ] && break
  SPARSEDITTO_VERBOSE=2 SPARSEDITTO_CACHE=/tmp/c_v_$m timeout 60 $B compile $f --op spgemm > $OUT/nvrtc_$m.log 2>&1
  echo "nvrtc $m rc=$?"; grep -c "NVRTC" $OUT/nvrtc_$m.log; tail -3 $OUT/nvrtc_$m.log
done
