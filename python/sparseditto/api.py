# python/sparseditto/api.py: analyze, Context, compile and Kernel (run on device arrays).
"""The Python face of sd_analyze, sd_context_*, sd_compile and the kernel functions."""
import ctypes
import json
import os
import threading

import numpy as np

from . import _lib
from ._lib import Op, ShapeClass, SparseDittoError, Status
from .matrix import CSRMatrix, as_matrix

__all__ = ["analyze", "rank", "plan", "feature_names", "feature_descriptions", "Context",
           "default_context", "compile", "Kernel", "DeviceCSR"]

_OPS = {"spmv": Op.SPMV, "spmm": Op.SPMM, "spgemm": Op.SPGEMM}
_K_MAX = 65536


def _op(op):
    if isinstance(op, Op):
        return op
    if isinstance(op, str) and op.lower() in _OPS:
        return _OPS[op.lower()]
    raise ValueError(f"unknown operator {op!r}: expected 'spmv', 'spmm' or 'spgemm'")


def feature_names():
    """The 36 feature names in their canonical order (sd_feature_name)."""
    return [_lib.lib.sd_feature_name(i).decode() for i in range(_lib.NUM_FEATURES)]


def feature_descriptions():
    """{name: one-line definition} (sd_feature_description)."""
    return {_lib.lib.sd_feature_name(i).decode(): _lib.lib.sd_feature_description(i).decode()
            for i in range(_lib.NUM_FEATURES)}


def analyze(a, op="spmv"):
    """The 36 structural features of a (raw values, canonical order) and its shape class.

    a: a CSRMatrix, a path, a scipy.sparse matrix or a torch sparse tensor. Returns
    {"op": "spmv", "features": {name: float, ...}, "shape_class": "uniform"|...}."""
    m = as_matrix(a)
    o = _op(op)
    f = _lib.SdFeatures()
    _lib.check(_lib.lib.sd_analyze(ctypes.byref(m._as_sd_csr()), int(o), ctypes.byref(f)))
    names = feature_names()
    return {
        "op": o.name.lower(),
        "features": {names[i]: float(f.values[i]) for i in range(_lib.NUM_FEATURES)},
        "shape_class": _lib.lib.sd_shape_class_name(int(f.shape_class)).decode(),
    }


def _width(o, K, fn, default):
    """K for SpMM (default when None; the library's range), 1 for the other operators."""
    if o != Op.SPMM:
        if K is not None:
            raise ValueError(f"{fn}: K is the SpMM width; it means nothing for {o.name.lower()}")
        return 1
    if K is None:
        K = default
    if not isinstance(K, (int, np.integer)) or isinstance(K, bool):
        raise TypeError(f"{fn}: K must be an int, got {type(K).__name__}")
    return int(K)


def rank(a, op="spmv", K=None, model=None):
    """The operator's template vocabulary ranked by energy for matrix a (lowest first), as
    `sparseditto rank --json` gives it (sd_rank; no GPU): {"op", "k", "shape_class",
    "model_path", "ranking": {"model", "templates": [{"label", "energy", "reasons"}]}}.
    K: the SpMM width (default 32, as the CLI); model: energy-model weights from
    `sparseditto train` (None: the model the search itself uses)."""
    m = as_matrix(a)
    o = _op(op)
    k = _width(o, K, "rank", 32)
    path = os.fsencode(model) if model is not None else None
    return json.loads(_lib.take_json(_lib.lib.sd_rank, ctypes.byref(m._as_sd_csr()), int(o),
                                     k, path))


def plan(a, op="spmv", K=None, gpu=None, branches=0):
    """The first-round candidate plans for matrix a with their lowering and static bounds,
    as `sparseditto plan --json` (sd_plan; nothing compiled or timed, no GPU needed):
    {"gpu": {"name", "from_device"}, "plans": [...], "record": {...}}. K: the SpMM width
    (default 32); gpu: a built-in profile name ("H200", "A100", ...) or None for device 0
    when usable, else H200; branches: families of the first round (0 = 3)."""
    m = as_matrix(a)
    o = _op(op)
    k = _width(o, K, "plan", 32)
    if not isinstance(branches, (int, np.integer)) or isinstance(branches, bool):
        raise TypeError(f"plan: branches must be an int, got {type(branches).__name__}")
    g = gpu.encode() if gpu is not None else None
    return json.loads(_lib.take_json(_lib.lib.sd_plan, ctypes.byref(m._as_sd_csr()), int(o),
                                     k, g, int(branches)))


