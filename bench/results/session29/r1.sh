# session 29 call 1 (branch s29-int = main c57d6aa + s28-profile-warm + s28-vendor-plain-test
# + s28-eager-fallback): after the GPU tests (test_compile_spgemm, test_vendor,
# test_spgemm_units, test_spgemm), Nsight per launch on the four mid paper-60 SpGEMM twins of
# session 28, caches flushed (ncu's default) and kept (--warm), one cache per twin so both
# profile the same compiled kernel; compile --json from that cache labels the launches.
export SD_LANE_T0=$(date +%s)
for m in Schenk_IBMNA_c-50 GHS_indef_c-59 DIMACS10_ga2010 Barabasi_NotreDame_actors; do
  g="twin:name=$m,file=shared/matrices/paper60.tsv"
  SPARSEDITTO_CACHE=/tmp/c_$m timeout 100 build-gpu/sparseditto compile --gen "$g" --op spgemm --json > $OUT/compile_$m.json 2> $OUT/compile_$m.err
  for w in cold warm; do
    f=; [ $w = warm ] && f=--warm
    SPARSEDITTO_CACHE=/tmp/c_$m timeout 100 build-gpu/sparseditto profile --gen "$g" --op spgemm --runs 1 $f \
      --keep $OUT/prof_${m}_$w > $OUT/prof_${m}_$w.txt 2>&1
    echo "$m $w rc=$? $(( $(date +%s) - SD_LANE_T0 )) s"
  done
done
