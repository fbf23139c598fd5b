# python/tests/test_distributed.py: sparseditto.distributed: partition (contiguous and METIS), halo plan and a two-layer GCN across gloo processes (CPU), NCCL/gloo on one GPU.
"""Partition and halo helpers on hand-checked graphs (numpy only); then, with torch,
2 and 4 CPU processes on the gloo backend (torch.multiprocessing.spawn, FileStore
rendezvous in a temporary directory, 30 s collective timeout, 90 s overall deadline after
which the workers are killed): the halo plan of each rank against splits written out by
hand, and a two-layer GCN Z = Â·relu(Â·X·W1)·W2 whose output, input gradient and weight
gradients (summed over ranks) equal a dense float64 autograd computation within
|d| <= 1e-5 + 1e-4·|ref| (FP32 sums of at most a few dozen terms); an uneven partition
(from_shard), ranks with no rows, a locality order, and a bad shard on one rank raising
on every rank. GPU (@pytest.mark.gpu): world size 1 on NCCL equals
sparseditto.torch.SpMM bit for bit; two gloo processes sharing the GPU run the compiled
per-shard kernels with a real halo. The 1.5-D layout (ReplicatedGraph, c = 2) is checked
against the same reference. order="metis" (needs pymetis; those tests skip without it):
a chain of cliques joined by single edges, ids interleaved, where the blocks must be the
cliques and each rank's halo exactly the far ends of its bridges; the GCN with
order="metis" (1-D, and 1.5-D with c = 2) against the same reference; on a generated
clustered graph with shuffled ids, METIS's halo rows (summed over ranks) at most those
of contiguous blocks; without
pymetis (blocked in sys.modules) an ImportError naming `pip install pymetis` on every
rank, and world size 1 needing no METIS. Seeds are in the bodies.

    SPARSEDITTO_LIBRARY=build-gpu/libsparseditto.so PYTHONPATH=python python3 -m pytest -q python/tests/test_distributed.py
"""
import os

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")

import datetime  # noqa: E402
import pathlib  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[2]
if "sparseditto" not in sys.modules:
    try:
        import sparseditto  # noqa: F401  (installed)
    except ImportError:
        sys.path.insert(0, str(REPO / "python"))
from sparseditto import distributed as sdd  # noqa: E402
from sparseditto.graphs import gcn_normalize, powerlaw_graph  # noqa: E402
from sparseditto.matrix import CSRMatrix  # noqa: E402

try:
    import torch
    import torch.distributed as dist
    HAS_TORCH = dist.is_available()
except ImportError:
    torch = dist = None
    HAS_TORCH = False
HAS_CUDA = HAS_TORCH and torch.cuda.is_available()
needs_torch = pytest.mark.skipif(not HAS_TORCH, reason="needs PyTorch with torch.distributed")
try:
    import pymetis  # noqa: F401
    HAS_METIS = True
except ImportError:
    HAS_METIS = False
needs_metis = pytest.mark.skipif(not HAS_METIS, reason="needs pymetis (pip install pymetis)")

ATOL, RTOL = 1e-5, 1e-4
DEADLINE_S = 90

# The 6-node graph of the hand-checked splits: edges 0-1 1-2 2-3 3-4 4-5 0-5 1-4; with the
# self loops of Â each row's columns are:
#   0: 0 1 5 | 1: 0 1 2 4 | 2: 1 2 3 | 3: 2 3 4 | 4: 1 3 4 5 | 5: 0 4 5   (rowptr 0 3 7 10 13 17 20)
G6_EDGES = [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (0, 5), (1, 4)]
G6_ROWPTR = [0, 3, 7, 10, 13, 17, 20]
# Per world size and bounds: (halo ids, recv counts, send counts, send idx) of each rank.
G6_PLANS = {
    (0, 3, 6): [([3, 4, 5], [0, 3], [0, 3], [0, 1, 2]),
                ([0, 1, 2], [3, 0], [3, 0], [0, 1, 2])],
    (0, 1, 3, 4, 6): [([1, 5], [0, 1, 0, 1], [0, 1, 0, 1], [0, 0]),
                      ([0, 3, 4], [1, 0, 1, 1], [1, 0, 1, 1], [0, 1, 0]),
                      ([2, 4], [0, 1, 0, 1], [0, 1, 0, 1], [0, 0]),
                      ([0, 1, 3], [1, 1, 1, 0], [1, 1, 1, 0], [1, 0, 0])],
    # uneven, rank 1 empty (from_shard)
    (0, 2, 2, 5, 6): [([2, 4, 5], [0, 0, 2, 1], [0, 0, 1, 1], [1, 0]),
                      ([], [0, 0, 0, 0], [0, 0, 0, 0], []),
                      ([1, 5], [1, 0, 0, 1], [2, 0, 0, 1], [0, 2, 2]),
                      ([0, 4], [1, 0, 1, 0], [1, 0, 1, 0], [0, 0])],
    (0, 0, 6): [([], [0, 0], [0, 0], []), ([], [0, 0], [0, 0], [])],
}


