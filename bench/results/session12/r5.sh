# session 12 call 5: the last paper-60 SpGEMM twin
B=build-gpu/sparseditto
P=shared/matrices/paper60.tsv
mkdir -p $OUT/r5
for t in Belcastro_mouse_gene; do
  left=$(( ${SD_LANE_LEFT:-300} - SECONDS ))
  echo "== $t (lane left $left s)"
  [ $left -lt 40 ] && { echo "skip $t: no time"; continue; }
  SPARSEDITTO_VERBOSE=1 SPARSEDITTO_CACHE=/tmp/c_$t timeout $(( left - 12 )) $B compile --gen twin:name=$t,file=$P --op spgemm --progress --report $OUT/r5/$t.json > $OUT/r5/$t.log 2>&1
  echo "rc $?"
  grep -vE "^\s+[0-9.]+ s \[" $OUT/r5/$t.log | tail -9
done