# ---------------------------------------------------------------- context

class Context:
    """sd_context: a CUDA device and a kernel cache. Creating one needs a usable device
    (SparseDittoError NO_DEVICE otherwise). Close it, or use it as a context manager;
    kernels keep their context alive."""

    def __init__(self, device=0, cache_dir=None, verbose=0):
        self._handle = None
        if not isinstance(device, int) or isinstance(device, bool):
            raise TypeError(f"Context: device must be an int, got {type(device).__name__}")
        opts = _lib.SdContextOptions()
        opts.device = device
        opts.cache_dir = os.fsencode(cache_dir) if cache_dir is not None else None
        opts.verbose = int(verbose)
        h = ctypes.c_void_p()
        _lib.check(_lib.lib.sd_context_create(ctypes.byref(opts), ctypes.byref(h)))
        self._handle = h
        self.device = device

    @property
    def handle(self):
        if self._handle is None:
            raise SparseDittoError(Status.INVALID_ARG, "the context is closed")
        return self._handle

    def close(self):
        if self._handle is not None:
            _lib.lib.sd_context_destroy(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown: the library may be gone
            pass

    def __repr__(self):
        return f"Context(device={self.device}, open={self._handle is not None})"


_default_contexts = {}
_default_lock = threading.Lock()


def default_context(device=0):
    """The module's context for device (created at first use, then shared)."""
    with _default_lock:
        ctx = _default_contexts.get(device)
        if ctx is None:
            ctx = Context(device)
            _default_contexts[device] = ctx
        return ctx


# ---------------------------------------------------------------- compile

def compile(a, op="spmv", K=None, budget=None, use_cache=True, allow_vendor=True,
            deterministic=False, context=None, report_path=None, b=None):
    """sd_compile: the specialised kernel for matrix a and operator op ("spmv", "spmm",
    "spgemm": C = A·A for square a, A·Aᵀ otherwise, or A·B with b; sd_compile_spgemm).

    K is the dense width for SpMM (1 ≤ K ≤ 65536; required) and must be None otherwise.
    Needs a GPU: without one, SparseDittoError(NO_DEVICE) with the library's message."""
    m = as_matrix(a)
    o = _op(op)
    mb = None
    if b is not None:
        if o != Op.SPGEMM:
            raise ValueError("compile: b is the second SpGEMM operand; use op='spgemm'")
        mb = as_matrix(b)
        if mb.shape[0] != m.shape[1]:
            raise SparseDittoError(Status.INVALID_ARG,
                                   f"compile: A is {m.shape[0]}x{m.shape[1]} and B is "
                                   f"{mb.shape[0]}x{mb.shape[1]}: inner sizes differ")
    if o == Op.SPMM:
        if K is None:
            raise SparseDittoError(Status.INVALID_ARG, "compile: SpMM needs the dense width K")
        if not isinstance(K, (int, np.integer)) or isinstance(K, bool):
            raise TypeError(f"compile: K must be an int, got {type(K).__name__}")
        K = int(K)
        # The library's own rule (sd_compile), checked before a device is needed.
        if K <= 0:
            raise SparseDittoError(Status.INVALID_ARG, f"compile: SpMM needs K >= 1 (got {K})")
        if K > _K_MAX:
            raise SparseDittoError(Status.UNSUPPORTED, f"compile: K = {K} is beyond {_K_MAX}")
    elif K is not None:
        raise ValueError(f"compile: K is the SpMM width; it means nothing for {o.name.lower()}")
    opts = _lib.lib.sd_compile_options_default()
    if budget is not None:
        if not isinstance(budget, (int, np.integer)) or budget < 0:
            raise SparseDittoError(Status.INVALID_ARG,
                                   f"compile: budget must be an int >= 0 (got {budget!r})")
        opts.budget = int(budget)
    opts.use_cache = int(bool(use_cache))
    opts.allow_vendor = int(bool(allow_vendor))
    opts.deterministic = int(bool(deterministic))
    report = os.fsencode(report_path) if report_path is not None else None
    opts.report_path = report
    ctx = context if context is not None else default_context()
    h = ctypes.c_void_p()
    if mb is not None:
        _lib.check(_lib.lib.sd_compile_spgemm(ctx.handle, ctypes.byref(m._as_sd_csr()),
                                              ctypes.byref(mb._as_sd_csr()), ctypes.byref(opts),
                                              ctypes.byref(h)))
        kern = Kernel(h, ctx, m, o, None)
        kern.nnz = m.nnz + mb.nnz  # update_values takes A's values, then B's
        return kern
    _lib.check(_lib.lib.sd_compile(ctx.handle, ctypes.byref(m._as_sd_csr()), int(o),
                                   K if o == Op.SPMM else 0, ctypes.byref(opts),
                                   ctypes.byref(h)))
    return Kernel(h, ctx, m, o, K if o == Op.SPMM else None)


class _DeviceArray:
    """One device array of a DeviceCSR, readable by torch / CuPy through
    __cuda_array_interface__ (zero copy); it keeps its DeviceCSR alive."""

    def __init__(self, owner, ptr, n, typestr):
        self._owner = owner
        self.__cuda_array_interface__ = {"shape": (n,), "typestr": typestr,
                                         "data": (int(ptr or 0), False), "version": 3,
                                         "strides": None}


class DeviceCSR:
    """C of a SpGEMM kernel (sd_device_csr), owned here and freed by close() or when
    collected: rows, cols, nnz and the device arrays rowptr (int64, rows + 1), colind
    (int32) and vals (float32) as __cuda_array_interface__ objects, e.g.
    torch.as_tensor(c.vals, device="cuda")."""

    def __init__(self, c):
        self._c = c
        self.rows, self.cols, self.nnz = int(c.rows), int(c.cols), int(c.nnz)
        self.rowptr = _DeviceArray(self, c.rowptr, self.rows + 1, "<i8")
        self.colind = _DeviceArray(self, c.colind, self.nnz, "<i4")
        self.vals = _DeviceArray(self, c.vals, self.nnz, "<f4")

    @property
    def shape(self):
        return (self.rows, self.cols)

    def close(self):
        if self._c is not None:
            _lib.lib.sd_device_csr_free(ctypes.byref(self._c))
            self._c = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self):
        return f"DeviceCSR(shape={self.shape}, nnz={self.nnz})"


