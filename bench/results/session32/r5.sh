# session 32 call 5 (main dd9b253): the segment batches on the one large paper-60 SpMM K = 8
# task whose winner is csr_split segments (LAW_in-2004 twin, 1.69e7 entries), against the
# tree without them (seg.patch reversed, built in the background during the lane's build),
# alternating twice: new, old, new, old. The combined table takes the first new run.
# command: cd .snap && (sleep 15; bash scripts/ab-tree.sh old_tree seg.patch > /tmp/abtree.out 2>&1; touch /tmp/abtree.done) & bash .snap/scripts/gpu-lane.sh --no-baseline-cli --no-tests --pack --deadline 330 --run "bash r5.sh"
export SD_LANE_T0=$(date +%s)
while [ ! -f /tmp/abtree.done ]; do sleep 2; done
cat /tmp/abtree.out
for i in 1 2; do
  bash scripts/bench-run.sh law_new_$i law.txt spmm8
  SD_BENCH_BIN=/tmp/old_tree/b/sparseditto bash scripts/bench-run.sh law_old_$i law.txt spmm8
done
