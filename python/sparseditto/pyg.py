# python/sparseditto/pyg.py: PyG-compatible GCNConv and SAGEConv whose aggregation runs on SparseDitto kernels.
"""Drop-in layers for PyTorch Geometric users.

    from sparseditto.pyg import GCNConv, SAGEConv, patch
    conv = GCNConv(602, 128, cached=True)     # torch_geometric.nn.GCNConv's arguments
    out = conv(x, edge_index, edge_weight)     # PyG's forward and output
    model = patch(model)                       # PyG's GCNConv / SAGEConv swapped for these

The layers take PyG 2.8's constructor arguments, forward signatures and parameter names
(GCNConv: lin.weight, bias; SAGEConv: lin_l.weight, lin_l.bias, lin_r.weight and, with
project=True, lin.weight, lin.bias), so state_dicts load in both directions. Only the
aggregation differs: PyG gathers one message per edge and scatters them; here A·H is one
SpMM on a CSR matrix built once per graph.

The matrix. PyG sends messages from edge_index[0] (source j) to edge_index[1] (target i),
out_i = Σ_j w_ji·x_j, so A[i, j] = w for each edge j → i (duplicate edges summed); a
torch sparse tensor or a torch_sparse SparseTensor is PyG's adj_t (rows are targets),
used as is; an EdgeIndex is read as its edge_index; flow="target_to_source" swaps the two
rows of edge_index. Then, as PyG 2.8 computes it (float64 here, one rounding to float32):
  GCNConv   Â = D^-1/2 (A + L) D^-1/2 with D the row sums of A + L (in-degrees) and L
            the self loops: with edge_index, every node without a self loop gets one of
            weight 2 (improved=True with edge_weight given) or 1 (otherwise: PyG adds the
            loops before it fills missing weights with ones), nodes with one keep it;
            with a torch sparse adjacency the fill (2 when improved) is added to the
            diagonal; with a SparseTensor the diagonal is replaced by it.
            normalize=False: A as given (no loops).
  SAGEConv  aggr="mean": row i of A divided by its number of entries (edges into i; for
            a sparse adjacency its stored entries, values kept; a SparseTensor's values
            are dropped, as PyG does); aggr="sum"/"add": A. No self loops.

Where it runs. CUDA float32 features: sparseditto.torch.SpMM on a SparseGraph of the
matrix (a kernel compiled per width K, shared by all graphs of the same matrix in the
process; the library's disk cache serves later processes); the backward pass multiplies
by Aᵀ. CPU tensors, or engine="torch": torch.sparse.mm on the same CSR matrix, with the
transpose precomputed for the backward pass. CUDA features of another dtype: TypeError
(the kernels are FP32; engine="torch" runs any dtype torch.sparse takes). The adjacency
is a constant: an edge_weight that requires grad is refused rather than cut off.
GCNConv applies its linear map before the aggregation, as PyG does; SAGEConv aggregates
at the narrower of its input and output widths (the map is linear, so the result is the
same up to rounding), so the SpMM runs at min(in, out) columns.

When the matrix is built (the cache rule).
  cached=True (GCNConv with normalize=True): at the first forward, then reused whatever
    graph is passed later (PyG's rule, for transductive training); reset_parameters()
    forgets it.
  otherwise: a process-wide table (CACHE_SIZE entries, least recently used out first)
    keyed by the layer's graph options (kind, improved, self loops, normalisation,
    aggregation, flow, sizes), the compile options and the identity of the graph inputs:
    the edge_index (or sparse adjacency) and edge_weight objects themselves, their
    version counters (an in-place change bumps them), data pointers, shapes and devices.
    Passing the same tensor again, as a full-batch training loop does, reuses the matrix
    and its kernels, also across the layers of a model; a new tensor object, even with
    equal contents, builds the matrix again (its kernels then come from the kernel table
    or the disk cache when the matrix is unchanged). An entry goes when its tensors are
    freed; clear_cache() empties the table.

Not supported (ValueError at construction): GCNConv aggregations other than "add"/"sum",
SAGEConv aggregations other than "mean"/"sum"/"add" (lists, Aggregation modules, "max",
"lstm", ...), aggr_kwargs, node_dim other than -2 or 0, flow other than PyG's two;
unknown keyword arguments are a TypeError. decomposed_layers is accepted and ignored (it
splits PyG's per-edge messages to save memory; there are none here). x must be 2-D.
in_channels=-1 (lazy) uses torch.nn.LazyLinear, initialised as torch initialises it.
"""
import collections
import threading
import weakref

