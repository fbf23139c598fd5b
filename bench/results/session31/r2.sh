# session 31 call 2 (main 5a220b0: the executor graphs, one graph for eager calls, the mapped
# nnz(C) word): the SpGEMM products whose combined-table records predate the graphs: the real
# set's 76 and the 27 paper-60 products of sg_p60_rest.txt (all under 3 ms).
# command: bash .snap/scripts/gpu-lane.sh --no-baseline-cli --no-tests --pack --deadline 575 --run "bash r2.sh"
# (copy bench/results/session31/sg_p60_rest.txt into .snap/ with this script)
export SD_LANE_T0=$(date +%s)
bash scripts/bench-run.sh p60_rest sg_p60_rest.txt spgemm
bash scripts/bench-run.sh real_sg real spgemm
