# session 34 call 1 (where skewed small SpMM tasks spend their time): every measured candidate
# (--progress, budget 40, whole config text) at K = 32 and 128 and for SpMV on five skewed
# paper-60 twins (max row 300-3401 entries, mean 5-10), then ncu's per-kernel profile of our
# best plan (--no-vendor --warm) on two of them.
export SD_LANE_T0=$(date +%s)
BIN=build-gpu/sparseditto
T=$PWD/shared/matrices/paper60.tsv
for m in Rajat_rajat22 Schenk_IBMNA_c-50 Sandia_adder_dcop_44 LPnetlib_lp_standata Schenk_IBMNA_c-38; do
  for op in "spmm -K 32" "spmm -K 128" "spmv"; do
    tag=$(echo "$op" | tr -d ' -')
    SPARSEDITTO_CACHE=/tmp/c_prog timeout 60 $BIN compile --gen "twin:name=$m,file=$T" --op $op --no-cache --progress --budget 40 > $OUT/prog_${m}_$tag.out 2> $OUT/prog_${m}_$tag.err
    echo "== $m $op: $(grep -E 'speed-up|winner' $OUT/prog_${m}_$tag.out | head -2 | tr '\n' ' ')"
  done
done
for m in Rajat_rajat22 Schenk_IBMNA_c-50; do
  for K in 32 128; do
    SPARSEDITTO_CACHE=/tmp/c_prof timeout 100 $BIN profile --gen "twin:name=$m,file=$T" --op spmm -K $K --no-vendor --warm --runs 2 --keep $OUT/ncu_${m}_$K > $OUT/prof_${m}_$K.out 2> $OUT/prof_${m}_$K.err
    head -14 $OUT/prof_${m}_$K.out
  done
done
