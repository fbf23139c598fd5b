# python/sparseditto/cupy_linalg.py: compiled SpMV / SpMM kernels as a cupyx.scipy.sparse.linalg LinearOperator.
"""CuPy integration: a LinearOperator that cupyx's Krylov solvers accept.

    from cupyx.scipy.sparse.linalg import cg, gmres
    from sparseditto.cupy_linalg import LinearOperator, aslinearoperator
    A = LinearOperator(m, budget=8)   # m: CSRMatrix, path, scipy.sparse, torch sparse,
                                      # or a cupyx.scipy.sparse matrix (csr / csc / coo / ...)
    x, info = cg(A, b, rtol=1e-5)     # every A·p of the solve runs our SpMV kernel

The SpMV kernel for A is compiled once, when the operator is built; a solver then runs
thousands of products with it. matvec runs the SpMV kernel on CuPy's
current stream (cupy.cuda.get_current_stream()) of the operator's device and allocates
only its output; rmatvec runs a kernel compiled for Aᵀ at first use (the forward kernel
when A is symmetric in pattern and values, checked once, O(nnz)); matmat / rmatmat run a
SpMM kernel compiled for that width K at first use (matmat="columns": one SpMV per
column, no further compile). SpMM kernels come from sparseditto.torch_spmm.SparseGraph
(torch is not imported), so operators and torch graphs over one matrix share them.

Precision: the kernels are FP32, so the operator's dtype is float32 and cupyx's cg /
gmres solve in float32 (they cast b and x0 to the operator's dtype before iterating).
Vectors handed to matvec / matmat / rmatvec directly must be float32 cupy arrays: any
other dtype is refused with TypeError, unless the operator was built with cast=True, in
which case real inputs (float64, float16, integers) are converted to float32, rounded
to nearest (a copy), and the result is float32. Complex input is always refused.
Layout is fixed silently: a non-contiguous or misaligned (not 16-byte) input is copied
once; the kernels need C-contiguous, aligned operands. Inputs of shape (n,) or (n, 1)
give (m,) or (m, 1).

cupyx.scipy.sparse input is copied to the host once (its arrays with .get()): sd_compile
analyses, searches and builds the kernel's formats from a host CSR, so the device arrays
are not kept. CSR already canonical (sorted, unique columns) is taken as is; anything
else (CSC, COO, duplicates, unsorted columns) is canonicalised by CSRMatrix.from_coo
(duplicates summed in float64, then rounded once to float32). Values follow the
package's rule: any real dtype becomes float32, complex is refused.

The operator lives on one device (device=, default CuPy's current device at
construction); inputs on another device are refused with ValueError.
"""
import os
import threading
import time

import numpy as np

try:
    import cupy
    from cupyx.scipy.sparse.linalg import LinearOperator as _CupyLinearOperator
except ImportError as e:  # a clear message instead of a bare "No module named cupy"
    raise ImportError("sparseditto.cupy_linalg needs CuPy (pip install cupy-cuda12x or "
                      f"cupy-cuda13x): {e}") from e

from . import _lib
from ._lib import SparseDittoError, Status
from .api import _K_MAX, compile as _compile, default_context
from .matrix import CSRMatrix, as_matrix
from .torch_spmm import SparseGraph

__all__ = ["LinearOperator", "aslinearoperator"]

_F32 = np.dtype(np.float32)
# sparseditto.compile's options that an operator forwards; context follows device=.
_COMPILE_OPTIONS = ("budget", "use_cache", "allow_vendor", "deterministic", "report_path")
_MATMAT_MODES = ("spmm", "columns")


def _check_cast(dtype, cast, what):
    """True when an input of this dtype must be converted to float32 (cast=True and a
    real dtype), False for float32; TypeError otherwise."""
    dtype = np.dtype(dtype)
    if dtype == _F32:
        return False
    if dtype.kind == "c":
        raise TypeError(f"{what}: dtype {dtype} is complex; the kernels are real FP32")
    if dtype.kind not in "fiub":
        raise TypeError(f"{what}: dtype {dtype} is not a number")
    if not cast:
        raise TypeError(f"{what}: dtype is {dtype}; the operator is float32 (FP32 kernels) "
                        "and converts nothing unless built with cast=True (cupyx cg and "
                        "gmres cast b and x0 to the operator's dtype themselves)")
    return True


