# session 17 call 1: the launch paths (bench_launch), then the quick set with the
# vendor rule (cuSPARSE runs when faster per execution or pipelined), fresh caches.
B=build-gpu/sparseditto
echo "== bench_launch"
timeout 120 build-gpu/bench_launch --out $OUT/launch --task "stencil2d:n=300:spmv" \
  --task "knn:n=100000,k=8,dim=2:spmv" --task "uniform:rows=100000,deg=16:spmv" \
  --task "stencil2d:n=60:spmm:8" 2>&1 | tail -40
left=$(( ${SD_LANE_LEFT:-300} - SECONDS ))
echo "== quick (lane left $left s)"
[ $left -lt 200 ] && { echo "skip quick"; exit 0; }
SPARSEDITTO_CACHE=/tmp/cq_vb timeout $(( left - 5 )) $B bench --set quick --out $OUT/q_vendor_both > $OUT/q_vendor_both.log 2>&1
tail -1 $OUT/q_vendor_both.log; grep -E "^\| (spmv|spmm8|spmm32|spmm128|spmm256|spgemm|all) " $OUT/q_vendor_both/bench_compile.md
