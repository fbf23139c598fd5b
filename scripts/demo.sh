#!/usr/bin/env bash
# scripts/demo.sh: the main job on the bundled example (examples/data/poisson2d_32.mtx).
set -uo pipefail
sd=${1:-build/sparseditto}
m=examples/data/poisson2d_32.mtx
echo "== sparseditto info $m"; "$sd" info "$m" || exit $?
echo; echo "== sparseditto analyze $m"; "$sd" analyze "$m" || exit $?
