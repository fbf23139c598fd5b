# session 33 call 5 (branch: csr_row with 2 / 4 rows per group, on main 83c3bb8): after
# test_spmm and test_compile, against main (rpg.patch reversed, built in the background):
# SpMM K = 8 and 32 on the 51 paper-60 twins <= 3e6 entries (new, old) and on the real set
# (old, new), K = 128 on the twins (new, old); then the quick set on main (the old tree).
# command: cd .snap && (sleep 15; bash scripts/ab-tree.sh old_tree rpg.patch > /tmp/abtree.out 2>&1; touch /tmp/abtree.done) & bash .snap/scripts/gpu-lane.sh --no-baseline-cli --tests 'test_spmm$|test_compile$' --pack --deadline 560 --run "bash r5.sh"
export SD_LANE_T0=$(date +%s)
while [ ! -f /tmp/abtree.done ]; do sleep 2; done
cat /tmp/abtree.out
OLD=/tmp/old_tree/b/sparseditto
cat p60_a.txt p60_b.txt > p60_3e6.txt
bash scripts/bench-run.sh k832_new p60_3e6.txt spmm8,spmm32
SD_BENCH_BIN=$OLD bash scripts/bench-run.sh k832_old p60_3e6.txt spmm8,spmm32
SD_BENCH_BIN=$OLD bash scripts/bench-run.sh r832_old real spmm8,spmm32
bash scripts/bench-run.sh r832_new real spmm8,spmm32
bash scripts/bench-run.sh k128_new p60_3e6.txt spmm128
SD_BENCH_BIN=$OLD bash scripts/bench-run.sh k128_old p60_3e6.txt spmm128
SD_BENCH_BIN=$OLD bash scripts/bench-run.sh quick_main quick spmv,spmm8,spmm32,spmm128,spmm256,spgemm
