# session 34 call 5 (main 663306e, the machine of call 4 still warm): the quick set, then SpMM
# K = 256 on the 51 paper-60 twins <= 3e6 entries and on the real set.
# command: bash scripts/gpu-lane.sh --no-baseline-cli --no-tests --pack --deadline 420 --run "bash bench/results/session34/r5.sh"
export SD_LANE_T0=$(date +%s)
cat bench/results/session32/p60_a.txt bench/results/session32/p60_b.txt > /tmp/p60_3e6.txt
bash scripts/bench-run.sh quick quick spmv,spmm8,spmm32,spmm128,spmm256,spgemm
bash scripts/bench-run.sh k256_p60 /tmp/p60_3e6.txt spmm256
bash scripts/bench-run.sh k256_real real spmm256
