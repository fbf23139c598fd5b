# session 20 call 1 (branch s20-try = s19-row-ilp + s19-drop-tall + s19-bench-host):
# profile USAir97 K=256, row_ilp on vs default on the real set's small SpMM K=128/256,
# then the af_shell10 twin's SpMV profile (L2 vs DRAM).
export SD_LANE_T0=$(date +%s)
M=shared/matrices/suitesparse; [ -d $M ] || M=../shared/matrices/suitesparse
timeout 60 build-gpu/sparseditto profile $M/USAir97.mtx.gz --op spmm -K 256 --runs 1 --no-vendor > $OUT/prof_usair97_k256.txt 2>&1
echo "profile usair97 rc=$?"
SPARSEDITTO_ROW_ILP=1 bash scripts/bench-run.sh small_ilp real spmm128,spmm256 --max-nnz 200000
bash scripts/bench-run.sh small_def real spmm128,spmm256 --max-nnz 200000
left=$(( ${SD_LANE_LEFT:-300} - ($(date +%s) - SD_LANE_T0) ))
echo "af_shell10 profile, left $left s"
[ $left -gt 90 ] && timeout $(( left - 10 )) build-gpu/sparseditto profile --gen twin:name=Schenk_AFE_af_shell10 --op spmv --runs 1 --no-vendor > $OUT/prof_afshell10_spmv.txt 2>&1
echo "af_shell10 rc=$?"
