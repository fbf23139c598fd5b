# session 14 call 2 (plan): the quick set three ways in one call (fresh caches each):
#   new  = the s13 branches as merged (wide stripe, warp per B row, linked units)
#   nolink = SPARSEDITTO_SG_LINK=0 (units compiled whole: isolates the linked units' kernel speed and NVRTC time)
#   off  = every s13 SpGEMM switch off (= main's behaviour)
B=build-gpu/sparseditto
run() { n=$1; shift; left=$(( ${SD_LANE_LEFT:-300} - SECONDS )); echo "== $n (lane left $left s)"; [ $left -lt 175 ] && { echo "skip $n"; return; }
  env "$@" SPARSEDITTO_CACHE=/tmp/cq_$n $B bench --set quick --out $OUT/q_$n > $OUT/q_$n.log 2>&1; tail -1 $OUT/q_$n.log; grep -E "^\| (spgemm|all) " $OUT/q_$n/bench_compile.md; }
run new X=1
run nolink SPARSEDITTO_SG_LINK=0
run off SPARSEDITTO_SG_LINK=0 SPARSEDITTO_SG_WIDE=0 SPARSEDITTO_SG_WARP_BROW=0
