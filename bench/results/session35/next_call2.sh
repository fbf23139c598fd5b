# The second call planned in session 35 (no device machine then) for the next session lent
# an H200: branch s35-refused-slots against main, side by side.
#   refused_slots.patch = `git diff 46c3ca7 s35-refused-slots -- src tests`: a first-round
#   family whose default is refused before any device work (BSR / blocked ELL past 8x
#   padding, SpMV tiny past its size) passes its branch to the next family (SpMM: csr_window
#   on 49 of the 77 shared matrices), and such refusals give their budget back (8 a search).
#   csr_window won 16 % of the recorded K = 256 tasks while it ran only its default, at the end.
# command: (sleep 8; bash scripts/ab-tree.sh slots bench/results/session35/refused_slots.patch --forward > /tmp/abtree.out 2>&1; touch /tmp/abtree.done) & bash scripts/gpu-lane.sh --no-baseline-cli --no-tests --pack --deadline 560 --run "bash bench/results/session35/next_call2.sh"
# Then: land it only where our time improves against cuSPARSE's drift in the same run, and
# run test_compile, test_spmm and test_spmv on it.
export SD_LANE_T0=$(date +%s)
cat bench/results/session32/p60_a.txt bench/results/session32/p60_b.txt > /tmp/p60_3e6.txt
bash scripts/bench-run.sh k256_main /tmp/p60_3e6.txt spmm256
while [ ! -f /tmp/abtree.done ]; do sleep 2; done
cat /tmp/abtree.out
SD_BENCH_BIN=/tmp/slots/b/sparseditto bash scripts/bench-run.sh k256_slots /tmp/p60_3e6.txt spmm256
SD_BENCH_BIN=/tmp/slots/b/sparseditto bash scripts/bench-run.sh r256_slots real spmm256
bash scripts/bench-run.sh r256_main real spmm256
bash scripts/bench-run.sh k32_main /tmp/p60_3e6.txt spmm32
SD_BENCH_BIN=/tmp/slots/b/sparseditto bash scripts/bench-run.sh k32_slots /tmp/p60_3e6.txt spmm32
