# session 21 call 4: csr_split segments (branch s21-seg; finisher loads in flight, sweep order). GPU lane: test_spmm, test_compile.
# A/B on the real set's SpMM (K = 8/32/128/256) against the tree without it (seg_c4.patch
# reversed), built in the same call, back to back.
export SD_LANE_T0=$(date +%s)
here=$PWD
rm -rf /tmp/old && mkdir -p /tmp/old && cp -r CMakeLists.txt cmake include src bench tests python examples models scripts /tmp/old/ 2>/dev/null
[ -e /tmp/shared ] || ln -s $here/shared /tmp/shared
(cd /tmp/old && patch -R -p1 < $here/seg_c4.patch) > $OUT/old_build.log 2>&1 && \
  cmake -S /tmp/old -B /tmp/old/b -DCMAKE_BUILD_TYPE=Release -DSD_EXTRA_PREFIX=/tmp/sdprefix >> $OUT/old_build.log 2>&1 && \
  cmake --build /tmp/old/b -j16 --target sparseditto_cli >> $OUT/old_build.log 2>&1; echo "old build rc=$?"
SD_BENCH_BIN=/tmp/old/b/sparseditto bash scripts/bench-run.sh real_old real spmm8,spmm32,spmm128,spmm256
bash scripts/bench-run.sh real_new real spmm8,spmm32,spmm128,spmm256
