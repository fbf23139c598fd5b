# session 16 call 5: the paper-60 matrices of 2e7-6e7 entries, SpMV and SpMM, as far as the call allows
tl=$(( ${SD_LANE_LEFT:-300} - SECONDS - 30 ))
SPARSEDITTO_CACHE=/tmp/c_big4 timeout $(( tl + 20 )) build-gpu/bench_compile --set p60_big4.txt --max-nnz 2e8 --ops spmv,spmm8,spmm32,spmm128,spmm256 --time-limit $(( tl - 120 )) --out $OUT/p60_big4 > $OUT/p60_big4.log 2>&1
cut -c1-200 $OUT/p60_big4.log | tail -25
