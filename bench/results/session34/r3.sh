# session 34 call 3 (csr_split segments: atomic sums (SD_MODE 3) with 8-entry segments, the
# next batch's entries loaded ahead, on main d9c7ee0): after test_spmm and test_compile, the
# search's candidates on three skewed twins at K = 32, then against main (segatomic.patch
# reversed, built in the background): SpMM K = 8 and 32 on the 51 paper-60 twins <= 3e6
# entries (new, old), K = 128 on them (old, new), K = 8 and 32 on the real set (old, new).
# command: (sleep 15; bash scripts/ab-tree.sh old_tree bench/results/session34/segatomic.patch > /tmp/abtree.out 2>&1; touch /tmp/abtree.done) & bash scripts/gpu-lane.sh --no-baseline-cli --tests 'test_spmm$|test_compile$' --pack --deadline 560 --run "bash bench/results/session34/r3.sh"
export SD_LANE_T0=$(date +%s)
BIN=build-gpu/sparseditto
T=$PWD/shared/matrices/paper60.tsv
for m in Rajat_rajat22 Schenk_IBMNA_c-50 Toledo_deltaX; do
  SPARSEDITTO_CACHE=/tmp/c_prog timeout 60 $BIN compile --gen "twin:name=$m,file=$T" --op spmm -K 32 --no-cache --progress --budget 40 > $OUT/prog_$m.out 2> $OUT/prog_$m.err
  grep -E "speed-up" $OUT/prog_$m.out
done
while [ ! -f /tmp/abtree.done ]; do sleep 2; done
cat /tmp/abtree.out
OLD=/tmp/old_tree/b/sparseditto
cat bench/results/session32/p60_a.txt bench/results/session32/p60_b.txt > /tmp/p60_3e6.txt
bash scripts/bench-run.sh k832_new /tmp/p60_3e6.txt spmm8,spmm32
SD_BENCH_BIN=$OLD bash scripts/bench-run.sh k832_old /tmp/p60_3e6.txt spmm8,spmm32
SD_BENCH_BIN=$OLD bash scripts/bench-run.sh k128_old /tmp/p60_3e6.txt spmm128
bash scripts/bench-run.sh k128_new /tmp/p60_3e6.txt spmm128
SD_BENCH_BIN=$OLD bash scripts/bench-run.sh r832_old real spmm8,spmm32
bash scripts/bench-run.sh r832_new real spmm8,spmm32
