# session 30 call 4 (branch s30-sg-graph, with the node-size fix): after test_spgemm_units
# (test_graphs), test_spgemm (every product through the graphs) and test_compile_spgemm,
# session 28's 25 small real SpGEMM products with the graphs (default) and without
# (SPARSEDITTO_SG_GRAPH=0), side by side.
# command: bash .snap/scripts/gpu-lane.sh --no-baseline-cli --tests 'test_spgemm_units|test_spgemm$|test_compile_spgemm' --pack --deadline 575 --run "bash r4.sh"
# (copy bench/results/session28/sg_cta.txt into .snap/ with this script)
export SD_LANE_T0=$(date +%s)
bash scripts/bench-run.sh cta_graph sg_cta.txt spgemm
SPARSEDITTO_SG_GRAPH=0 bash scripts/bench-run.sh cta_nograph sg_cta.txt spgemm
