# session 14 call 4: the merged head (linked units off by default). The warp-per-B-row path on/off
# on the quick set's power-law products (q_nolink vs q_off showed powerlaw -8 %, rmat -4 %, wiki-Vote -4 %, banded -4 %),
# twice, interleaved, cuSPARSE not allowed to win; then Belcastro_mouse_gene unlinked.
B=build-gpu/sparseditto
P=shared/matrices/paper60.tsv
S=shared/matrices/suitesparse
mkdir -p $OUT/r5
for rep in 1 2; do
for g in "--gen powerlaw:rows=200000,deg=12,alpha=1.9,max=20000" "--gen rmat:scale=16,ef=16" "--gen banded:n=200000,bw=8" "$S/wiki-Vote.mtx.gz" "$S/dblp-2010.mtx.gz"; do
  for w in 1 0; do
    left=$(( ${SD_LANE_LEFT:-300} - SECONDS )); [ $left -lt 150 ] && { echo "skip $g $w"; continue; }
    n=$(echo "$g" | sed 's#.*/##; s#--gen ##' | tr -c 'A-Za-z0-9\n' '_' | cut -c1-24)
    f=$OUT/r5/${n}_w${w}_r$rep
    SPARSEDITTO_SG_WARP_BROW=$w SPARSEDITTO_CACHE=/tmp/c5_${n}_${w}_$rep timeout 60 $B compile $g --op spgemm --no-vendor --report $f.json > $f.log 2>&1
    echo "$n warp=$w rep=$rep rc $? $(grep -E '^  time' $f.log | cut -c1-40) $(grep -E '^  plan' $f.log | cut -c1-40)"
  done
done
done
t=Belcastro_mouse_gene
left=$(( ${SD_LANE_LEFT:-300} - SECONDS - 5 ))
SPARSEDITTO_VERBOSE=1 SPARSEDITTO_CACHE=/tmp/c_m5 timeout $left $B compile --gen twin:name=$t,file=$P --op spgemm --report $OUT/r5/${t}.json > $OUT/r5/${t}.log 2>&1
echo "mouse rc $?"; grep -E "plan  |time  |compile  " $OUT/r5/${t}.log
