# session 27 call 6 (main = the fallback's replay rule + SpGEMM's eager output): the eager
# output A/B again on session 23's 25 small real SpGEMM products, the tree without
# eager.patch first this time, then this tree; then the whole quick set on this tree.
export SD_LANE_T0=$(date +%s)
bash scripts/ab-tree.sh old eager.patch; echo "old build rc=$?"
SD_BENCH_BIN=/tmp/old/b/sparseditto bash scripts/bench-run.sh cta_old2 sg_cta.txt spgemm
bash scripts/bench-run.sh cta_new2 sg_cta.txt spgemm
bash scripts/bench-run.sh quick quick spmv,spmm8,spmm32,spmm128,spmm256,spgemm
