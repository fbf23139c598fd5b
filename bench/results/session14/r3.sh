# session 14 call 3: human_gene1 with the linked units off (warp per B row on) = isolates the warp path's effect; then r3 (profile --no-vendor, delaunay K=256)
B=build-gpu/sparseditto
P=shared/matrices/paper60.tsv
mkdir -p $OUT/r1
t=Belcastro_human_gene1
SPARSEDITTO_SG_LINK=0 SPARSEDITTO_VERBOSE=1 SPARSEDITTO_CACHE=/tmp/c_h_nolink timeout 150 $B compile --gen twin:name=$t,file=$P --op spgemm --report $OUT/r1/${t}_nolink.json > $OUT/r1/${t}_nolink.log 2>&1
echo "rc $?"; grep -E "plan  |time  |compile  " $OUT/r1/${t}_nolink.log
export SPARSEDITTO_SG_LINK=0
bash r3.sh
