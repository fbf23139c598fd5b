#!/usr/bin/env bash
# tests/gpu/python_wheel.sh: the driver-only wheel on a GPU, in a clean venv, without the
# CUDA toolkit: builds it (scripts/build-wheel.sh driver), creates a venv without the
# system's site-packages, installs the wheel with pip --no-index --no-deps, and runs an
# SpMV compiled by the installed package against a numpy reference.
# NVIDIA's wheels and numpy cannot be downloaded here (no network), so they are linked in
# from the Python that builds the wheel (the torch venv's nvidia-cuda-nvrtc,
# nvidia-nvjitlink and nvidia-cusparse, laid out as pip would: site-packages/nvidia/cu13/lib).
# The toolkit is taken out of PATH and LD_LIBRARY_PATH; where the driver lies in the loader's
# system directories, the script runs under ld.so --inhibit-cache, which hides the toolkit
# from ld.so.cache too. Either way it checks that NVRTC, nvJitLink and cuSPARSE were loaded
# from the venv's nvidia folder.
# Usage (ctest): bash python_wheel.sh <build-dir> (the CMake build folder of the wheel goes there)
# Exit 77 (skipped, with the reason) without a CUDA device, scikit-build-core, numpy or
# NVIDIA's CUDA 13 wheels in that Python.
set -euo pipefail
bindir=$(cd "${1:?usage: python_wheel.sh <build-dir>}" && pwd)
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
py=${SD_PYTHON:-python3}
start=$(date +%s)
skip() { echo "python_wheel: SKIPPED: $*"; exit 77; }
fail() { echo "python_wheel: FAILED: $*"; exit 1; }

command -v "$py" >/dev/null || skip "$py is not installed"
"$py" - <<'EOF' || skip "no CUDA driver or device (libcuda.so.1: cuInit / cuDeviceGetCount)"
import ctypes, sys
try:
    cu = ctypes.CDLL("libcuda.so.1")
except OSError:
    sys.exit(1)
n = ctypes.c_int(0)
sys.exit(0 if cu.cuInit(0) == 0 and cu.cuDeviceGetCount(ctypes.byref(n)) == 0 and n.value > 0 else 1)
EOF
"$py" -c "import scikit_build_core" 2>/dev/null || skip "$py has no scikit-build-core (the wheel is built offline)"
numpy_dir=$("$py" -c "import numpy, os; print(os.path.dirname(numpy.__file__))" 2>/dev/null) ||
  skip "$py has no numpy to lend the venv"
