# session 22 call 7: the quick set on the landed code (branch s22-regcap at its head).
export SD_LANE_T0=$(date +%s)
bash scripts/bench-run.sh quick quick spmv,spmm8,spmm32,spmm128,spmm256,spgemm
