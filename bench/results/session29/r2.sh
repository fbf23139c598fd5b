# session 29 call 2 (main fa4a470): where the few-CTA launches of the heaviest SpGEMM rows
# spend their time. For Schenk_IBMNA_c-50 and GHS_indef_c-59 (twins), compile into a
# cache, then Nsight Compute with source counters (PC sampling per SASS instruction) on our
# row kernels of one execution, caches kept; export the SASS source page and the details.
export SD_LANE_T0=$(date +%s)
for m in Schenk_IBMNA_c-50 GHS_indef_c-59; do
  g="twin:name=$m,file=shared/matrices/paper60.tsv"
  SPARSEDITTO_CACHE=/tmp/c_$m timeout 100 build-gpu/sparseditto compile --gen "$g" --op spgemm --json > $OUT/compile_$m.json 2> $OUT/compile_$m.err
  SPARSEDITTO_CACHE=/tmp/c_$m timeout 200 ncu --clock-control none --cache-control none --profile-from-start off \
    -k regex:sd_sg_ --section SourceCounters --section WarpStateStats --section SchedulerStats \
    --section LaunchStats --section Occupancy --section SpeedOfLight --section MemoryWorkloadAnalysis \
    -o $OUT/rep_$m build-gpu/sparseditto profile --op spgemm -K 1 --runs 1 --exec ours --gen "$g" > $OUT/ncu_$m.log 2>&1
  echo "$m ncu rc=$? $(( $(date +%s) - SD_LANE_T0 )) s"
  ncu -i $OUT/rep_$m.ncu-rep --page source --csv --print-source sass > $OUT/sass_$m.csv 2> $OUT/sass_$m.err
  echo "$m source rc=$? $(wc -c < $OUT/sass_$m.csv) bytes"; head -c 600 $OUT/sass_$m.err
  ncu -i $OUT/rep_$m.ncu-rep --page details --csv > $OUT/details_$m.csv 2>&1
  echo "$m details rc=$?"
  gzip -f $OUT/sass_$m.csv
done