def _adjacency(n, edges):
    """Â of an undirected edge list (gcn_normalize: self loops, symmetric scaling)."""
    pairs = sorted({(a, b) for a, b in edges} | {(b, a) for a, b in edges})
    rows = np.array([p[0] for p in pairs], dtype=np.int64)
    rowptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=rowptr[1:])
    cols = np.array([p[1] for p in pairs], dtype=np.int32)
    rp, ci, v = gcn_normalize(rowptr, cols)
    return CSRMatrix(rp, ci, v, (n, n))


def _g6():
    return _adjacency(6, G6_EDGES)


def _star4():
    """Node 0 joined to 1, 2, 3: row lengths 4 2 2 2 with self loops."""
    return _adjacency(4, [(0, 1), (0, 2), (0, 3)])


def _random(n, edges, seed):
    rp, ci = powerlaw_graph(n, edges, seed=seed)
    rp, ci, v = gcn_normalize(rp, ci)
    return CSRMatrix(rp, ci, v, (n, n))


def _chain(k, s=5):
    """k cliques of s nodes, clique c's node i numbered i·k + c (interleaved, so contiguous
    blocks mix cliques), clique c's last node joined to clique c + 1's first. Returns
    (Â, cliques as sets of ids, bridges as (end in c, end in c + 1))."""
    def nid(c, i):
        return i * k + c
    edges = [(nid(c, i), nid(c, j)) for c in range(k) for i in range(s) for j in range(i + 1, s)]
    bridges = [(nid(c, s - 1), nid(c + 1, 0)) for c in range(k - 1)]
    cliques = [{nid(c, i) for i in range(s)} for c in range(k)]
    return _adjacency(k * s, edges + bridges), cliques, bridges


def _clustered(k, size, p_in, inter, seed):
    """k clusters of `size` nodes (each pair inside joined with probability p_in), `inter`
    random edges across clusters, node ids shuffled."""
    rng = np.random.default_rng(seed)
    n = k * size
    edges = []
    for c in range(k):
        i, j = np.triu_indices(size, 1)
        keep = rng.random(i.shape[0]) < p_in
        edges += list(zip((c * size + i[keep]).tolist(), (c * size + j[keep]).tolist()))
    while inter > 0:
        a, b = rng.integers(0, n, 2).tolist()
        if a // size != b // size:
            edges.append((a, b))
            inter -= 1
    ids = rng.permutation(n)
    return _adjacency(n, [(int(ids[a]), int(ids[b])) for a, b in edges])


def _shard(m, lo, hi):
    rp = m.rowptr[lo:hi + 1] - m.rowptr[lo]
    s, e = m.rowptr[lo], m.rowptr[hi]
    return CSRMatrix(rp, m.colind[s:e], m.vals[s:e], (hi - lo, m.shape[1]))


# ---------------------------------------------------------------- pure helpers

def test_partition_rows_hand_checked():
    assert sdd.partition_rows(G6_ROWPTR, 1) == [0, 6]
    assert sdd.partition_rows(G6_ROWPTR, 2) == [0, 3, 6]          # 10 | 10 nonzeros
    assert sdd.partition_rows(G6_ROWPTR, 4) == [0, 1, 3, 4, 6]    # 3 | 7 | 3 | 7 (ties: earlier)
    assert sdd.partition_rows(G6_ROWPTR, 4, "rows") == [0, 1, 3, 4, 6]
    assert sdd.partition_rows([0, 1, 2, 3], 4, "rows") == [0, 0, 1, 2, 3]  # rank 0 empty
    assert sdd.partition_rows([0, 100, 101, 102, 103], 4) == [0, 0, 1, 1, 4]  # a hub row
    assert sdd.partition_rows([0, 4, 6, 8, 10], 4) == [0, 1, 1, 3, 4]  # the star: rank 1 empty
    assert sdd.partition_rows([0, 0, 0], 3) == [0, 0, 1, 2]  # no nonzeros: by rows
    assert sdd.partition_rows(np.array(G6_ROWPTR), 2) == [0, 3, 6]  # numpy input too
    with pytest.raises(ValueError, match="parts"):
        sdd.partition_rows(G6_ROWPTR, 0)
    with pytest.raises(ValueError, match="balance"):
        sdd.partition_rows(G6_ROWPTR, 2, "edges")


