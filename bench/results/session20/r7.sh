# session 20 call 7: COO SpMV with the chunk's steps loaded together (coo.patch: SD_UF, the
# default chunk 8 loaded at once) against the same tree without it (built here): SpMV on
# the real set and the paper-60 twins <= 2e6, back to back; then dblp-2010 in Nsight.
# gpu-lane: --tests "test_spmv$" --run "bash r7.sh"
export SD_LANE_T0=$(date +%s)
here=$PWD
M=shared/matrices/suitesparse; [ -d $M ] || M=../shared/matrices/suitesparse
rm -rf /tmp/old && mkdir -p /tmp/old && cp -r CMakeLists.txt cmake include src bench tests python examples models scripts /tmp/old/ 2>/dev/null
[ -e /tmp/shared ] || ln -s $here/shared /tmp/shared
(cd /tmp/old && patch -R -p1 < $here/coo.patch) && \
  cmake -S /tmp/old -B /tmp/old/b -DCMAKE_BUILD_TYPE=Release -DSD_EXTRA_PREFIX=/tmp/sdprefix > $OUT/old_build.log 2>&1 && \
  cmake --build /tmp/old/b -j16 --target sparseditto_cli >> $OUT/old_build.log 2>&1; echo "old build rc=$?"
SD_BENCH_BIN=/tmp/old/b/sparseditto bash scripts/bench-run.sh real_old real spmv
bash scripts/bench-run.sh real_new real spmv
SD_BENCH_BIN=/tmp/old/b/sparseditto bash scripts/bench-run.sh p60_old paper60 spmv --max-nnz 2000000
bash scripts/bench-run.sh p60_new paper60 spmv --max-nnz 2000000
timeout 60 build-gpu/sparseditto profile $M/dblp-2010.mtx.gz --op spmv --runs 1 --no-vendor --cache /tmp/c_prof > $OUT/prof_dblp_spmv.txt 2>&1; cat $OUT/prof_dblp_spmv.txt
