# session 26 call 3 (the tree is main + branches s26-compile-big and s26-edit-check; gpu-lane.sh
# ran test_compile, test_compile_spgemm and test_spmm on it first): the paper-60 SpMV/SpMM rows
# of the two twins above 2e7 entries (asia_osm, delaunay_n24; session 25 c2's list) with the
# parallel block/window counts and the col_window default's density rule (delaunay_n24 K = 256
# compiled in 64.6-65.7 s before, above issue 8's 60 s). (The quick set waits for call 4.)
export SD_LANE_T0=$(date +%s)
bash scripts/bench-run.sh p60_big2 p60_big2.txt spmv,spmm8,spmm32,spmm128,spmm256 --max-nnz 200000000