def test_owner_and_split_counts():
    b = [0, 2, 2, 5, 6]
    assert [sdd.owner_of(b, r) for r in range(6)] == [0, 0, 2, 2, 2, 3]
    with pytest.raises(ValueError, match="outside"):
        sdd.owner_of(b, 6)
    assert sdd.split_counts([0, 3, 4], [0, 1, 3, 4, 6]) == [1, 0, 1, 1]
    assert sdd.split_counts([], [0, 1, 3, 4, 6]) == [0, 0, 0, 0]
    assert sdd.split_counts(np.array([1, 5]), [0, 1, 3, 4, 6]) == [0, 1, 0, 1]


@pytest.mark.parametrize("bounds", [(0, 3, 6), (0, 1, 3, 4, 6), (0, 2, 2, 5, 6)])
def test_split_block_hand_checked(bounds):
    m = _g6()
    dense = np.zeros((6, 6))
    dense[np.repeat(np.arange(6), np.diff(m.rowptr)), m.colind] = m.vals
    for r, (halo, recv, _, _) in enumerate(G6_PLANS[bounds]):
        lo, hi = bounds[r], bounds[r + 1]
        local, off, ids = sdd.split_block(m.rowptr[lo:hi + 1], m.colind, m.vals, lo, hi)
        assert ids.tolist() == halo
        assert sdd.split_counts(ids, list(bounds)) == recv
        # Both blocks rebuild the block row: local columns + lo, off columns through ids.
        got = np.zeros((hi - lo, 6))
        for (rp, ci, v), cmap in ((local, np.arange(lo, hi)), (off, ids)):
            rr = np.repeat(np.arange(hi - lo), np.diff(rp))
            got[rr, cmap[ci]] += v
            for i in range(hi - lo):  # sorted columns per row (canonical CSR)
                assert np.all(np.diff(ci[rp[i]:rp[i + 1]]) > 0)
        np.testing.assert_array_equal(got, dense[lo:hi])


def test_layout_cost_model():
    # 4 ranks, K = 64: c = 2 halves the blocks' halo width and pays a column all-gather.
    costs = sdd.layout_costs(4, 64, rows_max={1: 100, 2: 200, 4: 400},
                             nnz_max={1: 1000, 2: 2000, 4: 4000},
                             halo_rows_max={1: 300, 2: 150, 4: 0}, bandwidth=1e9, spmm_rate=1e9)
    assert costs[1]["halo_bytes"] == 4 * 300 * 64 and costs[1]["gather_bytes"] == 0
    assert costs[2]["halo_bytes"] == 4 * 150 * 32 and costs[2]["gather_bytes"] == 4 * 200 * 32
    assert costs[4]["halo_bytes"] == 0 and costs[4]["gather_bytes"] == 4 * 400 * 48
    assert all(c["work_flops"] == 2 * 1000 * 64 for c in costs.values())  # same total work
    assert sdd.choose_replication(costs) == 2
    with pytest.raises(ValueError, match="divide"):
        sdd.layout_costs(4, 8, {3: 1}, {3: 1}, {3: 1})
    # Measured on a graph: one block has no halo; more blocks, more halo.
    rc = sdd.replication_costs(_random(200, 2000, seed=5), 4, 16)  # seed 5
    assert sorted(rc) == [1, 2, 4] and rc[4]["halo_bytes"] == 0
    assert rc[1]["halo_bytes"] > 0


def test_locality_order_is_a_permutation():
    m = _random(60, 300, seed=3)  # seed 3
    for method in ("degree", "rcm"):
        try:
            perm, info = sdd.locality_order(m, method)
        except ValueError as e:  # rcm without the command and without scipy
            assert "scipy" in str(e)
            continue
        assert sorted(perm.tolist()) == list(range(60)), info
        assert info["method"] == method and info["by"]
    with pytest.raises(ValueError, match="unknown method"):
        sdd.locality_order(m, "spectral")
    with pytest.raises(ValueError, match="metis_partition"):  # a partition, not an order
        sdd.locality_order(m, "metis")


def _expected_halo(cliques, bridges, c):
    """The ids clique c receives: the far end of each bridge touching it."""
    return sorted([a for a, b in bridges if b in cliques[c]]
                  + [b for a, b in bridges if a in cliques[c]])


