# session 23 call 4: the quick set on the landed code (the CTA-team edit), then the edit at
# 512 threads a CTA as a second edit (t512.patch, forward) against this tree on the 25 real
# products where the edit won in call 2, back to back.
export SD_LANE_T0=$(date +%s)
bash scripts/ab-tree.sh t512 t512.patch --forward; echo "t512 build rc=$?"
bash scripts/bench-run.sh quick quick spmv,spmm8,spmm32,spmm128,spmm256,spgemm
bash scripts/bench-run.sh sg_cta sg_cta.txt spgemm
SD_BENCH_BIN=/tmp/t512/b/sparseditto bash scripts/bench-run.sh sg_t512 sg_cta.txt spgemm