import torch
import torch.nn.functional as F

from . import torch as _sdt
from .matrix import CSRMatrix

__all__ = ["GCNConv", "SAGEConv", "Adjacency", "gcn_adjacency", "sage_adjacency", "patch",
           "to_sparseditto", "clear_cache", "CACHE_SIZE"]

CACHE_SIZE = 8
_ENGINES = ("sparseditto", "torch")
_FLOWS = ("source_to_target", "target_to_source")


# ---------------------------------------------------------------- the matrix

class _TorchSpMM(torch.autograd.Function):
    """A·X with torch.sparse; backward Aᵀ·G with the precomputed Aᵀ."""

    @staticmethod
    def forward(ctx, x, a, at):
        ctx.at = at
        return torch.sparse.mm(a, x)

    @staticmethod
    def backward(ctx, g):
        return torch.sparse.mm(ctx.at, g.contiguous()), None, None


def _csr_arrays(row, col, val, shape):
    """Canonical CSR (rowptr int64, colind int64, vals) of COO triples, duplicates summed
    (sorted by row, then column)."""
    n_rows, n_cols = shape
    key = row * n_cols + col
    uniq, inv = torch.unique(key, sorted=True, return_inverse=True)
    vals = torch.zeros(uniq.numel(), dtype=val.dtype, device=val.device).index_add_(0, inv, val)
    rows = uniq // n_cols
    rowptr = torch.zeros(n_rows + 1, dtype=torch.int64, device=row.device)
    rowptr[1:] = torch.cumsum(torch.bincount(rows, minlength=n_rows), 0)
    return rowptr, uniq % n_cols, vals


class Adjacency:
    """A sparse matrix A (rows: targets, columns: sources) in canonical CSR on the
    graph's device, and the two ways to run A·X: a sparseditto.torch.SparseGraph (CUDA,
    built at first use) and torch.sparse CSR tensors of A and Aᵀ (built at first use)."""

    def __init__(self, rowptr, colind, vals, shape, compile_options=None):
        self.rowptr, self.colind = rowptr, colind
        self.vals = vals.to(torch.float32)
        self.shape = (int(shape[0]), int(shape[1]))
        self.compile_options = dict(compile_options or {})
        self._graph = None
        self._torch = None
        self._lock = threading.Lock()

    @property
    def nnz(self):
        return int(self.colind.numel())

    @property
    def device(self):
        return self.rowptr.device

    @property
    def compile_seconds(self):
        """Seconds the SparseGraph spent obtaining kernels (0 before it exists)."""
        return self._graph.compile_seconds if self._graph is not None else 0.0

    def sparse_graph(self):
        """The sparseditto.torch.SparseGraph of A (host copy made once)."""
        with self._lock:
            if self._graph is None:
                m = CSRMatrix(self.rowptr.cpu().numpy(), self.colind.to(torch.int32).cpu().numpy(),
                              self.vals.cpu().numpy(), self.shape)
                self._graph = _sdt.SparseGraph(m, **self.compile_options)
            return self._graph

    def torch_csr(self, dtype=torch.float32):
        """(A, Aᵀ) as torch sparse CSR tensors of dtype, on the graph's device."""
        with self._lock:
            if self._torch is None or self._torch[0].dtype != dtype:
                # int32 indices halve cuSPARSE's index traffic; the CPU kernels get int64.
                idx = torch.int32 if self.device.type == "cuda" and self.nnz < 2**31 else torch.int64
                v = self.vals.to(dtype)
                a = torch.sparse_csr_tensor(self.rowptr.to(idx), self.colind.to(idx), v,
                                            self.shape)
                rows = torch.repeat_interleave(
                    torch.arange(self.shape[0], device=self.device), self.rowptr.diff())
                order = torch.argsort(self.colind * self.shape[0] + rows)
                cols_t = self.colind[order]
                rowptr_t = torch.zeros(self.shape[1] + 1, dtype=torch.int64, device=self.device)
                rowptr_t[1:] = torch.cumsum(torch.bincount(cols_t, minlength=self.shape[1]), 0)
                at = torch.sparse_csr_tensor(rowptr_t.to(idx), rows[order].to(idx), v[order],
                                             (self.shape[1], self.shape[0]))
                self._torch = (a, at)
            return self._torch

    def matmul(self, x, engine="sparseditto"):
        """A·x for x of shape (cols, K), differentiable in x."""
        if x.dim() != 2 or x.shape[0] != self.shape[1]:
            raise ValueError(f"sparseditto.pyg: the features have shape {tuple(x.shape)}; the "
                             f"graph's matrix is {self.shape[0]}x{self.shape[1]}, so they need "
                             f"{self.shape[1]} rows")
        if x.device != self.device:
            raise ValueError(f"sparseditto.pyg: the features are on {x.device} and the graph on "
                             f"{self.device}")
        if self.nnz == 0 or x.shape[1] == 0:
            return x.new_zeros((self.shape[0], x.shape[1]))
        if engine == "sparseditto" and x.is_cuda:
            if x.dtype != torch.float32:
                raise TypeError(f"sparseditto.pyg: the kernels take float32 features, got "
                                f"{x.dtype} (convert them, or pass engine='torch')")
            return _sdt.SpMM.apply(self.sparse_graph(), x)
        a, at = self.torch_csr(x.dtype)
        return _TorchSpMM.apply(x.contiguous(), a, at)

    def __deepcopy__(self, memo):
        return self  # a constant of the graph: copies of a model share it

    def __getstate__(self):  # pickling a model: the arrays, not the kernels or the lock
        return {k: self.__dict__[k] for k in ("rowptr", "colind", "vals", "shape",
                                              "compile_options")}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._graph = self._torch = None
        self._lock = threading.Lock()

    def __repr__(self):
        return f"Adjacency(shape={self.shape}, nnz={self.nnz}, device={self.device})"


