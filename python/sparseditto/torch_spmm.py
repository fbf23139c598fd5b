# python/sparseditto/torch_spmm.py: SparseGraph (kernels per device and width, an id for the custom ops), SpMM, spmm / spmv and a GCN aggregation layer.
"""PyTorch integration: Y = A·X with compiled kernels, differentiable in X.

    graph = SparseGraph(A)            # A: CSRMatrix, path, scipy.sparse or torch sparse
    Y = SpMM.apply(graph, X)          # X: float32 (cols, K) or (cols,); Y: (rows, K) or (rows,)
    Y.sum().backward()                # X.grad = Aᵀ·1 through a kernel compiled for Aᵀ
    y = spmv(graph, x)                # x: float32 (cols,), through an SpMV kernel

Every product goes through the PyTorch custom operators sparseditto::spmm and
sparseditto::spmv (sparseditto.torch_ops), so torch.compile(model, fullgraph=True)
traces them without a graph break and a torch.cuda.CUDAGraph can capture them. CUDA
tensors run the compiled kernels on torch's current stream; CPU tensors run
torch.sparse (float32), which makes the same model trace and run without a GPU.

A is a constant of the graph (an adjacency, a stencil): it gets no gradient. The backward
pass uses a kernel compiled for Aᵀ, or the forward kernel when A is symmetric (pattern
and values; checked once per graph, O(nnz)). Kernels are compiled once per (matrix,
device, width K, compile options): each graph keeps its kernels, and a process-wide
table keyed by the matrix's hash (sd_csr_hash of pattern and values) lets graphs built
from the same matrix share them — two GCN layers over one adjacency compile once. Across
processes the library's on-disk cache turns a repeated compile into a lookup. A kernel
is compiled at its first use; before capturing a CUDA graph, run the model once or call
SparseGraph.prepare (compiling inside a capture would break it, so the ops refuse to).

The operators take the graph by its integer id (custom operators take no Python
objects): SparseGraph.id, unique in the process and never reused; the process keeps only
a weak reference, so keep the SparseGraph alive while a model uses its id. torch is
imported lazily: SpMM and GCNAggregation are built at first access, so
`import sparseditto` works without torch.
"""
import operator
import threading
import time
import weakref

from . import graphs as _graphs
from .api import compile as _compile, default_context
from .matrix import CSRMatrix, as_matrix

__all__ = ["SparseGraph", "SpMM", "GCNAggregation", "gcn_normalize", "spmm", "spmv",
           "clear_kernel_table", "graph_from_id"]

# (operator, matrix hash, shape, device, K, options) -> Kernel, shared by every
# SparseGraph of the process. Weak values: a kernel lives as long as some graph holds it.
_kernel_table = weakref.WeakValueDictionary()
_kernel_table_lock = threading.Lock()

# id -> SparseGraph, for the custom operators. Weak values: the id does not keep a graph
# alive; ids are never reused, so a stale id fails instead of reaching another graph.
_graph_registry = weakref.WeakValueDictionary()
_graph_registry_lock = threading.Lock()
_last_graph_id = 0


def _register(graph):
    global _last_graph_id
    with _graph_registry_lock:
        _last_graph_id += 1
        _graph_registry[_last_graph_id] = graph
        return _last_graph_id


def clear_kernel_table():
    """Forgets the process-wide kernel table (graphs keep the kernels they hold)."""
    with _kernel_table_lock:
        _kernel_table.clear()


def graph_from_id(graph_id):
    """The live SparseGraph with this id (SparseGraph.id); ValueError naming the cause
    when none has it (never created in this process, or garbage-collected since)."""
    if isinstance(graph_id, bool) or not isinstance(graph_id, int):
        raise TypeError(f"graph id: expected an int (SparseGraph.id), got "
                        f"{type(graph_id).__name__}")
    g = _graph_registry.get(graph_id)
    if g is None:
        why = ("no SparseGraph was created with it" if not 0 < graph_id <= _last_graph_id
               else "its SparseGraph has been garbage-collected; keep the SparseGraph "
                    "(or the module holding it) alive while its id is in use")
        raise ValueError(f"SparseGraph id {graph_id} is unknown in this process: {why}")
    return g


