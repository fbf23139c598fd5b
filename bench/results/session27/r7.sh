# session 27 call 7 (main = the fallback's replay rule + SpGEMM's eager output): the 50
# paper-60 SpGEMM products under 3 ms (session 23's p60_sg_small.txt) on today's kernels.
export SD_LANE_T0=$(date +%s)
bash scripts/bench-run.sh p60_sg p60_sg_small.txt spgemm
