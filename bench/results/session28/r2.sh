# session 28 call 2 (main = session 27 + the SpGEMM final rounds): information for the next
# SpGEMM step. (1) hash_slot.cu: the shared-memory hash insert as the kernels do it against
# a 64-bit key/value slot; (2) Nsight per kernel on four mid-size paper-60 twins whose
# products sit at 1.4-2.0x (raw CSVs kept).
export SD_LANE_T0=$(date +%s)
nvcc -O3 -arch=sm_90 -o /tmp/hash_slot hash_slot.cu && /tmp/hash_slot > $OUT/hash_slot.txt 2>&1; cat $OUT/hash_slot.txt
for m in Schenk_IBMNA_c-50 GHS_indef_c-59 DIMACS10_ga2010 Barabasi_NotreDame_actors; do
  SPARSEDITTO_CACHE=/tmp/c_p timeout 110 build-gpu/sparseditto profile --gen "twin:name=$m,file=shared/matrices/paper60.tsv" \
    --op spgemm --runs 1 --keep $OUT/prof_$m > $OUT/prof_$m.txt 2>&1; echo "$m rc=$? $(( $(date +%s) - SD_LANE_T0 )) s"
done
