# session 31 call 5 (main 5a220b0, as calls 3-4): the three products of sg_p60_big.txt that
# call 4 skipped at bench's default --max-nnz 2e7 (delaunay_n24 101 M, CoupCons3D 22 M,
# af_shell10 53 M entries); smallest first.
# command: bash .snap/scripts/gpu-lane.sh --no-baseline-cli --no-tests --pack --deadline 185 --run "bash r5.sh"
# (copy bench/results/session31/sg_p60_big3.txt into .snap/ with this script)
export SD_LANE_T0=$(date +%s)
bash scripts/bench-run.sh p60_big3 sg_p60_big3.txt spgemm --max-nnz 200000000
