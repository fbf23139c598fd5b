# session 12 call 1: the four s11 branches merged; tests ran before this; three SpGEMM twin compiles
B=build-gpu/sparseditto
P=shared/matrices/paper60.tsv
mkdir -p $OUT/r1
for t in Schenk_AFE_af_shell10 DIMACS10_asia_osm DIMACS10_delaunay_n24; do
  left=$(( ${SD_LANE_LEFT:-300} - SECONDS ))
  echo "== $t (lane left $left s)"
  [ $left -lt 40 ] && { echo "skip $t: no time"; continue; }
  SPARSEDITTO_CACHE=/tmp/c_$t timeout $(( left - 15 )) $B compile --gen twin:name=$t,file=$P --op spgemm --progress --report $OUT/r1/$t.json > $OUT/r1/$t.log 2>&1
  tail -14 $OUT/r1/$t.log
done
