#!/usr/bin/env bash
# tests/cpu/cli_wheel.sh: the driver-only wheel (scripts/build-wheel.sh driver), without a GPU:
#   - metadata: name, version = CMake's project(VERSION), Requires-Dist = numpy and the
#     NVIDIA wheels that python/sparseditto/_lib.py names (CUDA_LIBRARIES), tag py3-none-*;
#   - contents: libsparseditto.so, every module of python/sparseditto, the models;
#   - the library's dynamic section: NEEDED only the C runtime, zlib, OpenMP and the three
#     CUDA libraries; RUNPATH $ORIGIN/../nvidia/cu13/lib and no absolute path;
#   - the loader (ld.so --inhibit-cache hides the toolkit from ld.so.cache): NVIDIA's
#     libraries beside the package are found through RUNPATH, those elsewhere on sys.path
#     are preloaded, and without them the ImportError names the library and its wheel.
# Exit 77 (skipped, with the reason) when the wheel cannot be built: no python3 with pip,
# or python3 lacks scikit-build-core and no package index is reachable.
# Usage (ctest): bash cli_wheel.sh <sparseditto-binary> <matrices-dir> <tests/data-dir>
set -euo pipefail
cli=${1:?usage: cli_wheel.sh <sparseditto-binary> <matrices-dir> <tests/data-dir>}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bindir=$(cd "$(dirname "$cli")" && pwd)
start=$(date +%s)
skip() { echo "cli_wheel: SKIPPED: $*"; exit 77; }
fail() { echo "cli_wheel: FAILED: $*"; exit 1; }

command -v python3 >/dev/null || skip "python3 is not installed"
python3 -m pip --version >/dev/null 2>&1 || skip "python3 has no pip (Debian: apt-get install python3-pip)"
command -v readelf >/dev/null || skip "readelf is not installed (Debian: apt-get install binutils)"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sd-wheel.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export PIP_CACHE_DIR=${PIP_CACHE_DIR:-$bindir/pip-cache} PIP_DISABLE_PIP_VERSION_CHECK=1
if ! python3 -c "import scikit_build_core" >/dev/null 2>&1 &&
   ! python3 -m pip download -q --no-deps --retries 0 --timeout 15 -d "$tmp/probe" \
       "scikit-build-core>=0.11.2" >"$tmp/probe.log" 2>&1; then
  skip "python3 has no scikit-build-core and no package index is reachable (pip:" \
       "$( (grep -m1 '^ERROR' "$tmp/probe.log" || tail -n 1 "$tmp/probe.log") | sed 's/^ERROR: //'))"
fi

# The CMake build stays in the build tree (build-wheel-driver): incremental on later runs.
# The build's own prefix for headers the system lacks (gpu-lane.sh unpacks libxxhash-dev there).
if [ -z "${SD_EXTRA_PREFIX:-}" ] && [ -f "$bindir/CMakeCache.txt" ]; then
  SD_EXTRA_PREFIX=$(sed -n 's/^SD_EXTRA_PREFIX:[A-Z]*=//p' "$bindir/CMakeCache.txt")
  export SD_EXTRA_PREFIX
fi
whl=$(SD_WHEEL_BUILD_DIR=$bindir bash "$repo/scripts/build-wheel.sh" "$tmp/wheels" driver) ||
  fail "scripts/build-wheel.sh failed"
[ -f "$whl" ] || fail "scripts/build-wheel.sh printed no wheel ('$whl')"
echo "cli_wheel: built $(basename "$whl") in $(($(date +%s) - start)) s"
mkdir -p "$tmp/site"
python3 -c "import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])" "$whl" "$tmp/site"

# --- metadata and contents
python3 - "$repo" "$tmp/site" "$(basename "$whl")" <<'EOF'
import ast, email.parser, glob, os, re, sys
repo, site, name = sys.argv[1:4]
errors = []
version = re.search(r"project\(sparseditto VERSION ([0-9.]+)",
                    open(os.path.join(repo, "CMakeLists.txt")).read()).group(1)
info = os.path.join(site, f"sparseditto-{version}.dist-info")
if not os.path.isdir(info):
    sys.exit(f"cli_wheel: FAILED: no sparseditto-{version}.dist-info in {name} (CMake's VERSION)")
meta = email.parser.Parser().parsestr(open(os.path.join(info, "METADATA")).read())
if meta["Name"] != "sparseditto":
    errors.append(f"Name is {meta['Name']!r}")
