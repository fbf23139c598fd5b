# session 33 call 1 (x in shared memory for csr_vec SpMV, on main 7ba341d): after test_spmv,
# test_compile, test_call_order and cli_run, against main (xs.patch reversed, built in the
# background): SpMV on the four paper-60 twins > 3e6 entries whose x fits shared memory (new,
# old, new, old), on the 51 twins <= 3e6 (old, new) and on the real set (new, old); then SpMM
# K = 128 / 256 on the 51 twins and on the real set (the final main's SpMM code: this tree).
# command: cd .snap && (sleep 15; bash scripts/ab-tree.sh old_tree xs.patch > /tmp/abtree.out 2>&1; touch /tmp/abtree.done) & bash .snap/scripts/gpu-lane.sh --no-baseline-cli --tests 'test_spmv$|test_compile$|test_call_order|cli_run' --pack --deadline 575 --run "bash r1.sh"
export SD_LANE_T0=$(date +%s)
while [ ! -f /tmp/abtree.done ]; do sleep 2; done
cat /tmp/abtree.out
OLD=/tmp/old_tree/b/sparseditto
cat p60_a.txt p60_b.txt > p60_3e6.txt
for i in 1 2; do
  bash scripts/bench-run.sh big_new_$i big4.txt spmv
  SD_BENCH_BIN=$OLD bash scripts/bench-run.sh big_old_$i big4.txt spmv
done
SD_BENCH_BIN=$OLD bash scripts/bench-run.sh v60_old p60_3e6.txt spmv
bash scripts/bench-run.sh v60_new p60_3e6.txt spmv
bash scripts/bench-run.sh vreal_new real spmv
SD_BENCH_BIN=$OLD bash scripts/bench-run.sh vreal_old real spmv
bash scripts/bench-run.sh k128_p60 p60_3e6.txt spmm128,spmm256
bash scripts/bench-run.sh k128_real real spmm128,spmm256
