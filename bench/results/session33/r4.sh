# session 33 call 4 (the final main's source): after the full GPU lane, the quick set.
export SD_LANE_T0=$(date +%s)
bash scripts/bench-run.sh quick quick spmv,spmm8,spmm32,spmm128,spmm256,spgemm
