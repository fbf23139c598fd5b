#!/usr/bin/env bash
# tests/gpu/python_torch.sh: the GPU lane of the Python package against the library of this
# build (no pip install: the GPU machine has no network). With pytest, every file of
# python/tests runs (CPU-visible and GPU tests alike: torch.compile, CUDA graphs, PyG, CuPy,
# torch.distributed on gloo and NCCL); without it, python/tests/test_gpu_torch.py runs as a
# script. Skips inside pytest are listed with their reasons (-rs).
# Usage (ctest): bash python_torch.sh <libsparseditto.so>
# Exit 77 (skipped, visibly) when python3, numpy, PyTorch or a CUDA device is missing.
set -euo pipefail
lib=${1:?usage: python_torch.sh <libsparseditto.so>}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
py=${SD_PYTHON:-python3}
if ! command -v "$py" >/dev/null; then
  echo "python_torch: SKIPPED: $py is not installed"
  exit 77
fi
if ! "$py" -c "import numpy, torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null; then
  echo "python_torch: SKIPPED: needs numpy and PyTorch with a CUDA device"
  exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sd-python-gpu.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# A private kernel cache: the searches run (and are timed) instead of hitting old entries.
# Temporary files of pytest, torch (inductor, elastic) and PyG go into it too, and leave with it.
mkdir -p "$tmp/tmp"
cd "$tmp"
export TMPDIR=$tmp/tmp SPARSEDITTO_LIBRARY=$lib SPARSEDITTO_CACHE=$tmp/cache PYTHONPATH=$repo/python \
  PYTHONDONTWRITEBYTECODE=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
# The CLI beside the library, for the tests that compare with it.
[ -x "$(dirname "$lib")/sparseditto" ] && export SPARSEDITTO_CLI=$(dirname "$lib")/sparseditto
if "$py" -c "import pytest" 2>/dev/null; then
  "$py" -m pytest -q -rs -p no:cacheprovider --rootdir "$repo" -c "$repo/pyproject.toml" \
    "$repo/python/tests"
  exit $?
fi
echo "python_torch: pytest is not installed: python/tests/test_gpu_torch.py alone, as a script"
"$py" "$repo/python/tests/test_gpu_torch.py"
