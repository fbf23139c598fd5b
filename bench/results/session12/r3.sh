# session 12 call 3: where af_shell10's 20 s before the first candidate go; the real set's SpGEMM through sd_compile
B=build-gpu/sparseditto
P=shared/matrices/paper60.tsv
mkdir -p $OUT/r3
SPARSEDITTO_VERBOSE=1 SPARSEDITTO_CACHE=/tmp/c_af timeout 120 $B compile --gen twin:name=Schenk_AFE_af_shell10,file=$P --op spgemm --progress > $OUT/r3/af_shell10.log 2>&1
grep -vE "^\s+[0-9.]+ s \[" $OUT/r3/af_shell10.log | head -20
tl=$(( ${SD_LANE_LEFT:-300} - SECONDS - 60 ))
echo "real set spgemm, time limit $tl s"
SPARSEDITTO_CACHE=/tmp/c_real build-gpu/bench_compile --set real --ops spgemm --time-limit $tl --out $OUT/realsg > $OUT/realsg.log 2>&1
tail -5 $OUT/realsg.log
head -20 $OUT/realsg/*.md