# ---------------------------------------------------------------- device operands

class _Operand:
    """A device array seen through torch or __cuda_array_interface__: its address, shape,
    the stream it lives on (or None) and its CUDA device (or None when unknown)."""
    __slots__ = ("ptr", "shape", "stream", "device", "obj", "readonly")


def _operand(x, what):
    o = _Operand()
    o.obj = x
    o.readonly = False
    torch = _torch_if_tensor(x)
    if torch is not None:
        if not x.is_cuda:
            raise ValueError(f"{what}: the tensor is on {x.device}; kernels run on CUDA tensors")
        if x.layout != torch.strided:
            raise TypeError(f"{what}: expected a dense tensor, got layout {x.layout}")
        if x.dtype != torch.float32:
            raise TypeError(f"{what}: dtype is {x.dtype}; kernels take torch.float32 (convert "
                            "with .float() yourself: the binding never converts operands)")
        if not x.is_contiguous():
            raise ValueError(f"{what}: the tensor is not contiguous (row-major); call "
                             ".contiguous()")
        o.ptr = x.data_ptr()
        o.shape = tuple(x.shape)
        o.device = x.device.index if x.device.index is not None else torch.cuda.current_device()
        o.stream = None  # torch: the caller's current stream, chosen in Kernel.__call__
        return o
    cai = getattr(x, "__cuda_array_interface__", None)
    if cai is None:
        raise TypeError(f"{what}: expected a CUDA torch tensor, an object with "
                        f"__cuda_array_interface__ or a CUDA DLPack producer, got "
                        f"{type(x).__name__}")
    if cai.get("typestr") not in ("<f4", "=f4", "|f4"):
        raise TypeError(f"{what}: typestr is {cai.get('typestr')!r}; kernels take float32 "
                        "('<f4') and the binding never converts operands")
    shape = tuple(int(s) for s in cai["shape"])
    strides = cai.get("strides")
    if strides is not None:
        expect, acc = [], 4
        for s in reversed(shape):
            expect.append(acc)
            acc *= s
        if any(n > 1 and int(st) != e for n, st, e in zip(shape, strides, reversed(expect))):
            raise ValueError(f"{what}: the array is not C-contiguous (strides {tuple(strides)})")
    if cai.get("mask") is not None:
        raise ValueError(f"{what}: masked arrays are not supported")
    ptr, readonly = cai["data"]
    o.ptr = int(ptr or 0)
    o.shape = shape
    o.stream = cai.get("stream")
    o.device = None
    o.readonly = bool(readonly)
    return o