if meta["Version"] != version:
    errors.append(f"Version is {meta['Version']!r}, CMake's project VERSION {version}")
# The run-time requirements (not those of an extra), by project name.
reqs = [r for r in meta.get_all("Requires-Dist") or [] if "extra ==" not in r]
names = {re.match(r"[A-Za-z0-9._-]+", r).group(0).lower() for r in reqs}
# The wheels _lib.py names in its errors (read without importing it: that loads the library).
tree = ast.parse(open(os.path.join(repo, "python/sparseditto/_lib.py")).read())
table = next(ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign)
             and any(getattr(t, "id", None) == "CUDA_LIBRARIES" for t in n.targets))
wanted = {pkg for _, _, pkg in table} | {"numpy"}
if names != wanted:
    errors.append(f"Requires-Dist names {sorted(names)}, expected {sorted(wanted)} "
                  "(numpy and _lib.CUDA_LIBRARIES' wheels)")
tags = [v for k, v in email.parser.Parser().parsestr(open(os.path.join(info, "WHEEL")).read()).items()
        if k == "Tag"]
if not tags or not all(t.startswith("py3-none-") for t in tags):
    errors.append(f"WHEEL tags {tags}, expected py3-none-<platform>")
need = ["sparseditto/libsparseditto.so"]
need += ["sparseditto/" + os.path.basename(p) for p in glob.glob(os.path.join(repo, "python/sparseditto/*.py"))]
need += ["sparseditto/models/" + os.path.basename(p) for p in glob.glob(os.path.join(repo, "models/*.json"))]
missing = [p for p in need if not os.path.isfile(os.path.join(site, p))]
if missing:
    errors.append(f"the wheel lacks {missing}")
for e in errors:
    print(f"cli_wheel: FAILED: {e}")
if errors:
    sys.exit(1)
print(f"cli_wheel: metadata ok: sparseditto {version}, tags {tags}, requires {sorted(reqs)}")
print(f"cli_wheel: contents ok: {len(need)} files (library, modules, models)")
EOF

# --- the library's dynamic section
so=$tmp/site/sparseditto/libsparseditto.so
readelf -d "$so" >"$tmp/dynamic"
needed=$(sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' "$tmp/dynamic")
allowed=" libc.so.6 libm.so.6 libdl.so.2 libpthread.so.0 librt.so.1 ld-linux-x86-64.so.2 libgcc_s.so.1 libz.so.1 libgomp.so.1 libnvrtc.so.13 libnvJitLink.so.13 libcusparse.so.12 "
for n in $needed; do
  case $allowed in *" $n "*) ;; *) fail "libsparseditto.so needs $n, which neither the driver nor the nvidia wheels provide (NEEDED: $(echo $needed))" ;; esac
done
for n in libnvrtc.so.13 libnvJitLink.so.13 libcusparse.so.12; do
  echo "$needed" | grep -qx "$n" || fail "libsparseditto.so does not need $n (NEEDED: $(echo $needed))"
