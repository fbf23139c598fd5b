# session 12 call 4: staged mirror upload + parallel SpGEMM schedule building; the three slow twins; Belcastro_human_gene1
B=build-gpu/sparseditto
P=shared/matrices/paper60.tsv
mkdir -p $OUT/r4
for t in Schenk_AFE_af_shell10 DIMACS10_asia_osm DIMACS10_delaunay_n24 Belcastro_human_gene1; do
  left=$(( ${SD_LANE_LEFT:-300} - SECONDS ))
  echo "== $t (lane left $left s)"
  [ $left -lt 40 ] && { echo "skip $t: no time"; continue; }
  SPARSEDITTO_VERBOSE=1 SPARSEDITTO_CACHE=/tmp/c_$t timeout $(( left - 12 )) $B compile --gen twin:name=$t,file=$P --op spgemm --progress --report $OUT/r4/$t.json > $OUT/r4/$t.log 2>&1
  echo "rc $?"
  grep -vE "^\s+[0-9.]+ s \[" $OUT/r4/$t.log | tail -9
done