def _build(row, col, val, shape, loops=None, fill=1.0, norm=None, compile_options=None):
    """Adjacency of COO triples (row = target): self loops ("remaining": nodes without one
    get fill; "add": fill added to the diagonal; "replace": the diagonal becomes fill),
    then the normalisation ("sym": D^-1/2 A D^-1/2, D the row sums; "mean": each row
    divided by its entry count). float64 arithmetic, one rounding to float32."""
    dev = row.device
    val = (torch.ones(row.numel(), dtype=torch.float64, device=dev) if val is None
           else val.detach().to(dev, torch.float64))
    if loops is not None:
        n = shape[0]
        ar = torch.arange(n, device=dev)
        w = torch.full((n,), float(fill), dtype=torch.float64, device=dev)
        is_loop = row == col
        if loops == "remaining":
            w[row[is_loop]] = val[is_loop]
        if loops in ("remaining", "replace"):
            keep = ~is_loop
            row, col, val = row[keep], col[keep], val[keep]
        row, col, val = torch.cat([row, ar]), torch.cat([col, ar]), torch.cat([val, w])
    if norm == "sym":
        deg = torch.zeros(shape[0], dtype=torch.float64, device=dev).index_add_(0, row, val)
        dinv = deg.pow(-0.5)
        dinv.masked_fill_(torch.isinf(dinv), 0.0)
        val = dinv[row] * val * dinv[col]
    elif norm == "mean":
        cnt = torch.bincount(row, minlength=shape[0]).clamp_(min=1).to(torch.float64)
        val = val / cnt[row]
    rowptr, colind, vals = _csr_arrays(row, col, val, shape)
    return Adjacency(rowptr, colind, vals, shape, compile_options)


def _is_sparse_tensor(a):
    """A torch_sparse.SparseTensor (duck-typed: without torch_sparse, PyG's stand-in
    class cannot be instantiated, so nothing else has these methods)."""
    return (not isinstance(a, torch.Tensor) and hasattr(a, "csr") and hasattr(a, "sparse_sizes")
            and hasattr(a, "storage"))