def _options_key(opts):
    return tuple(sorted((k, repr(v)) for k, v in opts.items()))


def _device_index(device):
    """A CUDA device ordinal from an int, "cuda", "cuda:N", a torch.device or None (the
    current device)."""
    if isinstance(device, bool):
        raise TypeError("device: expected an int, a string or a torch.device, got bool")
    if device is not None and not isinstance(device, str) and hasattr(device, "__index__"):
        d = operator.index(device)
        if d < 0:
            raise ValueError(f"device: ordinal {d} is negative")
        return d
    import torch  # a string or a torch.device: torch is the caller's already
    if device is None:
        return torch.cuda.current_device()
    d = torch.device(device)
    if d.type != "cuda":
        raise ValueError(f"device: kernels run on CUDA devices, got {d}")
    return d.index if d.index is not None else torch.cuda.current_device()


class SparseGraph:
    """A sparse matrix prepared for SpMM / SpMV in autograd, with its kernel cache.

    compile_options are passed to sparseditto.compile (budget, use_cache, allow_vendor,
    deterministic). id is the graph's handle for the custom operators
    (torch.ops.sparseditto.spmm(x, graph.id, transposed)). A graph is immutable: copying
    a module that holds one (copy.deepcopy) shares it."""

    def __init__(self, a, **compile_options):
        self.matrix = as_matrix(a)
        if "context" in compile_options:
            raise ValueError("SparseGraph: the context follows the tensors' device; "
                             "do not pass context=")
        self.compile_options = compile_options
        self._transpose = None
        self._symmetric = None
        self._hashes = {}   # transposed -> sd_csr_hash of the matrix (or of Aᵀ)
        self._kernels = {}  # (device, K, transposed) -> Kernel; K is None for SpMV
        self._cpu = {}      # transposed -> torch sparse CSR on the CPU (the CPU operators)
        self.compile_seconds = 0.0  # wall time this graph spent obtaining kernels
        self._lock = threading.Lock()
        self.id = _register(self)

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

    def _key(self, K, device, transposed):
        if K is not None:
            try:
                if isinstance(K, bool):
                    raise TypeError
                K = operator.index(K)
            except TypeError:
                raise TypeError(f"SparseGraph: K must be an int (None for SpMV), got "
                                f"{type(K).__name__}") from None
        # Aᵀ = A: one kernel serves both directions.
        return (_device_index(device), K, bool(transposed) and not self.symmetric)

    def held_kernel(self, K, device, transposed=False):
        """The kernel this graph already holds for (K, device, transposed), else None
        (nothing is compiled: what the operators use while a CUDA graph is captured)."""
        key = self._key(K, device, transposed)
        with self._lock:
            return self._kernels.get(key)

    def kernel(self, K, device, transposed=False):
        """The kernel for A (or Aᵀ) on a CUDA device ordinal: SpMM at width K, or SpMV
        when K is None. From this graph, else from the process-wide table, else compiled
        (once)."""
        key = self._key(K, device, transposed)
        transposed = key[2]
        with self._lock:
            k = self._kernels.get(key)
            if k is not None:
                return k
            t0 = time.perf_counter()
            m = self.transpose() if transposed else self.matrix
            h = self._hashes.get(transposed)
            if h is None:
                h = self._hashes[transposed] = m.hash(values=True)
            op = "spmv" if K is None else "spmm"
            gkey = (op, h, m.shape, key[0], K, _options_key(self.compile_options))
            with _kernel_table_lock:  # compiles are serialised by the library anyway
                k = _kernel_table.get(gkey)
                if k is None:
                    k = _compile(m, op, K=K, context=default_context(key[0]),
                                 **self.compile_options)
                    _kernel_table[gkey] = k
            self._kernels[key] = k
            self.compile_seconds += time.perf_counter() - t0
            return k

    def prepare(self, K, device=None, backward=True):
        """Obtains now the kernels that SpMM at width K (SpMV when K is None) on device
        will use, forward and, with backward, for the gradient (Aᵀ; nothing more when A
        is symmetric). device: an ordinal, "cuda", "cuda:N", a torch.device or None (the
        current device). Call it (or run the model once) before capturing a CUDA graph.
        Returns the graph."""
        dev = _device_index(device)
        self.kernel(K, dev)
        if backward:
            self.kernel(K, dev, transposed=True)
        return self

    def cpu_matrix(self, transposed=False):
        """A (or Aᵀ) as a float32 torch sparse CSR tensor on the CPU (built once): what
        the operators multiply CPU tensors with."""
        transposed = bool(transposed) and not self.symmetric
        with self._lock:
            t = self._cpu.get(transposed)
            if t is None:
                t = self._cpu[transposed] = (self.transpose() if transposed
                                             else self.matrix).to_torch()
            return t

    def kernels(self):
        """{(device, K, transposed): Kernel} held by this graph (a copy); K is None for
        SpMV kernels."""
        with self._lock:
            return dict(self._kernels)

    def close(self):
        """Drops this graph's kernels and CPU copies; each kernel is destroyed when no
        graph holds it any more (they are obtained again on next use, so the graph and
        its id stay usable)."""
        with self._lock:
            self._kernels.clear()
            self._cpu.clear()

    def __deepcopy__(self, memo):
        return self  # immutable; a copy would also need a new id and its own kernels

    def __repr__(self):
        return (f"SparseGraph(id={self.id}, shape={self.shape}, nnz={self.matrix.nnz}, "
                f"kernels={len(self._kernels)})")


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


