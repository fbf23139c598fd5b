# session 33 call 2 (diagnosis of x in shared memory): every measured candidate of the SpMV
# search (--progress, budget 40) on the four paper-60 twins > 3e6 entries whose x fits shared
# memory, Nemeth_nemeth26 and Andrianov_net125; then ncu's profile of our best plan
# (--no-vendor) on Gupta_gupta3's twin and on Belcastro_human_gene1's.
export SD_LANE_T0=$(date +%s)
BIN=build-gpu/sparseditto
T=$PWD/shared/matrices/paper60.tsv
for m in Gupta_gupta3 TSOPF_TSOPF_FS_b300_c2 Belcastro_human_gene1 Belcastro_mouse_gene Nemeth_nemeth26 Andrianov_net125; do
  echo "== $m"
  SPARSEDITTO_CACHE=/tmp/c_prog $BIN compile --gen "twin:name=$m,file=$T" --op spmv --no-cache --progress --budget 40 > $OUT/prog_$m.out 2> $OUT/prog_$m.err
  tail -12 $OUT/prog_$m.out
done
for m in Gupta_gupta3 Belcastro_human_gene1; do
  echo "== profile $m"
  SPARSEDITTO_CACHE=/tmp/c_prof timeout 150 $BIN profile --gen "twin:name=$m,file=$T" --op spmv --no-vendor --runs 2 > $OUT/prof_$m.out 2> $OUT/prof_$m.err
  tail -40 $OUT/prof_$m.out
done