@needs_metis
@pytest.mark.parametrize("k", [2, 4])
def test_metis_chain_of_cliques(k):
    m, cliques, bridges = _chain(k)
    perm, bounds, info = sdd.metis_partition(m, k)
    assert info["method"] == "metis" and "pymetis" in info["by"] and info["seed"] == 0
    assert info["edge_cut"] == len(bridges) == k - 1
    assert sorted(perm.tolist()) == list(range(m.shape[0]))
    assert len(bounds) == k + 1 and bounds[0] == 0 and bounds[-1] == m.shape[0]
    pm, _ = sdd._permute(m, perm)
    blocks = sdd.halo_rows_per_block(pm, bounds)
    for r in range(k):
        lo, hi = bounds[r], bounds[r + 1]
        rows = perm[lo:hi].tolist()
        assert rows == sorted(rows)  # ascending original id within a part
        c = next(i for i, q in enumerate(cliques) if set(rows) == q)  # a block is a clique
        assert blocks[r]["halo"] == len(_expected_halo(cliques, bridges, c))
    # The same parts every call (seed 0).
    perm2, bounds2, _ = sdd.metis_partition(m, k)
    assert perm2.tolist() == perm.tolist() and bounds2 == bounds


@needs_metis
@pytest.mark.parametrize("k", [2, 3, 4])
def test_metis_blocks_are_pymetis_parts(k):
    """Against pymetis called here on a graph built from the edge list: the blocks are
    its parts (row sets), in part order, ascending ids inside."""
    import pymetis
    m = _random(300, 3000, seed=4)  # seed 4
    n = m.shape[0]
    nbrs = [set() for _ in range(n)]
    for a, b in zip(m.row_of_entries().tolist(), m.colind.tolist()):
        if a != b:
            nbrs[a].add(b)
            nbrs[b].add(a)
    xadj = np.cumsum([0] + [len(x) for x in nbrs])
    adjncy = np.array([j for x in nbrs for j in sorted(x)])
    opts = pymetis.Options()
    opts.seed = 0
    kw = {"vweights": np.diff(m.rowptr), "options": opts, "recursive": False}
    if hasattr(pymetis, "CSRAdjacency"):
        cut, part = pymetis.part_graph(k, adjacency=pymetis.CSRAdjacency(xadj, adjncy), **kw)
    else:
        cut, part = pymetis.part_graph(k, xadj=xadj, adjncy=adjncy, **kw)
    part = np.asarray(part)
    perm, bounds, info = sdd.metis_partition(m, k)
    assert info["edge_cut"] == cut
    for r in range(k):
        assert perm[bounds[r]:bounds[r + 1]].tolist() == np.flatnonzero(part == r).tolist()


@needs_metis
def test_metis_empty_rows_isolated_and_tiny():
    # Rows 4 and 7 empty, 7 also in no column; not symmetric; an explicit diagonal entry.
    row = np.array([0, 0, 1, 2, 3, 5, 6, 6])
    col = np.array([1, 3, 1, 5, 6, 2, 0, 6])
    m = CSRMatrix.from_coo(row, col, np.ones(8), (8, 8))
    for parts in (2, 3):
        perm, bounds, info = sdd.metis_partition(m, parts)
        assert sorted(perm.tolist()) == list(range(8))
        assert len(bounds) == parts + 1 and bounds[-1] == 8
        assert info["part_rows"] == [bounds[k + 1] - bounds[k] for k in range(parts)]
        pm, _ = sdd._permute(m, perm)
        # METIS's cut counts the undirected edges of A + Aᵀ between parts.
        owner = np.searchsorted(bounds, np.arange(8), side="right") - 1
        pr, pc = pm.row_of_entries(), pm.colind.astype(np.int64)
        cut = {(min(a, b), max(a, b)) for a, b in zip(pr.tolist(), pc.tolist())
               if owner[a] != owner[b]}
        assert info["edge_cut"] == len(cut), (parts, info)
    # Fewer rows than parts: no METIS call, one row per part.
    perm, bounds, info = sdd.metis_partition(_adjacency(2, [(0, 1)]), 4)
    assert bounds == [0, 1, 2, 2, 2] and info["edge_cut"] == 1 and "no METIS" in info["by"]
    with pytest.raises(ValueError, match="parts"):
        sdd.metis_partition(m, 0)
    with pytest.raises(ValueError, match="square"):
        sdd.metis_partition(CSRMatrix.from_coo([0], [1], [1.0], (1, 2)), 2)


def test_metis_without_pymetis(monkeypatch):
    monkeypatch.setitem(sys.modules, "pymetis", None)  # import pymetis raises ImportError
    m, _, _ = _chain(2)
    perm, bounds, info = sdd.metis_partition(m, 1)  # one part: METIS is not needed
    assert perm.tolist() == list(range(10)) and bounds == [0, 10]
    assert info["edge_cut"] == 0 and "no METIS call" in info["by"]
    with pytest.raises(ImportError, match="pip install pymetis"):
        sdd.metis_partition(m, 2)