_torch_ops = None  # sparseditto.torch_ops once loaded (it imports torch)


def _ops():
    """sparseditto.torch_ops (registers the custom operators at first use)."""
    global _torch_ops
    if _torch_ops is None:
        try:
            import torch  # noqa: F401
        except ImportError as e:
            raise ImportError("sparseditto.torch_spmm needs PyTorch (pip install torch)") from e
        from . import torch_ops
        _torch_ops = torch_ops
    return _torch_ops


def _graph_id(graph, what):
    if not isinstance(graph, SparseGraph):
        raise TypeError(f"{what}: expected a SparseGraph, got {type(graph).__name__}")
    return graph.id


_built = {}
_built_lock = threading.Lock()


def _build():
    """Defines the torch classes (once, at first access)."""
    with _built_lock:
        if _built:
            return _built
        ops = _ops()
        import torch

        class SpMM:
            """Y = A·X for a SparseGraph A and a float32 X of shape (cols, K) or (cols,),
            CUDA (compiled kernels) or CPU (torch.sparse); differentiable in X (A is
            constant). Use SpMM.apply(graph, X): the custom operator sparseditto::spmm,
            traced by torch.compile without a graph break."""

            @staticmethod
            def apply(graph, x):
                return ops.spmm(x, _graph_id(graph, "SpMM"), False)

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
                return ops.spmm(h, self.graph.id, False)

            def extra_repr(self):
                return f"n={self.graph.shape[0]}, nnz={self.graph.matrix.nnz}"

        _built["SpMM"] = SpMM
        _built["GCNAggregation"] = GCNAggregation
        # Plain module attributes from now on: no __getattr__ call per access.
        globals().update(_built)
        return _built


def spmm(graph, x):
    """SpMM.apply(graph, x), taking any matrix form for graph (a SparseGraph is reused;
    anything else builds a new SparseGraph, so kernels are not shared between calls)."""
    if not isinstance(graph, SparseGraph):
        graph = SparseGraph(graph)
    return _ops().spmm(x, graph.id, False)


def spmv(graph, x):
    """y = A·x through an SpMV kernel (the custom operator sparseditto::spmv): x float32
    of shape (cols,), CUDA or CPU; differentiable in x. graph as for spmm. For one vector
    an SpMV kernel is the right one; SpMM.apply on a (cols,) tensor runs SpMM at K = 1."""
    if not isinstance(graph, SparseGraph):
        graph = SparseGraph(graph)
    return _ops().spmv(x, graph.id, False)


def __getattr__(name):  # PEP 562: SpMM and GCNAggregation exist once torch is imported
    if name in ("SpMM", "GCNAggregation"):
        return _build()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
