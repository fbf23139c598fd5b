# session 16 call 6: delaunay_n24 and asia_osm SpMV, SpMM K=8/32 (call 2 ran K=128/256)
tl=$(( ${SD_LANE_LEFT:-300} - SECONDS - 20 ))
SPARSEDITTO_CACHE=/tmp/c_big2 timeout $(( tl + 10 )) build-gpu/bench_compile --set p60_bigspmm.txt --max-nnz 2e8 --ops spmv,spmm8,spmm32 --time-limit $(( tl - 90 )) --out $OUT/p60_big2 > $OUT/p60_big2.log 2>&1
cut -c1-200 $OUT/p60_big2.log | tail -12
