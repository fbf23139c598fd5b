# session 23 call 2: the CTA-team edit (cta_u) of the SpGEMM search, A/B on the real set's
# 70 small products (our time < 260 us in session 20): this tree, then the tree without it
# (cta.patch reversed), back to back.
export SD_LANE_T0=$(date +%s)
bash scripts/ab-tree.sh old cta.patch; echo "old build rc=$?"
bash scripts/bench-run.sh sg_new sg_small.txt spgemm
SD_BENCH_BIN=/tmp/old/b/sparseditto bash scripts/bench-run.sh sg_old sg_small.txt spgemm
