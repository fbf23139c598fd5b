# session 16 call 7: LAW_in-2004 and Pereyra_landmark SpGEMM searched at full optimisation (SPARSEDITTO_SEARCH_FAST=0), beside session 15's default
tl=$(( ${SD_LANE_LEFT:-300} - SECONDS - 20 ))
SPARSEDITTO_SEARCH_FAST=0 SPARSEDITTO_CACHE=/tmp/c_law timeout $(( tl + 10 )) build-gpu/bench_compile --set p60_law.txt --ops spgemm --time-limit $(( tl - 100 )) --out $OUT/p60_law_full > $OUT/p60_law_full.log 2>&1
cut -c1-220 $OUT/p60_law_full.log | tail -6
