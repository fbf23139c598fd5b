# python/sparseditto/_lib.py: ctypes declarations of include/sparseditto.h and the error type.
"""Low-level ctypes binding of the C API (one declaration per public function and struct).

Nothing here has logic of its own besides finding the CUDA libraries: it loads
libsparseditto.so (with NVRTC, nvJitLink and cuSPARSE from the toolkit or from NVIDIA's
nvidia-* wheels), declares argument and result types, and turns a failed sd_status into
SparseDittoError carrying sd_last_error().
"""
import ctypes
import enum
import os

__all__ = [
    "Status", "Op", "ShapeClass", "SparseDittoError", "lib", "check", "last_error",
    "SdCsr", "SdFeatures", "SdContextOptions", "SdCompileOptions", "SdDeviceCsr",
    "NUM_FEATURES", "library_path", "CUDA_LIBRARIES", "cuda_library_paths",
]

NUM_FEATURES = 36  # SD_NUM_FEATURES


class Status(enum.IntEnum):
    """sd_status, value for value."""
    OK = 0
    INVALID_ARG = 1
    IO = 2
    PARSE = 3
    UNSUPPORTED = 4
    OUT_OF_MEMORY = 5
    NO_DEVICE = 6
    CUDA = 7
    COMPILE = 8
    VALIDATION = 9
    CACHE = 10
    INTERNAL = 11


class Op(enum.IntEnum):
    """sd_op."""
    SPMV = 0
    SPMM = 1
    SPGEMM = 2


class ShapeClass(enum.IntEnum):
    """sd_shape_class."""
    UNIFORM = 0
    MODERATE = 1
    SKEWED = 2
    POWER_LAW = 3
    BIMODAL = 4


class SdCsr(ctypes.Structure):
    """sd_csr: host CSR (int64 rowptr, int32 colind, float32 vals)."""
    _fields_ = [
        ("rows", ctypes.c_int32),
        ("cols", ctypes.c_int32),
        ("nnz", ctypes.c_int64),
        ("rowptr", ctypes.POINTER(ctypes.c_int64)),
        ("colind", ctypes.POINTER(ctypes.c_int32)),
        ("vals", ctypes.POINTER(ctypes.c_float)),
    ]


class SdFeatures(ctypes.Structure):
    """sd_features: the 36 raw feature values, the shape class and the operator."""
    _fields_ = [
        ("values", ctypes.c_double * NUM_FEATURES),
        ("shape_class", ctypes.c_int),  # sd_shape_class (a C enum is an int)
        ("op", ctypes.c_int),           # sd_op
    ]


class SdContextOptions(ctypes.Structure):
    """sd_context_options."""
    _fields_ = [
        ("device", ctypes.c_int),
        ("cache_dir", ctypes.c_char_p),
        ("verbose", ctypes.c_int),
    ]


class SdCompileOptions(ctypes.Structure):
    """sd_compile_options."""
    _fields_ = [
        ("budget", ctypes.c_int),
        ("use_cache", ctypes.c_int),
        ("allow_vendor", ctypes.c_int),
        ("deterministic", ctypes.c_int),
        ("report_path", ctypes.c_char_p),
    ]


class SdDeviceCsr(ctypes.Structure):
    """sd_device_csr: CSR whose arrays live in device memory."""
    _fields_ = [
        ("rows", ctypes.c_int32),
        ("cols", ctypes.c_int32),
        ("nnz", ctypes.c_int64),
        ("rowptr", ctypes.c_void_p),
        ("colind", ctypes.c_void_p),
        ("vals", ctypes.c_void_p),
    ]


def _find_library():
    """The library beside this file (pip install), else $SPARSEDITTO_LIBRARY."""
    env = os.environ.get("SPARSEDITTO_LIBRARY")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.join(here, "libsparseditto.so")


# The CUDA libraries libsparseditto.so links (sonames of CUDA 13), what each is, and the
# NVIDIA wheel that ships it in site-packages/nvidia/cu13/lib. The versions are pinned
# once, in pyproject.toml; tests/cpu/cli_wheel.sh checks that both name the same wheels.
# nvJitLink first: libcusparse.so.12 needs it.
CUDA_LIBRARIES = (
    ("libnvJitLink.so.13", "nvJitLink", "nvidia-nvjitlink"),
    ("libnvrtc.so.13", "NVRTC", "nvidia-cuda-nvrtc"),
    ("libcusparse.so.12", "cuSPARSE", "nvidia-cusparse"),
)


def _nvidia_lib_dirs():
    """The lib folders of NVIDIA's CUDA 13 wheels on sys.path (nvidia is a namespace
    package, so it may span several site-packages)."""
    import importlib.util
    try:
        spec = importlib.util.find_spec("nvidia")
    except (ImportError, ValueError):
        return []
    if spec is None or not spec.submodule_search_locations:
        return []
    dirs = [os.path.join(d, "cu13", "lib") for d in spec.submodule_search_locations]
    return [d for d in dirs if os.path.isdir(d)]


