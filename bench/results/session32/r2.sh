# session 32 call 2 (branch s32-both: s32-stream-order with stream ids + s32-seg-batch):
# after test_call_order, the same test built from main's library (both.patch reversed; it
# should fail there: the test can fail), bench_launch on the branch and on main alternating
# (three each), then paper-60 SpMM K = 8 on the twins of <= 3e6 entries (51, in two halves
# p60_a / p60_b), branch and main back to back (A B, then B A).
# command: cd .snap && (sleep 15; bash scripts/ab-tree.sh main_tree both.patch > /tmp/abtree.out 2>&1; touch /tmp/abtree.done) & bash .snap/scripts/gpu-lane.sh --no-baseline-cli --tests 'test_call_order' --pack --deadline 575 --run "bash r2.sh"
export SD_LANE_T0=$(date +%s)
while [ ! -f /tmp/abtree.done ]; do sleep 2; done
cat /tmp/abtree.out
cmake --build /tmp/main_tree/b -j16 --target bench_launch gpu_test_call_order > $OUT/main_tree_more_build.log 2>&1; echo "main bench_launch + test build rc=$?"
echo "== test_call_order against main's library (expected to FAIL)"
timeout 90 /tmp/main_tree/b/gpu_test_call_order > $OUT/call_order_on_main.log 2>&1; echo "rc=$?"
grep -E "check failed|passed|FAIL" $OUT/call_order_on_main.log | cut -c1-220 | head -20
tasks='--task stencil2d:n=300:spmv --task knn:n=100000,k=8,dim=2:spmv --task uniform:rows=100000,deg=16:spmv --task stencil2d:n=60:spmm:8'
for i in 1 2 3; do
  for t in main new; do
    bin=build-gpu/bench_launch; [ $t = main ] && bin=/tmp/main_tree/b/bench_launch
    timeout 60 $bin --out $OUT/launch_${t}_$i $tasks > $OUT/launch_${t}_$i.log 2>&1
    echo "launch_${t}_$i rc=$?: $(grep ' ours ' $OUT/launch_${t}_$i/bench_launch.md | awk -F'|' '{printf "%s/%s ", $4,$6}')"
  done
done
SD_BENCH_BIN=/tmp/main_tree/b/sparseditto bash scripts/bench-run.sh k8a_main p60_a.txt spmm8
bash scripts/bench-run.sh k8a_new p60_a.txt spmm8
bash scripts/bench-run.sh k8b_new p60_b.txt spmm8
SD_BENCH_BIN=/tmp/main_tree/b/sparseditto bash scripts/bench-run.sh k8b_main p60_b.txt spmm8
