# session 28 call 3: are the heavy rows' lane groups the critical path of mid-size
# products? ctau.patch (throwaway) lets SD_SG_CTA_U force every configuration's cta_u
# (rows above it get CTA teams). Per-product search records of four twins under main and
# under SD_SG_CTA_U=256/1024, then the 22 mid products of sg_mid.txt: main, then
# SD_SG_CTA_U=512.
export SD_LANE_T0=$(date +%s)
bash scripts/ab-tree.sh tr ctau.patch --forward; echo "tr build rc=$?"
for m in Schenk_IBMNA_c-50 GHS_indef_c-59 Rajat_rajat22 ML_Graph_kmnist_norm_10NN; do
  g="twin:name=$m,file=shared/matrices/paper60.tsv"
  build-gpu/sparseditto compile --no-cache --gen "$g" --op spgemm --json > $OUT/cj_${m}_main.json 2>/dev/null
  for x in 256 1024; do SD_SG_CTA_U=$x /tmp/tr/b/sparseditto compile --no-cache --gen "$g" --op spgemm --json > $OUT/cj_${m}_$x.json 2>/dev/null; done
  echo "$m done $(( $(date +%s) - SD_LANE_T0 )) s"
done
bash scripts/bench-run.sh mid_main sg_mid.txt spgemm
SD_SG_CTA_U=512 SD_BENCH_BIN=/tmp/tr/b/sparseditto bash scripts/bench-run.sh mid_cta512 sg_mid.txt spgemm
