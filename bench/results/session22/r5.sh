# session 22 call 5: branch s22-regcap (the light register cap as a sweep member from 50,000
# rows). GPU lane: test_spmm. A/B on every matrix that offers it (8 paper-60 twins <= 2e6
# entries and the real lp1, dblp-2010, luxembourg_osm) at K = 8/32/128/256 against the tree
# without it (rc2.patch reversed), built in the same call, back to back; then the paper-60
# twins <= 2e6 entries, SpMV and SpMM, on the new tree (the table's refresh).
export SD_LANE_T0=$(date +%s)
here=$PWD
rm -rf /tmp/old && mkdir -p /tmp/old && cp -r CMakeLists.txt cmake include src bench tests python examples models scripts /tmp/old/ 2>/dev/null
[ -e /tmp/shared ] || ln -s $here/shared /tmp/shared
(cd /tmp/old && patch -R -p1 < $here/rc2.patch) > $OUT/old_build.log 2>&1 && \
  cmake -S /tmp/old -B /tmp/old/b -DCMAKE_BUILD_TYPE=Release -DSD_EXTRA_PREFIX=/tmp/sdprefix >> $OUT/old_build.log 2>&1 && \
  cmake --build /tmp/old/b -j16 --target sparseditto_cli >> $OUT/old_build.log 2>&1; echo "old build rc=$?"
{ for m in Toledo_deltaX JGD_Homology_ch7-8-b4 AMD_G2_circuit Watson_Baumann Pereyra_landmark DIMACS10_ga2010 CEMW_vfem Barabasi_NotreDame_actors; do echo "twin:name=$m"; done; echo lp1; echo dblp-2010; echo luxembourg_osm; } > /tmp/light.txt
SD_BENCH_BIN=/tmp/old/b/sparseditto bash scripts/bench-run.sh light_old /tmp/light.txt spmm8,spmm32,spmm128,spmm256
bash scripts/bench-run.sh light_new /tmp/light.txt spmm8,spmm32,spmm128,spmm256
bash scripts/bench-run.sh p60s paper60 spmv,spmm8,spmm32,spmm128,spmm256 --max-nnz 2000000