@needs_metis
@pytest.mark.parametrize("k", [2, 4])
def test_metis_halo_not_above_contiguous(k):
    m = _clustered(8, 40, 0.25, 40, seed=21)  # seed 21
    perm, bounds, _ = sdd.metis_partition(m, k)
    pm, _ = sdd._permute(m, perm)
    metis = sum(b["halo"] for b in sdd.halo_rows_per_block(pm, bounds))
    contiguous = sum(b["halo"] for b in sdd.halo_rows_per_block(
        m, sdd.partition_rows(m.rowptr, k)))
    assert metis <= contiguous, (metis, contiguous)


# ---------------------------------------------------------------- processes (gloo, CPU)

def _gcn_case(dg, n, seed, K=5, F=7, C=3):
    """Runs the two-layer GCN on this rank; returns global (gathered) results."""
    from sparseditto.distributed import aggregate, all_reduce_gradients
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, F, generator=g)
    T = torch.randn(n, C, generator=g)
    W1 = (torch.randn(F, K, generator=g) * 0.5).requires_grad_()
    W2 = (torch.randn(K, C, generator=g) * 0.5).requires_grad_()
    dev = dg.device
    w1, w2 = W1.to(dev), W2.to(dev)
    h0 = dg.local_rows(X).clone().requires_grad_()
    z = aggregate(dg, torch.relu(aggregate(dg, h0 @ w1)) @ w2)
    loss = (z * dg.local_rows(T)).sum()
    loss.backward()
    all_reduce_gradients([W1, W2], group=dg.group)
    return {"z": dg.gather(z).cpu(), "gx": dg.gather(h0.grad).cpu(),
            "gw1": W1.grad.cpu(), "gw2": W2.grad.cpu()}


def _reference(m, seed, K=5, F=7, C=3):
    """The same GCN, one process, dense float64 autograd."""
    n = m.shape[0]
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, F, generator=g).double().requires_grad_()
    T = torch.randn(n, C, generator=g).double()
    W1 = (torch.randn(F, K, generator=g) * 0.5).double().requires_grad_()
    W2 = (torch.randn(K, C, generator=g) * 0.5).double().requires_grad_()
    A = torch.zeros(n, n, dtype=torch.float64)
    rows = torch.from_numpy(m.row_of_entries())
    A[rows, torch.from_numpy(m.colind.astype(np.int64))] = torch.from_numpy(m.vals).double()
    z = A @ torch.relu(A @ (X @ W1)) @ W2
    (z * T).sum().backward()
    return {"z": z.detach(), "gx": X.grad, "gw1": W1.grad, "gw2": W2.grad}


def _cases(world):
    """(name, how the graph is built, matrix, seed) run on every rank."""
    g6 = _g6()
    out = [("g6", {"balance": "nnz"}, g6, 11),
           ("g6-shard-uneven", {"shard": (0, 2, 2, 5, 6) if world == 4 else (0, 0, 6)}, g6, 12),
           ("star4", {"balance": "nnz"}, _star4(), 13),
           ("rows3", {"balance": "rows"}, _adjacency(3, [(0, 1), (1, 2)]), 14),
           ("random", {"balance": "nnz"}, _random(300, 3000, seed=4), 15),
           ("random-rcm", {"balance": "nnz", "order": "rcm"}, _random(300, 3000, seed=6), 16)]
    return out


def _metis_cases(world):
    """(name, how, matrix, seed) of the order="metis" runs (with pymetis only)."""
    return [("chain-metis", {"balance": "nnz", "order": "metis"}, _chain(world)[0], 17),
            ("random-metis", {"balance": "nnz", "order": "metis"}, _random(300, 3000, seed=4), 18),
            ("clustered-contiguous", {"balance": "nnz"}, _clustered(8, 40, 0.25, 40, seed=21), 19),
            ("clustered-metis", {"balance": "nnz", "order": "metis"},
             _clustered(8, 40, 0.25, 40, seed=21), 19)]


