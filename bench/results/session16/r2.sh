# session 16 call 2 (plan): the small paper-60 SpGEMM products that lost the level-1 entry in
# session 15 (s15-small-sweep), then the large SpMM tasks' compile time (s15-dense-brief).
tl=$(( ${SD_LANE_LEFT:-300} - SECONDS - 30 ))
SPARSEDITTO_CACHE=/tmp/c_small timeout $(( tl / 2 )) build-gpu/bench_compile --set p60_small.txt --ops spgemm --time-limit $(( tl / 2 - 30 )) --out $OUT/p60_small > $OUT/p60_small.log 2>&1
tail -2 $OUT/p60_small.log; grep -E "^\| spgemm " $OUT/p60_small/bench_compile.md
tl=$(( ${SD_LANE_LEFT:-300} - SECONDS - 30 ))
SPARSEDITTO_CACHE=/tmp/c_big timeout $(( tl + 20 )) build-gpu/bench_compile --set p60_bigspmm.txt --max-nnz 2e8 --ops spmm256,spmm128 --time-limit $(( tl - 100 )) --out $OUT/p60_bigspmm > $OUT/p60_bigspmm.log 2>&1
cat $OUT/p60_bigspmm.log | cut -c1-220
