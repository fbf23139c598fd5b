# next session, call 1: on a test branch = main + s20-profile-stalls + s20-coo-ipt
#   git checkout -b s21-try main && git merge s20-profile-stalls s20-coo-ipt
# gpu-lane: --tests "test_spmv$|test_compile$" --run "bash r1.sh"  (copy coo_ipt.patch beside it)
# 1) profile with stall reasons (validates s20-profile-stalls), 2) COO ipt A/B against the tree
#    without it (coo_ipt.patch reversed, built here) on real + quick SpMV, back to back.
export SD_LANE_T0=$(date +%s)
here=$PWD
M=shared/matrices/suitesparse; [ -d $M ] || M=../shared/matrices/suitesparse
for m in wiki-Vote dblp-2010; do
  timeout 90 build-gpu/sparseditto profile $M/$m.mtx.gz --op spmv --runs 1 --no-vendor --cache /tmp/c_prof > $OUT/prof_${m}_spmv.txt 2>&1; cat $OUT/prof_${m}_spmv.txt
done
rm -rf /tmp/old && mkdir -p /tmp/old && cp -r CMakeLists.txt cmake include src bench tests python examples models scripts /tmp/old/ 2>/dev/null
[ -e /tmp/shared ] || ln -s $here/shared /tmp/shared
(cd /tmp/old && patch -R -p1 < $here/coo_ipt.patch) && \
  cmake -S /tmp/old -B /tmp/old/b -DCMAKE_BUILD_TYPE=Release -DSD_EXTRA_PREFIX=/tmp/sdprefix > $OUT/old_build.log 2>&1 && \
  cmake --build /tmp/old/b -j16 --target sparseditto_cli >> $OUT/old_build.log 2>&1; echo "old build rc=$?"
SD_BENCH_BIN=/tmp/old/b/sparseditto bash scripts/bench-run.sh real_old real spmv
bash scripts/bench-run.sh real_new real spmv
SD_BENCH_BIN=/tmp/old/b/sparseditto bash scripts/bench-run.sh quick_old quick spmv
bash scripts/bench-run.sh quick_new quick spmv
