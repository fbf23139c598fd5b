# session 30 call 3 (branch s30-sg-graph = main + s29-finalists-fail + the executor's CUDA
# graphs): after test_spgemm_units (test_graphs) and test_spgemm (every product through the
# graphs), session 28's 25 small real SpGEMM products with the graphs (default) and
# without (SPARSEDITTO_SG_GRAPH=0: every kernel, fork and join launched by the host), side by side.
# command: bash .snap/scripts/gpu-lane.sh --no-baseline-cli --tests 'test_spgemm_units|test_spgemm$' --pack --deadline 575 --run "bash r3.sh"
# (copy bench/results/session28/sg_cta.txt into .snap/ with this script)
export SD_LANE_T0=$(date +%s)
bash scripts/bench-run.sh cta_graph sg_cta.txt spgemm
SPARSEDITTO_SG_GRAPH=0 bash scripts/bench-run.sh cta_nograph sg_cta.txt spgemm
