# session 32 call 3 (main dd9b253: stream order + segment batches): after the full GPU lane,
# the real set's SpMM K = 8 on main (the combined real table takes it: csr_split segments
# changed), fresh cache.
# command: bash .snap/scripts/gpu-lane.sh --no-baseline-cli --pack --deadline 575 --run "bash r3.sh"
export SD_LANE_T0=$(date +%s)
bash scripts/bench-run.sh real_k8 real spmm8
