# session 27 call 4 (branch s27-call4 = main + s27-colwin-wide): col_window's wide windows
# A/B on five paper-60 twins with long, moderately dense rows at K = 8 and 32 (cw5.txt):
# this tree, then the tree without colwin.patch.
export SD_LANE_T0=$(date +%s)
bash scripts/ab-tree.sh old colwin.patch; echo "old build rc=$?"
bash scripts/bench-run.sh cw_new cw5.txt spmm8,spmm32 --max-nnz 200000000
SD_BENCH_BIN=/tmp/old/b/sparseditto bash scripts/bench-run.sh cw_old cw5.txt spmm8,spmm32 --max-nnz 200000000
