# python/sparseditto/distributed.py: full-graph aggregation Â·H across processes (torch.distributed): row partition, halo plan, per-shard kernels.
"""Full-graph GNN aggregation over a torch.distributed process group.

    import torch.distributed as dist
    from sparseditto.distributed import DistributedGraph, aggregate
    dist.init_process_group("nccl")          # or "gloo" on CPU
    dg = DistributedGraph(A_hat)             # the global matrix on every rank (any as_matrix input)
    h = dg.local_rows(X)                     # this rank's rows of X (after the locality order)
    y = aggregate(dg, h)                     # this rank's rows of Â·H, differentiable in h

Partition (1-D): contiguous blocks of rows, balanced by nonzeros (balance="rows": by
rows), after an optional locality order (order="rcm" | "degree" | "rabbit" | a permutation,
new -> old). The order comes from the project's `sparseditto reorder` command when it is
found ($SPARSEDITTO_CLI or PATH; the library keeps its reorderings internal, so ctypes
cannot reach them); without it, "rcm" is scipy.sparse.csgraph.reverse_cuthill_mckee on
A + Aᵀ and "degree" a stable numpy sort by decreasing row length; "rabbit" needs the
command.

order="metis" partitions instead of ordering (metis_partition; needs the PyPI package
pymetis, `pip install pymetis` or the extra sparseditto[distributed]): a METIS k-way
partition of the graph of A + Aᵀ without self loops into world-size parts, each vertex
weighted by its row's nonzeros (parts balance the product's work, within METIS's default
3 % imbalance), seed 0 (METIS_OPTION_SEED: one METIS build gives the same parts for the
same matrix on every run; the ranks check that they agree). The rows are renumbered part by part
(ascending original id within a part) and the blocks are the parts exactly: `balance` is
not used. One rank: no METIS call. order_info records the source and METIS's edge cut.

Each rank holds its block row split in two: the local block (columns it owns, renumbered
from 0) and the off-rank block (columns = the halo rows it receives, numbered in sorted
global order, which groups them by owner). The halo plan (rows to send to each peer, rows
received from each) is computed once with two all_to_all_single calls.

Aggregation per call: the send rows are gathered, all_to_all_single exchanges them
(async_op=True: NCCL runs it on its own stream, gloo on its own thread) while the local
block is multiplied, then the off-rank block's product is added. Backward: the off-rank
block's transposed product is sent back to the owners with the reverse exchange while
the local block's transpose runs, then scatter-added (index_add_) into the gradient.

Kernels: CUDA tensors use sparseditto.torch.SparseGraph per block (compiled once per rank,
width and direction; prepare(K) compiles ahead and reports the seconds); CPU tensors use
torch.sparse.mm on CSR tensors (no compile).

1.5-D (ReplicatedGraph): the ranks form an R x c grid; each of R row blocks is held by c
ranks that split the K feature columns, so each halo row carries K / c floats, at the
price of an all-gather of the slices in the column group and dense work replicated c
times. make_graph(a, replication="auto", K=...) picks c by a stated cost model
(layout_costs: halo and gather bytes over a bandwidth plus local work over a rate).
"""
import bisect
import hashlib
import os
import shutil
import subprocess
import tempfile
import time

__all__ = ["DistributedGraph", "aggregate", "all_reduce_gradients", "partition_rows", "owner_of",
           "split_counts", "split_block", "halo_rows_per_block", "layout_costs",
           "replication_costs", "choose_replication", "locality_order",
           "metis_partition", "ReplicatedGraph", "make_graph"]


# ---------------------------------------------------------------- pure helpers (no numpy)

