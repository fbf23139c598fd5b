# session 17 call 3: with graphs + the vendor rule, the real set's SpMV/SpMM (380 tasks;
# the combined table's rows were session 4's), then the paper-60 twins up to 2e6 nnz.
B=build-gpu/sparseditto
OPS=spmv,spmm8,spmm32,spmm128,spmm256
left=$(( ${SD_LANE_LEFT:-300} - SECONDS ))
echo "== real spmv/spmm (lane left $left s)"
SPARSEDITTO_CACHE=/tmp/c_real timeout $(( left - 5 )) $B bench --set real --ops $OPS --time-limit $(( left > 420 ? 330 : left - 60 )) --out $OUT/real_dense > $OUT/real_dense.log 2>&1
tail -1 $OUT/real_dense.log; grep -E "^\| (spmv|spmm8|spmm32|spmm128|spmm256|all) " $OUT/real_dense/bench_compile.md
left=$(( ${SD_LANE_LEFT:-300} - SECONDS ))
echo "== paper60 <= 2e6 spmv/spmm (lane left $left s)"
[ $left -lt 60 ] && { echo "skip"; exit 0; }
SPARSEDITTO_CACHE=/tmp/c_p60 timeout $(( left - 5 )) $B bench --set paper60 --ops $OPS --max-nnz 2000000 --time-limit $(( left - 25 )) --out $OUT/p60_small_dense > $OUT/p60_small_dense.log 2>&1
tail -1 $OUT/p60_small_dense.log; grep -E "^\| (spmv|spmm8|spmm32|spmm128|spmm256|all) " $OUT/p60_small_dense/bench_compile.md
