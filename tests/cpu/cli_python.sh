#!/usr/bin/env bash
# tests/cpu/cli_python.sh: the Python lane: pip-installs the package from the checkout into a
# fresh venv (scikit-build-core builds libsparseditto.so with CMake) and runs python/tests.
# Usage (ctest): bash cli_python.sh <sparseditto-binary> <matrices-dir> <tests/data-dir>
# Exit 77 (skipped, visibly) only when python3, its venv module or pip is unavailable.
set -euo pipefail
cli=${1:?usage: cli_python.sh <sparseditto-binary> <matrices-dir> <tests/data-dir>}
data=${3:?usage: cli_python.sh <sparseditto-binary> <matrices-dir> <tests/data-dir>}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
start=$(date +%s)

if ! command -v python3 >/dev/null; then
  echo "cli_python: SKIPPED: python3 is not installed (scripts/deps.sh installs it)"
  exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sd-python-lane.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
if ! python3 -m venv "$tmp/venv" >"$tmp/venv.log" 2>&1; then
  echo "cli_python: SKIPPED: 'python3 -m venv' is unavailable (Debian: apt-get install python3-venv):"
  tail -n 3 "$tmp/venv.log"
  exit 77
fi
py=$tmp/venv/bin/python
if ! "$py" -m pip --version >/dev/null 2>&1; then
  echo "cli_python: SKIPPED: pip is unavailable in the venv (Debian: apt-get install python3-pip)"
  exit 77
fi

# CMake finds the CUDA toolkit through nvcc; the default install is not always on PATH.
[ -d /usr/local/cuda/bin ] && export PATH=/usr/local/cuda/bin:$PATH
# The C library's CMake build lives beside ctest's build (incremental on later runs);
# pip's cache ($PIP_CACHE_DIR, which ctest points into the build tree) keeps the
# downloaded wheels between runs.
pybuild=$(cd "$(dirname "$cli")" && pwd)/python-build
echo "cli_python: pip install $repo[test] (CMake build in $pybuild)"
if ! "$py" -m pip install --disable-pip-version-check -q \
     -C build-dir="$pybuild" "$repo[test]" >"$tmp/pip.log" 2>&1; then
  echo "cli_python: FAILED: pip install of the package failed; the end of its log:"
  tail -n 40 "$tmp/pip.log"
  exit 1
fi
built=$(date +%s)
echo "cli_python: installed in $((built - start)) s"

# Run from an empty directory so that the installed package (with its library) is the
# one imported, not python/sparseditto of the checkout; no cache, bytecode or pytest
# folders outside $tmp.
cd "$tmp"
rc=0
SPARSEDITTO_CLI=$cli SD_TEST_DATA_DIR=$data PYTHONDONTWRITEBYTECODE=1 \
  "$py" -m pytest -q -rs -p no:cacheprovider --basetemp "$tmp/pytest" "$repo/python/tests" || rc=$?
echo "cli_python: pytest exit $rc; lane took $(($(date +%s) - start)) s"
exit $rc
