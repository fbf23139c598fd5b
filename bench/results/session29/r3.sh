# session 29 call 3 (branch s29-sg-prefetch = main fa4a470 + the SpGEMM entry prefetch):
# after test_spgemm and test_spgemm_units, session 28's 22 mid paper-60 SpGEMM products
# with the prefetch (default) and without (SPARSEDITTO_SG_PREFETCH=0), side by side.
export SD_LANE_T0=$(date +%s)
bash scripts/bench-run.sh mid_pf sg_mid.txt spgemm
SPARSEDITTO_SG_PREFETCH=0 bash scripts/bench-run.sh mid_nopf sg_mid.txt spgemm
