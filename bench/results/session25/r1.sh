# session 25 call 1: the paper-60 SpGEMM products over 3 ms (sessions 15/16's records) on the
# current code, smallest first, up to delaunay_n24's 1e8 entries.
export SD_LANE_T0=$(date +%s)
bash scripts/bench-run.sh p60_sg_big p60_sg_big.txt spgemm --max-nnz 200000000
