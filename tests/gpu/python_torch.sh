#!/usr/bin/env bash
# tests/gpu/python_torch.sh: the GPU lane of the Python package: python/tests/test_gpu_torch.py
# against the library of this build (no pip install: the GPU machine has no network).
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
cd "$tmp"
SPARSEDITTO_LIBRARY=$lib SPARSEDITTO_CACHE=$tmp/cache PYTHONPATH=$repo/python \
  PYTHONDONTWRITEBYTECODE=1 "$py" "$repo/python/tests/test_gpu_torch.py"
