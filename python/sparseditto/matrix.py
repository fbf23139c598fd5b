# python/sparseditto/matrix.py: CSRMatrix, a host CSR holding numpy arrays and an sd_csr view.
"""Host matrices for the binding.

A CSRMatrix owns three numpy arrays (int64 rowptr, int32 colind, float32 vals) in the
library's canonical form (columns sorted per row, no duplicates, finite values) and hands
the C library an sd_csr whose pointers point into them: no copy on any call.

Value conversion rule (documented contract): matrix values of any real dtype (float64,
float16, integers, bool) are converted to float32 by rounding to nearest, as numpy's
astype does; complex values are refused (TypeError); a value that is NaN or Inf, or that
overflows float32, is refused by sd_csr_check (SparseDittoError naming the row). Kernel
operands are different: they must already be float32 (see Kernel.__call__).
"""
import ctypes
import os

import numpy as np

from . import _lib
from ._lib import SdCsr, SparseDittoError, Status

__all__ = ["CSRMatrix", "as_matrix"]

_I32_MAX = 2**31 - 1


def _float32_values(vals, what):
    vals = np.asarray(vals)
    if np.iscomplexobj(vals):
        raise TypeError(f"{what}: complex values are not supported (FP32 real only)")
    if vals.dtype.kind not in "fiub":
        raise TypeError(f"{what}: values of dtype {vals.dtype} are not numbers")
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is caught by sd_csr_check
        return np.ascontiguousarray(vals, dtype=np.float32)


def _check_shape(shape, what):
    if len(shape) != 2:
        raise ValueError(f"{what}: a matrix has 2 dimensions, got shape {tuple(shape)}")
    rows, cols = (int(s) for s in shape)
    if rows < 0 or cols < 0:
        raise ValueError(f"{what}: negative dimension in shape {(rows, cols)}")
    if rows > _I32_MAX or cols > _I32_MAX:
        raise ValueError(f"{what}: shape {(rows, cols)} is beyond the int32 index range")
    return rows, cols


