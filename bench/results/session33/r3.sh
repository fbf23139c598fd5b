# session 33 call 3 (where small SpMM tasks spend their time): ncu's profile of our best plan
# (--no-vendor, --warm: caches kept as a run sees them) at K = 32 on five paper-60 twins of
# 7.6e4-2e5 entries whose time is 2-4x the empty launch, and the search's candidates
# (--progress) on two of them.
export SD_LANE_T0=$(date +%s)
BIN=build-gpu/sparseditto
T=$PWD/shared/matrices/paper60.tsv
for m in Rommes_bips07_3078 Hollinger_g7jac040 LPnetlib_lp_standata Schenk_IBMNA_c-50 Rajat_rajat22 HB_bcsstm19; do
  echo "== profile $m"
  SPARSEDITTO_CACHE=/tmp/c_prof timeout 120 $BIN profile --gen "twin:name=$m,file=$T" --op spmm -K 32 --no-vendor --warm --runs 3 --keep $OUT/ncu_$m > $OUT/prof_$m.out 2> $OUT/prof_$m.err
  head -14 $OUT/prof_$m.out
done
for m in Rommes_bips07_3078 Schenk_IBMNA_c-50; do
  SPARSEDITTO_CACHE=/tmp/c_prog $BIN compile --gen "twin:name=$m,file=$T" --op spmm -K 32 --no-cache --progress --budget 40 > $OUT/prog_$m.out 2> $OUT/prog_$m.err
done
