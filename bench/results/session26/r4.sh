# session 26 call 4 (the tree is main after this session's landings: the sign-bit rank pass,
# the parallel block/window counts with the col_window default's density rule, the edit
# trials' source in the search record): the whole quick set, then the sign-bit rank pass
# against main before it (lea.patch reversed) on session 23's 25 real SpGEMM products
# (sg_cta.txt), new then old, as far as the time goes (compare the products both finished).
export SD_LANE_T0=$(date +%s)
bash scripts/bench-run.sh quick quick spmv,spmm8,spmm32,spmm128,spmm256,spgemm
bash scripts/ab-tree.sh old lea.patch; echo "old build rc=$?"
bash scripts/bench-run.sh cta_new sg_cta.txt spgemm
SD_BENCH_BIN=/tmp/old/b/sparseditto bash scripts/bench-run.sh cta_old sg_cta.txt spgemm
