#!/usr/bin/env bash
# scripts/deps.sh: checks what the build needs and installs what is missing (apt-get when
# run as root; otherwise prints the exact command). Optional parts are only reported, with
# the command that adds them. The CUDA 13 toolkit must already be installed (it is not a
# Debian package of the distribution).
set -euo pipefail
missing=()
command -v cmake >/dev/null || missing+=(cmake)
command -v cc >/dev/null || missing+=(gcc)
command -v make >/dev/null || missing+=(make)
[ -f /usr/include/zlib.h ] || missing+=(zlib1g-dev)
[ -f /usr/include/xxhash.h ] || [ -n "${SD_EXTRA_PREFIX:-}" ] || missing+=(libxxhash-dev)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "deps: installing ${missing[*]}"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "deps: missing ${missing[*]}; run: sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
fi
# Optional parts are never installed here: for each one missing, the command that adds it.
sudo=$([ "$(id -u)" = 0 ] || echo "sudo ")
optional() { echo "deps: optional: $1 ($2)"; }
# libcurl headers: the agent lowering backend's HTTP client (src/lower/agent). Without them
# the library builds and `--lowering agent` says it was built without libcurl.
if [ ! -f /usr/include/curl/curl.h ] && ! ls /usr/include/*/curl/curl.h >/dev/null 2>&1 &&
   [ ! -f "${SD_EXTRA_PREFIX:-/nonexistent}/usr/include/x86_64-linux-gnu/curl/curl.h" ]; then
  optional "${sudo}apt-get install libcurl4-openssl-dev" "the agent lowering backend"
fi
# The Python lane (tests/cpu/cli_python.sh) pip-installs the package into a venv; without
# python3, its venv module or pip it tests what python3 has installed, or is skipped.
if ! command -v python3 >/dev/null; then
  optional "${sudo}apt-get install python3 python3-venv python3-pip" "the Python lane"
else
  py=()
  python3 -c 'import ensurepip' 2>/dev/null || py+=(python3-venv)
  python3 -m pip --version >/dev/null 2>&1 || py+=(python3-pip)
  [ ${#py[@]} = 0 ] || optional "${sudo}apt-get install ${py[*]}" "the Python lane"
  python3 -c 'import matplotlib' 2>/dev/null ||
    optional "python3 -m pip install matplotlib" "the plots checked by tests/cpu/cli_plots.sh"
fi
if ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "deps: the CUDA toolkit (12.0 or newer; 13 tested) is required: install it from NVIDIA's packages" >&2
  exit 1
fi
