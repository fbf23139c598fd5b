# session 17 call 2: programs replayed as CUDA graphs (built from the launches; node
# arguments updated when a buffer moves). bench_launch with graphs on and off, then the
# quick set with graphs (call 1's q_vendor_both is the same code with plain launches).
B=build-gpu/sparseditto
T='--task stencil2d:n=300:spmv --task knn:n=100000,k=8,dim=2:spmv --task uniform:rows=100000,deg=16:spmv --task stencil2d:n=60:spmm:8'
echo "== bench_launch (graphs)"
timeout 100 build-gpu/bench_launch --out $OUT/launch_graph $T 2>&1 | grep -v "^ *$" | tail -30
echo "== bench_launch (SPARSEDITTO_GRAPHS=0)"
SPARSEDITTO_GRAPHS=0 timeout 100 build-gpu/bench_launch --out $OUT/launch_plain $T 2>&1 | grep "ours" | tail -10
left=$(( ${SD_LANE_LEFT:-300} - SECONDS ))
echo "== quick (lane left $left s)"
[ $left -lt 180 ] && { echo "skip quick"; exit 0; }
SPARSEDITTO_CACHE=/tmp/cq_graph timeout $(( left - 5 )) $B bench --set quick --out $OUT/q_graph > $OUT/q_graph.log 2>&1
tail -1 $OUT/q_graph.log; grep -E "^\| (spmv|spmm8|spmm32|spmm128|spmm256|spgemm|all) " $OUT/q_graph/bench_compile.md
