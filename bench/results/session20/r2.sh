# session 20 call 2: SpMV-shaped traffic against the copy bandwidth (bench_stream, the
# af_shell10 twin's shape), row_ilp candidates of USAir97 K=256 as the search saw them,
# then the real set's SpGEMM with today's code (issue 10: those rows were session 16's).
export SD_LANE_T0=$(date +%s)
M=shared/matrices/suitesparse; [ -d $M ] || M=../shared/matrices/suitesparse
timeout 120 build-gpu/bench_stream --out $OUT/stream > $OUT/stream.log 2>&1; echo "bench_stream rc=$?"
cat $OUT/stream.log
SPARSEDITTO_ROW_ILP=1 SPARSEDITTO_CACHE=/tmp/c_ilp timeout 60 build-gpu/sparseditto compile $M/USAir97.mtx.gz --op spmm -K 256 --no-vendor --progress > $OUT/usair97_ilp.txt 2>&1
grep -i "ilp\|winner\|csr_row" $OUT/usair97_ilp.txt | head -30
bash scripts/bench-run.sh real_sg real spgemm
