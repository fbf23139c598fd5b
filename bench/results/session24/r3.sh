# session 24 call 3 (after test_compile_spgemm on the branch s24-sg-batches): the whole quick
# set on the branch, then the SpGEMM side streams on small products: the 25 real products of
# sg_cta.txt with the default streams and with SPARSEDITTO_SG_STREAMS=0, back to back.
export SD_LANE_T0=$(date +%s)
bash scripts/bench-run.sh quick quick spmv,spmm8,spmm32,spmm128,spmm256,spgemm
bash scripts/bench-run.sh sg_streams sg_cta.txt spgemm
SPARSEDITTO_SG_STREAMS=0 bash scripts/bench-run.sh sg_nostreams sg_cta.txt spgemm
