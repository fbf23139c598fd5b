# session 24 call 1: SpGEMM follow-ups to the CTA edit, main against two forward variants on
# the 25 real products the edit won (sg_cta.txt): reedit.patch (the other winner edits on top
# of a CTA winner) and cta_one.patch (the edit in one phase), back to back.
# Copy into .snap/: this script, reedit.patch, cta_one.patch, sg_cta.txt.
export SD_LANE_T0=$(date +%s)
bash scripts/ab-tree.sh reedit reedit.patch --forward; echo "reedit build rc=$?"
bash scripts/ab-tree.sh one cta_one.patch --forward; echo "one build rc=$?"
bash scripts/bench-run.sh sg_main sg_cta.txt spgemm
SD_BENCH_BIN=/tmp/reedit/b/sparseditto bash scripts/bench-run.sh sg_reedit sg_cta.txt spgemm
SD_BENCH_BIN=/tmp/one/b/sparseditto bash scripts/bench-run.sh sg_one sg_cta.txt spgemm
