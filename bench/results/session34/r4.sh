# session 34 call 4: the full GPU lane on the final code (main after the segatomic commit).
# command: bash scripts/gpu-lane.sh --pack --deadline 575
