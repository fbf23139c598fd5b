# session 25 call 4 (after the SpGEMM GPU tests, run by gpu-lane.sh --tests): the final
# kernels (rank write in passes of one key a lane, sg_rank_pass; compaction by lane groups)
# against main (sgk.patch reversed) on the twelve paper-60 products, new then old; then
# the whole quick set on the new code (issue 10: under 3 minutes).
export SD_LANE_T0=$(date +%s)
bash scripts/ab-tree.sh old sgk.patch; echo "old build rc=$?"
bash scripts/bench-run.sh mid_new p60_sg_mid.txt spgemm
SD_BENCH_BIN=/tmp/old/b/sparseditto bash scripts/bench-run.sh mid_old p60_sg_mid.txt spgemm
bash scripts/bench-run.sh quick quick spmv,spmm8,spmm32,spmm128,spmm256,spgemm
