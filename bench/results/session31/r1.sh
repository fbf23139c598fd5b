# session 31 call 1 (branch s30-sg-mapped = main + s30-sg-graph1 + the mapped nnz(C) word):
# after test_spgemm_units (test_graphs: exact graph launches per mode, nnz_mapped),
# test_spgemm and test_compile_spgemm, session 28's 25 small real SpGEMM products on the
# branch and on main (host.patch reversed: one graph for eager calls, the copy of nnz(C)),
# side by side, twice alternating.
# command: bash .snap/scripts/gpu-lane.sh --no-baseline-cli --tests 'test_spgemm_units|test_spgemm$|test_compile_spgemm' --pack --deadline 575 --run "bash r1.sh"
# (copy into .snap/: this script as r1.sh, host.patch, bench/results/session28/sg_cta.txt)
export SD_LANE_T0=$(date +%s)
bash scripts/ab-tree.sh main_tree host.patch; echo "main tree build rc=$?"
bash scripts/bench-run.sh cta_new sg_cta.txt spgemm
SD_BENCH_BIN=/tmp/main_tree/b/sparseditto bash scripts/bench-run.sh cta_main sg_cta.txt spgemm
