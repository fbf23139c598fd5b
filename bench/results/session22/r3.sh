# session 22 call 3: where mid-size SpMM at K = 8/32 spends its time (main): every candidate
# of the search (--progress, our plans only) and Nsight's launch, occupancy and warp-state
# sections of the winner (one execution).
B=build-gpu/sparseditto
for mk in DIMACS10_ga2010:32 AMD_G2_circuit:32 Watson_Baumann:32 JGD_Homology_ch7-9-b5:8 Barabasi_NotreDame_actors:32 DIMACS10_ga2010:8; do
  m=${mk%:*}; k=${mk##*:}; g="twin:name=$m"
  SPARSEDITTO_CACHE=/tmp/c3 timeout 60 $B compile --gen $g --op spmm -K $k --progress --no-vendor > $OUT/prog_${m}_k$k.txt 2>&1
  grep -E "us|plan|time" $OUT/prog_${m}_k$k.txt | cut -c1-150
  SPARSEDITTO_CACHE=/tmp/c3 timeout 90 ncu --clock-control none -k regex:sd_spmm -c 1 --section LaunchStats --section Occupancy --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis $B run --gen $g --op spmm -K $k --iters 1 --no-vendor > $OUT/ncu_${m}_k$k.txt 2>&1
  grep -E "Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Limit|Duration|Warp Cycles Per Issued|Memory Throughput|L2 Hit|L1/TEX Hit|Eligible Warps|No Eligible|Waves Per SM|Grid Size|Block Size" $OUT/ncu_${m}_k$k.txt | head -24
done
