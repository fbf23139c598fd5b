# session 27 call 2: Belcastro_mouse_gene SpMV under the fallback rule (all sizes), then
# where a small SpGEMM product's time goes: host timestamps of each step of a run
# (sgtrace.patch, a throwaway instrumented tree), the plan's launches, Nsight kernel time.
export SD_LANE_T0=$(date +%s)
bash scripts/bench-run.sh v_mouse v_mouse.txt spmv --max-nnz 2e8
bash scripts/ab-tree.sh tr sgtrace.patch --forward; echo "tr build rc=$?"
M=shared/matrices/suitesparse
for m in mhda416 G51 bcsstk13 cage8; do
  SPARSEDITTO_CACHE=/tmp/c_sg /tmp/tr/b/sparseditto compile $M/$m.mtx.gz --op spgemm --json > $OUT/sg_$m.json 2>/dev/null
  SD_SG_TRACE=1 SPARSEDITTO_CACHE=/tmp/c_sg /tmp/tr/b/sparseditto run $M/$m.mtx.gz --op spgemm --iters 20 > $OUT/tr_$m.txt 2>&1
done
for m in G51 mhda416; do
  SPARSEDITTO_CACHE=/tmp/c_sg timeout 100 build-gpu/sparseditto profile $M/$m.mtx.gz --op spgemm --runs 1 > $OUT/prof_$m.txt 2>&1
done
