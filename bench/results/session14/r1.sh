# session 14 call 1 (plan): the s13 branches merged (wide CTA stripe, warp per B row, profile --no-vendor);
# GPU tests run first by gpu-lane.sh --tests 'compile_spgemm|spgemm|validate|cli_run|baseline'.
# Then the Belcastro twins side by side: new paths on, and both switched off (= main).
B=build-gpu/sparseditto
P=shared/matrices/paper60.tsv
mkdir -p $OUT/r1
for t in Belcastro_mouse_gene Belcastro_human_gene1; do
  for v in new off; do
    left=$(( ${SD_LANE_LEFT:-300} - SECONDS ))
    echo "== $t $v (lane left $left s)"
    [ $left -lt 70 ] && { echo "skip: no time"; continue; }
    if [ $v = off ]; then E="SPARSEDITTO_SG_WIDE=0 SPARSEDITTO_SG_WARP_BROW=0 SPARSEDITTO_SG_LINK=0"; else E="X=1"; fi
    env $E SPARSEDITTO_VERBOSE=1 SPARSEDITTO_CACHE=/tmp/c_${t}_$v timeout $(( left - 12 )) $B compile --gen twin:name=$t,file=$P --op spgemm --report $OUT/r1/${t}_$v.json > $OUT/r1/${t}_$v.log 2>&1
    echo "rc $?"; grep -E "plan  |time  |compile  " $OUT/r1/${t}_$v.log
  done
done
