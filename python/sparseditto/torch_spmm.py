# python/sparseditto/torch_spmm.py: SpMM as a torch autograd function and a GCN aggregation layer.
"""PyTorch integration: Y = A·X with compiled kernels, differentiable in X.

    graph = SparseGraph(A)            # A: CSRMatrix, path, scipy.sparse or torch sparse
    Y = SpMM.apply(graph, X)          # X: CUDA float32 (cols, K); Y: (rows, K)
    Y.sum().backward()                # X.grad = Aᵀ·1 through a kernel compiled for Aᵀ

A is a constant of the graph (an adjacency, a stencil): it gets no gradient. The backward
pass uses a kernel compiled for Aᵀ, or the forward kernel when A is symmetric (pattern
and values; checked once per graph, O(nnz)). Kernels are compiled once per (matrix,
device, width K, compile options): each graph keeps its kernels, and a process-wide table
keyed by the matrix's hash (sd_csr_hash of pattern and values) lets graphs built from the
same matrix share them — two GCN layers over one adjacency compile once. Across
processes the library's on-disk cache turns a repeated compile into a lookup. torch is
imported lazily: SpMM and GCNAggregation are built at first access, so
`import sparseditto` works without torch.
"""
import threading
import weakref

from . import graphs as _graphs
from .api import compile as _compile, default_context
from .matrix import CSRMatrix, as_matrix

__all__ = ["SparseGraph", "SpMM", "GCNAggregation", "gcn_normalize", "spmm",
           "clear_kernel_table"]

# (matrix hash, shape, device, K, options) -> Kernel, shared by every SparseGraph of the
# process. Weak values: a kernel lives as long as some graph holds it.
_kernel_table = weakref.WeakValueDictionary()
_kernel_table_lock = threading.Lock()


def clear_kernel_table():
    """Forgets the process-wide kernel table (graphs keep the kernels they hold)."""
    with _kernel_table_lock:
        _kernel_table.clear()


def _options_key(opts):
    return tuple(sorted((k, repr(v)) for k, v in opts.items()))


class SparseGraph:
    """A sparse matrix prepared for SpMM in autograd, with its kernel cache.

    compile_options are passed to sparseditto.compile (budget, use_cache, allow_vendor,
    deterministic)."""

    def __init__(self, a, **compile_options):
        self.matrix = as_matrix(a)
        if "context" in compile_options:
            raise ValueError("SparseGraph: the context follows the tensors' device; "
                             "do not pass context=")
        self.compile_options = compile_options
        self._transpose = None
        self._symmetric = None
        self._hashes = {}   # transposed -> sd_csr_hash of the matrix (or of Aᵀ)
        self._kernels = {}  # (device, K, transposed) -> Kernel
        self.compile_seconds = 0.0  # wall time this graph spent obtaining kernels
        self._lock = threading.Lock()

    @property
    def shape(self):
        return self.matrix.shape

    @property
    def symmetric(self):
        if self._symmetric is None:
            self._symmetric = self.matrix.is_symmetric()
        return self._symmetric

    def transpose(self):
        """Aᵀ (computed once; A itself when A is symmetric)."""
        if self.symmetric:
            return self.matrix
        if self._transpose is None:
            self._transpose = self.matrix.transpose()
        return self._transpose

    def kernel(self, K, device, transposed=False):
        """The SpMM kernel for A (or Aᵀ) at width K on a CUDA device ordinal: from this
        graph, else from the process-wide table, else compiled (once)."""
        import time
        if transposed and self.symmetric:
            transposed = False  # Aᵀ = A: one kernel serves both directions
        key = (int(device), int(K), bool(transposed))
        with self._lock:
            k = self._kernels.get(key)
            if k is not None:
                return k
            t0 = time.perf_counter()
            m = self.transpose() if transposed else self.matrix
            h = self._hashes.get(transposed)
            if h is None:
                h = self._hashes[transposed] = m.hash(values=True)
            gkey = (h, m.shape, key[0], key[1], _options_key(self.compile_options))
            with _kernel_table_lock:  # compiles are serialised by the library anyway
                k = _kernel_table.get(gkey)
                if k is None:
                    k = _compile(m, "spmm", K=key[1], context=default_context(key[0]),
                                 **self.compile_options)
                    _kernel_table[gkey] = k
            self._kernels[key] = k
            self.compile_seconds += time.perf_counter() - t0
            return k

    def kernels(self):
        """{(device, K, transposed): Kernel} held by this graph (a copy)."""
        with self._lock:
            return dict(self._kernels)

    def close(self):
        """Drops this graph's kernels; each is destroyed when no graph holds it any more
        (they are obtained again on next use)."""
        with self._lock:
            self._kernels.clear()

    def __repr__(self):
        return f"SparseGraph(shape={self.shape}, nnz={self.matrix.nnz}, kernels={len(self._kernels)})"


def gcn_normalize(a, add_self_loops=True):
    """Â = D^-1/2 (A + I) D^-1/2 (Kipf and Welling), D the row sums of A + I; rows with
    zero degree get 0. A self loop adds 1 to an existing diagonal entry. Returns a
    CSRMatrix; a symmetric A gives a bitwise symmetric Â (graphs.gcn_normalize, O(nnz))."""
    m = as_matrix(a)
    rows, cols = m.shape
    if rows != cols:
        raise ValueError(f"gcn_normalize: the adjacency must be square, got {rows}x{cols}")
    rp, ci, v = _graphs.gcn_normalize(m.rowptr, m.colind, m.vals, add_self_loops=add_self_loops)
    return CSRMatrix(rp, ci, v, (rows, cols))


