#!/usr/bin/env bash
# scripts/isolated-lane.sh: the CPU lane of a built tree as on a fresh offline machine, and the
# proof that tests write nothing outside the build tree and the temporary folders they remove:
# HOME is an empty folder and, where unshare can (root), the network is cut and /tmp is a
# private empty tmpfs. Fails when the lane fails or leaves anything in HOME or /tmp. Without
# unshare the network stays and /tmp is shared: only the names tests use there (sd-*, sd_*,
# pytest-of-*) are compared, since other programs may be writing to /tmp meanwhile.
# Usage: isolated-lane.sh <build-dir> [ctest arguments...]   (JOBS: ctest -j, default 2)
set -euo pipefail
if [ "${1:-}" = --inside ]; then
  inside=$2
  shift 2
else
  inside=
fi
build=$(cd "${1:?usage: isolated-lane.sh <build-dir> [ctest arguments...]}" && pwd)
shift
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

if [ -z "$inside" ]; then
  if [ "$(id -u)" = 0 ] && unshare -n -m --propagation private true 2>/dev/null; then
    exec unshare -n -m --propagation private bash "${BASH_SOURCE[0]}" --inside namespace "$build" "$@"
  fi
  echo "isolated lane: cannot unshare (needs root): the network stays and /tmp is shared"
  inside=shared
fi

private_tmp=
under_tmp() { case "$(cd "$1" && pwd -P)/" in /tmp/*) return 0 ;; esac; return 1; }
if [ "$inside" = namespace ]; then
  ip link set lo up 2>/dev/null || true # tests serve on 127.0.0.1 (the agent's replay server)
  # A private /tmp would hide a tree (or its build, or the shared matrices beside it) that
  # lives under /tmp, as a CI clone may.
  if under_tmp "$build" || under_tmp "$root" || under_tmp "$root/.."; then
    echo "isolated lane: the tree is under /tmp: comparing the tests' names in the shared one"
  elif mount -t tmpfs -o mode=1777 sd-lane-tmp /tmp; then
    private_tmp=1
  else
    echo "isolated lane: could not mount a private /tmp: comparing the tests' names in the shared one"
  fi
fi
tmp_names() { ls -A /tmp | grep -E '^(sd[-_]|pytest-of-)' || true; }
[ -n "$private_tmp" ] || tmp_names >"$build/isolated-tmp-before.txt"

# An empty HOME and none of the variables that would send caches elsewhere, so that anything
# a test writes to the user's folders shows. Tools installed in the user's HOME keep their
# own: pyenv's python3, and rustup's rustc (pip runs `rustc --version` for its user agent;
# with an empty HOME rustup would create ~/.rustup).
for tool in PYENV_ROOT:.pyenv RUSTUP_HOME:.rustup CARGO_HOME:.cargo; do
  var=${tool%%:*} dir=${HOME:-/nonexistent}/${tool#*:}
  if [ -z "${!var:-}" ] && [ -d "$dir" ]; then export "$var=$dir"; fi
done
home=$build/isolated-home
rm -rf "$home"
mkdir -p "$home"
export HOME=$home
unset SPARSEDITTO_CACHE XDG_CACHE_HOME XDG_CONFIG_HOME XDG_DATA_HOME PIP_CACHE_DIR MPLCONFIGDIR TMPDIR

echo "isolated lane: HOME=$home; network $([ "$inside" = namespace ] && echo cut || echo kept);" \
     "/tmp $([ -n "$private_tmp" ] && echo 'private and empty' || echo shared)"
rc=0
(cd "$build" && ctest -L cpu --no-tests=error --output-on-failure -j "${JOBS:-2}" --output-junit isolated-lane.xml "$@") || rc=$?
bash "$root/scripts/lane-skips.sh" "$build/isolated-lane.xml" || rc=1

left_home=$(cd "$home" && find . -mindepth 1 -maxdepth 3 | sed 's|^\./||' | sort | head -n 20)
if [ -n "$private_tmp" ]; then
  left_tmp=$(ls -A /tmp)
else
  left_tmp=$(tmp_names | comm -13 "$build/isolated-tmp-before.txt" -)
  rm -f "$build/isolated-tmp-before.txt"
fi
rm -rf "$home"
if [ -n "$left_home" ]; then
  echo "isolated lane: FAILED: the tests wrote into HOME:" $left_home
  rc=1
fi
if [ -n "$left_tmp" ]; then
  echo "isolated lane: FAILED: the tests left in /tmp:" $left_tmp
  rc=1
fi
[ $rc != 0 ] || echo "isolated lane: passed; nothing left in HOME or /tmp"
exit $rc