def _graph_input(adj, edge_weight, flow):
    """(row, col, val, shape or None, kind) of PyG's graph argument; row = target.
    kind: "edge_index", "torch_sparse" (a torch.sparse tensor), "sparse_tensor"."""
    if flow not in _FLOWS:
        raise ValueError(f"sparseditto.pyg: flow must be one of {_FLOWS}, got {flow!r}")
    if _is_sparse_tensor(adj):
        if flow != "source_to_target":
            raise ValueError("sparseditto.pyg: flow='target_to_source' is not defined for a "
                             "SparseTensor adjacency (it is adj_t: rows are targets)")
        rowptr, col, val = adj.csr()
        n_rows, n_cols = (int(s) for s in adj.sparse_sizes())
        row = torch.repeat_interleave(torch.arange(n_rows, device=rowptr.device), rowptr.diff())
        return row, col.long(), val, (n_rows, n_cols), "sparse_tensor"
    if not isinstance(adj, torch.Tensor):
        raise TypeError(f"sparseditto.pyg: the graph must be an edge_index tensor, an EdgeIndex, "
                        f"a torch sparse tensor or a SparseTensor, got {type(adj).__name__}")
    if adj.layout != torch.strided:
        if flow != "source_to_target":
            raise ValueError("sparseditto.pyg: flow='target_to_source' is not defined for a "
                             "sparse adjacency (it is adj_t: rows are targets)")
        if adj.dim() != 2:
            raise ValueError(f"sparseditto.pyg: a sparse adjacency must be 2-D, got {adj.dim()}-D")
        coo = (adj if adj.layout == torch.sparse_coo else adj.to_sparse_coo()).coalesce()
        idx = coo.indices()
        return idx[0], idx[1], coo.values(), (int(adj.shape[0]), int(adj.shape[1])), "torch_sparse"
    if type(adj) is not torch.Tensor and hasattr(adj, "as_tensor"):
        adj = adj.as_tensor()  # torch_geometric.EdgeIndex
    if adj.dim() != 2 or adj.shape[0] != 2:
        raise ValueError(f"sparseditto.pyg: edge_index must have shape (2, E), got "
                         f"{tuple(adj.shape)}")
    if adj.dtype not in (torch.int64, torch.int32):
        raise TypeError(f"sparseditto.pyg: edge_index must be int64 or int32, got {adj.dtype}")
    if edge_weight is not None:
        if not isinstance(edge_weight, torch.Tensor) or edge_weight.dim() != 1 \
                or edge_weight.shape[0] != adj.shape[1]:
            raise ValueError(f"sparseditto.pyg: edge_weight must be a 1-D tensor of {adj.shape[1]} "
                             "entries (one per edge)")
        if not edge_weight.is_floating_point():
            raise TypeError(f"sparseditto.pyg: edge_weight must be floating point, got "
                            f"{edge_weight.dtype}")
    src, dst = adj[0].long(), adj[1].long()
    if flow == "target_to_source":
        src, dst = dst, src
    return dst, src, edge_weight, None, "edge_index"


def _check_range(row, col, shape):
    if row.numel() == 0:
        return
    lo = int(torch.minimum(row.min(), col.min()))
    if lo < 0 or int(row.max()) >= shape[0] or int(col.max()) >= shape[1]:
        raise ValueError(f"sparseditto.pyg: edge_index holds node ids outside the graph: targets "
                         f"must lie in [0, {shape[0]}), sources in [0, {shape[1]})")


def gcn_adjacency(edge_index, edge_weight=None, num_nodes=None, improved=False,
                  add_self_loops=True, normalize=True, flow="source_to_target",
                  compile_options=None):
    """GCNConv's matrix (Â when normalize, else A) of PyG's graph argument, as an
    Adjacency on the graph's device (the rules are in the module docstring)."""
    row, col, val, shape, kind = _graph_input(edge_index, edge_weight, flow)
    if kind != "edge_index":
        if shape[0] != shape[1]:
            raise ValueError(f"sparseditto.pyg: GCNConv needs a square adjacency, got "
                             f"{shape[0]}x{shape[1]}")
    else:
        if num_nodes is None:
            num_nodes = int(torch.maximum(row.max(), col.max())) + 1 if row.numel() else 0
        shape = (int(num_nodes), int(num_nodes))
        _check_range(row, col, shape)
    if not normalize:
        return _build(row, col, val, shape, compile_options=compile_options)
    if not add_self_loops:
        loops, fill = None, 1.0
    elif kind == "edge_index":
        loops, fill = "remaining", (2.0 if improved and edge_weight is not None else 1.0)
    elif kind == "torch_sparse":
        loops, fill = "add", (2.0 if improved else 1.0)
    else:
        loops, fill = "replace", (2.0 if improved else 1.0)
    return _build(row, col, val, shape, loops=loops, fill=fill, norm="sym",
                  compile_options=compile_options)