_DLPACK_CUDA = 2  # kDLCUDA in DLPack's DLDeviceType


def _from_dlpack(x, what):
    """A torch tensor sharing x's memory (DLPack's consumer side is torch.from_dlpack,
    which also orders x's producer stream before torch's current one)."""
    try:
        import torch
    except ImportError:
        raise TypeError(f"{what}: DLPack operands are read through torch.from_dlpack, and "
                        "PyTorch is not installed (pass __cuda_array_interface__ objects "
                        "instead)") from None
    return torch.from_dlpack(x)


def _dlpack_as_torch(x, what):
    """x as is when torch or __cuda_array_interface__ can read it, else (a DLPack
    producer) a torch view of it."""
    if (_torch_if_tensor(x) is not None or hasattr(x, "__cuda_array_interface__")
            or not hasattr(x, "__dlpack__")):
        return x
    dev = x.__dlpack_device__() if hasattr(x, "__dlpack_device__") else None
    if dev is not None and int(dev[0]) != _DLPACK_CUDA:
        return x  # host memory (numpy ≥ 1.22 speaks DLPack too): _operand's TypeError
    return _from_dlpack(x, what)


def _torch_if_loaded():
    """torch when the program already imported it (never imported here), else None."""
    import sys
    t = sys.modules.get("torch")
    return t if t is not None and hasattr(t, "cuda") and t.cuda.is_available() else None


def _torch_if_tensor(x):
    """The torch module when x is a torch.Tensor (torch imported lazily), else None."""
    if not (type(x).__module__ or "").startswith("torch"):
        return None
    import torch
    return torch if isinstance(x, torch.Tensor) else None


