# session 23 call 3 (GPU lane: the SpGEMM tests, run by gpu-lane.sh --tests spgemm): the
# paper-60 SpGEMM products under 3 ms (sessions 15/16) with the CTA-team edit.
export SD_LANE_T0=$(date +%s)
bash scripts/bench-run.sh p60_sg p60_sg_small.txt spgemm
