# session 15 call 4: paper-60 SpGEMM products again with the merged head (wide stripe, warp path
# tuned, winner's edits, stripe width, mirror a quarter, brief-long), largest changes first, as far
# as the call allows (--time-limit stops starting new tasks; the JSON is rewritten after each task).
tl=$(( ${SD_LANE_LEFT:-300} - SECONDS - 30 ))
SPARSEDITTO_CACHE=/tmp/c_p60sg timeout $(( tl + 20 )) build-gpu/bench_compile --set p60_sg_list2.txt --max-nnz 2e8 --ops spgemm --time-limit $(( tl - 75 )) --out $OUT/p60_sg2 > $OUT/p60_sg2.log 2>&1
tail -4 $OUT/p60_sg2.log; grep -E "^\| (spgemm|all) " $OUT/p60_sg2/bench_compile.md
