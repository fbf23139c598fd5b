# session 22 call 6: the landed code (branch s22-regcap at its head: the light register cap
# from K = 32). The matrices that offer the light member at K = 8/32/128 again (K = 8 now
# without it), then the paper-60 twins of 2e6-2e7 entries and the four of 2e7-6e7, SpMV and
# SpMM, for the combined paper-60 table.
export SD_LANE_T0=$(date +%s)
{ for m in Toledo_deltaX JGD_Homology_ch7-8-b4 AMD_G2_circuit Watson_Baumann Pereyra_landmark DIMACS10_ga2010 CEMW_vfem Barabasi_NotreDame_actors; do echo "twin:name=$m"; done; echo lp1; echo dblp-2010; echo luxembourg_osm; } > /tmp/light.txt
bash scripts/bench-run.sh light_final /tmp/light.txt spmm8,spmm32,spmm128
bash scripts/bench-run.sh p60_mid p60_mid.txt spmv,spmm8,spmm32,spmm128,spmm256
bash scripts/bench-run.sh p60_big4 p60_big4.txt spmv,spmm8,spmm32,spmm128,spmm256 --max-nnz 100000000