nvidia_dir=$("$py" -c "
import os, nvidia
print(next(p for p in nvidia.__path__ if os.path.isdir(os.path.join(p, 'cu13', 'lib'))))" 2>/dev/null) ||
  skip "$py has no NVIDIA CUDA 13 wheels (site-packages/nvidia/cu13/lib) to lend the venv"
for f in libnvrtc.so.13 libnvrtc-builtins.so.13.0 libnvJitLink.so.13 libcusparse.so.12; do
  [ -f "$nvidia_dir/cu13/lib/$f" ] || skip "$nvidia_dir/cu13/lib has no $f (pip install nvidia-cuda-nvrtc nvidia-nvjitlink nvidia-cusparse)"
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/sd-python-wheel.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# The build's own prefix for headers the system lacks (gpu-lane.sh unpacks libxxhash-dev there).
if [ -z "${SD_EXTRA_PREFIX:-}" ] && [ -f "$bindir/CMakeCache.txt" ]; then
  SD_EXTRA_PREFIX=$(sed -n 's/^SD_EXTRA_PREFIX:[A-Z]*=//p' "$bindir/CMakeCache.txt")
  export SD_EXTRA_PREFIX
fi
whl=$(SD_PYTHON=$py SD_WHEEL_BUILD_DIR=$bindir bash "$repo/scripts/build-wheel.sh" "$tmp/wheels" driver) ||
  fail "scripts/build-wheel.sh failed"
echo "python_wheel: built $(basename "$whl") in $(($(date +%s) - start)) s"

# A venv of its own (no --system-site-packages); without ensurepip (Debian's python3 without
# python3-venv, uv's Pythons), one without pip, filled by $py's pip through --python.
if ! "$py" -m venv "$tmp/venv" >"$tmp/venv.log" 2>&1; then
  rm -rf "$tmp/venv"
  "$py" -m venv --without-pip "$tmp/venv" >>"$tmp/venv.log" 2>&1 ||
    skip "$py -m venv failed: $(tail -n 1 "$tmp/venv.log")"
fi
vpy=$tmp/venv/bin/python
if "$vpy" -m pip --version >/dev/null 2>&1; then
  pip=("$vpy" -m pip)
elif "$py" -m pip --version >/dev/null 2>&1; then
  pip=("$py" -m pip --python "$vpy")
else
  skip "no pip to install the wheel with (neither in the venv nor in $py)"
fi
site=$("$vpy" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
# What pip would have installed from the index, lent by the building Python.
ln -s "$nvidia_dir" "$site/nvidia"
ln -s "$numpy_dir" "$site/numpy"
[ -d "$numpy_dir.libs" ] && ln -s "$numpy_dir.libs" "$site/numpy.libs"
PIP_DISABLE_PIP_VERSION_CHECK=1 "${pip[@]}" install -q --no-index --no-deps "$whl" >"$tmp/pip.log" 2>&1 ||
  fail "pip install of the wheel failed: $(tail -n 5 "$tmp/pip.log")"

# No toolkit in sight: the folders holding nvcc leave PATH, those holding NVRTC, nvJitLink
# or cuSPARSE leave LD_LIBRARY_PATH (the driver's own, e.g. cuda/compat, stay).
# <list> <file...>: the list's folders that hold none of the files.
without() {
  local list=$1 d f keep
  shift
  tr ':' '\n' <<<"$list" | while IFS= read -r d; do
    [ -n "$d" ] || continue
    keep=1
    for f; do [ -e "$d/$f" ] && keep=0; done
    [ "$keep" = 0 ] || echo "$d"
  done | paste -sd: -
}
export PATH=$(without "$PATH" nvcc)
export LD_LIBRARY_PATH=$(without "${LD_LIBRARY_PATH:-}" libnvrtc.so.13 libnvJitLink.so.13 libcusparse.so.12)
[ -n "$LD_LIBRARY_PATH" ] || unset LD_LIBRARY_PATH
unset SPARSEDITTO_LIBRARY PYTHONPATH CUDA_HOME CUDA_PATH
export SPARSEDITTO_CACHE=$tmp/cache PYTHONDONTWRITEBYTECODE=1  # the search runs NVRTC
ldso=$(readelf -l "$(readlink -f "$vpy")" 2>/dev/null | sed -n 's/.*Requesting program interpreter: \(.*\)\]/\1/p')
run=("$vpy")
if [ -n "$ldso" ] && "$ldso" --inhibit-cache "$vpy" -c "
import ctypes, numpy
ctypes.CDLL('libcuda.so.1'); ctypes.CDLL('libz.so.1'); ctypes.CDLL('libgomp.so.1')" >/dev/null 2>&1; then
  run=("$ldso" --inhibit-cache "$vpy")
  echo "python_wheel: running under $ldso --inhibit-cache (ld.so.cache, and the toolkit in it, unused)"
else
  echo "python_wheel: libcuda.so.1, libz or libgomp is found only through ld.so.cache, which may" \
       "list the toolkit too: running normally (RUNPATH comes first); the check below says" \
       "where each library came from"
fi

cd "$tmp"
"${run[@]}" - "$repo/examples/data/poisson2d_32.mtx" "$site" <<'EOF'
import ctypes, os, sys
import numpy as np
import sparseditto as sd

mtx, site = sys.argv[1], sys.argv[2]
print("python_wheel: sparseditto", sd.__file__, "library", sd._lib.library_path)
if not os.path.realpath(sd._lib.library_path).startswith(os.path.realpath(site) + os.sep):
    sys.exit(f"python_wheel: FAILED: the library {sd._lib.library_path} is not the installed wheel's")

# NVRTC, nvJitLink and cuSPARSE must be the venv's nvidia wheels': as the loader opened them,
# and as mapped (realpath), never the toolkit.
want = os.path.realpath(os.path.join(site, "nvidia", "cu13", "lib"))
def check_loaded(when):
    bad = []
    for soname, path in sd._lib.cuda_library_paths().items():
        print(f"python_wheel: {when}: {soname} opened as {path}")
        if path is None or os.path.dirname(os.path.realpath(path)) != want:
            bad.append(f"{soname} from {path}")
    maps = {line.split()[-1] for line in open("/proc/self/maps") if len(line.split()) >= 6}
    for m in sorted(maps):
        base = os.path.basename(m)
        if base.startswith(("libnvrtc", "libnvJitLink", "libcusparse")):
            print(f"python_wheel: {when}: mapped {m}")
            if os.path.dirname(m) != want:
                bad.append(f"{base} mapped from {m}")
    if bad:
        sys.exit(f"python_wheel: FAILED ({when}): not from {want}: {bad}")
check_loaded("import")

# Device memory through the driver API (the venv has neither torch nor CuPy): the primary
# context of device 0, the one the library's CUDA runtime uses.
cu = ctypes.CDLL("libcuda.so.1")
def ck(r, what):
    if r != 0:
        sys.exit(f"python_wheel: FAILED: {what} returned CUresult {r}")
dev, ctx = ctypes.c_int(), ctypes.c_void_p()
ck(cu.cuInit(0), "cuInit")
ck(cu.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
ck(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
ck(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")

class DeviceVector:
    """n float32 in device memory, seen through __cuda_array_interface__."""
    def __init__(self, n):
        self.ptr = ctypes.c_uint64()
        ck(cu.cuMemAlloc_v2(ctypes.byref(self.ptr), ctypes.c_size_t(4 * n)), "cuMemAlloc")
        self.n = n
        self.__cuda_array_interface__ = {"shape": (n,), "typestr": "<f4", "version": 3,
                                         "data": (self.ptr.value, False), "strides": None}
    def upload(self, a):
        a = np.ascontiguousarray(a, dtype=np.float32)
        ck(cu.cuMemcpyHtoD_v2(self.ptr, a.ctypes.data_as(ctypes.c_void_p),
                              ctypes.c_size_t(a.nbytes)), "cuMemcpyHtoD")
    def download(self):
        a = np.empty(self.n, dtype=np.float32)
        ck(cu.cuMemcpyDtoH_v2(a.ctypes.data_as(ctypes.c_void_p), self.ptr,
                              ctypes.c_size_t(a.nbytes)), "cuMemcpyDtoH")
        return a
    def free(self):
        ck(cu.cuMemFree_v2(self.ptr), "cuMemFree")

A = sd.CSRMatrix.read(mtx)
k = sd.compile(A, "spmv", budget=4)
check_loaded("after compile")
builtins = [l.split()[-1] for l in open("/proc/self/maps") if "libnvrtc-builtins" in l]
if builtins:
    print("python_wheel: NVRTC builtins mapped from", sorted(set(builtins)))
    if any(os.path.dirname(b) != want for b in builtins):
        sys.exit(f"python_wheel: FAILED: NVRTC's builtins not from {want}")

# The reference from the .mtx text itself (numpy, double), not through the library.
seed = 20261202
print("python_wheel: seed", seed)
rows, cols = A.shape
x = np.random.default_rng(seed).uniform(-1, 1, cols).astype(np.float32)
with open(mtx) as f:
    lines = [l for l in f if not l.startswith("%")]
ent = np.array([l.split() for l in lines[1:]], dtype=np.float64)
r, c, v = ent[:, 0].astype(int) - 1, ent[:, 1].astype(int) - 1, ent[:, 2]
y_ref = np.zeros(rows)
np.add.at(y_ref, r, v * x[c].astype(np.float64))
s = np.zeros(rows)
np.add.at(s, r, np.abs(v * x[c]))
n = np.bincount(r, minlength=rows) + 1
u = 2.0 ** -24
tol = 1e-5 + 1e-3 * np.abs(y_ref) + n * u / (1 - n * u) * s  # DESIGN.md's validation bound

xd, yd = DeviceVector(cols), DeviceVector(rows)
try:
    xd.upload(x)
    k(xd, out=yd)
    ck(cu.cuCtxSynchronize(), "cuCtxSynchronize")
    y = yd.download()
finally:
    xd.free()
    yd.free()
k.close()
ck(cu.cuDevicePrimaryCtxRelease_v2(dev), "cuDevicePrimaryCtxRelease")
err = np.abs(y.astype(np.float64) - y_ref)
if not np.all(np.isfinite(y)) or np.any(err > tol):
    i = int(np.argmax(err - tol))
    sys.exit(f"python_wheel: FAILED: y[{i}] = {y[i]} vs {y_ref[i]} (error {err[i]:.3g} > {tol[i]:.3g})")
print(f"python_wheel: SpMV of {os.path.basename(mtx)} ({rows}x{cols}, {A.nnz} nnz) matches numpy: "
      f"max error {err.max():.3g}")
EOF
echo "python_wheel: passed in $(($(date +%s) - start)) s"
