#!/usr/bin/env bash
# scripts/deps.sh: checks what the build needs and installs what is missing (apt-get when
# run as root; otherwise prints the exact command). The CUDA 13 toolkit must already be
# installed (it is not a Debian package of the distribution).
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
# libcurl headers: the agent lowering backend's HTTP client (src/lower/agent). Optional:
# without them the library builds and `--lowering agent` says it was built without libcurl.
if [ ! -f /usr/include/curl/curl.h ] && ! ls /usr/include/*/curl/curl.h >/dev/null 2>&1 &&
   [ ! -f "${SD_EXTRA_PREFIX:-/nonexistent}/usr/include/x86_64-linux-gnu/curl/curl.h" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "deps: installing libcurl4-openssl-dev (agent lowering backend)"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libcurl4-openssl-dev >/dev/null; } ||
      echo "deps: could not install libcurl4-openssl-dev: the agent backend is built without its HTTP client" >&2
  else
    echo "deps: the agent backend is built without its HTTP client; run: sudo apt-get install -y libcurl4-openssl-dev" >&2
  fi
fi
# The Python lane (tests/cpu/cli_python.sh) needs python3 with venv (ensurepip) and pip;
# without them that lane is skipped, so this never fails the build.
optional=()
if ! command -v python3 >/dev/null; then
  optional+=(python3-venv python3-pip)
else
  python3 -c 'import ensurepip' 2>/dev/null || optional+=(python3-venv)
  python3 -m pip --version >/dev/null 2>&1 || optional+=(python3-pip)
fi
if [ ${#optional[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "deps: installing ${optional[*]} (Python lane)"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${optional[@]}" >/dev/null; } ||
      echo "deps: could not install ${optional[*]}: the Python lane will be skipped" >&2
  else
    echo "deps: the Python lane is skipped without ${optional[*]}; run: sudo apt-get install -y ${optional[*]}" >&2
  fi
fi
if ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "deps: the CUDA toolkit (12.0 or newer; 13 tested) is required: install it from NVIDIA's packages" >&2
  exit 1
fi
