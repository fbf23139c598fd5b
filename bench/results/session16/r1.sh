# session 16 call 1 (plan): s15-small-sweep + s15-dense-brief merged, after
# gpu-lane.sh --tests 'baseline|compile|runtime|spmm|spmv|cli_run'; then the quick set with the merged default.
B=build-gpu/sparseditto
left=$(( ${SD_LANE_LEFT:-300} - SECONDS ))
echo "== quick (lane left $left s)"
[ $left -lt 170 ] && { echo "skip quick"; exit 0; }
SPARSEDITTO_CACHE=/tmp/cq_default timeout $(( left - 5 )) $B bench --set quick --out $OUT/q_default > $OUT/q_default.log 2>&1
tail -1 $OUT/q_default.log; grep -E "^\| (spmv|spmm8|spmm32|spmm128|spmm256|spgemm|all) " $OUT/q_default/bench_compile.md
