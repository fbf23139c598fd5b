# session 34 call 6 (main 98cc0a6): SpMM K = 128 and 256 on the 11 paper-60 twins <= 3e6
# entries whose longest row is >= 20x their mean (skewed.txt), new then old (the tree without
# segatomic: segatomic_final.patch = `git diff d9c7ee0 98cc0a6 -- src tests`, reversed).
# command (call 7; call 6 ran it without the sleep, and the old tree found no xxhash.h: the lane had not unpacked .deb yet): (sleep 8; bash scripts/ab-tree.sh old_tree bench/results/session34/segatomic_final.patch > /tmp/abtree.out 2>&1; touch /tmp/abtree.done) & bash scripts/gpu-lane.sh --no-baseline-cli --no-tests --pack --deadline 160 --run "bash bench/results/session34/r6.sh"
export SD_LANE_T0=$(date +%s)
bash scripts/bench-run.sh sk_new bench/results/session34/skewed.txt spmm128,spmm256
while [ ! -f /tmp/abtree.done ]; do sleep 2; done
cat /tmp/abtree.out
SD_BENCH_BIN=/tmp/old_tree/b/sparseditto bash scripts/bench-run.sh sk_old bench/results/session34/skewed.txt spmm128,spmm256
