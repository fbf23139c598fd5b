# session 27 call 3 (branch s27-call3 = the fallback's replay rule + SpGEMM's eager
# output): Belcastro_mouse_gene SpMV under the replay rule; then the eager output A/B on
# session 23's 25 small real SpGEMM products (sg_cta.txt): this tree, then the tree without
# eager.patch, then this tree again.
export SD_LANE_T0=$(date +%s)
bash scripts/bench-run.sh v_mouse v_mouse.txt spmv --max-nnz 200000000
bash scripts/ab-tree.sh old eager.patch; echo "old build rc=$?"
bash scripts/bench-run.sh cta_new sg_cta.txt spgemm
SD_BENCH_BIN=/tmp/old/b/sparseditto bash scripts/bench-run.sh cta_old sg_cta.txt spgemm
bash scripts/bench-run.sh cta_new2 sg_cta.txt spgemm