def _csr_from_host(fmt, a0, a1, vals, shape):
    """A CSRMatrix from host arrays of a compressed or coordinate matrix:
    fmt "csr" (a0 = indptr, a1 = column indices), "csc" (a0 = indptr, a1 = row
    indices) or "coo" (a0 = rows, a1 = columns)."""
    rows, cols = (int(s) for s in shape)
    if fmt == "coo":
        return CSRMatrix.from_coo(a0, a1, vals, (rows, cols))
    if fmt not in ("csr", "csc"):
        raise ValueError(f"unknown sparse format {fmt!r}")
    ptr = np.asarray(a0).astype(np.int64)
    outer = rows if fmt == "csr" else cols
    if ptr.ndim != 1 or ptr.shape[0] != outer + 1:
        raise ValueError(f"{fmt}: indptr has shape {ptr.shape}, expected ({outer + 1},)")
    counts = np.diff(ptr)
    if ptr.shape[0] and (ptr[0] != 0 or (counts < 0).any()):
        raise ValueError(f"{fmt}: indptr must start at 0 and never decrease")
    if fmt == "csr":
        try:  # usually canonical already (sd_csr_check says so in O(nnz))
            return CSRMatrix(ptr, a1, vals, (rows, cols))
        except SparseDittoError:
            pass
        row = np.repeat(np.arange(rows, dtype=np.int64), counts)
        return CSRMatrix.from_coo(row, a1, vals, (rows, cols))
    col = np.repeat(np.arange(cols, dtype=np.int64), counts)
    return CSRMatrix.from_coo(a1, col, vals, (rows, cols))


def _from_cupyx(a):
    """A CSRMatrix from a cupyx.scipy.sparse matrix or array (copied to the host once)."""
    import cupyx.scipy.sparse as cps
    if not cps.issparse(a):
        raise TypeError(f"{type(a).__name__} is not a cupyx.scipy.sparse matrix")
    if a.dtype.kind == "c":
        raise TypeError(f"cupyx matrix: dtype {a.dtype} is complex (FP32 real only)")
    if len(a.shape) != 2:
        raise ValueError(f"cupyx matrix: a matrix has 2 dimensions, got shape {a.shape}")
    fmt = a.format
    if fmt in ("csr", "csc"):
        arrays = (a.indptr, a.indices, a.data)
    else:
        if fmt != "coo":
            a = a.tocoo()  # dia and others: CuPy's own conversion, then ours
            fmt = "coo"
        arrays = (a.row, a.col, a.data)
    with a.data.device:
        host = [x.get() for x in arrays]
    return _csr_from_host(fmt, host[0], host[1], host[2], a.shape)


def _as_matrix(a):
    """A CSRMatrix from anything as_matrix takes, or a cupyx.scipy.sparse matrix."""
    if isinstance(a, _CupyLinearOperator):
        raise TypeError(f"{type(a).__name__} is already a LinearOperator; sparseditto "
                        "compiles kernels for a sparse matrix: pass the matrix itself")
    mod = type(a).__module__ or ""
    if mod.startswith("cupyx.scipy.sparse"):
        return _from_cupyx(a)
    if isinstance(a, cupy.ndarray):
        raise TypeError("a dense cupy array is not a sparse matrix: pass "
                        "cupyx.scipy.sparse.csr_matrix(a) or a host sparse matrix")
    if not (isinstance(a, (CSRMatrix, str, bytes, os.PathLike))
            or mod.startswith(("scipy.", "torch"))):
        raise TypeError(f"cannot make a sparse matrix from {type(a).__name__}: pass a "
                        "CSRMatrix, a file path, a scipy.sparse or cupyx.scipy.sparse matrix "
                        "or a torch sparse tensor")
    return as_matrix(a)


def _resolve_device(device):
    if device is None:
        try:
            return int(cupy.cuda.runtime.getDevice())
        except cupy.cuda.runtime.CUDARuntimeError as e:
            raise SparseDittoError(Status.NO_DEVICE,
                                   f"LinearOperator: no CUDA device usable by CuPy ({e})") from None
    return device


def _ready(x):
    """x when the kernels can read it (C-contiguous, 16-byte aligned), else a fresh copy
    (CuPy's pool hands out aligned blocks)."""
    if x.size and (not x.flags.c_contiguous or x.data.ptr % 16):
        return x.copy(order="C")
    return x


