#!/usr/bin/env bash
# scripts/demo.sh: the main job on the bundled example (examples/data/poisson2d_32.mtx):
# info, analysis, the candidate plans, then `compile`. With a GPU, compile validates,
# measures against cuSPARSE and caches the winner; without one it stops after lowering
# and NVRTC compilation and says so (exit 3 of compile is the expected outcome there).
set -uo pipefail
sd=${1:-build/sparseditto}
m=examples/data/poisson2d_32.mtx
echo "== sparseditto info $m"; "$sd" info "$m" || exit $?
echo; echo "== sparseditto analyze $m"; "$sd" analyze "$m" || exit $?
echo; echo "== sparseditto plan $m --op spmv"; "$sd" plan "$m" --op spmv || exit $?
echo; echo "== sparseditto compile $m --op spmv"
"$sd" compile "$m" --op spmv
rc=$?
if [ "$rc" -eq 3 ]; then
  echo "demo: no GPU here: everything up to measurement ran (see above); run on a GPU machine for the kernel"
  exit 0
fi
exit $rc
