# Session 35 had no device machine (status: paused). This is the first call planned for the
# next session that is lent an H200: two search changes, each on a branch, measured side by
# side against main in one call (variants built in the background with --forward).
#   block_gates.patch   = `git diff d741302 s35-tiles16-gate -- src tests` (SpMV's first round
#                         offers tiles16 only where rho_BSR16 <= 16 and BSR only where a BSR
#                         padding is <= 3; SpMV: the paper-60 twins <= 3e6 and the real set)
#   segorder.patch      = `git diff 0d65ff5 s34-segorder -- src tests` (csr_split's wide sweep
#                         lists 64 / 128-entry segments first; SpMM K = 128 + 256 on the 11
#                         skewed twins, K = 128 on the 51 twins)
# command: (sleep 8; bash scripts/ab-tree.sh gate bench/results/session35/block_gates.patch --forward > /tmp/abtree.out 2>&1; bash scripts/ab-tree.sh seg bench/results/session35/segorder.patch --forward >> /tmp/abtree.out 2>&1; touch /tmp/abtree.done) & bash scripts/gpu-lane.sh --no-baseline-cli --no-tests --pack --deadline 560 --run "bash bench/results/session35/next_call.sh"
# Then: land a branch only where our time improves against cuSPARSE's drift in the same run
# (geomean of B/A ours_us against B/A cusparse_us per task), and run test_spmv / test_spmm
# and test_compile on whatever lands.
export SD_LANE_T0=$(date +%s)
cat bench/results/session32/p60_a.txt bench/results/session32/p60_b.txt > /tmp/p60_3e6.txt
bash scripts/bench-run.sh v60_main /tmp/p60_3e6.txt spmv
bash scripts/bench-run.sh sk_main bench/results/session34/skewed.txt spmm128,spmm256
while [ ! -f /tmp/abtree.done ]; do sleep 2; done
cat /tmp/abtree.out
SD_BENCH_BIN=/tmp/gate/b/sparseditto bash scripts/bench-run.sh v60_gate /tmp/p60_3e6.txt spmv
SD_BENCH_BIN=/tmp/seg/b/sparseditto bash scripts/bench-run.sh sk_seg bench/results/session34/skewed.txt spmm128,spmm256
SD_BENCH_BIN=/tmp/gate/b/sparseditto bash scripts/bench-run.sh vreal_gate real spmv
bash scripts/bench-run.sh vreal_main real spmv
SD_BENCH_BIN=/tmp/seg/b/sparseditto bash scripts/bench-run.sh k128_seg /tmp/p60_3e6.txt spmm128
bash scripts/bench-run.sh k128_main /tmp/p60_3e6.txt spmm128
