# session 15 call 2 (plan): issue 7's paper-60 SpGEMM losers and the Belcastro twins under the
# s14 stack's search (winner's edits: warp flip, load 100). The edits' trials are round 3 at the
# end of each report: their times beside the winner before them are the A/B.
B=build-gpu/sparseditto
P=shared/matrices/paper60.tsv
mkdir -p $OUT/r2
# first: the quick set with linked units (SPARSEDITTO_SG_LINK=1), against r1's default run
SPARSEDITTO_SG_LINK=1 SPARSEDITTO_CACHE=/tmp/cq_link $B bench --set quick --out $OUT/q_link > $OUT/q_link.log 2>&1
tail -1 $OUT/q_link.log; grep -E "^\| (spgemm|all) " $OUT/q_link/bench_compile.md
for t in Belcastro_mouse_gene Janna_CoupCons3D Schenk_AFE_af_shell10 Belcastro_human_gene1 LAW_in-2004 DIMACS10_delaunay_n24 Gupta_gupta3; do
  left=$(( ${SD_LANE_LEFT:-300} - SECONDS ))
  echo "== $t (lane left $left s)"; [ $left -lt 100 ] && { echo "skip"; continue; }
  SPARSEDITTO_VERBOSE=1 SPARSEDITTO_CACHE=/tmp/c2_$t timeout $(( left - 10 )) $B compile --gen twin:name=$t,file=$P --op spgemm --report $OUT/r2/$t.json > $OUT/r2/$t.log 2>&1
  echo "rc $?"; grep -E "plan  |time  |cuSPARSE  |compile  " $OUT/r2/$t.log
  python3 -c "
import json,sys
d=json.load(open('$OUT/r2/$t.json'))
for c in d['search']['trials']:
    if c['round']>=3: print('   r%d %-90s %10.0f us' % (c['round'], c['config'][:90], c.get('time',{}).get('median_us',0)))
" 2>/dev/null
done
