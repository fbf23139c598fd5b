# session 31 call 4 (main 5a220b0, as call 3): the paper-60 SpGEMM products over 3 ms whose
# combined-table records are session 25's, on today's code (sessions 26-31 changed the
# SpGEMM kernels, the search and the executor since).
# command: bash .snap/scripts/gpu-lane.sh --no-baseline-cli --no-tests --pack --deadline 390 --run "bash r4.sh"
# (copy bench/results/session31/sg_p60_big.txt into .snap/ with this script)
export SD_LANE_T0=$(date +%s)
bash scripts/bench-run.sh p60_big sg_p60_big.txt spgemm
