# python/sparseditto/graphs.py: synthetic heavy-tailed graphs and GCN normalisation on CSR arrays (numpy or torch).
"""Graphs for GNN workloads, as canonical CSR arrays.

    rowptr, colind = powerlaw_graph(232965, 114615892, seed=0)                # numpy, CPU
    rowptr, colind = powerlaw_graph(232965, 114615892, seed=0, device="cuda")  # torch, GPU
    rowptr, colind, vals = gcn_normalize(rowptr, colind)    # Â = D^-1/2 (A + I) D^-1/2

Every function works on numpy arrays, or on torch tensors when `device` is given / the
inputs are tensors (torch is imported only then): at Reddit's size (233 K nodes, 115 M
directed edges) the GPU path takes about a second where numpy takes tens of seconds.
Both paths run the same algorithm through a small array-module shim (_NP, _Torch); their
random streams differ, so a seed gives the same statistics, not the same graph, on each.

The generator is a Chung–Lu model: node i gets weight w_i ∝ (i + i0)^-beta (a Zipf-like,
heavy tail; i0 fixes the ratio of the largest weight to the mean), undirected pairs are
drawn with both endpoints ∝ w, self loops and repeated pairs dropped, and drawing goes on
until exactly edges / 2 distinct pairs exist. Node ids are then shuffled (hubs are
spread over the id range, as in crawled graphs) and both directions stored, so the
pattern is symmetric, has no diagonal, and holds exactly `edges` entries (edges is even).
"""
import math

import numpy as np

__all__ = ["REDDIT", "powerlaw_graph", "gcn_normalize", "degree_stats"]

# PyG's Reddit dataset (Hamilton et al. 2017): nodes and directed edges of edge_index;
# the largest degree is about 21.7 K (a figure quoted with the dataset, used here only to
# shape the generated tail: the generator's own maximum is reported, not assumed).
REDDIT = {"nodes": 232965, "edges": 114615892, "max_degree": 21657}


class _NP:
    """numpy side of the shim."""
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.i64, self.i32, self.f64, self.f32 = np.int64, np.int32, np.float64, np.float32

    def arange(self, n, dtype):
        return np.arange(n, dtype=dtype)

    def uniform(self, n):
        return self.rng.random(n)

    def randperm(self, n):
        return self.rng.permutation(n).astype(np.int64)

    def unique(self, x):
        return np.unique(x)

    def searchsorted(self, a, v, right=False):
        return np.searchsorted(a, v, side="right" if right else "left").astype(np.int64)

    def cat(self, xs):
        return np.concatenate(xs)

    def repeat(self, x, counts):
        return np.repeat(x, counts)

    def bincount(self, x, n, weights=None):
        return np.bincount(x, weights=weights, minlength=n)

    def cumsum(self, x):
        return np.cumsum(x)

    def zeros(self, n, dtype):
        return np.zeros(n, dtype=dtype)

    def asarray(self, x, dtype):
        return np.asarray(x, dtype=dtype)

    def nonzero(self, m):
        return np.flatnonzero(m)

    def sort(self, x):
        return np.sort(x)

    def sqrt(self, x):
        return np.sqrt(x)

    def to(self, x, dtype):
        return x.astype(dtype)


class _Torch:
    """torch side of the shim (on one device)."""
    def __init__(self, seed, device):
        import torch
        self.t = torch
        self.dev = torch.device(device)
        self.gen = torch.Generator(device=self.dev)
        self.gen.manual_seed(int(seed))
        self.i64, self.i32, self.f64, self.f32 = torch.int64, torch.int32, torch.float64, torch.float32

    def arange(self, n, dtype):
        return self.t.arange(n, dtype=dtype, device=self.dev)

    def uniform(self, n):
        return self.t.rand(n, dtype=self.t.float64, device=self.dev, generator=self.gen)

    def randperm(self, n):
        return self.t.randperm(n, device=self.dev, generator=self.gen)

    def unique(self, x):
        return self.t.unique(x, sorted=True)

    def searchsorted(self, a, v, right=False):
        return self.t.searchsorted(a, v, right=right)

    def cat(self, xs):
        return self.t.cat(xs)

    def repeat(self, x, counts):
        return self.t.repeat_interleave(x, counts)

    def bincount(self, x, n, weights=None):
        return self.t.bincount(x, weights=weights, minlength=n)

    def cumsum(self, x):
        return self.t.cumsum(x, 0)

    def zeros(self, n, dtype):
        return self.t.zeros(n, dtype=dtype, device=self.dev)

    def asarray(self, x, dtype):
        return self.t.as_tensor(x, dtype=dtype, device=self.dev)

    def nonzero(self, m):
        return self.t.nonzero(m).flatten()

    def sort(self, x):
        return self.t.sort(x).values

    def sqrt(self, x):
        return self.t.sqrt(x)

    def to(self, x, dtype):
        return x.to(dtype)


