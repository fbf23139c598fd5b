# session 20 call 6: where cuSPARSE coo_alg1 (in a graph) beats our own best SpMV on skewed
# small/medium matrices (quick set: wiki-Vote 6.3 vs 8.6 us, dblp-2010 11.6 vs 13.0, rmat,
# powerlaw, bimodal, Chem97Zt): every candidate of our search, then Nsight Compute.
export SD_LANE_T0=$(date +%s)
M=shared/matrices/suitesparse; [ -d $M ] || M=../shared/matrices/suitesparse
B=build-gpu/sparseditto
for m in wiki-Vote dblp-2010 Chem97Zt; do
  echo "== $m"; timeout 60 $B compile $M/$m.mtx.gz --op spmv --no-vendor --no-cache --progress 2>&1 | grep -E "us +best|cuSPARSE|baseline" | head -40
done
for g in "rmat:scale=16,ef=16" "powerlaw:rows=200000,deg=12,alpha=1.9,max=20000" "bimodal:rows=50000,cols=50000,short=4,long=600,frac=0.01"; do
  echo "== $g"; timeout 60 $B compile --gen "$g" --op spmv --no-vendor --no-cache --progress 2>&1 | grep -E "us +best|cuSPARSE|baseline" | head -40
done
timeout 90 $B profile $M/wiki-Vote.mtx.gz --op spmv --runs 1 --no-vendor --cache /tmp/c_prof > $OUT/prof_wikivote_spmv.txt 2>&1; cat $OUT/prof_wikivote_spmv.txt
timeout 90 $B profile $M/dblp-2010.mtx.gz --op spmv --runs 1 --no-vendor --cache /tmp/c_prof > $OUT/prof_dblp_spmv.txt 2>&1; cat $OUT/prof_dblp_spmv.txt
