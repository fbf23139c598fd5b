# session 14 call 3 (plan): our own plans on issue 7's SpGEMM losers under ncu (profile --no-vendor), and the last paper-60 task
B=build-gpu/sparseditto
P=shared/matrices/paper60.tsv
for t in DIMACS10_delaunay_n24 Janna_CoupCons3D LAW_in-2004; do
  left=$(( ${SD_LANE_LEFT:-300} - SECONDS - 150 ))
  [ $left -lt 60 ] && { echo "skip $t"; continue; }
  SPARSEDITTO_CACHE=/tmp/c_prof timeout $left $B profile --gen twin:name=$t,file=$P --op spgemm --runs 1 --no-vendor --keep $OUT/prof_$t > $OUT/prof_$t.txt 2>&1
  echo "== $t rc $?"; tail -14 $OUT/prof_$t.txt
done
tl=$(( ${SD_LANE_LEFT:-300} - SECONDS - 20 ))
SPARSEDITTO_CACHE=/tmp/c_p60 timeout $tl build-gpu/bench_compile --set paper60 --ops spmm256 --from 59 --max-nnz 2e8 --out $OUT/p60_last > $OUT/p60_last.log 2>&1; tail -3 $OUT/p60_last.log
