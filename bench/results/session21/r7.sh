# session 21 call 7: Nsight (with stall reasons) on the landed code: where small SpMM at
# K = 256 stands after narrow tiles and segments, for the next session's choice.
M=shared/matrices/suitesparse; [ -d $M ] || M=../shared/matrices/suitesparse
B=build-gpu/sparseditto
for mk in USAir97:256 jazz:128 hangGlider_4:256 rajat01:256; do
  m=${mk%:*}; k=${mk#*:}
  timeout 60 $B profile $M/$m.mtx.gz --op spmm -K $k --runs 1 --no-vendor --cache /tmp/c_prof > $OUT/prof_${m}_k$k.txt 2>&1; cat $OUT/prof_${m}_k$k.txt
done
