# session 17 call 4: bench_launch with cuSPARSE also captured into a graph; the paper-60
# twins of 2e6-2e7 entries (SpMV/SpMM) with graphs; then the quick set again (the empty
# launch of the ceilings now timed as a graph).
B=build-gpu/sparseditto
OPS=spmv,spmm8,spmm32,spmm128,spmm256
T='--task stencil2d:n=300:spmv --task knn:n=100000,k=8,dim=2:spmv --task uniform:rows=100000,deg=16:spmv --task stencil2d:n=60:spmm:8'
echo "== bench_launch (cuSPARSE also in a graph)"
timeout 120 build-gpu/bench_launch --out $OUT/launch_vgraph $T 2>&1 | grep -E "ours|graph" | tail -40
left=$(( ${SD_LANE_LEFT:-300} - SECONDS ))
echo "== paper60 2e6-2e7 (lane left $left s)"
SPARSEDITTO_CACHE=/tmp/c_mid timeout $(( left - 5 )) $B bench --set p60_mid.txt --ops $OPS --time-limit 170 --out $OUT/p60_mid > $OUT/p60_mid.log 2>&1
tail -1 $OUT/p60_mid.log; grep -E "^\| (spmv|spmm8|spmm32|spmm128|spmm256|all) " $OUT/p60_mid/bench_compile.md
left=$(( ${SD_LANE_LEFT:-300} - SECONDS ))
echo "== quick (lane left $left s)"
[ $left -lt 200 ] && { echo "skip quick"; exit 0; }
SPARSEDITTO_CACHE=/tmp/cq_g2 timeout $(( left - 5 )) $B bench --set quick --out $OUT/q_graph2 > $OUT/q_graph2.log 2>&1
tail -1 $OUT/q_graph2.log; grep -E "^\| (spmv|spmm8|spmm32|spmm128|spmm256|spgemm|all) " $OUT/q_graph2/bench_compile.md
