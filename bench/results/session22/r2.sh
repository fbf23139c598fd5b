# session 22 call 2: branch s22-l2-slices (csr_row K tiles whose slice of B fits in half of
# L2, with cache hints, where B is larger than that). GPU lane: test_spmm. A/B on the
# paper-60 twins whose B exceeds half of L2 at K = 128/256 (mid: <= 3e6 entries; big: three
# more) against the tree without it (l2s.patch reversed), built in the same call, back to back.
export SD_LANE_T0=$(date +%s)
here=$PWD
rm -rf /tmp/old && mkdir -p /tmp/old && cp -r CMakeLists.txt cmake include src bench tests python examples models scripts /tmp/old/ 2>/dev/null
[ -e /tmp/shared ] || ln -s $here/shared /tmp/shared
(cd /tmp/old && patch -R -p1 < $here/l2s.patch) > $OUT/old_build.log 2>&1 && \
  cmake -S /tmp/old -B /tmp/old/b -DCMAKE_BUILD_TYPE=Release -DSD_EXTRA_PREFIX=/tmp/sdprefix >> $OUT/old_build.log 2>&1 && \
  cmake --build /tmp/old/b -j16 --target sparseditto_cli >> $OUT/old_build.log 2>&1; echo "old build rc=$?"
for m in Rajat_rajat22 JGD_Franz_Franz11 Quaglino_viscoplastic2 GHS_indef_c-59 JGD_Homology_ch7-8-b4 AMD_G2_circuit Watson_Baumann QY_case39 DIMACS10_ga2010 CEMW_vfem Barabasi_NotreDame_actors JGD_Homology_ch7-9-b5 Andrianov_net125; do echo "twin:name=$m"; done > /tmp/mid.txt
for m in TSOPF_TSOPF_FS_b300_c2 Janna_CoupCons3D Belcastro_mouse_gene; do echo "twin:name=$m"; done > /tmp/big.txt
SD_BENCH_BIN=/tmp/old/b/sparseditto bash scripts/bench-run.sh mid_old /tmp/mid.txt spmm128,spmm256
bash scripts/bench-run.sh mid_new /tmp/mid.txt spmm128,spmm256
SPARSEDITTO_CACHE=/tmp/c_prog timeout 60 build-gpu/sparseditto compile --gen twin:name=AMD_G2_circuit --op spmm -K 256 --progress --no-vendor > $OUT/progress_amd_k256.txt 2>&1; tail -40 $OUT/progress_amd_k256.txt
SD_BENCH_BIN=/tmp/old/b/sparseditto bash scripts/bench-run.sh big_old /tmp/big.txt spmm128,spmm256
bash scripts/bench-run.sh big_new /tmp/big.txt spmm128,spmm256