def sage_adjacency(edge_index, size=None, aggr="mean", flow="source_to_target",
                   compile_options=None):
    """SAGEConv's aggregation matrix (n_targets x n_sources) of PyG's graph argument;
    size = (n_sources, n_targets) as PyG's, required for edge_index."""
    if aggr not in ("mean", "sum", "add"):
        raise ValueError(f"sparseditto.pyg: SAGEConv aggregation {aggr!r} is not supported "
                         "(mean, sum, add)")
    row, col, val, shape, kind = _graph_input(edge_index, None, flow)
    if kind == "edge_index":
        if size is None:
            raise ValueError("sparseditto.pyg: sage_adjacency needs size=(n_sources, n_targets) "
                             "for an edge_index")
        shape = (int(size[1]), int(size[0]))
        _check_range(row, col, shape)
        val = None
    elif size is not None and (int(size[0]), int(size[1])) != (shape[1], shape[0]):
        raise ValueError(f"sparseditto.pyg: size {tuple(size)} does not match the adjacency "
                         f"({shape[0]} targets x {shape[1]} sources)")
    if kind == "sparse_tensor":
        val = None  # PyG's SAGEConv drops a SparseTensor's values
    return _build(row, col, val, shape, norm="mean" if aggr == "mean" else None,
                  compile_options=compile_options)


# ---------------------------------------------------------------- the cache

_cache = collections.OrderedDict()  # key -> (weakrefs of the inputs, Adjacency)
_cache_lock = threading.RLock()
_dead = []  # keys whose inputs were freed (appended by weakref callbacks)


def clear_cache():
    """Empties the process-wide table of graph matrices (layers with cached=True keep theirs)."""
    with _cache_lock:
        _cache.clear()
        del _dead[:]


def _fingerprint(t):
    """(id, version, layout, (version, data pointer, shape, device) of each array) of a
    graph input, or None for None."""
    if t is None:
        return None
    if _is_sparse_tensor(t):
        dense = [x for x in t.csr() if x is not None]
    elif t.layout == torch.sparse_coo:
        dense = [t._indices(), t._values()]
    elif t.layout in (torch.sparse_csr, torch.sparse_csc):
        dense = [t.values()]
    elif type(t) is not torch.Tensor and hasattr(t, "as_tensor"):
        dense = [t.as_tensor()]
    else:
        dense = [t]
    parts = tuple((d._version, d.data_ptr(), tuple(d.shape), str(d.device)) for d in dense)
    return (id(t), getattr(t, "_version", None), str(getattr(t, "layout", "")), parts)


def _lookup(inputs, config, build):
    """The Adjacency for (inputs, config) from the table, else build() (stored there
    when the inputs can be fingerprinted and weakly referenced)."""
    try:
        key = (config, tuple(_fingerprint(t) for t in inputs))
    except (RuntimeError, AttributeError, TypeError):  # no data pointer, no version counter
        return build()
    with _cache_lock:
        while _dead:
            _cache.pop(_dead.pop(), None)
        hit = _cache.get(key)
        if hit is not None and all((r is None and t is None) or (r is not None and r() is t)
                                   for r, t in zip(hit[0], inputs)):
            _cache.move_to_end(key)
            return hit[1]
    adj = build()
    try:
        refs = [None if t is None else weakref.ref(t, lambda _r, k=key: _dead.append(k))
                for t in inputs]
    except TypeError:
        return adj
    with _cache_lock:
        _cache[key] = (refs, adj)
        _cache.move_to_end(key)
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return adj


# ---------------------------------------------------------------- the layers

def _check_common(kwargs, who, allowed_aggr):
    """PyG's MessagePassing keyword arguments: (aggr, flow, node_dim); others refused."""
    kwargs = dict(kwargs)
    aggr = kwargs.pop("aggr", allowed_aggr[0])
    if not isinstance(aggr, str) or aggr not in allowed_aggr:
        raise ValueError(f"{who}: aggr={aggr!r} is not supported by sparseditto.pyg "
                         f"(supported: {', '.join(allowed_aggr)})")
    if kwargs.pop("aggr_kwargs", None):
        raise ValueError(f"{who}: aggr_kwargs is not supported by sparseditto.pyg")
    flow = kwargs.pop("flow", "source_to_target")
    if flow not in _FLOWS:
        raise ValueError(f"{who}: flow must be one of {_FLOWS}, got {flow!r}")
    node_dim = kwargs.pop("node_dim", -2)
    if node_dim not in (-2, 0):
        raise ValueError(f"{who}: node_dim={node_dim!r} is not supported (2-D features: -2 or 0)")
    dl = kwargs.pop("decomposed_layers", 1)
    if not isinstance(dl, int) or dl < 1:
        raise ValueError(f"{who}: decomposed_layers must be a positive int, got {dl!r}")
    if kwargs:
        raise TypeError(f"{who}: unsupported keyword arguments {sorted(kwargs)}")
    return aggr, flow, node_dim


