# session 27 call 1 (branch s27-vendor-plain): the three tasks below 1.0x pipelined in the
# combined tables (GD06_Java SpMM K = 8 real; Norris_heart1 SpMM K = 256 and
# Belcastro_mouse_gene SpMV twins) under the fallback's replay rule; then a CUDA trace
# (nsys) of small real SpGEMM products, ours and cuSPARSE's, to see where 40-130 us go.
export SD_LANE_T0=$(date +%s)
bash scripts/bench-run.sh v_gd06 v_gd06.txt spmm8
bash scripts/bench-run.sh v_norris v_norris.txt spmm256
bash scripts/bench-run.sh v_mouse v_mouse.txt spmv
which nsys ncu; nsys --version
M=shared/matrices/suitesparse
for m in mhda416 G51 bcsstk13; do
  SPARSEDITTO_CACHE=/tmp/c_sg build-gpu/sparseditto compile $M/$m.mtx.gz --op spgemm > $OUT/sg_$m.txt 2>&1
  SPARSEDITTO_CACHE=/tmp/c_sg nsys profile -t cuda,osrt -s none --cpuctxsw none -o /tmp/p_$m -f true \
    build-gpu/sparseditto run $M/$m.mtx.gz --op spgemm --iters 20 >> $OUT/sg_$m.txt 2>&1
  nsys stats -r cuda_gpu_trace,cuda_api_trace -f csv -o $OUT/tr_$m /tmp/p_$m.nsys-rep > /dev/null 2>&1
  ls $OUT | grep tr_$m
done