def _prepare(torch, t, what, device=None):
    """A contiguous, 16-byte aligned CUDA float32 2-D view of t (a copy only when needed)."""
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{what}: expected a torch.Tensor, got {type(t).__name__}")
    if not t.is_cuda:
        raise ValueError(f"{what}: the tensor is on {t.device}; SpMM runs on CUDA tensors")
    if t.dtype != torch.float32:
        raise TypeError(f"{what}: dtype is {t.dtype}; the kernels take torch.float32")
    if device is not None and t.device != device:
        raise ValueError(f"{what}: on {t.device}, expected {device}")
    t = t.contiguous()
    if t.data_ptr() % 16 != 0:  # a view into a larger tensor: the kernels need alignment
        t = t.clone()
    return t


_built = {}
_built_lock = threading.Lock()


def _build():
    """Defines the torch classes (once, at first access)."""
    with _built_lock:
        if _built:
            return _built
        try:
            import torch
        except ImportError as e:
            raise ImportError("sparseditto.torch_spmm needs PyTorch (pip install torch)") from e
        from torch.autograd.function import once_differentiable

        class SpMM(torch.autograd.Function):
            """Y = A·X for a SparseGraph A and a CUDA float32 X of shape (cols, K) or
            (cols,); differentiable in X (A is constant). Use SpMM.apply(graph, X)."""

            @staticmethod
            def forward(ctx, graph, x):
                if not isinstance(graph, SparseGraph):
                    raise TypeError(f"SpMM: expected a SparseGraph, got {type(graph).__name__}")
                rows, cols = graph.shape
                vector = x.dim() == 1
                x2 = x.unsqueeze(1) if vector else x
                if x2.dim() != 2 or x2.shape[0] != cols:
                    raise ValueError(f"SpMM: X has shape {tuple(x.shape)}; A is {rows}x{cols}, "
                                     f"so X must be ({cols}, K) or ({cols},)")
                x2 = _prepare(torch, x2, "X")
                K = x2.shape[1]
                if K == 0:
                    raise ValueError("SpMM: X has width 0 (K must be at least 1)")
                dev = x2.device.index if x2.device.index is not None else torch.cuda.current_device()
                y = torch.empty((rows, K), dtype=torch.float32, device=x2.device)
                graph.kernel(K, dev)(x2, out=y)
                ctx.graph = graph
                ctx.vector = vector
                ctx.dev = dev
                ctx.in_device = x2.device
                return y.squeeze(1) if vector else y

            @staticmethod
            @once_differentiable
            def backward(ctx, grad):
                if not ctx.needs_input_grad[1]:
                    return None, None
                graph = ctx.graph
                rows, cols = graph.shape
                g = grad.unsqueeze(1) if ctx.vector else grad
                g = _prepare(torch, g, "grad", device=ctx.in_device)
                K = g.shape[1]
                gx = torch.empty((cols, K), dtype=torch.float32, device=g.device)
                graph.kernel(K, ctx.dev, transposed=True)(g, out=gx)  # X̄ = Aᵀ·Ȳ
                return None, (gx.squeeze(1) if ctx.vector else gx)

        class GCNAggregation(torch.nn.Module):
            """The propagation step of a graph convolution, H' = Â·H, with Â the
            normalised adjacency (gcn_normalize) or the given matrix as is.

            adjacency: a CSRMatrix, path, scipy.sparse or torch sparse matrix (square), or
            a SparseGraph used as is (layers sharing one graph share its kernels).
            normalize: apply gcn_normalize (with self loops when add_self_loops); the
            default is True for a matrix and False for a SparseGraph."""

            def __init__(self, adjacency, normalize=None, add_self_loops=True, **compile_options):
                super().__init__()
                if isinstance(adjacency, SparseGraph):
                    if normalize or compile_options:
                        raise ValueError("GCNAggregation: a SparseGraph is used as is (its "
                                         "matrix and compile options are fixed)")
                    self.graph = adjacency
                    return
                if normalize is None:
                    normalize = True
                m = as_matrix(adjacency)
                if m.shape[0] != m.shape[1]:
                    raise ValueError(f"GCNAggregation: the adjacency must be square, got "
                                     f"{m.shape[0]}x{m.shape[1]}")
                if normalize:
                    m = gcn_normalize(m, add_self_loops=add_self_loops)
                self.graph = SparseGraph(m, **compile_options)

            def forward(self, h):
                return SpMM.apply(self.graph, h)

            def extra_repr(self):
                return f"n={self.graph.shape[0]}, nnz={self.graph.matrix.nnz}"

        _built["SpMM"] = SpMM
        _built["GCNAggregation"] = GCNAggregation
        return _built


def spmm(graph, x):
    """SpMM.apply(graph, x), taking any matrix form for graph (a SparseGraph is reused;
    anything else builds a new SparseGraph, so kernels are not shared between calls)."""
    if not isinstance(graph, SparseGraph):
        graph = SparseGraph(graph)
    return _build()["SpMM"].apply(graph, x)


def __getattr__(name):  # PEP 562: SpMM and GCNAggregation exist once torch is imported
    if name in ("SpMM", "GCNAggregation"):
        return _build()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
