# session 20 call 4 (branch s20-land = main + s19-drop-tall + s19-bench-host + the SELL/ELL
# unroll-8 sweep + bench_stream): bench_stream with twin-like columns, then the quick set
# (all 84 tasks) as the landing's regression run.
# gpu-lane: --tests "test_spmm$|test_compile$|test_spmv$" --run "bash r4.sh"
export SD_LANE_T0=$(date +%s)
timeout 60 build-gpu/bench_stream --out $OUT/stream > $OUT/stream.log 2>&1; echo "bench_stream rc=$?"
bash scripts/bench-run.sh quick quick spmv,spmm8,spmm32,spmm128,spmm256,spgemm
