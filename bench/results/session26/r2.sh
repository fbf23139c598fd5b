# session 26 call 2 (the tree is branch s25-rank-lea, main + the sign-bit rank pass; gpu-lane.sh
# ran test_spgemm and test_spgemm_units on it first): the real set's SpGEMM on this tree (its
# records are sessions 20/23's, on older kernels), then delaunay_n24's SpMM K = 256 compile with
# the log and every candidate's progress line (64.6 s in session 25, above issue 8's 60 s: where
# the time goes).
export SD_LANE_T0=$(date +%s)
bash scripts/bench-run.sh real_sg real spgemm
left=$(( ${SD_LANE_LEFT:-300} - ($(date +%s) - SD_LANE_T0) ))
echo "delaunay_n24 K=256 compile, left $left s"
if [ $left -gt 90 ]; then
  SPARSEDITTO_VERBOSE=1 SPARSEDITTO_CACHE=/tmp/c_del timeout $(( left - 10 )) build-gpu/sparseditto compile \
    --gen twin:name=DIMACS10_delaunay_n24 --op spmm -K 256 --progress > $OUT/del256.txt 2>&1
  echo "del256 rc=$?"
fi
