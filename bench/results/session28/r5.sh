# session 28 call 5 (main = session 27 + the SpGEMM final rounds): the GPU tests of the
# search and runtime on the final tree, then side streams on small products: session 23's
# 25 small real products with SPARSEDITTO_SG_STREAMS=0 (every launch on the caller's
# stream), then as by default.
export SD_LANE_T0=$(date +%s)
SPARSEDITTO_SG_STREAMS=0 bash scripts/bench-run.sh cta_nostreams sg_cta.txt spgemm
bash scripts/bench-run.sh cta_streams sg_cta.txt spgemm
