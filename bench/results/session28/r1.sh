# session 28 call 1 (branch s28-both = main + s27-sg-retime + s27-colwin-wide): col_window's
# segment-parallel form on five twins at K = 8/32 (s28-colwin.sh), then the SpGEMM final
# rounds on session 23's 25 small real products, on then off.
export SD_LANE_T0=$(date +%s)
mkdir -p $OUT/colwin && OUT=$OUT/colwin bash s28-colwin.sh
bash scripts/bench-run.sh cta_fin_on sg_cta.txt spgemm
SPARSEDITTO_SG_FINALISTS=0 bash scripts/bench-run.sh cta_fin_off sg_cta.txt spgemm