done
grep -q '(RPATH)' "$tmp/dynamic" && fail "libsparseditto.so has a DT_RPATH (searched before LD_LIBRARY_PATH): $(grep '(RPATH)' "$tmp/dynamic")"
runpath=$(sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p' "$tmp/dynamic")
echo "$runpath" | tr ':' '\n' | grep -qx '$ORIGIN/../nvidia/cu13/lib' ||
  fail "RUNPATH is '$runpath', without \$ORIGIN/../nvidia/cu13/lib"
echo "$runpath" | tr ':' '\n' | grep -v '^\$ORIGIN' | grep -q . &&
  fail "RUNPATH '$runpath' holds a path outside the wheel (build tree or toolkit)"
glibc=$(readelf --dyn-syms -W "$so" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -n 1)
echo "cli_wheel: dynamic section ok: NEEDED $(echo $needed); RUNPATH $runpath; newest symbol $glibc"

# --- the loader, with the toolkit hidden from the dynamic loader
py=$(python3 -c "import sys; print(sys.executable)")
ldso=$(readelf -l "$py" | sed -n 's/.*Requesting program interpreter: \(.*\)\]/\1/p')
cudalib=
for d in "${CUDA_HOME:-/usr/local/cuda}/lib64" /usr/local/cuda/lib64; do
  [ -f "$d/libnvrtc.so.13" ] && [ -f "$d/libnvJitLink.so.13" ] && [ -f "$d/libcusparse.so.12" ] && { cudalib=$d; break; }
done
# Passes without them: the checks above are the wheel's; these are the loader's.
loader_skip() {
  echo "cli_wheel: loader checks not run: $*"
  echo "cli_wheel: passed in $(($(date +%s) - start)) s"
  exit 0
}
[ -n "$ldso" ] || loader_skip "no program interpreter in $py"
[ -n "$cudalib" ] || loader_skip "no CUDA 13 libraries in /usr/local/cuda/lib64 to stand in for the nvidia wheels"
# NVIDIA's wheels as pip lays them out (nvidia/cu13/lib), made of the toolkit's files.
mkdir -p "$tmp/site/nvidia/cu13/lib" "$tmp/other/nvidia/cu13/lib" "$tmp/alone"
for f in libnvrtc.so.13 libnvJitLink.so.13 libcusparse.so.12; do
  ln -s "$cudalib/$f" "$tmp/site/nvidia/cu13/lib/$f"
  ln -s "$cudalib/$f" "$tmp/other/nvidia/cu13/lib/$f"
done
cp -r "$tmp/site/sparseditto" "$tmp/alone/"
cat >"$tmp/probe.py" <<'EOF'
# Loads _lib.py by path (the package's __init__ needs numpy) and prints where each CUDA
# library came from, or the ImportError.
import importlib.util, sys
spec = importlib.util.spec_from_file_location("sd_lib", sys.argv[1])
m = importlib.util.module_from_spec(spec)
try:
    spec.loader.exec_module(m)
except ImportError as e:
    print("ImportError:", e)
    sys.exit(0)
for soname, path in m.cuda_library_paths().items():
    print(soname, path)
EOF
# python3 -S: no site-packages, so that python3's own nvidia wheels, if any, stay out of sight.
"$ldso" --inhibit-cache "$py" -S -c "import ctypes; ctypes.CDLL('libz.so.1'); ctypes.CDLL('libgomp.so.1')" >/dev/null 2>&1 ||
  loader_skip "libz or libgomp is outside the loader's system directories (found only through ld.so.cache)"
# 1. Beside the package: RUNPATH.
env -u SPARSEDITTO_LIBRARY "$ldso" --inhibit-cache "$py" -S "$tmp/probe.py" "$tmp/site/sparseditto/_lib.py" >"$tmp/beside" 2>&1
for f in libnvrtc.so.13 libnvJitLink.so.13 libcusparse.so.12; do
  grep -qx "$f $tmp/site/sparseditto/../nvidia/cu13/lib/$f" "$tmp/beside" ||
    fail "with the nvidia wheels beside the package, $f did not come from them through RUNPATH: $(cat "$tmp/beside")"
done
echo "cli_wheel: loader ok: the nvidia wheels beside the package, found through RUNPATH"
# 2. In another folder of sys.path: preloaded by _lib.py.
env -u SPARSEDITTO_LIBRARY PYTHONPATH="$tmp/other" "$ldso" --inhibit-cache "$py" -S "$tmp/probe.py" "$tmp/alone/sparseditto/_lib.py" >"$tmp/other.out" 2>&1
for f in libnvrtc.so.13 libnvJitLink.so.13 libcusparse.so.12; do
  grep -qx "$f $tmp/other/nvidia/cu13/lib/$f" "$tmp/other.out" ||
    fail "with the nvidia wheels in another sys.path folder, $f was not preloaded from them: $(cat "$tmp/other.out")"
done
echo "cli_wheel: loader ok: the nvidia wheels elsewhere on sys.path, preloaded"
# 3. Nowhere: the ImportError names the library and the wheel that provides it.
env -u SPARSEDITTO_LIBRARY "$ldso" --inhibit-cache "$py" -S "$tmp/probe.py" "$tmp/alone/sparseditto/_lib.py" >"$tmp/none" 2>&1
grep -q "^ImportError: .*needs libnvrtc.so.13 (NVRTC).*pip install nvidia-cuda-nvrtc" "$tmp/none" ||
  fail "without NVRTC anywhere, the error does not name libnvrtc.so.13 and nvidia-cuda-nvrtc: $(cat "$tmp/none")"
echo "cli_wheel: loader ok: without them, $(cut -c1-160 "$tmp/none")..."
echo "cli_wheel: passed in $(($(date +%s) - start)) s"
