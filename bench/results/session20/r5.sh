# session 20 call 5 (branch s20-try): row_ilp again, now also on one output column group
# per lane (call 1 only tried it on the default co=2, where ilp=16 spilled: 28 vs 18 us):
# USAir97 K=256 candidates, then the real set's small SpMM K=128/256 with and without.
export SD_LANE_T0=$(date +%s)
M=shared/matrices/suitesparse; [ -d $M ] || M=../shared/matrices/suitesparse
SPARSEDITTO_ROW_ILP=1 SPARSEDITTO_CACHE=/tmp/c_ilp timeout 60 build-gpu/sparseditto compile $M/USAir97.mtx.gz --op spmm -K 256 --no-vendor --progress > $OUT/usair97_ilp.txt 2>&1
grep "csr_row" $OUT/usair97_ilp.txt | head -30
SPARSEDITTO_ROW_ILP=1 bash scripts/bench-run.sh small_ilp real spmm128,spmm256 --max-nnz 200000
bash scripts/bench-run.sh small_def real spmm128,spmm256 --max-nnz 200000
