# session 20 call 3: SELL/ELL 8 slots in flight for matrices larger than L2 (u8.patch),
# against the same tree without it (built here), SpMV on big_spmv.txt, back to back;
# then bench_stream again (with the copy bandwidth).
# gpu-lane: --tests "test_spmv$" --run "bash r3.sh"
export SD_LANE_T0=$(date +%s)
here=$PWD
rm -rf /tmp/old && mkdir -p /tmp/old && cp -r CMakeLists.txt cmake include src bench tests python examples models scripts /tmp/old/ 2>/dev/null
[ -e /tmp/shared ] || ln -s $here/shared /tmp/shared
(cd /tmp/old && patch -R -p1 < $here/u8.patch) && \
  cmake -S /tmp/old -B /tmp/old/b -DCMAKE_BUILD_TYPE=Release -DSD_EXTRA_PREFIX=/tmp/sdprefix > $OUT/old_build.log 2>&1 && \
  cmake --build /tmp/old/b -j16 --target sparseditto_cli >> $OUT/old_build.log 2>&1; echo "old build rc=$?"
timeout 60 build-gpu/bench_stream --out $OUT/stream > $OUT/stream.log 2>&1; echo "bench_stream rc=$?"
SD_BENCH_BIN=/tmp/old/b/sparseditto bash scripts/bench-run.sh big_u4 big_spmv.txt spmv --max-nnz 100000000
bash scripts/bench-run.sh big_u8 big_spmv.txt spmv --max-nnz 100000000