def _check_engine(engine, who):
    if engine not in _ENGINES:
        raise ValueError(f"{who}: engine must be one of {_ENGINES}, got {engine!r}")


def _check_features(x, who, what="x"):
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{who}: {what} must be a torch.Tensor, got {type(x).__name__}")
    if x.dim() != 2:
        raise ValueError(f"{who}: {what} must be 2-D (nodes, channels), got shape {tuple(x.shape)}")


def _check_weight_grad(edge_weight, who):
    if isinstance(edge_weight, torch.Tensor) and edge_weight.requires_grad \
            and torch.is_grad_enabled():
        raise TypeError(f"{who}: edge_weight requires grad, but the aggregation treats the graph "
                        "as a constant; detach it, or use PyG's own layer to learn edge weights")


def _linear(in_channels, out_channels, bias):
    if in_channels is None or int(in_channels) <= 0:
        return torch.nn.LazyLinear(out_channels, bias=bias)
    return torch.nn.Linear(int(in_channels), out_channels, bias=bias)


def _positive(v, name, who, allow_lazy=True):
    if not isinstance(v, int) or isinstance(v, bool) or (v < 1 and not (allow_lazy and v == -1)):
        raise ValueError(f"{who}: {name} must be a positive int{' or -1 (lazy)' if allow_lazy else ''}"
                         f", got {v!r}")


class GCNConv(torch.nn.Module):
    """torch_geometric.nn.GCNConv (PyG 2.8 arguments and semantics) with the aggregation
    Â·H on SparseDitto kernels (CUDA float32) or torch.sparse (CPU, engine="torch").

    Extra keyword arguments (ours): compile_options, a dict for sparseditto.compile
    (budget, use_cache, allow_vendor, deterministic); engine, "sparseditto" or "torch"."""

    def __init__(self, in_channels, out_channels, improved=False, cached=False,
                 add_self_loops=None, normalize=True, bias=True, *, compile_options=None,
                 engine="sparseditto", **kwargs):
        super().__init__()
        who = "GCNConv"
        _positive(in_channels, "in_channels", who)
        _positive(out_channels, "out_channels", who, allow_lazy=False)
        self.aggr, self.flow, self.node_dim = _check_common(kwargs, who, ("add", "sum"))
        _check_engine(engine, who)
        if add_self_loops is None:
            add_self_loops = normalize
        if add_self_loops and not normalize:
            raise ValueError("GCNConv does not support adding self-loops to the graph when no "
                             "on-the-fly normalization is applied (as in PyG)")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.improved, self.cached = bool(improved), bool(cached)
        self.add_self_loops, self.normalize = bool(add_self_loops), bool(normalize)
        self.compile_options = dict(compile_options or {})
        self.engine = engine
        self._cached_adj = None
        self.adjacency = None  # the Adjacency of the last forward
        self.lin = _linear(in_channels, out_channels, bias=False)
        if bias:
            self.bias = torch.nn.Parameter(torch.empty(out_channels))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """Glorot weight and zero bias (PyG's initialisation); forgets the cached graph."""
        if not isinstance(self.lin.weight, torch.nn.parameter.UninitializedParameter):
            torch.nn.init.xavier_uniform_(self.lin.weight)
        if self.bias is not None:
            torch.nn.init.zeros_(self.bias)
        self._cached_adj = None

    def _adjacency(self, edge_index, edge_weight, n):
        keep = self.cached and self.normalize  # PyG caches the normalisation only
        if keep and self._cached_adj is not None:
            return self._cached_adj
        config = ("gcn", n, self.improved, self.add_self_loops, self.normalize, self.flow,
                  tuple(sorted((k, repr(v)) for k, v in self.compile_options.items())))
        adj = _lookup((edge_index, edge_weight), config, lambda: gcn_adjacency(
            edge_index, edge_weight, n, self.improved, self.add_self_loops, self.normalize,
            self.flow, self.compile_options))
        if keep:
            self._cached_adj = adj
        return adj

    def forward(self, x, edge_index, edge_weight=None):
        if isinstance(x, (tuple, list)):
            raise ValueError("GCNConv received a tuple of node features, but it does not support "
                             "bipartite message passing (as in PyG); try SAGEConv")
        _check_features(x, "GCNConv")
        _check_weight_grad(edge_weight, "GCNConv")
        adj = self._adjacency(edge_index, edge_weight, x.shape[0])
        if adj.shape[1] != x.shape[0]:
            raise ValueError(f"GCNConv: x has {x.shape[0]} nodes, the graph {adj.shape[1]}"
                             + (" (cached=True keeps the first graph)" if self.cached else ""))
        self.adjacency = adj
        out = adj.matmul(self.lin(x), self.engine)
        if self.bias is not None:
            out = out + self.bias
        return out

    def extra_repr(self):
        return (f"{self.in_channels}, {self.out_channels}, improved={self.improved}, "
                f"cached={self.cached}, normalize={self.normalize}, engine={self.engine!r}")

    @classmethod
    def from_pyg(cls, conv, **options):
        """Ours with the configuration and (a copy of) the parameters of a PyG GCNConv."""
        aggr = getattr(conv, "aggr", "add")
        new = cls(conv.in_channels, conv.out_channels, improved=conv.improved,
                  cached=conv.cached, add_self_loops=conv.add_self_loops,
                  normalize=conv.normalize, bias=conv.bias is not None, aggr=aggr,
                  flow=getattr(conv, "flow", "source_to_target"),
                  node_dim=getattr(conv, "node_dim", -2), **options)
        return _copy_state(conv, new)


