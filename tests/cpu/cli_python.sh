#!/usr/bin/env bash
# tests/cpu/cli_python.sh: the Python lane: installs the package from the checkout and runs
# python/tests with pytest, in the first way this machine allows:
#   1. a package index is reachable: pip installs "$repo[test]" into a fresh venv
#      (scikit-build-core builds libsparseditto.so with CMake), the way users install it;
#   2. offline, python3 has scikit-build-core, numpy and pytest: the same pip install into a
#      venv over python3's packages, without build isolation and without an index;
#   3. offline, python3 has numpy and pytest: the checkout's package by PYTHONPATH over this
#      build's library ($SPARSEDITTO_LIBRARY, which ctest sets).
# Exit 77 (skipped, with the reason on one line) when none of these is possible.
# Usage (ctest): bash cli_python.sh <sparseditto-binary> <matrices-dir> <tests/data-dir>
set -euo pipefail
cli=${1:?usage: cli_python.sh <sparseditto-binary> <matrices-dir> <tests/data-dir>}
data=${3:?usage: cli_python.sh <sparseditto-binary> <matrices-dir> <tests/data-dir>}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bindir=$(cd "$(dirname "$cli")" && pwd)
start=$(date +%s)

if ! command -v python3 >/dev/null; then
  echo "cli_python: SKIPPED: python3 is not installed (Debian: apt-get install python3 python3-venv)"
  exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sd-python-lane.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# CMake finds the CUDA toolkit through nvcc; the default install is not always on PATH.
[ -d /usr/local/cuda/bin ] && export PATH=/usr/local/cuda/bin:$PATH
# The C library's CMake build and pip's cache live in the build tree (incremental on later
# runs; nothing in ~/.cache).
export PIP_CACHE_DIR=${PIP_CACHE_DIR:-$bindir/pip-cache}
export PIP_DISABLE_PIP_VERSION_CHECK=1

# <python> <CMake build folder> <pip install arguments...>; FAILED (exit 1) with the log's end.
pip_install() {
  local py=$1 pybuild=$bindir/$2
  shift 2
  echo "cli_python: pip install $* (CMake build in $pybuild)"
  if ! "$py" -m pip install -q -C build-dir="$pybuild" "$@" >"$tmp/pip.log" 2>&1; then
    echo "cli_python: FAILED: pip install of the package failed; the end of its log:"
    tail -n 40 "$tmp/pip.log"
    exit 1
  fi
  echo "cli_python: installed in $(($(date +%s) - start)) s"
}

py=
if ! python3 -m venv "$tmp/venv" >"$tmp/venv.log" 2>&1 || ! "$tmp/venv/bin/python" -m pip --version >/dev/null 2>&1; then
  offline="python3 has no venv or pip (Debian: apt-get install python3-venv python3-pip)"
# Whether the index serves what the install needs first (PIP_INDEX_URL, PIP_NO_INDEX and
# pip.conf apply); a short probe so that offline costs seconds, not pip's retries.
elif ! "$tmp/venv/bin/python" -m pip download -q --no-deps --retries 0 --timeout 15 -d "$tmp/probe" \
       "scikit-build-core>=0.10" >"$tmp/probe.log" 2>&1; then
  offline="no package index is reachable (pip: $( (grep -m1 '^ERROR' "$tmp/probe.log" || tail -n 1 "$tmp/probe.log") | sed 's/^ERROR: //'))"
else
  offline=
  py=$tmp/venv/bin/python
  pip_install "$py" python-build "$repo[test]"
fi
if [ -n "$offline" ]; then
  # What an interpreter has installed (python3's own packages, or those a venv sees).
  has() { local p=$1; shift; for m; do "$p" -c "import $m" >/dev/null 2>&1 || return 1; done; }
  if python3 -m venv --system-site-packages "$tmp/venv-system" >>"$tmp/venv.log" 2>&1 &&
     "$tmp/venv-system/bin/python" -m pip --version >/dev/null 2>&1 &&
     has "$tmp/venv-system/bin/python" numpy pytest scikit_build_core; then
    echo "cli_python: $offline: installing with python3's scikit-build-core, numpy and pytest"
    py=$tmp/venv-system/bin/python
    # Its own CMake build: the generator and cmake may differ from pip's isolated build's.
    pip_install "$py" python-build-offline --no-index --no-build-isolation "$repo"
  elif has python3 numpy pytest; then
    lib=${SPARSEDITTO_LIBRARY:-$bindir/libsparseditto.so}
    [ -f "$lib" ] || { echo "cli_python: FAILED: no library at $lib (set SPARSEDITTO_LIBRARY)"; exit 1; }
    echo "cli_python: $offline: python3's numpy and pytest on the checkout's package (PYTHONPATH) over $lib"
    py=python3
    export PYTHONPATH=$repo/python${PYTHONPATH:+:$PYTHONPATH} SPARSEDITTO_LIBRARY=$lib
  else
    missing=()
    for m in numpy pytest; do has python3 $m || missing+=("$m"); done
    echo "cli_python: SKIPPED: $offline, and python3 lacks ${missing[*]} (Debian: apt-get install" \
         "$(printf 'python3-%s ' "${missing[@]}" | sed 's/ $//'); or pip install ${missing[*]} where an index is reachable)"
    exit 77
  fi
fi
# An installed package must load its own library, not the one ctest names.
[ "$py" = python3 ] || unset SPARSEDITTO_LIBRARY

# Run from an empty directory so that the installed package (with its library) is the
# one imported, not python/sparseditto of the checkout; no cache, bytecode or pytest
# folders outside $tmp.
cd "$tmp"
rc=0
SPARSEDITTO_CLI=$cli SD_TEST_DATA_DIR=$data PYTHONDONTWRITEBYTECODE=1 \
  "$py" -m pytest -q -rs -p no:cacheprovider --basetemp "$tmp/pytest" "$repo/python/tests" || rc=$?
echo "cli_python: pytest exit $rc; lane took $(($(date +%s) - start)) s"
exit $rc
