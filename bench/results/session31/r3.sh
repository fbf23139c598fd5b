# session 31 call 3 (main 5a220b0), after the full GPU lane: session 28's 22 mid paper-60
# SpGEMM products on the final code (one graph for eager calls, the mapped nnz(C) word), for
# the combined tables.
# command: bash .snap/scripts/gpu-lane.sh --no-baseline-cli --pack --deadline 575 --run "bash r3.sh"
# (copy bench/results/session28/sg_mid.txt into .snap/ with this script)
export SD_LANE_T0=$(date +%s)
bash scripts/bench-run.sh mid_final sg_mid.txt spgemm
