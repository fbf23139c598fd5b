#!/usr/bin/env bash
# tests/cpu/cli_bench.sh: `sparseditto bench` and `sparseditto profile` without a GPU:
# argument errors exit 2 with a message, a missing ncu or device exits 3 with a clear
# message, --help works. (The runs themselves need a GPU: scripts/gpu-dev/gpu-lane.sh
# runs them on the GPU machine.)
# Usage (ctest): bash cli_bench.sh <sparseditto-binary> <matrices-dir> <tests/data-dir>
set -uo pipefail
sd=${1:?usage: cli_bench.sh <sparseditto-binary> <matrices-dir> <tests/data-dir>}
data=${3:?}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sd-clibench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "cli_bench: FAIL: $*"; exit 1; }
# expect CODE PATTERN ARGS...: the exit code and a pattern of stderr.
expect() {
  local code=$1 pat=$2; shift 2
  "$sd" "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  [ "$rc" = "$code" ] || fail "'$*' exited $rc, expected $code; stderr: $(cat "$tmp/err")"
  grep -q -- "$pat" "$tmp/err" || fail "'$*': stderr lacks '$pat': $(cat "$tmp/err")"
}

"$sd" --help | grep -q '^  bench ' || fail "bench missing from the command table"
"$sd" --help | grep -q '^  profile ' || fail "profile missing from the command table"
"$sd" bench --help | grep -q -- '--time-limit' || fail "bench --help"
"$sd" bench --help | grep -q -- '--deterministic' || fail "bench --help lacks --deterministic"
"$sd" profile --help >"$tmp/help" || fail "profile --help"
grep -q -- '--op' "$tmp/help" || fail "profile --help lacks --op"
grep -q -- '--exec' "$tmp/help" && fail "profile --help shows the hidden --exec"
grep -q -- '--no-vendor' "$tmp/help" || fail "profile --help lacks --no-vendor"
grep -q -- '--warm' "$tmp/help" || fail "profile --help lacks --warm"

# bench: usage errors.
expect 2 "unknown item 'bogus'" bench --set quick,bogus
expect 2 "unknown item 'spmm7'" bench --ops spmv,spmm7
expect 2 "spmm128" bench --ops spmm8,spmm12
expect 2 "not an integer" bench --budget 0
expect 2 "not an integer" bench --time-limit soon
expect 2 "unknown option" bench --frobnicate
expect 2 "unexpected argument" bench extra
expect 2 "no such list file" bench --set /nonexistent/mine.txt

# bench --set LIST-FILE: read and checked before the device is touched (exit 1 naming the
# line on any machine).
mkdir -p "$tmp/res"
printf 'stencil2d:n=8\nknn:n=100,k=4,dim=9\n' >"$tmp/bad.txt"
expect 1 "line 2" bench --set "$tmp/bad.txt" --ops spmv --out "$tmp/res"
printf 'stencil2d:n=8\nnosuchfamily:n=3\n' >"$tmp/bad2.txt"
expect 1 "nosuchfamily" bench --set "$tmp/bad2.txt" --ops spmv --out "$tmp/res"
# Sizes written with an exponent are integers when they name one exactly ("2e7" as the docs
# write them): accepted, so the run goes on to the list's error; "2.5e0" and "1e400" are not.
expect 1 "line 2" bench --set "$tmp/bad.txt" --ops spmv --out "$tmp/res" --max-nnz 2e7
expect 1 "line 2" bench --set "$tmp/bad.txt" --ops spmv --out "$tmp/res" --max-nnz 1.5E6
expect 2 "'2.5e0' is not an integer" bench --max-nnz 2.5e0
expect 2 "'1e400' is not an integer" bench --max-nnz 1e400
expect 2 "'0x10' is not an integer" bench --max-nnz 0x10
expect 2 "'1e-3' is not an integer" bench --budget 1e-3

# bench --out: a folder that cannot be made stops the run before any compile, naming it;
# a missing last component is created.
expect 1 "cannot create '$tmp/no/such'" bench --set quick --ops spmv --out "$tmp/no/such"
expect 1 "line 2" bench --set "$tmp/bad.txt" --ops spmv --out "$tmp/made"
[ -d "$tmp/made" ] || fail "bench --out did not create its folder"

# profile: usage errors.
expect 2 "FILE or --gen" profile --op spmv
expect 2 "FILE or --gen" profile "$data/small.mtx.gz" --gen stencil2d:n=8 --op spmv
expect 2 "is required" profile "$data/small.mtx.gz"
expect 2 "not spmv, spmm or spgemm" profile "$data/small.mtx.gz" --op spmx
expect 2 "spmm only" profile "$data/small.mtx.gz" --op spmv -K 8
expect 2 "not an integer" profile "$data/small.mtx.gz" --op spmm -K 0
expect 2 "not an integer" profile "$data/small.mtx.gz" --op spmv --runs 0
expect 2 "needs --variant" profile "$data/small.mtx.gz" --op spmv --exec cusparse

# profile: ncu missing → exit 3 naming it.
SPARSEDITTO_NCU=/nonexistent/ncu expect 3 "Nsight Compute is not usable" profile "$data/small.mtx.gz" --op spmv
SPARSEDITTO_NCU=/nonexistent/ncu expect 3 "Nsight Compute is not usable" profile "$data/small.mtx.gz" --op spgemm --no-vendor
echo "cli_bench: argument errors and a missing ncu are reported"

# Without a device (CPU lane): exit 3 with the cause. A fake ncu passes the version check.
printf '#!/bin/sh\necho "NVIDIA (R) Nsight Compute Command Line Profiler (fake)"\n' >"$tmp/ncu"
chmod +x "$tmp/ncu"
if "$sd" analyze "$data/small.mtx.gz" 2>/dev/null | grep -q 'no usable CUDA device'; then
  mkdir -p "$tmp/res"
  expect 3 "device" bench --ops spmv --out "$tmp/res"
  printf '# mine\nstencil2d:n=8\n%s/small.mtx.gz nnz=1e12\n' "$data" >"$tmp/good.txt"
  expect 3 "device" bench --set "$tmp/good.txt" --ops spmv --out "$tmp/res"
  SPARSEDITTO_NCU=$tmp/ncu expect 3 "device" profile "$data/small.mtx.gz" --op spmv
  SPARSEDITTO_NCU=$tmp/ncu expect 3 "device" profile --gen stencil2d:n=8 --op spmm -K 8 --exec ours
  echo "cli_bench: no device: bench and profile exit 3"
else
  echo "cli_bench: note: a device is present; the no-device checks were not run"
fi
echo "cli_bench: ok"