def _preload_nvidia():
    """Loads each CUDA library found in the nvidia wheels with RTLD_GLOBAL, so that loading
    libsparseditto.so then finds it by soname (the dynamic loader matches a needed
    library against those already loaded)."""
    dirs = _nvidia_lib_dirs()
    for soname, _, _ in CUDA_LIBRARIES:
        for d in dirs:
            path = os.path.join(d, soname)
            if os.path.exists(path):
                try:
                    ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
                    break
                except OSError:
                    pass  # a broken copy: the next folder, else the load names it


def _load(path):
    """dlopen the library. The driver-only wheel finds NVIDIA's wheels through its RUNPATH
    ($ORIGIN/../nvidia/cu13/lib), a source build through the toolkit it was built with;
    where neither holds a CUDA library (the nvidia wheels in another site-packages, or a
    moved toolkit), the copies in the nvidia wheels on sys.path are loaded first."""
    try:
        return ctypes.CDLL(path)
    except OSError:
        pass
    _preload_nvidia()
    try:
        return ctypes.CDLL(path)
    except OSError as e:
        err = e
    # dlopen names the first library it could not find.
    named = [c for c in CUDA_LIBRARIES if c[0] in str(err)]
    if named:
        soname, what, package = named[0]
        raise ImportError(
            f"sparseditto: cannot load {path!r}: it needs {soname} ({what}), found neither on "
            f"the library path nor in an installed nvidia wheel; install it with "
            f"`pip install {package}` (CUDA 13; the sparseditto wheel built for NVIDIA's "
            f"wheels lists it), or install the CUDA 13 toolkit and add its lib64 to "
            f"LD_LIBRARY_PATH ({err})"
        ) from err
    if "libgomp.so.1" in str(err):  # slim images lack the OpenMP runtime the library links
        raise ImportError(
            f"sparseditto: cannot load {path!r}: it needs libgomp.so.1, the GNU OpenMP "
            f"runtime (Debian/Ubuntu: apt-get install libgomp1) ({err})"
        ) from err
    raise ImportError(
        f"sparseditto: cannot load the C library {path!r} ({err}); install the package "
        "with pip (which builds it) or set SPARSEDITTO_LIBRARY to a libsparseditto.so"
    ) from err


library_path = _find_library()
lib = _load(library_path)


def cuda_library_paths():
    """{soname: the path the dynamic loader opened it by} for the CUDA libraries of
    CUDA_LIBRARIES (None for one not loaded): which NVRTC, nvJitLink and cuSPARSE the
    library runs with. The path is glibc's link map name (dlinfo RTLD_DI_LINKMAP)."""
    libdl = ctypes.CDLL("libdl.so.2")  # dlinfo (in libc itself from glibc 2.34)
    libdl.dlinfo.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p]
    rtld_di_linkmap = 2
    out = {}
    for soname, _, _ in CUDA_LIBRARIES:
        try:
            h = ctypes.CDLL(soname, mode=os.RTLD_NOLOAD)
        except OSError:
            out[soname] = None
            continue
        lm = ctypes.c_void_p()
        if libdl.dlinfo(h._handle, rtld_di_linkmap, ctypes.byref(lm)) != 0 or not lm.value:
            out[soname] = None
            continue
        # struct link_map starts with l_addr (an address), then char *l_name.
        name = ctypes.c_char_p.from_address(lm.value + ctypes.sizeof(ctypes.c_void_p)).value
        out[soname] = os.fsdecode(name) if name else None
    return out


def _preload_nvrtc_builtins():
    """NVRTC opens libnvrtc-builtins by soname at its first compile, through the search
    path, which never holds an nvidia wheel's folder: the copy beside the libnvrtc actually
    loaded is loaded first, so that the loader matches it by soname (a toolkit's copy is
    found either way; loading it here changes nothing)."""
    import glob
    p = cuda_library_paths().get("libnvrtc.so.13")
    if not p:
        return
    for path in sorted(glob.glob(os.path.join(os.path.dirname(p), "libnvrtc-builtins.so.13*")),
                       key=len):
        try:
            ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
            return
        except OSError:
            pass  # a broken copy: NVRTC's own lookup then names what is missing


_preload_nvrtc_builtins()


_c_status = ctypes.c_int  # sd_status is a C enum
_p_csr = ctypes.POINTER(SdCsr)
_p_void = ctypes.c_void_p


def _declare(name, restype, *argtypes):
    fn = getattr(lib, name)
    fn.restype = restype
    fn.argtypes = list(argtypes)
    return fn


