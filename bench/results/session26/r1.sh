# session 26 call 1 (the tree is branch s25-rank-kl2; gpu-lane.sh ran test_spgemm and
# test_spgemm_units on it first): asia_osm's SpGEMM on main's kernels (the combined paper-60
# table's last session-15 record, measured on main's tree, /tmp/old), then the twelve
# mid-size paper-60 products on three trees: kl2 (this tree: sign-bit rank with two keys a lane a pass), lea (kl2.patch
# reversed: sign-bit rank, one key a lane) and main (all.patch reversed).
export SD_LANE_T0=$(date +%s)
bash scripts/ab-tree.sh old all.patch; echo "old build rc=$?"
bash scripts/ab-tree.sh lea kl2.patch; echo "lea build rc=$?"
echo "twin:name=DIMACS10_asia_osm" > /tmp/asia.txt
SD_BENCH_BIN=/tmp/old/b/sparseditto bash scripts/bench-run.sh p60_asia /tmp/asia.txt spgemm --max-nnz 200000000
bash scripts/bench-run.sh mid_kl2 p60_sg_mid.txt spgemm
SD_BENCH_BIN=/tmp/old/b/sparseditto bash scripts/bench-run.sh mid_old p60_sg_mid.txt spgemm
SD_BENCH_BIN=/tmp/lea/b/sparseditto bash scripts/bench-run.sh mid_lea p60_sg_mid.txt spgemm
bash scripts/bench-run.sh mid_kl2b p60_sg_mid.txt spgemm
