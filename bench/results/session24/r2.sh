# session 24 call 2 (after the SpGEMM GPU tests on the branch s24-sg-batches): the quick
# set's SpGEMM compile time, the branch against main (batches.patch reversed), back to back;
# then one product's search timeline (--progress) with each binary.
export SD_LANE_T0=$(date +%s)
bash scripts/ab-tree.sh old batches.patch; echo "old build rc=$?"
bash scripts/bench-run.sh q_new quick spgemm
SD_BENCH_BIN=/tmp/old/b/sparseditto bash scripts/bench-run.sh q_old quick spgemm
M=shared/matrices/suitesparse; [ -d $M ] || M=../shared/matrices/suitesparse
for b in new old; do
  bin=build-gpu/sparseditto; [ $b = old ] && bin=/tmp/old/b/sparseditto
  for m in Chem97Zt dblp-2010; do
    SPARSEDITTO_CACHE=/tmp/cp_$b timeout 60 $bin compile $M/$m.mtx.gz --op spgemm --progress > $OUT/tl_${b}_$m.txt 2>&1
  done
done