class Kernel:
    """A compiled kernel (sd_kernel) for one matrix and one operator.

    k(x) / k(x, out=y) runs it: SpMV takes x of shape (cols,) and gives (rows,); SpMM
    takes B of shape (cols, K) row-major and gives (rows, K). Operands are CUDA float32,
    C-contiguous, 16-byte aligned torch tensors or __cuda_array_interface__ objects on the
    kernel's device. With torch, the kernel runs on torch's current stream; otherwise on
    the stream the interface names (or the stream= argument, a cudaStream_t address)."""

    def __init__(self, handle, context, matrix, op, K):
        self._handle = handle
        self.context = context  # the C kernel refers to its context: keep it alive
        self.shape = matrix.shape
        self.nnz = matrix.nnz
        self.op = op
        self.K = K

    @property
    def handle(self):
        if self._handle is None:
            raise SparseDittoError(Status.INVALID_ARG, "the kernel is closed")
        return self._handle

    def _shapes(self):
        rows, cols = self.shape
        if self.op == Op.SPMV:
            return (cols,), (rows,)
        return (cols, self.K), (rows, self.K)

    def __call__(self, x=None, out=None, stream=None):
        if self.op == Op.SPGEMM:
            # k() → C as a DeviceCSR (sd_spgemm allocates it; it waits once for nnz(C)).
            if x is not None or out is not None:
                raise ValueError("Kernel: a SpGEMM kernel takes no operands: call k()")
            if stream is None:
                torch = _torch_if_loaded()
                stream = (torch.cuda.current_stream(self.context.device).cuda_stream
                          if torch is not None else 0)
            c = _lib.SdDeviceCsr()
            _lib.check(_lib.lib.sd_spgemm(self.handle, ctypes.byref(c),
                                          ctypes.c_void_p(int(stream))))
            return DeviceCSR(c)
        if x is None:
            raise TypeError("Kernel: x is required for SpMV and SpMM kernels")
        if self.op not in (Op.SPMV, Op.SPMM):
            raise SparseDittoError(Status.UNSUPPORTED,
                                   f"Kernel: {self.op.name.lower()} kernels are not callable")
        in_shape, out_shape = self._shapes()
        # DLPack producers (JAX, CuPy ≥ 10, ...) become torch views, then run as tensors.
        x = _dlpack_as_torch(x, "x")
        if out is not None:
            out = _dlpack_as_torch(out, "out")
        xi = _operand(x, "x")
        if xi.shape != in_shape:
            raise ValueError(f"x: shape {xi.shape}, expected {in_shape} for a "
                             f"{self.shape[0]}x{self.shape[1]} {self.op.name.lower()} kernel")
        torch = _torch_if_tensor(x)
        if out is None:
            out = _empty_like(x, out_shape)
        oi = _operand(out, "out")
        if oi.shape != out_shape:
            raise ValueError(f"out: shape {oi.shape}, expected {out_shape}")
        if oi.readonly:
            raise ValueError("out: the array is read-only")
        if torch is not None or _torch_if_tensor(out) is not None:
            for name, op_ in (("x", xi), ("out", oi)):
                if op_.device is not None and op_.device != self.context.device:
                    raise ValueError(f"{name}: on cuda:{op_.device}, the kernel on "
                                     f"cuda:{self.context.device}")
        for name, op_ in (("x", xi), ("out", oi)):
            if op_.ptr % 16 != 0 and int(np.prod(op_.shape)) > 0:
                raise ValueError(f"{name}: address {op_.ptr:#x} is not 16-byte aligned (the "
                                 "kernels' vector loads need it; a fresh allocation is)")
        if xi.ptr == oi.ptr and int(np.prod(out_shape)) > 0:
            raise ValueError("out: must not alias x")
        if stream is None:
            if torch is not None:
                stream = torch.cuda.current_stream(self.context.device).cuda_stream
            else:
                stream = xi.stream if xi.stream is not None else 0
        stream = int(stream)
        fn = _lib.lib.sd_spmv if self.op == Op.SPMV else _lib.lib.sd_spmm
        _lib.check(fn(self.handle, ctypes.c_void_p(xi.ptr), ctypes.c_void_p(oi.ptr),
                      ctypes.c_void_p(stream)))
        return out

    def describe(self):
        """The plan and timings (sd_kernel_describe) as a dict."""
        cap = 4096
        for _ in range(4):
            buf = ctypes.create_string_buffer(cap)
            s = _lib.lib.sd_kernel_describe(self.handle, buf, cap)
            if s == Status.OK:
                return json.loads(buf.value.decode())
            msg = _lib.last_error()
            need = _size_needed(msg)
            if s != Status.INVALID_ARG or need is None or need <= cap:
                raise SparseDittoError(s, msg)
            cap = need
        raise SparseDittoError(Status.INTERNAL, "sd_kernel_describe kept asking for more room")

    def update_values(self, vals):
        """New values for the same pattern (nnz entries, in the canonical CSR order of the
        compiled matrix; converted to float32 by the matrix rule); rejects NaN/Inf."""
        v = np.asarray(vals)
        if v.ndim != 1 or v.shape[0] != self.nnz:
            raise ValueError(f"update_values: expected {self.nnz} values, got shape {v.shape}")
        from .matrix import _float32_values
        v = _float32_values(v, "update_values")
        _lib.check(_lib.lib.sd_kernel_update_values(
            self.handle, v.ctypes.data_as(ctypes.POINTER(ctypes.c_float))))

    def close(self):
        if self._handle is not None:
            _lib.lib.sd_kernel_destroy(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self):
        k = f", K={self.K}" if self.K is not None else ""
        return f"Kernel({self.op.name.lower()}, shape={self.shape}, nnz={self.nnz}{k})"


def _size_needed(msg):
    """The byte count sd_kernel_describe names ("the buffer needs N bytes"), else None."""
    import re
    m = re.search(r"needs (\d+) bytes", msg)
    return int(m.group(1)) if m else None


def _empty_like(x, shape):
    torch = _torch_if_tensor(x)
    if torch is not None:
        return torch.empty(shape, dtype=torch.float32, device=x.device)
    mod = type(x).__module__ or ""
    if mod.startswith("cupy"):
        import cupy
        return cupy.empty(shape, dtype=cupy.float32)
    raise ValueError("out= is required for operands other than torch tensors and cupy arrays")


# Re-exported for callers that only import api.
CSRMatrix = CSRMatrix
ShapeClass = ShapeClass