class SAGEConv(torch.nn.Module):
    """torch_geometric.nn.SAGEConv (PyG 2.8 arguments and semantics; aggr "mean", "sum"
    or "add") with the aggregation on SparseDitto kernels (CUDA float32) or torch.sparse.

    forward(x, edge_index, size=None): x a tensor or a (source, target) pair (bipartite;
    the target part may be None), size (n_sources, n_targets) as in PyG.
    Extra keyword arguments (ours): compile_options, engine (as GCNConv's)."""

    def __init__(self, in_channels, out_channels, aggr="mean", normalize=False,
                 root_weight=True, project=False, bias=True, *, compile_options=None,
                 engine="sparseditto", **kwargs):
        super().__init__()
        who = "SAGEConv"
        pair = in_channels if isinstance(in_channels, (tuple, list)) else (in_channels, in_channels)
        if len(pair) != 2:
            raise ValueError(f"{who}: in_channels must be an int or a pair, got {in_channels!r}")
        for v in pair:
            _positive(v, "in_channels", who)
        _positive(out_channels, "out_channels", who, allow_lazy=False)
        kwargs["aggr"] = aggr
        self.aggr, self.flow, self.node_dim = _check_common(kwargs, who, ("mean", "sum", "add"))
        _check_engine(engine, who)
        if project and pair[0] <= 0:
            raise ValueError(f"{who} does not support lazy initialization with project=True "
                             "(as in PyG)")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.normalize, self.root_weight, self.project = bool(normalize), bool(root_weight), bool(project)
        self.compile_options = dict(compile_options or {})
        self.engine = engine
        self.adjacency = None
        if self.project:
            self.lin = torch.nn.Linear(pair[0], pair[0], bias=True)
        self.lin_l = _linear(pair[0], out_channels, bias=bias)
        if self.root_weight:
            self.lin_r = _linear(pair[1], out_channels, bias=False)

    def reset_parameters(self):
        for name in ("lin", "lin_l", "lin_r"):
            m = getattr(self, name, None)
            if m is not None and not isinstance(m.weight, torch.nn.parameter.UninitializedParameter):
                m.reset_parameters()

    def forward(self, x, edge_index, size=None):
        who = "SAGEConv"
        if isinstance(x, torch.Tensor):
            x_src = x_dst = x
        elif isinstance(x, (tuple, list)) and len(x) == 2:
            x_src, x_dst = x
        else:
            raise TypeError(f"{who}: x must be a tensor or a (source, target) pair")
        _check_features(x_src, who, "x (source part)")
        if x_dst is not None:
            _check_features(x_dst, who, "x (target part)")
        if size is not None:
            size = (int(size[0]), int(size[1]))
            if size[0] != x_src.shape[0] or (x_dst is not None and size[1] != x_dst.shape[0]):
                raise ValueError(f"{who}: size {size} does not match the features")
        elif x_dst is not None:
            size = (x_src.shape[0], x_dst.shape[0])
        elif isinstance(edge_index, torch.Tensor) and edge_index.layout == torch.strided:
            # No target count anywhere: the largest target id + 1, as PyG's scatter does.
            row, _, _, _, _ = _graph_input(edge_index, None, self.flow)
            size = (x_src.shape[0], int(row.max()) + 1 if row.numel() else 0)
        if self.project:
            x_src = self.lin(x_src).relu()
        config = ("sage", size, self.aggr, self.flow,
                  tuple(sorted((k, repr(v)) for k, v in self.compile_options.items())))
        adj = _lookup((edge_index,), config, lambda: sage_adjacency(
            edge_index, size, self.aggr, self.flow, self.compile_options))
        self.adjacency = adj
        if adj.shape[1] != x_src.shape[0]:
            raise ValueError(f"{who}: x has {x_src.shape[0]} source nodes, the graph {adj.shape[1]}")
        lin_l = self.lin_l
        if not isinstance(lin_l.weight, torch.nn.parameter.UninitializedParameter) \
                and lin_l.weight.shape[0] < lin_l.weight.shape[1]:
            # Narrower output: transform first, then aggregate (A·X·Wᵀ = A·(X·Wᵀ)).
            out = adj.matmul(F.linear(x_src, lin_l.weight), self.engine)
            if lin_l.bias is not None:
                out = out + lin_l.bias
        else:
            out = lin_l(adj.matmul(x_src, self.engine))
        if self.root_weight and x_dst is not None:
            out = out + self.lin_r(x_dst)
        if self.normalize:
            out = F.normalize(out, p=2.0, dim=-1)
        return out

    def extra_repr(self):
        return (f"{self.in_channels}, {self.out_channels}, aggr={self.aggr!r}, "
                f"normalize={self.normalize}, root_weight={self.root_weight}, "
                f"project={self.project}, engine={self.engine!r}")

    @classmethod
    def from_pyg(cls, conv, **options):
        """Ours with the configuration and (a copy of) the parameters of a PyG SAGEConv."""
        aggr = conv.aggr
        new = cls(conv.in_channels, conv.out_channels, aggr=aggr, normalize=conv.normalize,
                  root_weight=conv.root_weight, project=conv.project,
                  bias=conv.lin_l.bias is not None, flow=getattr(conv, "flow", "source_to_target"),
                  node_dim=getattr(conv, "node_dim", -2), **options)
        return _copy_state(conv, new)


