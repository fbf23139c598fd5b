# session 29 call 4 (branch s29-sg-own = s29-sg-prefetch + own-B-row rounds for warp
# groups): after test_spgemm_units, session 28's 22 mid paper-60 SpGEMM products with the
# own rounds (default) and without (SPARSEDITTO_SG_OWN=0), side by side, prefetch on in both.
export SD_LANE_T0=$(date +%s)
bash scripts/bench-run.sh mid_own sg_mid.txt spgemm
SPARSEDITTO_SG_OWN=0 bash scripts/bench-run.sh mid_noown sg_mid.txt spgemm
