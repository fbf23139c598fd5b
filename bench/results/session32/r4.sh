# session 32 call 4 (main dd9b253): the quick set, all six tasks, fresh cache (last run in
# session 27), for the headline figure on today's main and host.
# command: bash .snap/scripts/gpu-lane.sh --no-baseline-cli --no-tests --pack --deadline 575 --run "bash r4.sh"
export SD_LANE_T0=$(date +%s)
bash scripts/bench-run.sh quick quick spmv,spmm8,spmm32,spmm128,spmm256,spgemm
