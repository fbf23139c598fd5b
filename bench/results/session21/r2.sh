# session 21 call 2: skewed small SpMM (K = 256, 128) where cuSPARSE coo_alg4 / csr_alg3 in a
# graph beat our own plans: every candidate of our search, then Nsight with stall reasons.
export SD_LANE_T0=$(date +%s)
M=shared/matrices/suitesparse; [ -d $M ] || M=../shared/matrices/suitesparse
B=build-gpu/sparseditto
for mk in adder_dcop_32:256 rajat01:256 reorientation_1:256 hangGlider_4:128 wiki-Vote:256 USAir97:256; do
  m=${mk%:*}; k=${mk#*:}
  echo "== $m K=$k"; timeout 60 $B compile $M/$m.mtx.gz --op spmm -K $k --no-vendor --no-cache --progress 2>&1 | grep -E "us +best|cuSPARSE|baseline|compile " | head -40
done 2>&1 | tee $OUT/search.log
for mk in adder_dcop_32:256 rajat01:256 wiki-Vote:256 USAir97:256; do
  m=${mk%:*}; k=${mk#*:}
  timeout 90 $B profile $M/$m.mtx.gz --op spmm -K $k --runs 1 --no-vendor --cache /tmp/c_prof > $OUT/prof_${m}_k$k.txt 2>&1; cat $OUT/prof_${m}_k$k.txt
done
