#!/usr/bin/env bash
# scripts/gpu-dev/gpu-lane.sh: builds SparseDitto on the GPU machine and runs the GPU lane
# (ctest -L gpu), a cuSPARSE baseline run per operator on a real matrix, and optionally
# the CPU lane, a compute-sanitizer pass and the baseline benchmark. Everything it prints
# also goes to $OUT/gpu-lane.log; results go to $OUT (at most 8 files, one folder deep).
#
# usage: scripts/gpu-dev/gpu-lane.sh [--cpu] [--sanitize] [--bench SECONDS] [--bench-set quick|full]
#                            [--jobs N] [--build DIR]
#   --cpu            also run the CPU lane (ctest -L cpu) into $OUT/ctest-cpu.log
#   --sanitize       run the runtime test under compute-sanitizer (memcheck) as well
#   --bench S        run bench/bench_baseline with a time limit of S seconds into
#                    $OUT/bench/bench_baseline.{json,md}
#   --bench-set X    the benchmark's set (default quick)
#   --compile-bench S  run bench/bench_compile (sd_compile end to end against cuSPARSE)
#                    on the quick set with a time limit of S seconds into
#                    $OUT/bench/bench_compile.{json,md}
#   --compile-set X  bench_compile's set (default quick; paper60, real or a list file)
#   --compile-args "A B"  extra bench_compile arguments (e.g. "--from 20 --max-nnz 2e8")
#   --no-baseline-cli  skip the `sparseditto baseline` run on a real matrix
#   --tests REGEX    run only the GPU tests whose names match (ctest -R)
#   --profile        `sparseditto profile` (Nsight Compute, ours vs cuSPARSE) on one generated
#                    SpMV and one SpMM task into $OUT/profile.txt
#   --pack           pack everything under $OUT but gpu-lane.log into $OUT/results.tgz
#                    (the device tool returns at most 8 files): after every --run command
#                    (so a call cut short still returns what finished) and at the end
#   --no-tests       build only: skip ctest -L gpu (for a call that only runs benchmarks)
#   --run "CMD"      after everything else, run CMD (bash, from the repository root, with
#                    OUT=$OUT and SD_LANE_LEFT (its seconds before the deadline, so a benchmark
#                    can pass a --time-limit and end cleanly) exported) into $OUT/run-N.log;
#                    repeatable, in order
#   --deadline S     seconds after the start past which no --run command starts; each one
#                    runs under `timeout` for what is left (default 560: a device call
#                    is limited to 600 s)
#   --pip            build the Python wheel (pip wheel --no-build-isolation; scikit-build-core
#                    from carried wheels in .whl/ when the machine has none), install it into a
#                    private folder and run python/tests/test_gpu_torch.py against the installed
#                    package into $OUT/pip.txt
# Expects: CUDA toolkit (nvcc, NVRTC, cuSPARSE), CMake, a C compiler. Missing xxhash (and
# libcurl, for the agent backend) headers are taken from carried .deb files in .deb/ of the checkout (dpkg -x into
# /tmp/sdprefix, configured with -DSD_EXTRA_PREFIX). Matrices: ../shared/matrices, else
# ./shared/matrices in the checkout (CMake picks whichever exists).
# Exit status: 0 when the build and every GPU test passed (or were skipped), 1 otherwise.
set -uo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-$root/out}
build=$root/build-gpu
jobs=$(nproc 2>/dev/null || echo 4)
run_cpu=0
sanitize=0
bench_s=0
bench_set=quick
compile_s=0
compile_set=quick
compile_args=""
baseline_cli=1
tests_re=""
run_profile=0
run_pip=0
pack=0
run_tests=1
runs=()
deadline=560
while [ $# -gt 0 ]; do
  case "$1" in
    --cpu) run_cpu=1 ;;
    --sanitize) sanitize=1 ;;
    --bench) bench_s=${2:?--bench needs seconds}; shift ;;
    --bench-set) bench_set=${2:?--bench-set needs a name}; shift ;;
    --compile-bench) compile_s=${2:?--compile-bench needs seconds}; shift ;;
    --compile-set) compile_set=${2:?--compile-set needs a name}; shift ;;
    --compile-args) compile_args=${2?--compile-args needs a string}; shift ;;
    --no-baseline-cli) baseline_cli=0 ;;
    --tests) tests_re=${2:?--tests needs a regex}; shift ;;
    --profile) run_profile=1 ;;
    --pip) run_pip=1 ;;
    --pack) pack=1 ;;
    --no-tests) run_tests=0 ;;
    --run) runs+=("${2:?--run needs a command}"); shift ;;
    --deadline) deadline=${2:?--deadline needs seconds}; shift ;;
    --jobs) jobs=${2:?}; shift ;;
    --build) build=${2:?}; shift ;;
    -h|--help) sed -n '2,40p' "$0"; exit 0 ;;
    *) echo "gpu-lane: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
