# session 16 call 8: GPU time (ncu gpu__time_duration) of ours vs cuSPARSE on tasks that win per
# execution but lose pipelined (our kernel longer on the GPU, cuSPARSE's host overhead larger?)
B=build-gpu/sparseditto
P=../shared/matrices/paper60.tsv
M=../shared/matrices/suitesparse
export SPARSEDITTO_CACHE=/tmp/c_prof
for spec in "--gen twin:name=PARSEC_Si2,file=$P" "--gen twin:name=FIDAP_ex15,file=$P" "$M/ex10hs.mtx.gz" "$M/wing_nodal.mtx.gz"; do
  left=$(( ${SD_LANE_LEFT:-200} - SECONDS ))
  [ $left -lt 45 ] && { echo "skip $spec (left $left s)"; continue; }
  n=$(echo "$spec" | sed 's#.*name=##; s#,file.*##; s#.*/##; s#\.mtx\.gz##')
  timeout $(( left - 10 )) $B profile $spec --op spmv --runs 3 --timeout 60 > $OUT/prof_$n.txt 2>&1
  echo "== $n rc $?"; cat $OUT/prof_$n.txt | cut -c1-160 | tail -22
done
