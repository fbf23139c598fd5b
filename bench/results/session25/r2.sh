# session 25 call 2: the SpMV/SpMM rows of the two paper-60 twins above 2e7 entries (asia_osm,
# delaunay_n24; session 16's records) on the current code; then Nsight Compute on the mid-size
# paper-60 SpGEMM products nearest 1x (our own winner and cuSPARSE, one run each).
export SD_LANE_T0=$(date +%s)
bash scripts/bench-run.sh p60_big2 p60_big2.txt spmv,spmm8,spmm32,spmm128,spmm256 --max-nnz 200000000
for m in JGD_Homology_ch7-9-b5 Barabasi_NotreDame_actors DIMACS10_ga2010; do
  left=$(( ${SD_LANE_LEFT:-300} - ($(date +%s) - SD_LANE_T0) ))
  echo "profile $m spgemm, left $left s"
  [ $left -gt 60 ] || continue
  timeout $(( left - 10 )) build-gpu/sparseditto profile --gen twin:name=$m --op spgemm --runs 1 \
    --no-vendor --keep $OUT/prof_$m > $OUT/prof_$m.txt 2>&1
  echo "$m rc=$?"
done