mkdir -p "$out"
log=$out/gpu-lane.log
: >"$log"
exec > >(tee -a "$log") 2>&1
t0=$(date +%s)
step() { echo; echo "=== [$(( $(date +%s) - t0 )) s] $*"; }
status=0

step "machine"
uname -srm
nvidia-smi -L 2>&1 || echo "nvidia-smi: not available"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv 2>&1 || true
export PATH=/usr/local/cuda/bin:$PATH
nvcc --version 2>&1 | tail -2 || echo "nvcc: not found"
cmake --version | head -1
cc --version | head -1

step "dependencies"
extra=()
have_curl_h=0
{ [ -f /usr/include/curl/curl.h ] || ls /usr/include/*/curl/curl.h >/dev/null 2>&1; } && have_curl_h=1
if [ ! -f /usr/include/xxhash.h ] || [ "$have_curl_h" = 0 ]; then
  prefix=/tmp/sdprefix
  if ls "$root"/.deb/*.deb >/dev/null 2>&1; then
    mkdir -p "$prefix"
    for f in "$root"/.deb/*.deb; do
      echo "unpacking $(basename "$f") into $prefix"
      dpkg -x "$f" "$prefix" || { echo "gpu-lane: dpkg -x $f failed"; exit 1; }
    done
    extra+=("-DSD_EXTRA_PREFIX=$prefix")
  elif [ ! -f /usr/include/xxhash.h ]; then
    echo "gpu-lane: xxhash.h is missing and there is no .deb/ folder with libxxhash-dev in the checkout"
    exit 1
  fi
  # libcurl4-openssl-dev (agent backend; optional) carries headers only usable here: its
  # libcurl.so link points at a runtime the prefix lacks, so CMake links the system's
  # libcurl.so.4 (Ubuntu 24.04: libcurl4t64 8.5; the carried headers may be older, e.g.
  # Debian 12's 7.88: the easy API the client uses is the same).
  if [ "$have_curl_h" = 0 ] && ! ls "$prefix"/usr/include/*/curl/curl.h >/dev/null 2>&1; then
    echo "gpu-lane: no libcurl headers (carry libcurl4-openssl-dev in .deb/): the agent backend builds without its HTTP client"
  fi
fi
if [ -d "$root/../shared/matrices" ]; then
  echo "matrices: $root/../shared/matrices"
  # Run from a snapshot (.snap/) whose matrices travelled as the checkout's shared/: relative
  # paths like shared/matrices/paper60.tsv in --run commands still work.
  [ -e "$root/shared" ] || ln -s ../shared "$root/shared"
elif [ -d "$root/shared/matrices" ]; then
  echo "matrices: $root/shared/matrices ($(ls "$root/shared/matrices/suitesparse" 2>/dev/null | wc -l) files)"
else
  echo "matrices: none found (tests that need them say so and skip that part)"
fi

step "configure ($build)"
if ! cmake -S "$root" -B "$build" -G "Unix Makefiles" -DCMAKE_BUILD_TYPE=Release "${extra[@]}" \
    >"$out/build.log" 2>&1; then
  tail -40 "$out/build.log"; echo "gpu-lane: configure FAILED (full log: build.log)"; exit 1
fi
step "build the GPU lane's own targets (-j$jobs)"
if ! cmake --build "$build" -j "$jobs" --target sparseditto_cli gpu_test_runtime gpu_test_baseline \
    bench_baseline >>"$out/build.log" 2>&1; then
  grep -E "error|Error" "$out/build.log" | head -40
  echo "gpu-lane: build of the GPU lane FAILED (full log: build.log)"; exit 1
fi
echo "GPU-lane targets built"
step "build everything else (keep going past failures)"
if ! cmake --build "$build" -j "$jobs" -- -k >>"$out/build.log" 2>&1; then
  status=1
  echo "gpu-lane: the full build FAILED; first errors (full log: build.log):"
  grep -E "error|undefined reference" "$out/build.log" | sort -u | head -25
  echo "gpu-lane: continuing with the GPU tests that built"
else
  echo "build ok"
fi

# Everything under $OUT but this log and the archive, into $OUT/results.tgz (kept in place).
# The archive is written outside $OUT first: written in place, the find could list the
# half-written archive itself and tar would fail ("file changed as we read it").
pack_now() {
  local part
  part=$(mktemp) || return 1 # in $TMPDIR or /tmp
  ( cd "$out" && find . -mindepth 1 -maxdepth 1 ! -name gpu-lane.log ! -name results.tgz -printf '%P\n' |
      tar czf "$part" -T - ) && mv "$part" "$out/results.tgz" || { rm -f "$part"; return 1; }
}

if [ "$run_tests" = 1 ]; then
step "GPU lane: ctest -L gpu"
( cd "$build" && ctest -L gpu ${tests_re:+-R "$tests_re"} -V --timeout 900 ) 2>&1 | tee "$out/ctest.log"
rc=${PIPESTATUS[0]}
if [ "$rc" -ne 0 ]; then status=1; echo "gpu-lane: GPU tests FAILED (rc $rc)"; fi
if grep -q "SKIPPED" "$out/ctest.log"; then
  echo "gpu-lane: some GPU tests were SKIPPED (no usable device?):"
  grep -B1 -A1 "SKIPPED" "$out/ctest.log" | head -20
fi
fi

if [ "$run_cpu" = 1 ]; then
  step "CPU lane: ctest -L cpu"
  ( cd "$build" && ctest -L cpu --output-on-failure -j "$jobs" ) >"$out/ctest-cpu.log" 2>&1
  rc=$?
  tail -15 "$out/ctest-cpu.log"
  if [ "$rc" -ne 0 ]; then status=1; echo "gpu-lane: CPU tests FAILED (rc $rc)"; fi
fi

if [ "$sanitize" = 1 ]; then
  step "compute-sanitizer memcheck on gpu_test_runtime (the deliberate fault test is skipped)"
  if command -v compute-sanitizer >/dev/null; then
    # API errors (the tests provoke some on purpose) are not failures; memory errors are.
    ( cd "$build" && SD_TEST_NO_FAULT=1 compute-sanitizer --tool memcheck ./gpu_test_runtime ) \
        >"$out/sanitizer.log" 2>&1
    rc=$?
    tail -25 "$out/sanitizer.log"
    if [ "$rc" -ne 0 ] || grep -qE "Invalid __(global|shared|local)__|Misaligned|out of bounds|Malformed|Hardware exception" "$out/sanitizer.log"; then
      status=1; echo "gpu-lane: compute-sanitizer found memory errors or the test failed (rc $rc; sanitizer.log)"
    else
      echo "compute-sanitizer: no memory errors"
    fi
  else
    echo "compute-sanitizer not found"
  fi
fi

if [ "$baseline_cli" = 1 ]; then
step "cuSPARSE baseline on a real matrix (sparseditto baseline)"
mat=""
for d in "$root/../shared/matrices" "$root/shared/matrices"; do
  for m in bcsstk13 wiki-Vote Chem97Zt; do
    [ -z "$mat" ] && [ -f "$d/suitesparse/$m.mtx.gz" ] && mat="$d/suitesparse/$m.mtx.gz"
  done
done
cli=$build/sparseditto
if [ -n "$mat" ]; then
  "$cli" baseline "$mat" --op spmv || status=1
  {
    echo "["
    "$cli" baseline "$mat" --op spmv --json || status=1
    echo ","
    "$cli" baseline "$mat" --op spmm -K 32 --json || status=1
    echo ","
    "$cli" baseline "$mat" --op spgemm --json || status=1
    echo "]"
  } >"$out/baseline.json"
  echo "wrote baseline.json (spmv, spmm K=32, spgemm on $(basename "$mat"))"
else
  "$cli" baseline --gen "uniform:rows=100000,deg=10" --op spmv || status=1
  "$cli" baseline --gen "uniform:rows=100000,deg=10" --op spmv --json >"$out/baseline.json" || status=1
fi

fi

if [ "$compile_s" != 0 ]; then
  step "benchmark: bench_compile --set $compile_set --time-limit $compile_s $compile_args"
  mkdir -p "$out/bench"
  # shellcheck disable=SC2086 # compile_args is a list of words on purpose
  "$build/bench_compile" --out "$out/bench" --set "$compile_set" --time-limit "$compile_s" $compile_args
  rc=$?
  [ "$rc" -ne 0 ] && status=1
  echo "bench_compile exit $rc (0: every attempted task compiled)"
fi

if [ "$bench_s" != 0 ]; then
  step "benchmark: bench_baseline --set $bench_set --time-limit $bench_s"
  mkdir -p "$out/bench"
  "$build/bench_baseline" --out "$out/bench" --set "$bench_set" --time-limit "$bench_s"
  rc=$?
  echo "benchmark exit $rc (0: every attempted task has a valid winner)"
fi

if [ "$run_profile" = 1 ]; then
  step "sparseditto profile (Nsight Compute) on one SpMV and one SpMM task"
  : >"$out/profile.txt"
  for task in "--gen uniform:rows=200000,deg=12 --op spmv" \
              "--gen powerlaw:rows=200000,deg=12,alpha=1.9,max=20000 --op spmm -K 32"; do
    # shellcheck disable=SC2086 # task is a list of words on purpose
    SPARSEDITTO_CACHE=${SPARSEDITTO_CACHE:-/tmp/sd-lane-cache} timeout 300 "$build/sparseditto" profile $task \
        >>"$out/profile.txt" 2>&1 || { status=1; echo "gpu-lane: profile FAILED for $task"; }
  done
  cat "$out/profile.txt"
fi

if [ "$run_pip" = 1 ]; then
  step "Python wheel: build, install into a private folder, GPU tests against the installed package"
  venv=/tmp/sd-lane-venv wheels=/tmp/sd-lane-wheel target=/tmp/sd-lane-pyt
  rm -rf "$venv" "$wheels" "$target"
  python3 -m venv "$venv" && { "$venv/bin/pip" install -q scikit-build-core >/dev/null 2>&1 ||
    "$venv/bin/pip" install -q --no-index --find-links "$root/.whl" scikit-build-core; }
  defs=()
  [ -n "${prefix:-}" ] && [ -d "$prefix" ] && defs+=("-Ccmake.define.SD_EXTRA_PREFIX=$prefix")
  if ( cd "$root" && "$venv/bin/pip" wheel -q --no-index --no-deps --no-build-isolation "${defs[@]}" -w "$wheels" . ) \
      >"$out/pip.txt" 2>&1 &&
     python3 -m pip install -q --no-index --no-deps --target "$target" "$wheels"/*.whl >>"$out/pip.txt" 2>&1; then
    ( cd /tmp && PYTHONPATH=$target SPARSEDITTO_CACHE=/tmp/sd-lane-pipcache \
        python3 -c "import sparseditto; print('installed package:', sparseditto.__file__)" &&
      PYTHONPATH=$target SPARSEDITTO_CACHE=/tmp/sd-lane-pipcache python3 "$root/python/tests/test_gpu_torch.py" ) \
        >>"$out/pip.txt" 2>&1 || { status=1; echo "gpu-lane: the installed package FAILED its GPU tests"; }
  else
    status=1; echo "gpu-lane: building or installing the wheel FAILED"
  fi
  grep -E "installed package|PASS|FAIL|passed|rror" "$out/pip.txt" | tail -12
fi

n_run=0
for cmd in "${runs[@]}"; do
  n_run=$((n_run + 1))
  left=$((deadline - ($(date +%s) - t0)))
  if [ "$left" -le 5 ]; then
    echo "gpu-lane: --run $n_run not started (deadline ${deadline} s reached): $cmd" | tee -a "$out/runs.txt"
    continue
  fi
  step "run $n_run (at most $left s): $cmd"
  ( cd "$root" && OUT=$out SD_LANE_LEFT=$left timeout "$left" bash -c "$cmd" ) >"$out/run-$n_run.log" 2>&1
  rc=$?
  tail -5 "$out/run-$n_run.log"
  echo "run $n_run exit $rc after $(( $(date +%s) - t0 )) s: $cmd" | tee -a "$out/runs.txt"
  [ "$rc" -ne 0 ] && status=1
  [ "$pack" = 1 ] && pack_now
done

step "done"
echo "files in $out:"; ls -la "$out" "$out/bench" 2>/dev/null
if [ "$status" = 0 ]; then echo "gpu-lane: PASS"; else echo "gpu-lane: FAIL"; fi
if [ "$pack" = 1 ]; then
  # Everything but this log into one archive, then only the archive and the log stay.
  pack_now && ( cd "$out" && find . -mindepth 1 -maxdepth 1 ! -name gpu-lane.log ! -name results.tgz \
      -exec rm -rf {} + ) && echo "packed into $out/results.tgz" || echo "gpu-lane: packing $out FAILED"
fi
exit $status