class CSRMatrix:
    """A host CSR matrix in canonical form, backed by numpy arrays.

    Build one with CSRMatrix.from_scipy, from_torch, from_coo, read (a file) or the
    constructor (arrays already canonical). Every constructor checks the invariants with
    sd_csr_check, so a CSRMatrix that exists is valid input for every C call.
    """

    __slots__ = ("rowptr", "colind", "vals", "shape", "__weakref__")

    def __init__(self, rowptr, colind, vals, shape):
        """Takes canonical CSR arrays (sorted unique columns per row); converts rowptr to
        int64, colind to int32 (refusing values that do not fit) and vals to float32 (the
        module's rule), then checks them with sd_csr_check."""
        rows, cols = _check_shape(shape, "CSRMatrix")
        rowptr = np.asarray(rowptr)
        colind = np.asarray(colind)
        if rowptr.ndim != 1 or colind.ndim != 1 or np.ndim(vals) != 1:
            raise ValueError("CSRMatrix: rowptr, colind and vals must be 1-D arrays")
        if rowptr.dtype.kind not in "iu" or colind.dtype.kind not in "iu":
            raise TypeError("CSRMatrix: rowptr and colind must be integer arrays")
        if rowptr.shape[0] != rows + 1:
            raise ValueError(f"CSRMatrix: rowptr has {rowptr.shape[0]} entries, expected "
                             f"rows + 1 = {rows + 1}")
        if colind.size and (colind.min() < 0 or colind.max() > _I32_MAX):
            raise ValueError("CSRMatrix: a column index is outside [0, 2^31)")
        self.rowptr = np.ascontiguousarray(rowptr, dtype=np.int64)
        self.colind = np.ascontiguousarray(colind, dtype=np.int32)
        self.vals = _float32_values(vals, "CSRMatrix")
        if self.colind.shape[0] != self.vals.shape[0]:
            raise ValueError(f"CSRMatrix: colind has {self.colind.shape[0]} entries and vals "
                             f"{self.vals.shape[0]}")
        self.shape = (rows, cols)
        self.check()

    # ------------------------------------------------------------ the C view
    @property
    def nnz(self):
        return int(self.colind.shape[0])

    def _as_sd_csr(self):
        """A fresh sd_csr view (pointers into the numpy arrays, which self keeps alive; pass
        it with ctypes.byref, which keeps the struct alive for the call). Built per call, so
        arrays replaced since construction are seen, after checking their dtypes."""
        for name, dt in (("rowptr", np.int64), ("colind", np.int32), ("vals", np.float32)):
            arr = getattr(self, name)
            if not (isinstance(arr, np.ndarray) and arr.dtype == dt and arr.ndim == 1
                    and arr.flags.c_contiguous):
                raise TypeError(f"CSRMatrix.{name} must stay a contiguous 1-D {np.dtype(dt)} "
                                "array (build a new CSRMatrix instead)")
        if self.rowptr.shape[0] != self.shape[0] + 1 or self.colind.shape != self.vals.shape:
            raise ValueError("CSRMatrix: the arrays no longer match the shape")
        v = SdCsr()
        v.rows, v.cols = self.shape
        v.nnz = self.nnz
        v.rowptr = self.rowptr.ctypes.data_as(ctypes.POINTER(ctypes.c_int64))
        v.colind = self.colind.ctypes.data_as(ctypes.POINTER(ctypes.c_int32))
        v.vals = self.vals.ctypes.data_as(ctypes.POINTER(ctypes.c_float))
        return v

    def check(self):
        """sd_csr_check: sizes, monotone rowptr, sorted unique in-range columns, finite
        values; raises SparseDittoError naming the first offending row."""
        _lib.check(_lib.lib.sd_csr_check(ctypes.byref(self._as_sd_csr())))

    # ------------------------------------------------------------ constructors
    @classmethod
    def read(cls, path):
        """Reads .mtx, .mtx.gz or .sdm with sd_csr_read (symmetric files expanded,
        duplicates summed); the arrays are copied into numpy and the C arrays freed."""
        c = SdCsr()
        _lib.check(_lib.lib.sd_csr_read(os.fsencode(path), ctypes.byref(c)))
        return cls._adopt(c)

    @classmethod
    def _adopt(cls, c):
        """A CSRMatrix holding numpy copies of an sd_csr the library filled; frees c."""
        try:
            rows, cols, nnz = int(c.rows), int(c.cols), int(c.nnz)
            rowptr = _copy(c.rowptr, rows + 1, np.int64)
            colind = _copy(c.colind, nnz, np.int32)
            vals = _copy(c.vals, nnz, np.float32)
        finally:
            _lib.lib.sd_csr_free(ctypes.byref(c))
        if rowptr.shape[0] == 0:  # a reader may leave rowptr NULL for 0 rows
            rowptr = np.zeros(1, dtype=np.int64)
        return cls(rowptr, colind, vals, (rows, cols))

    @classmethod
    def from_scipy(cls, m):
        """Any scipy.sparse matrix or array (COO, CSC, BSR, …): converted to CSR with
        duplicates summed and columns sorted; explicit zeros kept (they are structural)."""
        import scipy.sparse as sp
        if not sp.issparse(m):
            raise TypeError(f"from_scipy: expected a scipy.sparse matrix, got {type(m).__name__}")
        if np.issubdtype(m.dtype, np.complexfloating):
            raise TypeError("from_scipy: complex values are not supported (FP32 real only)")
        _check_shape(m.shape, "from_scipy")
        csr = sp.csr_matrix(m, copy=True)
        csr.sum_duplicates()  # also sorts the indices; keeps explicit zeros
        return cls(csr.indptr, csr.indices, csr.data, csr.shape)

    @classmethod
    def from_coo(cls, row, col, vals, shape):
        """From coordinate triples in any order, duplicates summed (numpy only)."""
        rows, cols = _check_shape(shape, "from_coo")
        row = np.asarray(row).ravel()
        col = np.asarray(col).ravel()
        vals = np.asarray(vals).ravel()
        if not (row.shape == col.shape == vals.shape):
            raise ValueError(f"from_coo: row, col and vals have {row.size}, {col.size} and "
                             f"{vals.size} entries")
        if row.size and (row.dtype.kind not in "iu" or col.dtype.kind not in "iu"):
            raise TypeError("from_coo: row and col must be integer arrays")
        row = row.astype(np.int64)
        col = col.astype(np.int64)
        for name, idx, lim in (("row", row, rows), ("column", col, cols)):
            bad = np.flatnonzero((idx < 0) | (idx >= lim))
            if bad.size:
                raise ValueError(f"from_coo: entry {bad[0]} has {name} index {idx[bad[0]]} "
                                 f"outside [0, {lim})")
        # Sum duplicates in double, then round once to float32 (the module's rule).
        v = np.asarray(vals)
        if np.iscomplexobj(v):
            raise TypeError("from_coo: complex values are not supported (FP32 real only)")
        v = v.astype(np.float64)
        order = np.lexsort((col, row))
        row, col, v = row[order], col[order], v[order]
        if row.size:
            first = np.ones(row.size, dtype=bool)
            first[1:] = (row[1:] != row[:-1]) | (col[1:] != col[:-1])
            starts = np.flatnonzero(first)
            v = np.add.reduceat(v, starts)
            row, col = row[starts], col[starts]
        rowptr = np.zeros(rows + 1, dtype=np.int64)
        np.cumsum(np.bincount(row, minlength=rows), out=rowptr[1:])
        return cls(rowptr, col, v, (rows, cols))

    @classmethod
    def from_torch(cls, t):
        """A torch sparse CSR or COO tensor (2-D, real); copied to the host."""
        import torch  # lazily: the package works without torch
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"from_torch: expected a torch.Tensor, got {type(t).__name__}")
        if t.is_complex():
            raise TypeError("from_torch: complex values are not supported (FP32 real only)")
        if t.dim() != 2:
            raise ValueError(f"from_torch: a matrix has 2 dimensions, got {t.dim()}")
        t = t.detach()
        shape = _check_shape(tuple(t.shape), "from_torch")
        if t.layout == torch.sparse_coo:
            t = t.cpu().coalesce()  # sorted by (row, column), duplicates summed: canonical
            idx = t.indices().numpy()
            if idx.shape[1] and (idx.min() < 0 or idx[0].max() >= shape[0]
                                 or idx[1].max() >= shape[1]):
                raise ValueError("from_torch: an index lies outside the shape")
            rowptr = np.zeros(shape[0] + 1, dtype=np.int64)
            np.cumsum(np.bincount(idx[0], minlength=shape[0]), out=rowptr[1:])
            return cls(rowptr, idx[1], t.values().numpy(), shape)
        if t.layout == torch.sparse_csr:
            t = t.cpu()
            rowptr = t.crow_indices().numpy().astype(np.int64)
            colind = t.col_indices().numpy()
            vals = t.values().numpy()
            try:  # usually canonical already (sd_csr_check says so in O(nnz))
                return cls(rowptr, colind, vals, shape)
            except SparseDittoError:
                pass
            # torch does not promise sorted, unique columns: canonicalise through COO.
            row = np.repeat(np.arange(shape[0], dtype=np.int64), np.diff(rowptr))
            return cls.from_coo(row, colind, vals, shape)
        raise TypeError(f"from_torch: layout {t.layout} is not sparse CSR or COO "
                        "(dense tensors: call .to_sparse_csr() first)")

    # ------------------------------------------------------------ conversions
    def to_scipy(self):
        import scipy.sparse as sp
        return sp.csr_matrix((self.vals.copy(), self.colind.copy(), self.rowptr.copy()),
                             shape=self.shape)

    def to_torch(self, device=None):
        """A torch sparse CSR tensor (float32, int64 indices) with a copy of the data."""
        import torch
        return torch.sparse_csr_tensor(
            torch.from_numpy(self.rowptr.copy()),
            torch.from_numpy(self.colind.astype(np.int64)),
            torch.from_numpy(self.vals.copy()), size=self.shape, device=device)

    def write(self, path):
        """sd_csr_write: Matrix Market, or .sdm when the path ends in ".sdm" (atomic)."""
        _lib.check(_lib.lib.sd_csr_write(os.fsencode(path), ctypes.byref(self._as_sd_csr())))

    def row_of_entries(self):
        """The row index of every stored entry (int64, nnz entries)."""
        return np.repeat(np.arange(self.shape[0], dtype=np.int64), np.diff(self.rowptr))

    def transpose(self):
        """Aᵀ in canonical form (sd_csr_transpose: one counting sort, O(nnz))."""
        c = SdCsr()
        _lib.check(_lib.lib.sd_csr_transpose(ctypes.byref(self._as_sd_csr()), ctypes.byref(c)))
        return CSRMatrix._adopt(c)

    def is_symmetric(self):
        """True when A equals Aᵀ exactly (pattern and values)."""
        if self.shape[0] != self.shape[1]:
            return False
        t = self.transpose()
        return (np.array_equal(t.rowptr, self.rowptr) and np.array_equal(t.colind, self.colind)
                and np.array_equal(t.vals, self.vals))

    def hash(self, values=True):
        """32 hex digits: XXH3-128 of the pattern (the kernel cache's key) or, by default,
        of the pattern and the values (sd_csr_hash): equal hashes, same kernel."""
        buf = ctypes.create_string_buffer(33)
        _lib.check(_lib.lib.sd_csr_hash(ctypes.byref(self._as_sd_csr()), int(bool(values)), buf))
        return buf.value.decode()

    def __repr__(self):
        return f"CSRMatrix(shape={self.shape}, nnz={self.nnz})"


def _copy(ptr, n, dtype):
    """A numpy copy of n elements at a ctypes pointer (NULL allowed when n == 0)."""
    if n == 0:
        return np.zeros(0, dtype=dtype)
    if not ptr:
        raise SparseDittoError(Status.INTERNAL, "the library returned a NULL array with "
                               f"{n} entries")
    return np.ctypeslib.as_array(ptr, shape=(n,)).astype(dtype, copy=True)


def as_matrix(a):
    """A CSRMatrix from whatever the user passed: a CSRMatrix (as is), a path (str or
    os.PathLike: read), a scipy.sparse matrix or a torch sparse tensor."""
    if isinstance(a, CSRMatrix):
        return a
    if isinstance(a, (str, bytes, os.PathLike)):
        return CSRMatrix.read(a)
    mod = type(a).__module__ or ""
    if mod.startswith("scipy."):
        return CSRMatrix.from_scipy(a)
    if mod.startswith("torch"):
        return CSRMatrix.from_torch(a)
    raise TypeError(f"cannot make a sparse matrix from {type(a).__name__}: pass a CSRMatrix, "
                    "a file path, a scipy.sparse matrix or a torch sparse tensor")
