# session 16 call 4 (plan, if time is left): the real set's SpGEMM (A*A / A*At) with the merged
# head; session 12's rows (4.09x over 76) predate the wide stripe, the warp path, the winner's
# edits and the small-product sweep entry.
tl=$(( ${SD_LANE_LEFT:-300} - SECONDS - 30 ))
SPARSEDITTO_CACHE=/tmp/c_realsg timeout $(( tl + 20 )) build-gpu/bench_compile --set real --ops spgemm --time-limit $(( tl - 60 )) --out $OUT/real_sg > $OUT/real_sg.log 2>&1
tail -3 $OUT/real_sg.log; grep -E "^\| (spgemm|all) " $OUT/real_sg/bench_compile.md
