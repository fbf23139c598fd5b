# session 21 call 6: main with this session's three changes (COO SpMV IPT, csr_split segments,
# narrow K tiles). GPU lane: every GPU test but test_spmm (call 5 ran it on this code) and
# test_spgemm (SpGEMM unchanged since session 16). Then the quick set (all 84 tasks, its wall
# time), then an A/B of the narrow K tiles on the paper-60 twins <= 1e6 at K = 128/256.
export SD_LANE_T0=$(date +%s)
here=$PWD
bash scripts/bench-run.sh quick quick spmv,spmm8,spmm32,spmm128,spmm256,spgemm
rm -rf /tmp/old && mkdir -p /tmp/old && cp -r CMakeLists.txt cmake include src bench tests python examples models scripts /tmp/old/ 2>/dev/null
[ -e /tmp/shared ] || ln -s $here/shared /tmp/shared
(cd /tmp/old && patch -R -p1 < $here/narrow.patch) > $OUT/old_build.log 2>&1 && \
  cmake -S /tmp/old -B /tmp/old/b -DCMAKE_BUILD_TYPE=Release -DSD_EXTRA_PREFIX=/tmp/sdprefix >> $OUT/old_build.log 2>&1 && \
  cmake --build /tmp/old/b -j16 --target sparseditto_cli >> $OUT/old_build.log 2>&1; echo "old build rc=$?"
SD_BENCH_BIN=/tmp/old/b/sparseditto bash scripts/bench-run.sh p60_old paper60 spmm128,spmm256 --max-nnz 1000000
bash scripts/bench-run.sh p60_new paper60 spmm128,spmm256 --max-nnz 1000000