def _worker(rank, world, tmp, device_kind):
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{tmp}/store", rank=rank,
                            world_size=world, timeout=datetime.timedelta(seconds=30))
    results = {}
    try:
        device = "cuda:0" if device_kind == "cuda" else "cpu"
        cases = _cases(world) if device_kind == "cpu" else [("random", {"balance": "nnz"}, _random(300, 3000, seed=4), 15)]
        for name, how, m, seed in cases:
            opts = {"budget": 4, "deterministic": True} if device_kind == "cuda" else {}
            if "shard" in how:
                b = how["shard"]
                dg = sdd.DistributedGraph.from_shard(_shard(m, b[rank], b[rank + 1]), b,
                                                     device=device, **opts)
            else:
                try:
                    dg = sdd.DistributedGraph(m, balance=how["balance"], order=how.get("order"),
                                              device=device, **opts)
                except ValueError as e:  # rcm with neither the command nor scipy
                    results[name] = {"skipped": str(e)}
                    continue
            r = _gcn_case(dg, m.shape[0], seed)
            r.update(bounds=list(dg.bounds), halo=dg.halo_ids.tolist(),
                     recv=list(dg.recv_counts), send=list(dg.send_counts),
                     send_idx=dg.send_idx.tolist(), compile_s=dg.compile_seconds,
                     order=dg.order_info)
            results[name] = r
        if device_kind == "cpu" and HAS_METIS:
            for name, how, m, seed in _metis_cases(world):
                dg = sdd.DistributedGraph(m, balance=how["balance"], order=how.get("order"))
                r = _gcn_case(dg, m.shape[0], seed)
                perm = dg.perm if dg.perm is not None else np.arange(m.shape[0])
                lo, hi = dg.row_range
                r.update(bounds=list(dg.bounds), order=dg.order_info, balance=dg.balance,
                         rows=perm[lo:hi].tolist(), halo=perm[dg.halo_ids].tolist(),
                         send=perm[lo + dg.send_idx].tolist())
                results[name] = r
            m = _random(300, 3000, seed=4)  # 1.5-D, c = 2: METIS parts of world / 2 blocks
            rg = sdd.ReplicatedGraph(m, 2, order="metis")
            r = _gcn_case(rg, m.shape[0], 15)
            r.update(bounds=list(rg.bounds), order=rg.order_info)
            results["replicated-metis"] = r
        if device_kind == "cpu":  # pymetis missing: every rank raises, none waits
            saved = sys.modules.get("pymetis", False)
            sys.modules["pymetis"] = None
            try:
                sdd.DistributedGraph(_g6(), order="metis")
                results["metis-missing"] = "no error"
            except ImportError as e:
                results["metis-missing"] = f"ImportError: {e}"
            except ValueError as e:
                results["metis-missing"] = f"ValueError: {e}"
            finally:
                if saved is False:
                    del sys.modules["pymetis"]
                else:
                    sys.modules["pymetis"] = saved
        if device_kind == "cpu":  # 1.5-D: c = 2 (world 2: one block, world 4: two)
            m = _random(300, 3000, seed=4)
            rg = sdd.ReplicatedGraph(m, 2)
            r = _gcn_case(rg, m.shape[0], 15)
            r.update(bounds=list(rg.bounds), stats=rg.stats(5))
            results["replicated"] = r
        if device_kind == "cpu":  # a bad shard on rank 0 alone: every rank must raise
            b = [0, 3, 6] if world == 2 else [0, 1, 3, 4, 6]
            m = _g6()
            blk = _shard(m, 0, 2) if rank == 0 else _shard(m, b[rank], b[rank + 1])
            try:
                sdd.DistributedGraph.from_shard(blk, b)
                results["bad-shard"] = "no error"
            except ValueError as e:
                results["bad-shard"] = str(e)
    finally:
        torch.save(results, f"{tmp}/rank{rank}.pt")
        dist.destroy_process_group()


def _run(world, device_kind="cpu"):
    """Spawns `world` workers; returns their result dicts (killed after DEADLINE_S)."""
    import torch.multiprocessing as mp
    with tempfile.TemporaryDirectory(prefix="sd-dist-") as tmp:
        ctx = mp.spawn(_worker, args=(world, tmp, device_kind), nprocs=world, join=False)
        t0 = time.monotonic()
        try:
            while not ctx.join(timeout=1):
                if time.monotonic() - t0 > DEADLINE_S:
                    raise AssertionError(f"{world} workers still running after {DEADLINE_S} s")
        finally:
            for p in ctx.processes:
                if p.is_alive():
                    p.kill()
        return [torch.load(f"{tmp}/rank{r}.pt", weights_only=False) for r in range(world)]


@pytest.fixture(scope="module", params=[2, 4])
def runs(request):
    if not HAS_TORCH:
        pytest.skip("needs PyTorch with torch.distributed")
    world = request.param
    return world, _run(world)


def _close(got, ref, what):
    d = (got.double() - ref).abs()
    bound = ATOL + RTOL * ref.abs()
    assert bool((d <= bound).all()), f"{what}: max |d| {float(d.max()):.3e}"


@needs_torch
def test_halo_plans_match_hand_written(runs):
    world, res = runs
    for name in ("g6", "g6-shard-uneven"):
        bounds = tuple(res[0][name]["bounds"])
        assert bounds in G6_PLANS, (name, bounds)
        for r in range(world):
            got = res[r][name]
            halo, recv, send, idx = G6_PLANS[bounds][r]
            assert (got["halo"], got["recv"], got["send"], got["send_idx"]) == \
                (halo, recv, send, idx), (name, r, got)
    assert res[0]["star4"]["bounds"] == ([0, 1, 1, 3, 4] if world == 4 else [0, 1, 4])
    assert res[0]["rows3"]["bounds"] == ([0, 0, 1, 2, 3] if world == 4 else [0, 1, 3])


