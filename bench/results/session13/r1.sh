# session 13 call 1 (plan): s12 branches merged; the two Belcastro twins (streamed mirror, CTA-size transfer)
B=build-gpu/sparseditto
P=shared/matrices/paper60.tsv
mkdir -p $OUT/r1
for t in Belcastro_mouse_gene Belcastro_human_gene1; do
  left=$(( ${SD_LANE_LEFT:-300} - SECONDS ))
  echo "== $t (lane left $left s)"
  [ $left -lt 60 ] && { echo "skip $t: no time"; continue; }
  SPARSEDITTO_VERBOSE=1 SPARSEDITTO_CACHE=/tmp/c_$t timeout $(( left - 12 )) $B compile --gen twin:name=$t,file=$P --op spgemm --progress --report $OUT/r1/$t.json > $OUT/r1/$t.log 2>&1
  echo "rc $?"
  grep -vE "^\s+[0-9.]+ s \[" $OUT/r1/$t.log | tail -9
done
