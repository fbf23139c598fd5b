#!/usr/bin/env bash
# tests/cpu/cli_lane_report.sh: the lane's own machinery on a tiny ctest project:
#   - scripts/lane-skips.sh prints each skipped test with the reason it printed, and fails on
#     a skipped test that printed none;
#   - cmake/test_env.cmake (the fixture of every test) creates the private environment empty,
#     removes it, and fails naming the files a test left in its TMPDIR.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sd-lane-report.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok   $1"; }
fail() { echo "FAIL $1"; fails=$((fails + 1)); }

# 1. Skip reasons from ctest's JUnit report (a reason with XML's special characters).
mkdir -p "$tmp/p"
cat >"$tmp/p/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.24)
project(lane_report NONE)
enable_testing()
add_test(NAME t/pass COMMAND sh -c "echo fine")
add_test(NAME t/skip COMMAND sh -c "seq 1 3000; echo 't_skip: SKIPPED: no <device> & \"so\" on'; exit 77")
add_test(NAME t/mute COMMAND sh -c "echo nothing to say; exit 77")
set_tests_properties(t/pass t/skip t/mute PROPERTIES SKIP_RETURN_CODE 77)
EOF
cmake -S "$tmp/p" -B "$tmp/b" >"$tmp/cmake.log" 2>&1 || { cat "$tmp/cmake.log"; exit 1; }
(cd "$tmp/b" && ctest --output-junit all.xml >/dev/null && ctest -E mute --output-junit voiced.xml >/dev/null) ||
  fail "ctest of the tiny project"
rc=0
bash "$repo/scripts/lane-skips.sh" "$tmp/b/all.xml" >"$tmp/all.out" 2>&1 || rc=$?
cat "$tmp/all.out"
grep -qx 'SKIPPED t/skip: no <device> & "so" on' "$tmp/all.out" && ok "the reason a skipped test printed" ||
  fail "no 'SKIPPED t/skip: no <device> & \"so\" on' line"
grep -q '^SKIPPED t/mute: (no reason printed' "$tmp/all.out" && [ $rc = 1 ] &&
  ok "a skip without a reason fails" || fail "a skip without a reason: exit $rc"
! grep -q 't/pass' "$tmp/all.out" && ok "passed tests are not listed" || fail "a passed test listed"
bash "$repo/scripts/lane-skips.sh" "$tmp/b/voiced.xml" >/dev/null && ok "every skip with a reason: exit 0" ||
  fail "lane-skips.sh failed although every skip had a reason"
bash "$repo/scripts/lane-skips.sh" "$tmp/b/none.xml" >/dev/null 2>&1 && fail "a missing report accepted" ||
  ok "a missing report fails"

# 2. The tests' private environment.
env=$tmp/env
cmake -DACTION=setup -DDIR="$env" -P "$repo/cmake/test_env.cmake" >/dev/null &&
  [ -d "$env/cache" ] && [ -d "$env/tmp" ] && [ -z "$(ls -A "$env/tmp")" ] && ok "setup: an empty environment" ||
  fail "setup"
touch "$env/cache/kept.cubin"
cmake -DACTION=cleanup -DDIR="$env" -P "$repo/cmake/test_env.cmake" >/dev/null && [ ! -e "$env" ] &&
  ok "cleanup removes the caches" || fail "cleanup of a clean run"
cmake -DACTION=setup -DDIR="$env" -P "$repo/cmake/test_env.cmake" >/dev/null
touch "$env/tmp/left-behind.txt" "$env/tmp/.hidden"
if cmake -DACTION=cleanup -DDIR="$env" -P "$repo/cmake/test_env.cmake" >"$tmp/clean.out" 2>&1; then
  fail "cleanup accepted files left in TMPDIR"
elif grep -q "left-behind.txt" "$tmp/clean.out" && grep -q ".hidden" "$tmp/clean.out" && [ ! -e "$env" ]; then
  ok "cleanup fails naming what was left in TMPDIR, and removes it"
else
  fail "cleanup's message: $(cat "$tmp/clean.out")"
fi
echo "cli_lane_report: $fails failed"
[ $fails = 0 ]