@needs_torch
def test_gcn_equals_one_process(runs):
    world, res = runs
    for name, _, m, seed in _cases(world):
        if "skipped" in res[0][name]:
            continue
        ref = _reference(m, seed)
        for r in range(world):
            got = res[r][name]
            for key in ("z", "gx", "gw1", "gw2"):
                _close(got[key], ref[key], f"{name} rank {r}/{world} {key}")


@needs_torch
def test_replicated_columns_equal_one_process(runs):
    world, res = runs
    ref = _reference(_random(300, 3000, seed=4), 15)
    for r in range(world):
        got = res[r]["replicated"]
        st = got["stats"]
        assert (st["block"], st["col"]) == divmod(r, 2)
        assert len(got["bounds"]) == world // 2 + 1
        # K = 5 split 2 + 3: each halo row carries this rank's slice only.
        assert st["recv_bytes"] == 4 * st["halo_rows"] * (2 if st["col"] == 0 else 3)
        for key in ("z", "gx", "gw1", "gw2"):
            _close(got[key], ref[key], f"replicated rank {r}/{world} {key}")


@needs_torch
def test_empty_rank_and_errors(runs):
    world, res = runs
    b = res[0]["g6-shard-uneven"]["bounds"]
    assert any(b[k] == b[k + 1] for k in range(world)), b  # some rank holds no rows
    for r in range(world):
        msg = res[r]["bad-shard"]
        assert "rank(s) [0]" in msg, msg


@needs_torch
@needs_metis
def test_metis_blocks_are_the_cliques(runs):
    """Each rank holds one clique and receives exactly the far ends of its bridges."""
    world, res = runs
    _, cliques, bridges = _chain(world)
    seen = set()
    for r in range(world):
        got = res[r]["chain-metis"]
        assert got["order"]["method"] == "metis" and got["balance"] == "metis"
        assert got["order"]["edge_cut"] == world - 1, got["order"]
        assert got["bounds"] == res[0]["chain-metis"]["bounds"]
        c = next(i for i, q in enumerate(cliques) if set(got["rows"]) == q)
        seen.add(c)
        assert sorted(got["halo"]) == _expected_halo(cliques, bridges, c), (r, got["halo"])
        own = sorted([a for a, _ in bridges if a in cliques[c]]
                     + [b for _, b in bridges if b in cliques[c]])
        assert sorted(got["send"]) == own, (r, got["send"])
    assert seen == set(range(world))


@needs_torch
@needs_metis
def test_metis_gcn_equals_one_process(runs):
    world, res = runs
    for name, how, m, seed in _metis_cases(world):
        if how.get("order") == "metis":  # the blocks are METIS's parts, not re-balanced
            perm, bounds, _ = sdd.metis_partition(m, world)
            for r in range(world):
                assert res[r][name]["bounds"] == bounds, (name, r)
                assert res[r][name]["rows"] == perm[bounds[r]:bounds[r + 1]].tolist(), (name, r)
        ref = _reference(m, seed)
        for r in range(world):
            for key in ("z", "gx", "gw1", "gw2"):
                _close(res[r][name][key], ref[key], f"{name} rank {r}/{world} {key}")


@needs_torch
@needs_metis
def test_metis_replicated_equals_one_process(runs):
    world, res = runs
    m = _random(300, 3000, seed=4)
    ref = _reference(m, 15)
    _, bounds, _ = sdd.metis_partition(m, world // 2)
    for r in range(world):
        got = res[r]["replicated-metis"]
        assert got["bounds"] == bounds and got["order"]["method"] == "metis"
        for key in ("z", "gx", "gw1", "gw2"):
            _close(got[key], ref[key], f"replicated-metis rank {r}/{world} {key}")


@needs_torch
@needs_metis
def test_metis_halo_rows_not_above_contiguous_ranks(runs):
    world, res = runs
    halo = {name: sum(len(res[r][name]["halo"]) for r in range(world))
            for name in ("clustered-metis", "clustered-contiguous")}
    assert 0 < halo["clustered-metis"] <= halo["clustered-contiguous"], halo


@needs_torch
def test_metis_missing_raises_on_every_rank(runs):
    world, res = runs
    for r in range(world):
        msg = res[r]["metis-missing"]
        assert msg.startswith("ImportError") and "pip install pymetis" in msg, (r, msg)


@needs_torch
def test_metis_world_one_needs_no_metis(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pymetis", None)
    dist.init_process_group("gloo", init_method=f"file://{tmp_path}/store", rank=0,
                            world_size=1, timeout=datetime.timedelta(seconds=30))
    try:
        m, _, _ = _chain(2)
        dg = sdd.DistributedGraph(m, order="metis")
        assert dg.bounds == [0, 10] and dg.perm.tolist() == list(range(10))
        assert dg.order_info["edge_cut"] == 0 and "no METIS call" in dg.order_info["by"]
        x = torch.randn(10, 3, generator=torch.Generator().manual_seed(23))  # seed 23
        y = sdd.aggregate(dg, dg.local_rows(x))
        dense = np.zeros((10, 10))
        dense[m.row_of_entries(), m.colind] = m.vals
        np.testing.assert_allclose(y.numpy(), dense @ x.double().numpy(), rtol=1e-5, atol=1e-6)
    finally:
        dist.destroy_process_group()


def _run_example(tmp_path, *extra):
    """examples/gcn_distributed.py under torchrun, 2 gloo ranks, a 400-node graph; its JSON."""
    import json
    import subprocess
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node",
           "2", str(REPO / "examples" / "gcn_distributed.py"), "--backend", "gloo",
           "--nodes", "400", "--edges", "4000", "--features", "16", "--classes", "4",
           "--hidden", "8", "--warmup", "1", "--out", str(tmp_path), *extra]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(REPO / "python")] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=DEADLINE_S, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads((tmp_path / "gcn_distributed.json").read_text())


