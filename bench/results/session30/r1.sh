# session 30 call 1 (tree s30-int = main + s29-sg-split + s29-finalists-fail): after
# test_spgemm (with test_split_rows) and test_compile_spgemm (edit checks know split>),
# session 28's 22 mid paper-60 SpGEMM products with the split edit (default) and without
# (SPARSEDITTO_SG_SPLIT=0), side by side.
# command: bash .snap/scripts/gpu-lane.sh --no-baseline-cli --tests 'test_spgemm$|test_compile_spgemm' --pack --deadline 575 --run "bash r1.sh"
# (copy bench/results/session28/sg_mid.txt into .snap/ with this script)
export SD_LANE_T0=$(date +%s)
bash scripts/bench-run.sh mid_split sg_mid.txt spgemm
SPARSEDITTO_SG_SPLIT=0 bash scripts/bench-run.sh mid_nosplit sg_mid.txt spgemm