def _shim_for(arrays, device=None, seed=0):
    if device is not None:
        return _Torch(seed, device)
    for a in arrays:
        if type(a).__module__.startswith("torch"):
            return _Torch(seed, a.device)
    return _NP(seed)


def _weights(n, avg_degree, max_degree, beta):
    """Chung–Lu weights w_i = (i + i0)^-beta scaled to mean avg_degree, with i0 chosen
    (bisection) so that w_0 / mean = max_degree / avg_degree. float64 numpy, length n."""
    target = max_degree / avg_degree
    i = np.arange(n, dtype=np.float64)

    def ratio(i0):
        w = (i + i0) ** -beta
        return w[0] / w.mean()

    lo, hi = 1e-3, float(n)  # ratio falls as i0 grows
    if ratio(lo) < target:  # the tail cannot be that heavy at this beta: heaviest possible
        hi = lo
    for _ in range(100):
        mid = math.sqrt(lo * hi)
        if ratio(mid) > target:
            lo = mid
        else:
            hi = mid
    w = (i + hi) ** -beta
    return w * (avg_degree / w.mean())


def powerlaw_graph(nodes, edges, max_degree=None, beta=0.75, seed=0, device=None):
    """A symmetric heavy-tailed graph without self loops: CSR (rowptr int64, colind
    int32) with exactly `edges` entries (even; both directions of edges/2 pairs).

    max_degree shapes the tail (largest expected degree; default: Reddit's ratio of the
    largest degree to the mean); beta is the Zipf exponent of the weights. device=None
    gives numpy arrays; a torch device ("cuda") gives torch tensors built there."""
    n, e = int(nodes), int(edges)
    if n < 2:
        raise ValueError(f"powerlaw_graph: needs at least 2 nodes (got {n})")
    if e < 0 or e % 2:
        raise ValueError(f"powerlaw_graph: edges must be even and >= 0 (got {e}): each "
                         "undirected pair is stored in both directions")
    pairs = e // 2
    if pairs > n * (n - 1) // 2:
        raise ValueError(f"powerlaw_graph: {e} directed edges do not fit in a simple graph "
                         f"on {n} nodes")
    if not 0 < beta < 1:
        raise ValueError(f"powerlaw_graph: beta must be in (0, 1) (got {beta})")
    avg = e / n
    if max_degree is None:
        max_degree = avg * REDDIT["max_degree"] * REDDIT["nodes"] / REDDIT["edges"]
    max_degree = min(float(max_degree), n - 1.0)
    xp = _shim_for((), device, seed)
    w = _weights(n, max(avg, 1e-9), max(max_degree, avg), beta)
    cdf = xp.asarray(np.cumsum(w) / w.sum(), xp.f64)
    cdf[-1] = 1.0  # searchsorted must never run past the last node
    have = xp.zeros(0, xp.i64)  # sorted unique keys lo * n + hi, lo < hi
    want = pairs
    while have.shape[0] < pairs:
        # Draw the deficit plus a margin for the pairs that repeat or are loops.
        m = int((want - have.shape[0]) * 1.15) + 1024
        u = xp.searchsorted(cdf, xp.uniform(m))
        v = xp.searchsorted(cdf, xp.uniform(m))
        keep = u != v
        u, v = u[keep], v[keep]
        lo_ = xp.to(u < v, xp.i64)
        a = u * lo_ + v * (1 - lo_)  # min(u, v)
        b = u + v - a                # max(u, v)
        have = xp.unique(xp.cat([have, a * n + b]))
    if have.shape[0] > pairs:  # drop a random surplus (uniformly: keeps the distribution)
        have = xp.sort(have[xp.randperm(have.shape[0])[:pairs]])
    # Shuffle node ids, store both directions, sort by (row, column).
    perm = xp.randperm(n)
    a, b = perm[have // n], perm[have % n]
    keys = xp.sort(xp.cat([a * n + b, b * n + a]))
    rows = keys // n
    colind = xp.to(keys % n, xp.i32)
    rowptr = xp.zeros(n + 1, xp.i64)
    rowptr[1:] = xp.cumsum(xp.bincount(rows, n))
    return rowptr, colind


def gcn_normalize(rowptr, colind, vals=None, add_self_loops=True):
    """Â = D^-1/2 (A + I) D^-1/2 for a canonical square CSR A (sorted unique columns per
    row; vals None means all ones), D the row sums of A + I; rows of zero degree get 0.
    A self loop adds 1 to an existing diagonal entry and is inserted where there is none.
    Returns (rowptr, colind, vals float32) in canonical form, as numpy arrays or torch
    tensors like the inputs. Arithmetic in float64, one rounding at the end; entry (i, j)
    is a_ij · (d_i^-1/2 · d_j^-1/2), so a symmetric A gives a bitwise symmetric Â. O(nnz):
    no sort (the diagonal entries are placed by their rank within their rows)."""
    xp = _shim_for((rowptr, colind))
    n = rowptr.shape[0] - 1
    nnz = colind.shape[0]
    rowptr = xp.to(rowptr, xp.i64)
    col = xp.to(colind, xp.i64)
    if col.shape[0] and (int(col.min()) < 0 or int(col.max()) >= n):
        raise ValueError("gcn_normalize: a column index lies outside the square matrix "
                         f"of {n} rows")
    v = (xp.to(vals, xp.f64) if vals is not None else xp.zeros(nnz, xp.f64) + 1.0)
    rows = xp.repeat(xp.arange(n, xp.i64), rowptr[1:] - rowptr[:-1])
    if add_self_loops and n > 0:
        diag = col == rows
        v = v + xp.to(diag, xp.f64)  # existing diagonal entries: + 1
        has = xp.bincount(rows[diag], n) > 0
        missing = xp.nonzero(~has)
        # Rank of the diagonal within its row = entries left of it.
        left = xp.bincount(rows, n, weights=xp.to(col < rows, xp.f64))
        ins = rowptr[missing] + xp.to(left[missing], xp.i64)  # ascending; ties (empty rows) fine
        m = int(missing.shape[0])
    else:
        m = 0
    if m > 0:
        # Old entry k moves right by the number of insertions at or before it.
        old_to = xp.arange(nnz, xp.i64) + xp.searchsorted(ins, xp.arange(nnz, xp.i64), right=True)
        new_to = ins + xp.arange(m, xp.i64)
        col2 = xp.zeros(nnz + m, xp.i64)
        v2 = xp.zeros(nnz + m, xp.f64)
        col2[old_to] = col
        v2[old_to] = v
        col2[new_to] = missing
        v2[new_to] = xp.zeros(m, xp.f64) + 1.0
        rp = xp.zeros(n + 1, xp.i64)
        rp[1:] = rowptr[1:] + xp.cumsum(xp.to(~has, xp.i64))
        rowptr, col, v = rp, col2, v2
        rows = xp.repeat(xp.arange(n, xp.i64), rowptr[1:] - rowptr[:-1])
    deg = xp.bincount(rows, n, weights=v)
    pos = deg > 0
    dinv = xp.zeros(n, xp.f64)
    dinv[pos] = 1.0 / xp.sqrt(deg[pos])
    v = v * (dinv[rows] * dinv[col])
    return rowptr, xp.to(col, xp.i32), xp.to(v, xp.f32)


def degree_stats(rowptr):
    """{"nodes", "edges", "mean", "median", "max", "cv", "p99", "isolated"} of the row
    lengths (numpy or torch rowptr)."""
    r = rowptr.cpu().numpy() if hasattr(rowptr, "cpu") else np.asarray(rowptr)
    d = np.diff(r.astype(np.int64)).astype(np.float64)
    n = d.shape[0]
    mean = float(d.mean()) if n else 0.0
    return {
        "nodes": int(n), "edges": int(r[-1]) if r.size else 0, "mean": mean,
        "median": float(np.median(d)) if n else 0.0, "max": int(d.max()) if n else 0,
        "cv": float(d.std() / mean) if mean > 0 else 0.0,
        "p99": float(np.percentile(d, 99)) if n else 0.0,
        "isolated": int((d == 0).sum()),
    }
