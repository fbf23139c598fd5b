# session 32 call 7 (main = s32-seg-inflight, tested in call 6): the real set's SpMM K = 8 and
# K = 32 on the final main (csr_split segments changed), fresh cache, for the combined table.
# command: bash .snap/scripts/gpu-lane.sh --no-baseline-cli --no-tests --pack --deadline 200 --run "bash r7.sh"
export SD_LANE_T0=$(date +%s)
bash scripts/bench-run.sh real_k8_k32 real spmm8,spmm32
