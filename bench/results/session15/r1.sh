# session 15 call 1 (plan): the s14 stack (warp per B row tuned, winner's edits, linked parts with
# shared-typed memory, mirror a quarter, brief-long) after gpu-lane.sh --tests 'compile_spgemm|spgemm|validate|runtime|cli_run';
# then the quick set with the stack's default (units whole); the linked run is r2's first.
B=build-gpu/sparseditto
run() { n=$1; shift; left=$(( ${SD_LANE_LEFT:-300} - SECONDS )); echo "== $n (lane left $left s)"; [ $left -lt 160 ] && { echo "skip $n"; return; }
  env "$@" SPARSEDITTO_CACHE=/tmp/cq_$n $B bench --set quick --out $OUT/q_$n > $OUT/q_$n.log 2>&1; tail -1 $OUT/q_$n.log; grep -E "^\| (spgemm|all) " $OUT/q_$n/bench_compile.md; }
run default X=1
