# session 13 call 5 (an experiment build, not committed: the env SDX chose sync / zero / handle inside sdi_vendor_spgemm_run): which change lets the cached ALG1 executor run on delaunay_n24?
B=build-gpu/sparseditto
G=twin:name=DIMACS10_delaunay_n24,file=shared/matrices/paper60.tsv
export SPARSEDITTO_CACHE=/tmp/c_dbg
$B compile --gen $G --op spgemm > $OUT/c.log 2>&1; echo "compile rc $?"; grep -E "plan|time  " $OUT/c.log
for v in none sync zero handle; do
  SDX=$v timeout 60 $B run --gen $G --op spgemm --iters 2 --json > $OUT/run_$v.log 2>&1; echo "run $v rc $?: $(tail -c 250 $OUT/run_$v.log)"
done
