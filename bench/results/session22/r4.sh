# session 22 call 4: branch s22-regcap (row-wise SpMM templates with one vector of
# accumulators per lane capped at 40 registers with 16 floats of B in flight, instead of
# 64 registers and 50 % occupancy), a variant at 32 registers / 8 floats (rc32.patch on top),
# and the tree without either (rc.patch reversed): the real set's SpMM at K = 8, 32, 128, 256,
# three builds in the same call, back to back.
export SD_LANE_T0=$(date +%s)
here=$PWD
[ -e /tmp/shared ] || ln -s $here/shared /tmp/shared
for t in old alt; do
  rm -rf /tmp/$t && mkdir -p /tmp/$t && cp -r CMakeLists.txt cmake include src bench tests python examples models scripts /tmp/$t/ 2>/dev/null
done
(cd /tmp/old && patch -R -p1 < $here/rc.patch) > $OUT/old_build.log 2>&1
(cd /tmp/alt && patch -p1 < $here/rc32.patch) > $OUT/alt_build.log 2>&1
for t in old alt; do
  ( cmake -S /tmp/$t -B /tmp/$t/b -DCMAKE_BUILD_TYPE=Release -DSD_EXTRA_PREFIX=/tmp/sdprefix && \
    cmake --build /tmp/$t/b -j8 --target sparseditto_cli ) >> $OUT/${t}_build.log 2>&1 &
done
wait
ls -la /tmp/old/b/sparseditto /tmp/alt/b/sparseditto
SD_BENCH_BIN=/tmp/old/b/sparseditto bash scripts/bench-run.sh real_old real spmm8,spmm32,spmm128,spmm256
bash scripts/bench-run.sh real_r40 real spmm8,spmm32,spmm128,spmm256
SD_BENCH_BIN=/tmp/alt/b/sparseditto bash scripts/bench-run.sh real_r32 real spmm8,spmm32,spmm128,spmm256