# --- statuses and version
_declare("sd_status_string", ctypes.c_char_p, _c_status)
_declare("sd_last_error", ctypes.c_char_p)
_declare("sd_version_string", ctypes.c_char_p)
# --- host CSR
_declare("sd_csr_read", _c_status, ctypes.c_char_p, _p_csr)
_declare("sd_csr_write", _c_status, ctypes.c_char_p, _p_csr)
_declare("sd_csr_check", _c_status, _p_csr)
_declare("sd_csr_free", None, _p_csr)
_declare("sd_csr_transpose", _c_status, _p_csr, _p_csr)
_declare("sd_csr_hash", _c_status, _p_csr, ctypes.c_int, ctypes.c_char_p)
# --- analysis
_declare("sd_analyze", _c_status, _p_csr, ctypes.c_int, ctypes.POINTER(SdFeatures))
_declare("sd_feature_name", ctypes.c_char_p, ctypes.c_int)
_declare("sd_feature_description", ctypes.c_char_p, ctypes.c_int)
_declare("sd_shape_class_name", ctypes.c_char_p, ctypes.c_int)
# --- inspection: JSON text owned by the caller (a void pointer, so that ctypes keeps the
# address to hand back to sd_json_free instead of converting it to bytes)
_declare("sd_rank", _c_status, _p_csr, ctypes.c_int, ctypes.c_int, ctypes.c_char_p,
         ctypes.POINTER(_p_void))
_declare("sd_plan", _c_status, _p_csr, ctypes.c_int, ctypes.c_int, ctypes.c_char_p,
         ctypes.c_int, ctypes.POINTER(_p_void))
_declare("sd_json_free", None, _p_void)
# --- context (opaque handles are void pointers)
_declare("sd_context_create", _c_status, ctypes.POINTER(SdContextOptions),
         ctypes.POINTER(_p_void))
_declare("sd_context_destroy", None, _p_void)
# --- compile
_declare("sd_compile_options_default", SdCompileOptions)
_declare("sd_compile", _c_status, _p_void, _p_csr, ctypes.c_int, ctypes.c_int,
         ctypes.POINTER(SdCompileOptions), ctypes.POINTER(_p_void))
_declare("sd_compile_spgemm", _c_status, _p_void, _p_csr, _p_csr,
         ctypes.POINTER(SdCompileOptions), ctypes.POINTER(_p_void))
_declare("sd_kernel_update_values", _c_status, _p_void, ctypes.POINTER(ctypes.c_float))
# --- execute (device pointers and the stream are plain addresses)
_declare("sd_spmv", _c_status, _p_void, _p_void, _p_void, _p_void)
_declare("sd_spmm", _c_status, _p_void, _p_void, _p_void, _p_void)
_declare("sd_spgemm", _c_status, _p_void, ctypes.POINTER(SdDeviceCsr), _p_void)
_declare("sd_device_csr_free", None, ctypes.POINTER(SdDeviceCsr))
_declare("sd_kernel_describe", _c_status, _p_void, ctypes.c_char_p, ctypes.c_size_t)
_declare("sd_kernel_destroy", None, _p_void)


def status_string(s):
    """sd_status_string(s) as a str ("unknown status" out of range)."""
    return lib.sd_status_string(int(s)).decode()


def last_error():
    """sd_last_error() of this thread as a str ("" when none)."""
    return lib.sd_last_error().decode(errors="replace")


def version():
    """sd_version_string(): the version of the library actually loaded."""
    return lib.sd_version_string().decode()


class SparseDittoError(RuntimeError):
    """A failed call: .status (a Status, or the raw int when unknown) and .message (the
    cause, as sd_last_error() gave it, or as the binding's own check phrased it)."""

    def __init__(self, status, message):
        try:
            status = Status(int(status))
        except ValueError:
            status = int(status)
        self.status = status
        self.message = message
        name = status.name if isinstance(status, Status) else str(status)
        super().__init__(f"{name}: {message}" if message else name)

    def __reduce__(self):  # picklable (multiprocessing, pytest-xdist)
        return (type(self), (int(self.status), self.message))


def take_json(fn, *args):
    """Calls fn(*args, &text) (sd_rank, sd_plan), checks the status, and returns the text
    as a str after freeing it with sd_json_free."""
    out = ctypes.c_void_p()
    check(fn(*args, ctypes.byref(out)))
    try:
        return ctypes.string_at(out.value).decode()
    finally:
        lib.sd_json_free(out)


def check(status):
    """Raise SparseDittoError when a C call returned something other than SD_OK.
    ctypes runs each call on the calling thread, so sd_last_error() is the right one."""
    if status != Status.OK:
        raise SparseDittoError(status, last_error())
