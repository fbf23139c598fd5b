# session 13 call 2 (plan): the quick set, default vs SPARSEDITTO_SG_FUSE_MAX=6, side by side (fresh caches, NVRTC --no-cache)
B=build-gpu/sparseditto
SPARSEDITTO_CACHE=/tmp/cq1 $B bench --set quick --out $OUT/q_default > $OUT/q_default.log 2>&1
tail -3 $OUT/q_default.log
SPARSEDITTO_CACHE=/tmp/cq2 SPARSEDITTO_SG_FUSE_MAX=6 $B bench --set quick --out $OUT/q_fuse6 > $OUT/q_fuse6.log 2>&1
tail -3 $OUT/q_fuse6.log
left=$(( ${SD_LANE_LEFT:-300} - SECONDS - 10 ))
echo "profile: $left s left"
[ $left -gt 60 ] && SPARSEDITTO_CACHE=/tmp/c_prof timeout $left build-gpu/sparseditto profile --gen twin:name=DIMACS10_delaunay_n24,file=shared/matrices/paper60.tsv --op spgemm --runs 1 --keep $OUT/prof_keep > $OUT/prof_del24.txt 2>&1
tail -40 $OUT/prof_del24.txt