class LinearOperator(_CupyLinearOperator):
    """A (rows × cols) float32 operator backed by kernels compiled for one matrix.

    a: a CSRMatrix, a path (.mtx, .mtx.gz, .sdm), a scipy.sparse matrix, a torch sparse
    CSR/COO tensor, or a cupyx.scipy.sparse matrix (copied to the host once).
    device: CUDA ordinal of the kernels (default: CuPy's current device).
    cast: convert non-float32 real inputs to float32 (default False: refuse them).
    matmat: "spmm" (a SpMM kernel compiled per width K at first use) or "columns" (one
    SpMV per column).
    compile_options: budget, use_cache, allow_vendor, deterministic, report_path, as for
    sparseditto.compile. Building the operator compiles the SpMV kernel for A (needs a
    GPU: SparseDittoError NO_DEVICE otherwise); compile_seconds says how long kernels
    took to obtain (cache hits included)."""

    def __init__(self, a, device=None, cast=False, matmat="spmm", **compile_options):
        # Every check that needs no device comes first.
        if device is not None and (not isinstance(device, (int, np.integer))
                                   or isinstance(device, bool)):
            raise TypeError(f"LinearOperator: device must be an int, got {type(device).__name__}")
        if device is not None and device < 0:
            raise ValueError(f"LinearOperator: device must be >= 0, got {device}")
        if not isinstance(cast, bool):
            raise TypeError(f"LinearOperator: cast must be True or False, got {cast!r}")
        if matmat not in _MATMAT_MODES:
            raise ValueError(f"LinearOperator: matmat must be 'spmm' or 'columns', got {matmat!r}")
        if "context" in compile_options:
            raise ValueError("LinearOperator: the context follows device=; do not pass context=")
        unknown = sorted(set(compile_options) - set(_COMPILE_OPTIONS))
        if unknown:
            raise TypeError(f"LinearOperator: unknown option(s) {unknown}; compile options are "
                            f"{list(_COMPILE_OPTIONS)}")
        m = _as_matrix(a)
        super().__init__(dtype=np.float32, shape=m.shape)
        self.cast = cast
        self.matmat_mode = matmat
        self.compile_options = dict(compile_options)
        self.graph = SparseGraph(m, **compile_options)
        self.device = int(_resolve_device(device))
        rows, cols = m.shape
        self._trivial = rows == 0 or cols == 0 or m.nnz == 0  # A·x = 0: no kernel needed
        self._spmv = {}  # transposed -> SpMV Kernel
        self._spmv_seconds = 0.0
        self._lock = threading.Lock()
        if not self._trivial:
            self._spmv_kernel(False)

    # ------------------------------------------------------------ kernels
    @property
    def matrix(self):
        """The CSRMatrix the kernels were compiled for."""
        return self.graph.matrix

    @property
    def compile_seconds(self):
        """Wall time spent obtaining this operator's kernels (SpMV and SpMM)."""
        return self._spmv_seconds + self.graph.compile_seconds

    def _spmv_kernel(self, transposed):
        k = self._spmv.get(transposed)
        if k is not None:
            return k
        if transposed and self.graph.symmetric:
            k = self._spmv_kernel(False)  # Aᵀ = A: one kernel serves both directions
            self._spmv[True] = k
            return k
        with self._lock:
            k = self._spmv.get(transposed)
            if k is None:
                t0 = time.perf_counter()
                m = self.graph.transpose() if transposed else self.graph.matrix
                k = _compile(m, "spmv", context=default_context(self.device),
                             **self.compile_options)
                self._spmv[transposed] = k
                self._spmv_seconds += time.perf_counter() - t0
        return k

    def kernels(self):
        """{(op, K, transposed): Kernel} obtained so far: ("spmv", None, t) and
        ("spmm", K, t)."""
        out = {("spmv", None, t): k for t, k in self._spmv.items()}
        for (_, K, t), k in self.graph.kernels().items():
            out[("spmm", K, t)] = k
        return out

    def describe(self):
        """The forward SpMV kernel's plan and timings (Kernel.describe), or None for a
        matrix without entries (no kernel)."""
        return None if self._trivial else self._spmv_kernel(False).describe()

    def close(self):
        """Drops the kernels (obtained again on next use)."""
        with self._lock:
            self._spmv.clear()
        self.graph.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ------------------------------------------------------------ operands
    def _operand(self, x, what):
        """x as a float32 cupy array on the operator's device (converted when cast)."""
        if not isinstance(x, cupy.ndarray):
            if isinstance(x, np.ndarray):
                raise TypeError(f"{what}: a numpy array is in host memory; the operator runs "
                                f"on cuda:{self.device} (pass cupy.asarray({what}))")
            raise TypeError(f"{what}: expected a cupy.ndarray, got {type(x).__name__}")
        dev = x.device.id
        if dev != self.device:
            raise ValueError(f"{what}: on cuda:{dev}, the operator's kernels on cuda:{self.device}")
        if x.dtype != _F32 and _check_cast(x.dtype, self.cast, what):
            x = x.astype(np.float32)
        return x

    def _vector(self, x, transposed, what):
        """(x as a 1-D float32 array of the input length, whether x was (n, 1))."""
        rows, cols = self.shape
        n = rows if transposed else cols
        x = self._operand(x, what)
        if x.shape == (n,):
            return x, False
        if x.shape == (n, 1):
            return x.reshape(n), True
        raise ValueError(f"{what}: shape {x.shape}; the operator is {rows}x{cols}, so "
                         f"{what} must be ({n},) or ({n}, 1)")

    def _block(self, X, transposed, what):
        rows, cols = self.shape
        n = rows if transposed else cols
        X = self._operand(X, what)
        if X.ndim != 2 or X.shape[0] != n:
            raise ValueError(f"{what}: shape {X.shape}; the operator is {rows}x{cols}, so "
                             f"{what} must be ({n}, K)")
        return X

    # ------------------------------------------------------------ products
    def _on_device(self, fn, *args):
        """fn(*args) with the operator's device current (allocations and the current
        stream are per device in CuPy)."""
        if cupy.cuda.runtime.getDevice() != self.device:
            with cupy.cuda.Device(self.device):
                return fn(*args)
        return fn(*args)

    def _mv(self, x, transposed):
        """y = A·x or Aᵀ·x for a 1-D float32 x on the operator's device."""
        n_out = self.shape[1] if transposed else self.shape[0]
        if self._trivial:
            return cupy.zeros(n_out, dtype=np.float32)
        k = self._spmv_kernel(transposed)
        x = _ready(x)
        y = cupy.empty(n_out, dtype=np.float32)
        # sd_spmv directly: Kernel.__call__ reads each operand through a fresh
        # __cuda_array_interface__ dict on every call, and a solver calls this thousands
        # of times; _operand / _ready did the same checks for cupy arrays.
        _lib.check(_lib.lib.sd_spmv(k.handle, x.data.ptr, y.data.ptr,
                                    cupy.cuda.get_current_stream().ptr))
        return y

    def _mm(self, X, transposed):
        """Y = A·X or Aᵀ·X for a 2-D float32 X on the operator's device."""
        n_out = self.shape[1] if transposed else self.shape[0]
        K = X.shape[1]
        if self._trivial or K == 0:
            return cupy.zeros((n_out, K), dtype=np.float32)
        if K == 1:
            return self._mv(X.reshape(X.shape[0]), transposed).reshape(n_out, 1)
        if self.matmat_mode == "columns" or K > _K_MAX:
            return cupy.stack([self._mv(X[:, j], transposed) for j in range(K)], axis=1)
        k = self.graph.kernel(K, self.device, transposed=transposed)
        X = _ready(X)
        Y = cupy.empty((n_out, K), dtype=np.float32)
        _lib.check(_lib.lib.sd_spmm(k.handle, X.data.ptr, Y.data.ptr,
                                    cupy.cuda.get_current_stream().ptr))
        return Y

    def _vector_product(self, x, transposed, what):
        x1, column = self._vector(x, transposed, what)
        y = self._mv(x1, transposed)
        return y.reshape(y.shape[0], 1) if column else y

    def _block_product(self, X, transposed, what):
        return self._mm(self._block(X, transposed, what), transposed)

    def _apply_vector(self, x, transposed, what):
        return self._on_device(self._vector_product, x, transposed, what)

    def _apply_block(self, X, transposed, what):
        return self._on_device(self._block_product, X, transposed, what)

    # The public methods check their argument here (clear errors for host arrays, wrong
    # dtypes and shapes) instead of the base class's "dimension mismatch".
    def matvec(self, x):
        """A·x for a cupy x of shape (cols,) or (cols, 1)."""
        return self._apply_vector(x, False, "x")

    def rmatvec(self, x):
        """Aᵀ·x for a cupy x of shape (rows,) or (rows, 1) (Aᴴ = Aᵀ: real matrix)."""
        return self._apply_vector(x, True, "x")

    def matmat(self, X):
        """A·X for a cupy X of shape (cols, K)."""
        return self._apply_block(X, False, "X")

    def rmatmat(self, X):
        """Aᵀ·X for a cupy X of shape (rows, K)."""
        return self._apply_block(X, True, "X")

    # The hooks the base class's adjoint / transpose operators call directly.
    _matvec, _rmatvec, _matmat, _rmatmat = matvec, rmatvec, matmat, rmatmat

    def dot(self, x):
        if not (isinstance(x, _CupyLinearOperator) or cupy.isscalar(x) or hasattr(x, "ndim")):
            raise TypeError(f"LinearOperator.dot: expected a cupy array, a scalar or a "
                            f"LinearOperator, got {type(x).__name__}")
        return super().dot(x)


def aslinearoperator(a, **options):
    """a as a sparseditto LinearOperator: returned as is when it already is one (options
    then must be empty), else LinearOperator(a, **options) for any matrix form
    LinearOperator takes."""
    if isinstance(a, LinearOperator):
        if options:
            raise ValueError("aslinearoperator: a is already compiled; options apply only "
                             "when building an operator")
        return a
    return LinearOperator(a, **options)