@needs_torch
def test_example_two_ranks_cpu(tmp_path):
    """examples/gcn_distributed.py under torchrun, 2 gloo ranks: it reports and its loss
    curve matches the one-process run it makes itself."""
    res = _run_example(tmp_path, "--epochs", "3", "--profile-epochs", "1",
                       "--replication", "auto")
    assert res["world_size"] == 2 and res["loss_check"] == "passed", res.get("loss_check")
    row = res["rows"][0]
    assert row["K"] == 8 and row["mean_ms"] > 0 and len(row["losses"]) == 4
    assert 0 < row["profile"]["spmm_share"] < 1 and 0 < row["profile"]["comm_share"] < 1
    assert res["replication"] == res["cost_model_choice"]
    assert (tmp_path / "gcn_distributed.md").read_text().startswith("# Distributed")


@needs_torch
@needs_metis
def test_example_metis_two_ranks_cpu(tmp_path):
    """--order metis: the partition is METIS's (edge cut reported), the losses match."""
    res = _run_example(tmp_path, "--epochs", "2", "--profile-epochs", "0", "--order", "metis")
    assert res["loss_check"] == "passed" and res["balance"] == "METIS parts"
    assert res["order"].startswith("metis (pymetis") and res["edge_cut"] > 0, res["order"]
    assert "edge cut" in (tmp_path / "gcn_distributed.md").read_text()


# ---------------------------------------------------------------- one GPU

@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason="needs PyTorch with a CUDA device")
def test_nccl_world_one_equals_spmm(tmp_path):
    from sparseditto import torch as sdt
    from sparseditto.distributed import aggregate
    torch.cuda.set_device(0)
    dist.init_process_group("nccl", init_method=f"file://{tmp_path}/store", rank=0,
                            world_size=1, timeout=datetime.timedelta(seconds=60))
    try:
        m = _random(2000, 40000, seed=8)  # seed 8
        dg = sdd.DistributedGraph(m, budget=4, deterministic=True)
        assert dg.device.type == "cuda" and dg.off.nnz == 0 and dg.local.nnz == m.nnz
        secs = dg.prepare(16)
        assert secs >= 0 and dg.compile_seconds >= 0
        g = torch.Generator(device="cuda").manual_seed(8)
        x = torch.randn(2000, 16, device="cuda", generator=g)
        gy = torch.randn(2000, 16, device="cuda", generator=g)
        x1 = x.clone().requires_grad_()
        y1 = aggregate(dg, dg.local_rows(x1))
        y1.backward(gy)
        x2 = x.clone().requires_grad_()
        y2 = sdt.SpMM.apply(sdt.SparseGraph(m, budget=4, deterministic=True), x2)
        y2.backward(gy)
        torch.cuda.synchronize()
        assert torch.equal(y1, y2), float((y1 - y2).abs().max())
        assert torch.equal(x1.grad, x2.grad), float((x1.grad - x2.grad).abs().max())
    finally:
        dist.destroy_process_group()


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason="needs PyTorch with a CUDA device")
def test_two_processes_on_one_gpu_compiled_shards():
    res = _run(2, "cuda")
    ref = _reference(_random(300, 3000, seed=4), 15)
    for r in range(2):
        got = res[r]["random"]
        assert got["halo"], "the partition should cut edges"
        for key in ("z", "gx", "gw1", "gw2"):
            _close(got[key], ref[key], f"cuda rank {r} {key}")
