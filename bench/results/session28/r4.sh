# session 28 call 4 (branch s28-runners-up = main + the other families' closest rebuilt at
# full optimisation next to the winner): test_compile_spgemm, then A/B with
# SPARSEDITTO_SG_FINALISTS=0 (no runners-up, no final rounds) on the 22 mid products
# (sg_mid.txt) and the 25 small real products (sg_cta.txt), alternating.
export SD_LANE_T0=$(date +%s)
bash scripts/bench-run.sh mid_on sg_mid.txt spgemm
SPARSEDITTO_SG_FINALISTS=0 bash scripts/bench-run.sh mid_off sg_mid.txt spgemm
SPARSEDITTO_SG_FINALISTS=0 bash scripts/bench-run.sh cta_off sg_cta.txt spgemm
bash scripts/bench-run.sh cta_on sg_cta.txt spgemm
