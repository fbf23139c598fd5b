# session 22 call 1: branch s21-seg-narrow (segments of 8-lane groups at K >= 64, the small
# sweep's 4th csr_split member). GPU lane: test_spmm. A/B on the real set's SpMM at K = 128
# and 256 against the tree without it (segn.patch reversed), built in the same call, back to
# back. Then Nsight on mid-size SpMM K = 256 (where the headroom is): L1/L2 traffic of csr_row.
export SD_LANE_T0=$(date +%s)
here=$PWD
rm -rf /tmp/old && mkdir -p /tmp/old && cp -r CMakeLists.txt cmake include src bench tests python examples models scripts /tmp/old/ 2>/dev/null
[ -e /tmp/shared ] || ln -s $here/shared /tmp/shared
(cd /tmp/old && patch -R -p1 < $here/segn.patch) > $OUT/old_build.log 2>&1 && \
  cmake -S /tmp/old -B /tmp/old/b -DCMAKE_BUILD_TYPE=Release -DSD_EXTRA_PREFIX=/tmp/sdprefix >> $OUT/old_build.log 2>&1 && \
  cmake --build /tmp/old/b -j16 --target sparseditto_cli >> $OUT/old_build.log 2>&1; echo "old build rc=$?"
SD_BENCH_BIN=/tmp/old/b/sparseditto bash scripts/bench-run.sh real_old real spmm128,spmm256
bash scripts/bench-run.sh real_new real spmm128,spmm256
M=shared/matrices/suitesparse; [ -d $M ] || M=../shared/matrices/suitesparse
B=build-gpu/sparseditto
for mk in gen:twin:name=AMD_G2_circuit:256 gen:twin:name=JGD_Homology_ch7-8-b4:256 bcsstk33:256 gen:twin:name=DIMACS10_ga2010:128; do
  m=${mk%:*}; k=${mk##*:}
  case $m in gen:*) src="--gen ${m#gen:}"; tag=${m##*=};; *) src="$M/$m.mtx.gz"; tag=$m;; esac
  timeout 90 $B profile $src --op spmm -K $k --runs 1 --no-vendor --cache /tmp/c_prof > $OUT/prof_${tag}_k$k.txt 2>&1; cat $OUT/prof_${tag}_k$k.txt
done
