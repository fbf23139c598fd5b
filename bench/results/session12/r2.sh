# session 12 call 2: the search's reference shared with the vendor round; af_shell10 twin, the quick set
B=build-gpu/sparseditto
P=shared/matrices/paper60.tsv
mkdir -p $OUT/r2
SPARSEDITTO_VERBOSE=1 SPARSEDITTO_CACHE=/tmp/c_af timeout 200 $B compile --gen twin:name=Schenk_AFE_af_shell10,file=$P --op spgemm --progress --report $OUT/r2/af_shell10.json > $OUT/r2/af_shell10.log 2>&1
grep -E "reference|compile  |speed-up|time  " $OUT/r2/af_shell10.log | tail -8
left=$(( ${SD_LANE_LEFT:-300} - SECONDS ))
echo "quick set with $left s left"
SPARSEDITTO_CACHE=/tmp/cq timeout $(( left - 10 )) $B bench --set quick --out $OUT/q > $OUT/q.log 2>&1
tail -15 $OUT/q.log