def partition_rows(rowptr, parts, balance="nnz"):
    """Bounds [b_0 = 0, b_1, ..., b_parts = n] of `parts` contiguous row blocks; block k
    holds rows [b_k, b_k+1). balance="nnz": each cut is the row boundary whose prefix
    nonzero count is nearest to k·nnz/parts (ties to the earlier row); "rows": b_k =
    k·n // parts. rowptr: any sequence of n + 1 non-decreasing integers (list, numpy
    array). Blocks may be empty (more parts than rows, or one row holding most entries)."""
    parts = int(parts)
    if parts < 1:
        raise ValueError(f"partition_rows: parts must be at least 1 (got {parts})")
    if balance not in ("nnz", "rows"):
        raise ValueError(f"partition_rows: balance must be 'nnz' or 'rows' (got {balance!r})")
    n = len(rowptr) - 1
    if n < 0:
        raise ValueError("partition_rows: rowptr must hold at least one entry")
    nnz = int(rowptr[n]) - int(rowptr[0])
    if balance == "rows" or nnz == 0:
        return [k * n // parts for k in range(parts + 1)]
    base = int(rowptr[0])
    bounds = [0]
    for k in range(1, parts):
        target = base + k * nnz / parts
        i = bisect.bisect_left(rowptr, target)  # first boundary with prefix >= target
        if i > 0 and target - int(rowptr[i - 1]) <= int(rowptr[min(i, n)]) - target:
            i -= 1
        bounds.append(min(max(i, bounds[-1]), n))
    bounds.append(n)
    return bounds


def owner_of(bounds, row):
    """The block holding `row` (0 <= row < bounds[-1]); empty blocks own nothing."""
    if not 0 <= row < bounds[-1]:
        raise ValueError(f"owner_of: row {row} is outside [0, {bounds[-1]})")
    return bisect.bisect_right(bounds, row) - 1


def split_counts(sorted_ids, bounds):
    """How many of the sorted ids each block owns (a list of len(bounds) - 1 counts)."""
    cuts = [bisect.bisect_left(sorted_ids, b) for b in bounds]
    cuts[-1] = len(sorted_ids)
    return [cuts[k + 1] - cuts[k] for k in range(len(bounds) - 1)]


def layout_costs(world_size, K, rows_max, nnz_max, halo_rows_max, bandwidth=50e9,
                 spmm_rate=100e9):
    """Cost model of one aggregation (forward) per layout, in seconds, for a replication
    factor c dividing world_size (c = 1 is the 1-D layout; c > 1 the 1.5-D layout: the
    graph cut into R = world_size / c row blocks, each held by c ranks that split the K
    feature columns). For each c the caller gives, over the R-block partition, the most
    rows, nonzeros and received halo rows of a block: dicts keyed by c.

      halo bytes   = 4 · halo_rows_max[c] · K / c     (each halo row carries K / c floats)
      gather bytes = 4 · rows_max[c] · K · (c - 1) / c  (all_gather of the column slices, c > 1)
      local work   = 2 · nnz_max[c] · K / c flops
      time         = (halo + gather bytes) / bandwidth + work / spmm_rate

    bandwidth (bytes/s per rank) and spmm_rate (flop/s) are parameters, not measurements:
    the defaults are round figures for GPUs on NVLink. Returns {c: {...}}."""
    out = {}
    for c in sorted(rows_max):
        if world_size % c:
            raise ValueError(f"layout_costs: replication {c} does not divide {world_size} ranks")
        width = K / c
        halo = 4.0 * halo_rows_max[c] * width
        gather = 4.0 * rows_max[c] * K * (c - 1) / c
        work = 2.0 * nnz_max[c] * width
        out[c] = {"blocks": world_size // c, "halo_bytes": halo, "gather_bytes": gather,
                  "work_flops": work,
                  "seconds": (halo + gather) / bandwidth + work / spmm_rate}
    return out


def choose_replication(costs):
    """The replication factor of least modelled time (the smallest c on a tie)."""
    return min(costs, key=lambda c: (costs[c]["seconds"], c))


# ---------------------------------------------------------------- numpy helpers

def _np():
    import numpy as np
    return np


def _cli():
    c = os.environ.get("SPARSEDITTO_CLI") or shutil.which("sparseditto")
    return c if c and os.access(c, os.X_OK) else None


def locality_order(a, method="rcm"):
    """A symmetric locality permutation of a square matrix, perm[new] = old (int64 numpy),
    and how it was computed: (perm, {"method", "by"}). See the module docstring for the
    sources tried."""
    np = _np()
    from .matrix import as_matrix
    m = as_matrix(a)
    n = m.shape[0]
    if m.shape[0] != m.shape[1]:
        raise ValueError(f"locality_order: the matrix must be square, got {m.shape}")
    if method == "metis":
        raise ValueError("locality_order: 'metis' is a partition, not an order: use "
                         "metis_partition(a, parts) or DistributedGraph(a, order='metis')")
    if method not in ("rcm", "degree", "rabbit"):
        raise ValueError(f"locality_order: unknown method {method!r} (rcm, degree or rabbit)")
    cli = _cli()
    if cli is not None:
        with tempfile.TemporaryDirectory(prefix="sd-reorder-") as d:
            src, dst, perm_path = (os.path.join(d, f) for f in ("a.sdm", "b.sdm", "p.perm"))
            m.write(src)
            r = subprocess.run([cli, "reorder", src, dst, "--method", method, "--perm", perm_path],
                               capture_output=True, text=True)
            if r.returncode == 0:
                with open(perm_path) as f:
                    perm = np.array([int(s) for s in f.read().split()], dtype=np.int64)
                if perm.shape[0] != n:
                    raise ValueError(f"locality_order: {cli} wrote {perm.shape[0]} indices "
                                     f"for {n} rows")
                return perm, {"method": method, "by": "sparseditto reorder"}
            err = r.stderr.strip().splitlines()
            raise RuntimeError(f"locality_order: `sparseditto reorder` failed: "
                               f"{err[-1] if err else r.returncode}")
    if method == "degree":
        deg = np.diff(m.rowptr)
        return (np.argsort(-deg, kind="stable").astype(np.int64),
                {"method": "degree", "by": "numpy stable sort (no sparseditto command found)"})
    if method == "rabbit":
        raise ValueError("locality_order: 'rabbit' needs the sparseditto command (set "
                         "SPARSEDITTO_CLI or put it on PATH); use 'rcm' or 'degree'")
    try:
        from scipy.sparse.csgraph import reverse_cuthill_mckee
    except ImportError as e:
        raise ValueError("locality_order: 'rcm' needs the sparseditto command or scipy "
                         "(neither found)") from e
    s = m.to_scipy()
    s = (abs(s) + abs(s.T)).tocsr()  # the pattern of A + Aᵀ, as the library orders
    perm = reverse_cuthill_mckee(s, symmetric_mode=True)
    return (np.asarray(perm, dtype=np.int64),
            {"method": "rcm", "by": "scipy.sparse.csgraph.reverse_cuthill_mckee on A + A^T "
                                    "(no sparseditto command found)"})


METIS_SEED = 0


def _symmetric_graph(m):
    """The graph of A + Aᵀ without self loops as METIS takes it: (xadj int64 of n + 1
    entries, adjncy int64), both directions of every edge, neighbours sorted."""
    np = _np()
    n = m.shape[0]
    r = m.row_of_entries()
    c = m.colind.astype(np.int64)
    off = r != c
    r, c = r[off], c[off]
    keys = np.unique(np.concatenate([r * n + c, c * n + r]))
    xadj = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(keys // n, minlength=n), out=xadj[1:])
    return xadj, keys % n


def metis_partition(a, parts, seed=METIS_SEED):
    """A METIS k-way partition of a square matrix's rows into `parts` parts, as a row
    order and the blocks that follow it: (perm, bounds, info). The graph is A + Aᵀ
    without self loops; a vertex weighs its row's nonzeros (empty rows weigh 0). perm
    (new -> old, int64) lists part 0's rows, then part 1's, ..., each part in ascending
    original id; rows [bounds[k], bounds[k+1]) are part k exactly (parts may be empty).
    info: {"method": "metis", "by", "edge_cut" (METIS's count of cut undirected edges),
    "seed", "part_rows"}. Without METIS (nor pymetis): parts == 1 gives the identity;
    fewer rows than parts, one row per part (METIS refuses that case)."""
    np = _np()
    from .matrix import as_matrix
    m = as_matrix(a)
    n = m.shape[0]
    if m.shape[0] != m.shape[1]:
        raise ValueError(f"metis_partition: the matrix must be square, got {m.shape}")
    if isinstance(parts, bool) or not isinstance(parts, (int, np.integer)) or parts < 1:
        raise ValueError(f"metis_partition: parts must be an integer >= 1 (got {parts!r})")
    parts = int(parts)
    if parts == 1 or n == 0:
        return (np.arange(n, dtype=np.int64), [0] * parts + [n],
                {"method": "metis", "by": f"{'one part' if n else 'no rows'}: no METIS call",
                 "edge_cut": 0, "seed": None, "part_rows": [0] * (parts - 1) + [n]})
    xadj, adjncy = _symmetric_graph(m)
    if n < parts:  # METIS refuses ("too many parts"): one row per part, the rest empty
        perm = np.arange(n, dtype=np.int64)
        return perm, list(range(n + 1)) + [n] * (parts - n), {
            "method": "metis", "by": "fewer rows than parts: one row per part, no METIS call",
            "edge_cut": int(adjncy.shape[0] // 2), "seed": None,
            "part_rows": [1] * n + [0] * (parts - n)}
    try:
        import pymetis
    except ImportError as e:
        raise ImportError("order='metis' needs the METIS binding pymetis, which is not "
                          "installed: pip install pymetis (or pip install "
                          "sparseditto[distributed])") from e
    # Arrays of METIS's index type pass without a copy (pymetis >= 2025.2 says which).
    idx = pymetis.zero_copy_dtype() if hasattr(pymetis, "zero_copy_dtype") else np.int64
    xadj, adjncy = xadj.astype(idx), adjncy.astype(idx)
    vweights = np.diff(m.rowptr).astype(idx)
    options = pymetis.Options()
    options.seed = int(seed)
    kw = {"vweights": vweights, "options": options, "recursive": False}  # k-way
    if hasattr(pymetis, "CSRAdjacency"):  # 2025.2 deprecates xadj= / adjncy=
        cut, membership = pymetis.part_graph(
            parts, adjacency=pymetis.CSRAdjacency(xadj, adjncy), **kw)
    else:
        cut, membership = pymetis.part_graph(parts, xadj=xadj, adjncy=adjncy, **kw)
    membership = np.asarray(membership, dtype=np.int64)
    if membership.shape != (n,) or (n and (membership.min() < 0 or membership.max() >= parts)):
        raise RuntimeError(f"metis_partition: pymetis returned {membership.shape[0]} part "
                           f"ids for {n} rows, or ids outside [0, {parts})")
    perm = np.argsort(membership, kind="stable").astype(np.int64)
    sizes = np.bincount(membership, minlength=parts)
    bounds = [0] + [int(b) for b in np.cumsum(sizes)]
    from importlib import metadata
    try:
        ver = " " + metadata.version("pymetis")
    except metadata.PackageNotFoundError:  # a source build without metadata
        ver = ""
    return perm, bounds, {
        "method": "metis", "edge_cut": int(cut), "seed": int(seed),
        "part_rows": [int(x) for x in sizes],
        "by": f"pymetis{ver}: METIS k-way on A + A^T without self loops, vertex weights "
              f"= row nonzeros, seed {int(seed)}"}


def _permute(m, perm):
    """P·A·Pᵀ: entry (i, j) of the result is A(perm[i], perm[j])."""
    np = _np()
    from .matrix import CSRMatrix
    n = m.shape[0]
    perm = np.asarray(perm, dtype=np.int64).ravel()
    if perm.shape[0] != n or not np.array_equal(np.sort(perm), np.arange(n)):
        raise ValueError(f"DistributedGraph: order is not a permutation of 0..{n - 1}")
    inv = np.empty(n, dtype=np.int64)
    inv[perm] = np.arange(n, dtype=np.int64)
    rows = m.row_of_entries()
    return CSRMatrix.from_coo(inv[rows], inv[m.colind.astype(np.int64)], m.vals, m.shape), perm


def split_block(rowptr, colind, vals, lo, hi):
    """Splits block row [lo, hi) (its CSR arrays: rowptr of hi - lo + 1 entries, any
    offset; global column ids) into the local block (columns in [lo, hi), minus lo) and
    the off-rank block (columns = positions in the sorted unique halo ids). Returns
    (local (rowptr, colind, vals), off (rowptr, colind, vals), halo ids int64)."""
    np = _np()
    rowptr = np.asarray(rowptr, dtype=np.int64)
    n_loc = hi - lo
    if rowptr.shape[0] != n_loc + 1:
        raise ValueError(f"split_block: rowptr has {rowptr.shape[0]} entries for {n_loc} rows")
    start, end = int(rowptr[0]), int(rowptr[-1])
    ci = np.asarray(colind)[start:end].astype(np.int64)
    v = np.asarray(vals, dtype=np.float32)[start:end]
    lens = np.diff(rowptr)
    rows = np.repeat(np.arange(n_loc, dtype=np.int64), lens)
    own = (ci >= lo) & (ci < hi)

    def csr(r, c, x):  # filtering keeps the columns sorted within each row
        rp = np.zeros(n_loc + 1, dtype=np.int64)
        np.cumsum(np.bincount(r, minlength=n_loc), out=rp[1:])
        return rp, c.astype(np.int32), x

    local = csr(rows[own], ci[own] - lo, v[own])
    off_cols = ci[~own]
    # Sorted unique halo ids and their positions through a mark array: O(nnz + columns),
    # no sort of the entries.
    ncols = int(off_cols.max()) + 1 if off_cols.size else 0
    mark = np.zeros(ncols, dtype=bool)
    mark[off_cols] = True
    halo = np.flatnonzero(mark).astype(np.int64)
    pos = np.zeros(ncols, dtype=np.int64)
    pos[halo] = np.arange(halo.shape[0], dtype=np.int64)
    off = csr(rows[~own], pos[off_cols], v[~own])
    return local, off, halo


def halo_rows_per_block(m, bounds):
    """For each block of `bounds`: rows, nonzeros and distinct off-block columns (the halo
    it receives) of a square CSRMatrix m. O(nnz) per block (a mark array, no sort)."""
    np = _np()
    n = m.shape[0]
    out = []
    for k in range(len(bounds) - 1):
        lo, hi = bounds[k], bounds[k + 1]
        cols = m.colind[m.rowptr[lo]:m.rowptr[hi]]
        mark = np.zeros(n, dtype=bool)
        mark[cols] = True
        halo = int(mark.sum()) - int(mark[lo:hi].sum())
        out.append({"rows": hi - lo, "nnz": int(m.rowptr[hi] - m.rowptr[lo]), "halo": halo})
    return out


def replication_costs(a, world_size, K, balance="nnz", **rates):
    """layout_costs() for every replication factor c dividing world_size, the block
    sizes measured on the partition of a square matrix into world_size / c blocks."""
    from .matrix import as_matrix
    m = as_matrix(a)
    rows_max, nnz_max, halo_max = {}, {}, {}
    for c in range(1, world_size + 1):
        if world_size % c:
            continue
        blocks = halo_rows_per_block(m, partition_rows(m.rowptr, world_size // c, balance))
        rows_max[c] = max(b["rows"] for b in blocks)
        nnz_max[c] = max(b["nnz"] for b in blocks)
        halo_max[c] = max(b["halo"] for b in blocks)
    return layout_costs(world_size, K, rows_max, nnz_max, halo_max, **rates)


# ---------------------------------------------------------------- torch side

def _torch_parts():
    try:
        import torch
        import torch.distributed as dist
    except ImportError as e:
        raise ImportError("sparseditto.distributed needs PyTorch (pip install torch)") from e
    return torch, dist


class _Block:
    """One CSR block of this rank (local or off-rank) with what multiplies by it: a
    SparseGraph on CUDA, torch CSR tensors (the block and its transpose) on the CPU."""

    def __init__(self, arrays, shape, device, compile_options):
        from .matrix import CSRMatrix
        self.shape = shape
        self.nnz = int(arrays[1].shape[0])
        self.device = device
        self.matrix = self.graph = self.cpu = None
        if self.nnz == 0:
            return  # products are zeros: nothing to build (nor a 0-column matrix to check)
        m = self.matrix = CSRMatrix(*arrays, shape)
        if device.type == "cuda":
            from .torch_spmm import SparseGraph
            self.graph = SparseGraph(m, **compile_options)
        else:
            self.cpu = (m.to_torch(), m.transpose().to_torch())

    def mm(self, torch, x, transposed=False):
        rows, cols = self.shape
        if transposed:
            rows, cols = cols, rows
        K = x.shape[1]
        if self.nnz == 0 or K == 0:
            return torch.zeros((rows, K), dtype=torch.float32, device=x.device)
        if self.graph is not None:
            from .torch_ops import _run_cuda  # alignment and the capture rule of the operators
            return _run_cuda("SpMM", self.graph, x, (rows, K), transposed)
        return torch.sparse.mm(self.cpu[1] if transposed else self.cpu[0], x.contiguous())

    def compile_seconds(self):
        return self.graph.compile_seconds if self.graph is not None else 0.0


_fn = {}


def _function():
    """The autograd function (built once torch is imported)."""
    if _fn:
        return _fn["f"]
    torch, _ = _torch_parts()
    from torch.autograd.function import once_differentiable

    class Aggregate(torch.autograd.Function):
        """Y_local = (Â·H)_local for a DistributedGraph; differentiable in H_local."""

        @staticmethod
        def forward(ctx, dg, h):
            ctx.dg = dg
            return dg._forward(h)

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            return None, ctx.dg._backward(g)

    class SliceCols(torch.autograd.Function):
        """This rank's column slice of a row block replicated over the column group;
        backward all-gathers the slices' gradients (every replica gets the full one)."""

        @staticmethod
        def forward(ctx, rg, h):
            ctx.rg, ctx.K = rg, h.shape[1]
            a, b = rg.col_range(h.shape[1])
            return h[:, a:b].contiguous()

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            return None, ctx.rg._gather_cols(g.contiguous(), ctx.K)

    class GatherCols(torch.autograd.Function):
        """The full row block from the column group's slices; backward keeps this
        rank's slice (the replicas' gradients are equal: their computations are)."""

        @staticmethod
        def forward(ctx, rg, y, K):
            ctx.rg, ctx.K = rg, K
            return rg._gather_cols(y, K)

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            a, b = ctx.rg.col_range(ctx.K)
            return None, g[:, a:b].contiguous(), None

    _fn["f"] = Aggregate
    _fn["slice"] = SliceCols
    _fn["gather"] = GatherCols
    return Aggregate


def aggregate(dg, h):
    """This rank's rows of Â·H (differentiable in h, this rank's rows of H). Collective:
    every rank of the graph's group must call it with the same width K."""
    if isinstance(dg, ReplicatedGraph):
        return dg.aggregate(h)
    if not isinstance(dg, DistributedGraph):
        raise TypeError(f"aggregate: expected a DistributedGraph or ReplicatedGraph, got "
                        f"{type(dg).__name__}")
    return _function().apply(dg, h)


def all_reduce_gradients(parameters, group=None):
    """Sums the gradients of `parameters` over the group (each rank's loss covers its
    rows, so the global gradient is the sum). Parameters without a gradient are skipped
    on every rank alike (they must agree)."""
    _, dist = _torch_parts()
    for p in parameters:
        if p.grad is not None:
            dist.all_reduce(p.grad, op=dist.ReduceOp.SUM, group=group)


class DistributedGraph:
    """This rank's share of a square sparse matrix Â for Y = Â·H across a process group.

    DistributedGraph(a, group=None, balance="nnz", order=None, device=None, **compile_options):
      a: the global matrix (CSRMatrix, path, scipy.sparse, torch sparse), the same on every
      rank (checked: shape and nonzeros); order: None, "rcm", "degree", "rabbit" or a
      permutation (new -> old) applied symmetrically before partitioning, or "metis"
      (metis_partition into world-size parts: the order and the bounds; balance unused).
    DistributedGraph.from_shard(block, bounds, group=None, device=None, **compile_options):
      block: this rank's block row (bounds[r+1] - bounds[r] rows, global column ids),
      bounds: the global row partition (world_size + 1 entries, the same on every rank).

    device: where H lives ("cuda:i" or "cpu"); default: cuda:<current device> with the
    NCCL backend, else cpu. compile_options go to sparseditto.compile (CUDA only)."""

    def __init__(self, a, group=None, balance="nnz", order=None, device=None,
                 **compile_options):
        from .matrix import as_matrix
        self._init_group(group, device)
        m = as_matrix(a)
        if m.shape[0] != m.shape[1]:
            raise ValueError(f"DistributedGraph: Â must be square (rows of H are its columns), "
                             f"got {m.shape[0]}x{m.shape[1]}")
        self._check_same([m.shape[0], m.nnz], "the global matrix (rows, nonzeros)")
        self.perm = None
        self.order_info = None
        if isinstance(order, str) and order == "metis":
            perm, self.bounds, self.order_info = self._metis(m)
            m, self.perm = _permute(m, perm)
            self.balance = "metis"  # the blocks are the parts
        else:
            if order is not None:
                if isinstance(order, str):
                    perm, self.order_info = locality_order(m, order)
                else:
                    perm, self.order_info = order, {"method": "given", "by": "caller"}
                m, self.perm = _permute(m, perm)
            self.bounds = partition_rows(m.rowptr, self.world_size, balance)
            self.balance = balance
        lo, hi = self.bounds[self.rank], self.bounds[self.rank + 1]
        rp = m.rowptr[lo:hi + 1]
        self._setup(rp, m.colind, m.vals, m.shape[0], compile_options)

    @classmethod
    def from_shard(cls, block, bounds, group=None, device=None, **compile_options):
        from .matrix import as_matrix
        self = cls.__new__(cls)
        self._init_group(group, device)
        bounds = [int(b) for b in bounds]
        if (len(bounds) != self.world_size + 1 or bounds[0] != 0
                or any(bounds[k] > bounds[k + 1] for k in range(self.world_size))):
            raise ValueError(f"from_shard: bounds must be {self.world_size + 1} non-decreasing "
                             f"row indices from 0, got {bounds}")
        m = as_matrix(block)
        n = bounds[-1]
        lo, hi = bounds[self.rank], bounds[self.rank + 1]
        err = None
        if m.shape != (hi - lo, n):
            err = (f"rank {self.rank} owns rows [{lo}, {hi}) of {n}, so its block must be "
                   f"{hi - lo}x{n}, got {m.shape[0]}x{m.shape[1]}")
        self._check_same(bounds, "the row bounds", err)
        self.perm = None
        self.order_info = None
        self.bounds = bounds
        self.balance = "given"
        self._setup(m.rowptr, m.colind, m.vals, n, compile_options)
        return self

    # ------------------------------------------------------------ construction
    def _init_group(self, group, device):
        torch, dist = _torch_parts()
        if not dist.is_available() or not dist.is_initialized():
            raise RuntimeError("DistributedGraph: torch.distributed is not initialised (call "
                               "dist.init_process_group first)")
        self.group = group
        self.rank = dist.get_rank(group)
        self.world_size = dist.get_world_size(group)
        self.backend = str(dist.get_backend(group))
        if device is None:
            device = (torch.device("cuda", torch.cuda.current_device())
                      if self.backend == "nccl" else torch.device("cpu"))
        self.device = torch.device(device)
        if self.device.type == "cuda" and self.device.index is None:
            self.device = torch.device("cuda", torch.cuda.current_device())
        # Collectives take tensors where the backend works: NCCL on the GPU, gloo on the CPU.
        self._comm_device = self.device if self.backend == "nccl" else torch.device("cpu")
        self.profile = None  # an object with begin(name) / end(name): see examples/gcn_distributed.py

    def _check_same(self, values, what, local_error=None):
        """Every rank passed the same integers and found its own input valid; else
        ValueError on every rank alike (a rank raising alone would leave the others
        waiting in the next collective)."""
        torch, dist = _torch_parts()
        t = torch.tensor(list(values) + [local_error is not None], dtype=torch.int64,
                         device=self._comm_device)
        got = [torch.empty_like(t) for _ in range(self.world_size)]
        dist.all_gather(got, t, group=self.group)
        rows = [g.cpu().tolist() for g in got]
        bad = [r for r, row in enumerate(rows) if row[-1]]
        if bad:
            raise ValueError(f"DistributedGraph: invalid input on rank(s) {bad}"
                             + (f": {local_error}" if local_error else ""))
        if any(r[:-1] != rows[0][:-1] for r in rows):
            raise ValueError(f"DistributedGraph: ranks disagree on {what}: "
                             f"{[r[:-1] for r in rows]}")

    def _metis(self, m):
        """metis_partition on every rank, then a check that all ranks got the same parts
        (bounds, edge cut, a digest of the order); an error on any rank raises on all."""
        values = [0] * (self.world_size + 3)
        err = None
        try:
            perm, bounds, info = metis_partition(m, self.world_size)
            digest = hashlib.blake2b(perm.tobytes(), digest_size=7).digest()
            values = bounds + [info["edge_cut"], int.from_bytes(digest, "little")]
        except (ImportError, ValueError, RuntimeError) as e:
            err = e
        try:
            self._check_same(values, "the METIS partition (bounds, edge cut, order digest)",
                             None if err is None else f"{type(err).__name__}: {err}")
        except ValueError:
            if err is not None:
                raise err from None  # this rank's own error, its own type
            raise
        return perm, bounds, info

    def _setup(self, rowptr, colind, vals, n, compile_options):
        np = _np()
        torch, dist = _torch_parts()
        self.n = n
        lo, hi = self.bounds[self.rank], self.bounds[self.rank + 1]
        self.row_range = (lo, hi)
        self.n_local = hi - lo
        local, off, halo = split_block(rowptr, colind, vals, lo, hi)
        self.halo_ids = halo  # global ids of the received rows, sorted (grouped by owner)
        self.recv_counts = split_counts(halo, self.bounds)
        if self.recv_counts[self.rank]:
            raise AssertionError("split_block left own columns in the halo")
        t0 = time.perf_counter()
        self.local = _Block(local, (self.n_local, self.n_local), self.device, compile_options)
        self.off = _Block(off, (self.n_local, len(halo)), self.device, compile_options)
        self.build_seconds = time.perf_counter() - t0
        # The plan: tell each owner which of its rows we need (counts, then ids).
        cd = self._comm_device
        want = torch.tensor(self.recv_counts, dtype=torch.int64, device=cd)
        give = torch.empty_like(want)
        dist.all_to_all_single(give, want, group=self.group)
        self.send_counts = [int(c) for c in give.cpu().tolist()]
        ids = self._buffer(sum(self.send_counts), None, torch.int64, cd)
        dist.all_to_all_single(ids, self._nonnull(torch.from_numpy(halo).to(cd)),
                               output_split_sizes=self.send_counts,
                               input_split_sizes=self.recv_counts, group=self.group)
        send = ids.cpu().numpy() - lo
        if send.size and (send.min() < 0 or send.max() >= self.n_local):
            raise AssertionError(f"rank {self.rank}: a peer asked for rows outside [{lo}, {hi})")
        self.send_idx = send.astype(np.int64)
        self._send_idx_t = torch.from_numpy(self.send_idx).to(self.device)
        # No rank exchanging anything (one rank, or disconnected blocks): skip the calls.
        total = torch.tensor([len(halo)], dtype=torch.int64, device=cd)
        dist.all_reduce(total, group=self.group)
        self.exchanges = int(total.item()) > 0

    @staticmethod
    def _nonnull(t):
        """t itself, or an empty view into one-row storage (never a NULL data pointer,
        which some backends refuse for empty tensors)."""
        if t.numel() > 0:
            return t
        return t.new_empty((1,) + tuple(t.shape[1:]))[:0]

    def _buffer(self, rows, K, dtype, device):
        import torch
        shape = (rows,) if K is None else (rows, K)
        if rows > 0:
            return torch.empty(shape, dtype=dtype, device=device)
        return torch.empty((1,) + shape[1:], dtype=dtype, device=device)[:0]

    # ------------------------------------------------------------ info
    def stats(self, K=None):
        """This rank's sizes; with K, the floats and bytes one aggregation moves."""
        s = {"rank": self.rank, "rows": self.n_local, "row_range": list(self.row_range),
             "nnz_local": self.local.nnz, "nnz_off": self.off.nnz,
             "halo_rows": int(len(self.halo_ids)), "send_rows": int(len(self.send_idx)),
             "recv_counts": list(self.recv_counts), "send_counts": list(self.send_counts)}
        if K is not None:
            s["recv_bytes"] = 4 * s["halo_rows"] * K
            s["send_bytes"] = 4 * s["send_rows"] * K
        return s

    @property
    def compile_seconds(self):
        return self.local.compile_seconds() + self.off.compile_seconds()

    def prepare(self, K):
        """Compiles (or loads) this rank's kernels at width K, forward and transposed;
        returns the seconds spent. A no-op on the CPU."""
        t0 = time.perf_counter()
        for b in (self.local, self.off):
            if b.graph is not None:
                b.graph.kernel(K, self.device.index)
                b.graph.kernel(K, self.device.index, transposed=True)
        return time.perf_counter() - t0

    # ------------------------------------------------------------ features
    def local_rows(self, x):
        """This rank's rows of a global (n, ...) tensor, in the partitioned order (perm
        applied), on this graph's device."""
        torch, _ = _torch_parts()
        if x.shape[0] != self.n:
            raise ValueError(f"local_rows: x has {x.shape[0]} rows, the graph {self.n}")
        lo, hi = self.row_range
        if self.perm is None:
            return x[lo:hi].to(self.device)
        idx = torch.from_numpy(self.perm[lo:hi]).to(x.device)
        return x.index_select(0, idx).to(self.device)

    def gather(self, y):
        """The global (n, K) tensor from every rank's rows (all_gather, original order);
        collective. For checks and evaluation, not for training."""
        torch, dist = _torch_parts()
        if y.dim() != 2 or y.shape[0] != self.n_local:
            raise ValueError(f"gather: expected ({self.n_local}, K), got {tuple(y.shape)}")
        sizes = [self.bounds[k + 1] - self.bounds[k] for k in range(self.world_size)]
        pad = max(sizes)
        buf = torch.zeros((pad, y.shape[1]), dtype=y.dtype, device=self._comm_device)
        buf[:self.n_local] = y.detach().to(self._comm_device)
        got = [torch.empty_like(buf) for _ in range(self.world_size)]
        dist.all_gather(got, buf, group=self.group)
        full = torch.cat([g[:s] for g, s in zip(got, sizes)])
        if self.perm is not None:
            out = torch.empty_like(full)
            out[torch.from_numpy(self.perm).to(full.device)] = full
            full = out
        return full

    # ------------------------------------------------------------ the product
    def _mark(self, name, begin):
        if self.profile is not None:
            (self.profile.begin if begin else self.profile.end)(name)

    def _exchange(self, out, inp, out_splits, in_splits):
        """all_to_all_single of rows; returns a work handle to wait on (already waited on
        when profiling, so phases do not overlap)."""
        _, dist = _torch_parts()
        if not self.exchanges:
            return None
        cd = self._comm_device
        if out.device != cd:  # gloo with CUDA tensors: stage through the host
            host_out = self._buffer(out.shape[0], out.shape[1], out.dtype, cd)
            dist.all_to_all_single(host_out, self._nonnull(inp.to(cd)), out_splits, in_splits,
                                   group=self.group)
            out.copy_(host_out)
            return None
        prof = self.profile is not None
        self._mark("exchange", True)
        work = dist.all_to_all_single(out, self._nonnull(inp.contiguous()), out_splits,
                                      in_splits, group=self.group, async_op=not prof)
        if prof:
            self._mark("exchange", False)
            return None
        return work

    def _check_h(self, torch, h, what):
        if not isinstance(h, torch.Tensor):
            raise TypeError(f"{what}: expected a torch.Tensor, got {type(h).__name__}")
        if h.dim() != 2 or h.shape[0] != self.n_local:
            raise ValueError(f"{what}: shape {tuple(h.shape)}, expected ({self.n_local}, K) "
                             f"(rank {self.rank} owns rows {list(self.row_range)})")
        if h.dtype != torch.float32:
            raise TypeError(f"{what}: dtype is {h.dtype}; aggregation is float32")
        if h.device != self.device:
            raise ValueError(f"{what}: on {h.device}, the graph on {self.device}")

    def _forward(self, h):
        torch, _ = _torch_parts()
        self._check_h(torch, h, "aggregate")
        K = h.shape[1]
        h = h.contiguous()
        send = h.index_select(0, self._send_idx_t)
        halo = self._buffer(len(self.halo_ids), K, torch.float32, self.device)
        work = self._exchange(halo, send, self.recv_counts, self.send_counts)
        self._mark("spmm", True)
        y = self.local.mm(torch, h)
        self._mark("spmm", False)
        if work is not None:
            work.wait()
        if self.off.nnz:
            self._mark("spmm", True)
            y = y + self.off.mm(torch, halo)
            self._mark("spmm", False)
        return y

    def _backward(self, g):
        torch, _ = _torch_parts()
        g = g.contiguous()
        K = g.shape[1]
        self._mark("spmm", True)
        z = self.off.mm(torch, g, transposed=True)  # (halo rows, K): owed to the owners
        self._mark("spmm", False)
        back = self._buffer(len(self.send_idx), K, torch.float32, self.device)
        work = self._exchange(back, z, self.send_counts, self.recv_counts)
        self._mark("spmm", True)
        gh = self.local.mm(torch, g, transposed=True)
        self._mark("spmm", False)
        if work is not None:
            work.wait()
        if back.shape[0]:
            gh = gh.index_add(0, self._send_idx_t, back)
        return gh

    def __repr__(self):
        return (f"DistributedGraph(rank={self.rank}/{self.world_size}, rows={list(self.row_range)}"
                f" of {self.n}, nnz local/off={self.local.nnz}/{self.off.nnz}, "
                f"halo={len(self.halo_ids)}, device={self.device})")


class ReplicatedGraph:
    """The 1.5-D layout: the world's P ranks form an R x c grid (rank = r·c + j); Â is cut
    into R row blocks, each held by the c ranks of its column group, which split the K
    feature columns (rank j takes columns [j·K // c, (j+1)·K // c)). One aggregation: this
    rank's column slice of its row block goes through the 1-D exchange and product over
    its row group (the R ranks with the same j; each halo row carries K / c floats), then
    the column group all-gathers the slices. Dense work on a row block is replicated over
    its column group; gradients of parameters are summed over `group` (the row group).

    ReplicatedGraph(a, replication, balance="nnz", order=None, device=None, **compile_options):
    the default process group only (its ranks are the grid's)."""

    def __init__(self, a, replication, balance="nnz", order=None, device=None,
                 **compile_options):
        torch, dist = _torch_parts()
        if not dist.is_available() or not dist.is_initialized():
            raise RuntimeError("ReplicatedGraph: torch.distributed is not initialised")
        world = dist.get_world_size()
        c = int(replication)
        if c < 1 or world % c:
            raise ValueError(f"ReplicatedGraph: replication {replication} must divide the "
                             f"world size {world}")
        self.replication = c
        self.world_size = world
        self.blocks = world // c
        rank = dist.get_rank()
        self.block, self.col = divmod(rank, c)
        # Every rank creates every group, in one order (new_group is collective).
        self.group = self.col_group = None
        for j in range(c):
            g = dist.new_group([r * c + j for r in range(self.blocks)])
            if j == self.col:
                self.group = g
        for r in range(self.blocks):
            g = dist.new_group([r * c + j for j in range(c)])
            if r == self.block:
                self.col_group = g
        self.inner = DistributedGraph(a, group=self.group, balance=balance, order=order,
                                      device=device, **compile_options)
        self.rank = rank
        self.device = self.inner.device
        self.backend = self.inner.backend
        self._comm_device = self.inner._comm_device

    # the 1-D graph's description of this rank's row block
    bounds = property(lambda self: self.inner.bounds)
    perm = property(lambda self: self.inner.perm)
    order_info = property(lambda self: self.inner.order_info)
    n = property(lambda self: self.inner.n)
    n_local = property(lambda self: self.inner.n_local)
    row_range = property(lambda self: self.inner.row_range)
    compile_seconds = property(lambda self: self.inner.compile_seconds)

    @property
    def profile(self):
        return self.inner.profile

    @profile.setter
    def profile(self, p):
        self.inner.profile = p

    def col_range(self, K):
        j, c = self.col, self.replication
        return j * K // c, (j + 1) * K // c

    def prepare(self, K):
        a, b = self.col_range(K)
        return self.inner.prepare(b - a) if b > a else 0.0

    def stats(self, K=None):
        a, b = self.col_range(K) if K is not None else (0, None)
        s = self.inner.stats(None if K is None else b - a)
        s.update(replication=self.replication, block=self.block, col=self.col)
        if K is not None:
            s["gather_bytes"] = 4 * self.n_local * (K - (b - a))
        return s

    def local_rows(self, x):
        return self.inner.local_rows(x)

    def gather(self, y):
        return self.inner.gather(y)

    def _gather_cols(self, t, K):
        """The row block at width K from the column group's slices (all_gather, each
        slice padded to the widest)."""
        torch, dist = _torch_parts()
        c = self.replication
        widths = [(j + 1) * K // c - j * K // c for j in range(c)]
        if t.shape[1] != widths[self.col]:
            raise ValueError(f"ReplicatedGraph: slice of width {t.shape[1]}, expected "
                             f"{widths[self.col]} of K = {K}")
        buf = torch.zeros((t.shape[0], max(widths)), dtype=t.dtype, device=self._comm_device)
        buf[:, :t.shape[1]] = t.detach().to(self._comm_device)
        got = [torch.empty_like(buf) for _ in range(c)]
        self.inner._mark("gather", True)
        dist.all_gather(got, buf, group=self.col_group)
        self.inner._mark("gather", False)
        return torch.cat([g[:, :w] for g, w in zip(got, widths)], dim=1).to(t.device)

    def aggregate(self, h):
        """This row block's rows of Â·H at full width (h: the row block's rows of H,
        the same on every rank of the column group)."""
        f = _function()
        if h.dim() != 2:
            raise ValueError(f"aggregate: expected a 2-D tensor, got shape {tuple(h.shape)}")
        K = h.shape[1]
        if K < self.replication:
            raise ValueError(f"aggregate: width {K} is less than the replication "
                             f"{self.replication} (a rank would hold no column)")
        hs = _fn["slice"].apply(self, h)
        ys = f.apply(self.inner, hs)
        return _fn["gather"].apply(self, ys, K)

    def __repr__(self):
        return (f"ReplicatedGraph(block {self.block}/{self.blocks}, columns {self.col}/"
                f"{self.replication}, {self.inner!r})")


def make_graph(a, replication=1, K=None, balance="nnz", order=None, device=None,
               **compile_options):
    """A DistributedGraph (replication 1) or ReplicatedGraph (c > 1) on the default group;
    replication="auto" takes choose_replication(replication_costs(a, world, K)) (every
    rank computes the same choice from the same matrix). Returns (graph, costs or None)."""
    _, dist = _torch_parts()
    costs = None
    if replication == "auto":
        if K is None:
            raise ValueError("make_graph: replication='auto' needs K (the aggregation width)")
        costs = replication_costs(a, dist.get_world_size(), K, balance)
        replication = choose_replication(costs)
    if int(replication) == 1:
        return DistributedGraph(a, balance=balance, order=order, device=device,
                                **compile_options), costs
    return ReplicatedGraph(a, replication, balance=balance, order=order, device=device,
                           **compile_options), costs
