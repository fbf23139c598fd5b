# session 16 call 3 (plan, if time is left): the paper-60 SpMV/SpMM rows again with the current
# head (the combined table's are session 3's code), in the set's order, as far as the call allows
# (--time-limit stops starting new matrices; the JSON is rewritten after each task; --from N
# continues in a later call).
tl=$(( ${SD_LANE_LEFT:-300} - SECONDS - 30 ))
SPARSEDITTO_CACHE=/tmp/c_p60dense timeout $(( tl + 20 )) build-gpu/bench_compile --set paper60 --ops spmv,spmm8,spmm32,spmm128,spmm256 --time-limit $(( tl - 90 )) --out $OUT/p60_dense > $OUT/p60_dense.log 2>&1
tail -3 $OUT/p60_dense.log; grep -E "^\| (spmv|spmm8|spmm32|spmm128|spmm256|all) " $OUT/p60_dense/bench_compile.md
