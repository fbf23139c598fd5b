# session 30 call 2 (tree s30-int = main + s29-sg-split + s29-finalists-fail): whether the
# search tries the split edit and what it measures. For six mid paper-60 twins where the
# offline check puts rows above the split threshold, compile with the search record
# (--report: every trial, the edits with their marks); then session 28's 25 small real
# products with and without the split (SPARSEDITTO_SG_SPLIT=0), side by side.
# command: bash .snap/scripts/gpu-lane.sh --no-baseline-cli --no-tests --pack --deadline 575 --run "bash r2.sh"
# (copy bench/results/session28/sg_cta.txt into .snap/ with this script)
export SD_LANE_T0=$(date +%s)
for m in Schenk_IBMNA_c-50 GHS_indef_c-59 Schenk_IBMNA_c-38 Hollinger_g7jac040 Bindel_ted_B_unscaled Shen_e40r0100; do
  g="twin:name=$m,file=shared/matrices/paper60.tsv"
  timeout 60 build-gpu/sparseditto compile --gen "$g" --op spgemm --no-cache --progress --report $OUT/report_$m.json > $OUT/compile_$m.txt 2>&1
  echo "$m rc=$? $(( $(date +%s) - SD_LANE_T0 )) s"
  grep -o '"edit": *"[^"]*"' $OUT/report_$m.json | tr '\n' ' '; echo
done
bash scripts/bench-run.sh cta_split sg_cta.txt spgemm
SPARSEDITTO_SG_SPLIT=0 bash scripts/bench-run.sh cta_nosplit sg_cta.txt spgemm
