# session 13 call 6: sd_device_csr_free drains the device: the cached ALG1 kernel of delaunay_n24 runs (was: fault), then ncu profile if time is left
B=build-gpu/sparseditto
G=twin:name=DIMACS10_delaunay_n24,file=shared/matrices/paper60.tsv
export SPARSEDITTO_CACHE=/tmp/c_dbg
$B compile --gen $G --op spgemm > $OUT/c.log 2>&1; echo "compile rc $?"; grep -E "plan|time  " $OUT/c.log
$B run --gen $G --op spgemm --iters 3 --json > $OUT/run.log 2>&1; echo "run rc $?: $(tail -c 300 $OUT/run.log)"
$B profile --gen $G --op spgemm --runs 1 --cache /tmp/c_dbg --exec ours > $OUT/exec.log 2>&1; echo "exec ours rc $?"; tail -3 $OUT/exec.log
left=$(( ${SD_LANE_LEFT:-200} - SECONDS - 8 ))
echo "profile: $left s"
[ $left -gt 40 ] && timeout $left $B profile --gen $G --op spgemm --runs 1 --cache /tmp/c_dbg > $OUT/prof.txt 2>&1; echo "profile rc $?"; tail -30 $OUT/prof.txt