def _copy_state(conv, new):
    """Loads conv's parameters into new (strict: every name must match) on conv's device
    and dtype."""
    state = conv.state_dict()
    for k, v in state.items():
        if isinstance(v, torch.nn.parameter.UninitializedParameter):
            raise ValueError(f"{type(conv).__name__}: parameter {k} is not initialised yet (lazy "
                             "in_channels=-1); run one forward pass before patching")
    ref = next(iter(state.values()), None)
    if ref is not None:
        new = new.to(device=ref.device, dtype=ref.dtype)
    new.load_state_dict(state, strict=True)
    new.train(conv.training)
    return new


# ---------------------------------------------------------------- patching a model

def patch(model, strict=True, **options):
    """Replaces every torch_geometric.nn.GCNConv and SAGEConv in model (exactly those
    classes, not subclasses, which may change messages) by this module's layer with the
    same configuration and a copy of its parameters; returns the model (or the new layer
    when model itself is one). options go to the new layers (compile_options, engine).
    A layer whose configuration is not supported raises ValueError naming it (strict)
    or stays PyG's (strict=False). Optimizers built before the call still hold the old
    parameters: build them after patching."""
    try:
        from torch_geometric.nn import GCNConv as PygGCN, SAGEConv as PygSAGE
    except ImportError as e:
        raise ImportError("sparseditto.pyg.patch needs torch_geometric") from e
    ours = {PygGCN: GCNConv, PygSAGE: SAGEConv}

    def convert(name, m):
        try:
            return ours[type(m)].from_pyg(m, **options)
        except (ValueError, TypeError) as e:
            if strict:
                raise ValueError(f"sparseditto.pyg.patch: cannot replace {name or 'the model'} "
                                 f"({type(m).__name__}): {e}") from e
            return None

    if type(model) in ours:
        new = convert("", model)
        return model if new is None else new
    for name, parent in list(model.named_modules()):
        for child_name, child in list(parent.named_children()):
            if type(child) in ours:
                new = convert(f"{name}.{child_name}" if name else child_name, child)
                if new is not None:
                    setattr(parent, child_name, new)
    return model


to_sparseditto = patch
