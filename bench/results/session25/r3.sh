# session 25 call 3 (after the SpGEMM GPU tests, run by gpu-lane.sh --tests): the SpGEMM
# rank write by keys held (sg_rank_write) and the compaction by lane groups per row
# (sg_copy_tile), against main (sgk.patch reversed), on twelve paper-60 products of
# 0.2-2.5 ms, new then old back to back; then Nsight on ch7-9-b5 with the new kernels.
export SD_LANE_T0=$(date +%s)
bash scripts/ab-tree.sh old sgk.patch; echo "old build rc=$?"
bash scripts/bench-run.sh mid_new p60_sg_mid.txt spgemm
SD_BENCH_BIN=/tmp/old/b/sparseditto bash scripts/bench-run.sh mid_old p60_sg_mid.txt spgemm
left=$(( ${SD_LANE_LEFT:-300} - ($(date +%s) - SD_LANE_T0) ))
echo "profile ch7-9-b5, left $left s"
[ $left -gt 60 ] && timeout $(( left - 10 )) build-gpu/sparseditto profile --gen twin:name=JGD_Homology_ch7-9-b5 \
  --op spgemm --runs 1 --no-vendor --keep $OUT/prof_ch79 > $OUT/prof_ch79.txt 2>&1
echo "profile rc=$?"
