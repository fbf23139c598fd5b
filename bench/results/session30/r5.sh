# session 30 call 5 (branch s30-sg-graph, as call 4): session 28's 22 mid paper-60 SpGEMM
# products with the executor's graphs, for the combined tables (the device budget left no
# room for the run without them; call 1 ran the same products without the graphs).
# command: bash .snap/scripts/gpu-lane.sh --no-baseline-cli --no-tests --pack --deadline 185 --run "bash r5.sh"
# (copy bench/results/session28/sg_mid.txt into .snap/ with this script)
export SD_LANE_T0=$(date +%s)
bash scripts/bench-run.sh mid_graph sg_mid.txt spgemm
