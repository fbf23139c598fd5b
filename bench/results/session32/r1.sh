# session 32 call 1 (branch s32-both = main + s32-stream-order + s32-seg-batch): after the GPU
# tests test_call_order, test_compile, test_compile_spgemm, test_vendor, test_spmm, cli_run,
# bench_launch (host issue time of sd_spmv / sd_spmm, which now record an event per call) on
# the branch and on main (both.patch reversed, built in the background during the tests),
# alternating, twice each.
# command: cd .snap && (bash scripts/ab-tree.sh main_tree both.patch > /tmp/abtree.out 2>&1; touch /tmp/abtree.done) & bash .snap/scripts/gpu-lane.sh --no-baseline-cli --tests 'test_call_order|test_compile$|test_compile_spgemm|test_vendor|test_spmm$|cli_run' --pack --deadline 575 --run "bash r1.sh"
export SD_LANE_T0=$(date +%s)
while [ ! -f /tmp/abtree.done ]; do sleep 2; done
cat /tmp/abtree.out
cmake --build /tmp/main_tree/b -j16 --target bench_launch > $OUT/main_tree_launch_build.log 2>&1; echo "main bench_launch build rc=$?"
tasks='--task stencil2d:n=300:spmv --task knn:n=100000,k=8,dim=2:spmv --task uniform:rows=100000,deg=16:spmv --task stencil2d:n=60:spmm:8'
for i in 1 2; do
  for t in main new; do
    bin=build-gpu/bench_launch; [ $t = main ] && bin=/tmp/main_tree/b/bench_launch
    echo "== launch_${t}_$i"
    timeout 100 $bin --out $OUT/launch_${t}_$i $tasks > $OUT/launch_${t}_$i.log 2>&1; echo "rc=$?"
    grep -iE "sd_sp|ours" $OUT/launch_${t}_$i/bench_launch.md | head -12
  done
done
