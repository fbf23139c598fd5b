#!/usr/bin/env bash
# tests/cpu/cli_deps.sh: scripts/deps.sh installs only what the build requires. Run as root with
# the libcurl headers hidden (a private mount namespace) and python3 without venv or pip (a stub),
# it must not call apt-get for those optional parts, must print the command that adds each,
# and must succeed. Exit 77 (skipped) where it cannot hide the headers (not root, no unshare).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
if [ "${1:-}" != --inside ]; then
  if [ "$(id -u)" != 0 ] || ! unshare -m --propagation private true 2>/dev/null; then
    echo "cli_deps: SKIPPED: hiding the libcurl headers needs root and unshare (a private mount namespace)"
    exit 77
  fi
  exec unshare -m --propagation private bash "${BASH_SOURCE[0]}" --inside
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/sd-deps.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok   $1"; }
fail() { echo "FAIL $1"; fails=$((fails + 1)); }

mkdir -p "$tmp/empty" "$tmp/bin"
for d in /usr/include/curl /usr/include/*/curl; do
  if [ -d "$d" ]; then mount --bind "$tmp/empty" "$d"; fi
done
if ls /usr/include/curl/curl.h /usr/include/*/curl/curl.h >/dev/null 2>&1; then
  echo "cli_deps: FAILED: the libcurl headers are still visible"
  exit 1
fi
# apt-get records its arguments; python3 has neither ensurepip nor pip.
printf '#!/bin/sh\necho "$*" >>"%s/apt-get.calls"\n' "$tmp" >"$tmp/bin/apt-get"
printf '#!/bin/sh\nexit 1\n' >"$tmp/bin/python3"
chmod +x "$tmp/bin/apt-get" "$tmp/bin/python3"
touch "$tmp/apt-get.calls"

rc=0
PATH=$tmp/bin:$PATH SD_EXTRA_PREFIX='' bash "$repo/scripts/deps.sh" >"$tmp/out" 2>&1 || rc=$?
cat "$tmp/out"
[ $rc = 0 ] && ok "deps.sh succeeds without the optional parts" || fail "deps.sh exit $rc"
if grep -qE 'libcurl|python3-(venv|pip)' "$tmp/apt-get.calls"; then
  fail "apt-get was called for an optional part: $(tr '\n' ';' <"$tmp/apt-get.calls")"
else
  ok "no apt-get for libcurl, python3-venv or python3-pip"
fi
grep -q '^deps: optional: apt-get install libcurl4-openssl-dev (the agent lowering backend)$' "$tmp/out" &&
  ok "prints the libcurl command" || fail "no 'optional: apt-get install libcurl4-openssl-dev' line"
grep -q '^deps: optional: apt-get install python3-venv python3-pip (the Python lane)$' "$tmp/out" &&
  ok "prints the Python lane's command" || fail "no 'optional: apt-get install python3-venv python3-pip' line"
echo "cli_deps: $fails failed"
[ $fails = 0 ]
