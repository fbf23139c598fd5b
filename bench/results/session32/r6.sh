# session 32 call 6 (branch s32-seg-inflight = main dd9b253 + 32 floats of B in flight in
# csr_split segments): after test_spmm and test_compile, against main (inflight.patch
# reversed, built in the background): LAW_in-2004 SpMM K = 8 new, old, new, old; the paper-60
# twins of <= 3e6 entries at K = 8 (halves: old a, new a, new b, old b) and K = 32 (old, new).
# command: cd .snap && (sleep 15; bash scripts/ab-tree.sh old_tree inflight.patch > /tmp/abtree.out 2>&1; touch /tmp/abtree.done) & bash .snap/scripts/gpu-lane.sh --no-baseline-cli --tests 'test_spmm$|test_compile$' --pack --deadline 440 --run "bash r6.sh"
export SD_LANE_T0=$(date +%s)
while [ ! -f /tmp/abtree.done ]; do sleep 2; done
cat /tmp/abtree.out
OLD=/tmp/old_tree/b/sparseditto
for i in 1 2; do
  bash scripts/bench-run.sh law_new_$i law.txt spmm8
  SD_BENCH_BIN=$OLD bash scripts/bench-run.sh law_old_$i law.txt spmm8
done
SD_BENCH_BIN=$OLD bash scripts/bench-run.sh k8a_old p60_a.txt spmm8
bash scripts/bench-run.sh k8a_new p60_a.txt spmm8
bash scripts/bench-run.sh k8b_new p60_b.txt spmm8
SD_BENCH_BIN=$OLD bash scripts/bench-run.sh k8b_old p60_b.txt spmm8
cat p60_a.txt p60_b.txt > p60_3e6.txt
SD_BENCH_BIN=$OLD bash scripts/bench-run.sh k32_old p60_3e6.txt spmm32
bash scripts/bench-run.sh k32_new p60_3e6.txt spmm32
