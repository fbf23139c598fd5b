# python/tests/test_pyg.py: sparseditto.pyg against PyG's own GCNConv / SAGEConv: arguments, state_dicts, outputs and gradients.
"""Needs PyTorch and torch_geometric (skipped otherwise); GPU tests (marker gpu) also a
CUDA device (skipped, visibly, without one).

CPU: constructor arguments, parameter names and shapes, state_dicts loading both ways,
unsupported arguments refused, bad inputs refused, the cache rule, patch(); outputs and
gradients equal to PyG's layers with the same weights through the CPU path
(torch.sparse), on a small random directed graph with duplicate edges, self loops and
an isolated node, given as edge_index, EdgeIndex and torch sparse adjacency.

GPU: outputs and gradients of our layers (SparseDitto kernels) and of PyG's (float32)
against PyG's layers in float64, on PyG's KarateClub graph (or a generated graph of its
size when the dataset cannot be built here) and on a generated directed power-law graph
(200,000 nodes, about 3.6 M edges, random positive edge weights, so Â is not
symmetric and the backward pass runs the kernel of Âᵀ); patch(model) gives PyG's
outputs. Tolerance, per entry: |got − ref| ≤ 4·(t + 8)·2⁻²⁴·S + 1e-6, S the same
computation in float64 on absolute values (inputs, weights and upstream gradient) and t
the number of products summed into the entry (degree plus channels; all nodes for
parameter gradients): a worst-case bound on FP32 summation in any order, so PyG's own
float32 result meets it as well.

Seeds are in the bodies. GPU part: about 20-50 s on an H200 (sd_compile searches with
budget SD_TEST_BUDGET, default 4).

    SPARSEDITTO_LIBRARY=build-gpu/libsparseditto.so PYTHONPATH=python python3 -m pytest -q python/tests/test_pyg.py
"""
import copy
import os
import pathlib
import pickle
import sys

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch_geometric")
from torch_geometric.nn import GCNConv as PygGCN, SAGEConv as PygSAGE  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[2]
try:
    import sparseditto  # noqa: F401  (installed)
except ImportError:
    sys.path.insert(0, str(REPO / "python"))
from sparseditto import graphs  # noqa: E402
from sparseditto import pyg as sdp  # noqa: E402

HAS_CUDA = torch.cuda.is_available()
gpu = [pytest.mark.gpu, pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA device")]
BUDGET = int(os.environ.get("SD_TEST_BUDGET", "4"))
OPTS = {"budget": BUDGET}
U = 2.0 ** -24


# ---------------------------------------------------------------- graphs and helpers

def _small_graph(n=30, e=120, seed=0):
    """A directed graph on n nodes: random edges, three duplicates, self loops at nodes
    0, 3 and 7, node n - 1 isolated. Returns (edge_index int64, positive weights)."""
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(0, n - 1, (e,), generator=g)
    dst = torch.randint(0, n - 1, (e,), generator=g)
    keep = src != dst
    src, dst = src[keep], dst[keep]
    src = torch.cat([src, src[:3], torch.tensor([0, 3, 7])])
    dst = torch.cat([dst, dst[:3], torch.tensor([0, 3, 7])])
    w = torch.rand(src.numel(), generator=g) + 0.5
    return torch.stack([src, dst]), w


def _torch_adj(edge_index, w, n, layout):
    """PyG's adj_t of the graph: entry (target, source) = weight, duplicates summed."""
    a = torch.sparse_coo_tensor(torch.stack([edge_index[1], edge_index[0]]), w, (n, n)).coalesce()
    return a.to_sparse_csr() if layout == "csr" else a


def _copy_params(src, dst):
    dst.load_state_dict(src.state_dict())
    return dst


def _close_cpu(a, b, what):
    torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5, msg=lambda m: f"{what}: {m}")


def _run(layer, x, graph, extra, upstream):
    """Output and gradients (x, then parameters by name) of sum(layer(...) * upstream)."""
    x = x.detach().clone().requires_grad_(True)
    layer.zero_grad(set_to_none=True)
    out = layer(x, graph, *extra)
    (out * upstream).sum().backward()
    grads = {"x": x.grad}
    grads.update({k: p.grad for k, p in layer.named_parameters()})
    return out.detach(), grads


# ---------------------------------------------------------------- constructors and state

@pytest.mark.parametrize("kw", [{}, {"bias": False}, {"improved": True, "cached": True},
                                {"normalize": False}, {"add_self_loops": False}])
def test_gcn_state_dict_matches_pyg(kw):
    torch.manual_seed(1)
    theirs, ours = PygGCN(12, 5, **kw), sdp.GCNConv(12, 5, **kw)
    st, so = theirs.state_dict(), ours.state_dict()
    assert sorted(st) == sorted(so), (sorted(st), sorted(so))
    for k in st:
        assert st[k].shape == so[k].shape, k
    ours.load_state_dict(st)           # PyG -> ours
    theirs.load_state_dict(ours.state_dict())   # ours -> PyG
    assert ours.add_self_loops == theirs.add_self_loops
    assert ours.normalize == theirs.normalize and ours.improved == theirs.improved


@pytest.mark.parametrize("args,kw", [((12, 5), {}), ((12, 5), {"bias": False}),
                                     ((12, 5), {"root_weight": False}),
                                     ((12, 5), {"project": True}),
                                     (((12, 7), 5), {"aggr": "sum", "normalize": True})])
def test_sage_state_dict_matches_pyg(args, kw):
    torch.manual_seed(2)
    theirs, ours = PygSAGE(*args, **kw), sdp.SAGEConv(*args, **kw)
    st, so = theirs.state_dict(), ours.state_dict()
    assert sorted(st) == sorted(so), (sorted(st), sorted(so))
    for k in st:
        assert st[k].shape == so[k].shape, k
    ours.load_state_dict(st)
    theirs.load_state_dict(ours.state_dict())


def test_lazy_in_channels_and_positional_arguments():
    conv = sdp.GCNConv(-1, 4, True, True)  # PyG's positional order: improved, cached
    assert conv.improved and conv.cached
    ei, _ = _small_graph()
    out = conv(torch.randn(30, 6), ei)
    assert out.shape == (30, 4) and conv.lin.weight.shape == (4, 6)
    sage = sdp.SAGEConv(-1, 3)
    assert sage(torch.randn(30, 6), ei).shape == (30, 3)


@pytest.mark.parametrize("make,err,text", [
    (lambda: sdp.GCNConv(4, 4, aggr="mean"), ValueError, "aggr"),
    (lambda: sdp.GCNConv(4, 4, normalize=False, add_self_loops=True), ValueError, "self-loops"),
    (lambda: sdp.GCNConv(4, 4, node_dim=1), ValueError, "node_dim"),
    (lambda: sdp.GCNConv(4, 4, flow="up"), ValueError, "flow"),
    (lambda: sdp.GCNConv(4, 4, aggr_kwargs={"a": 1}), ValueError, "aggr_kwargs"),
    (lambda: sdp.GCNConv(4, 4, colour="red"), TypeError, "colour"),
    (lambda: sdp.GCNConv(4, 0), ValueError, "out_channels"),
    (lambda: sdp.GCNConv(4, 4, engine="cusparse"), ValueError, "engine"),
    (lambda: sdp.SAGEConv(4, 4, aggr="max"), ValueError, "aggr"),
    (lambda: sdp.SAGEConv(4, 4, aggr="lstm"), ValueError, "aggr"),
    (lambda: sdp.SAGEConv(4, 4, aggr=["mean", "max"]), ValueError, "aggr"),
    (lambda: sdp.SAGEConv(-1, 4, project=True), ValueError, "lazy"),
])
def test_unsupported_arguments_are_refused(make, err, text):
    with pytest.raises(err, match=text):
        make()


def test_decomposed_layers_is_accepted():
    assert sdp.GCNConv(4, 4, decomposed_layers=2) is not None


def test_bad_inputs_are_refused():
    ei, w = _small_graph()
    conv = sdp.GCNConv(6, 3)
    x = torch.randn(30, 6)
    with pytest.raises(ValueError, match="tuple"):
        conv((x, x), ei)
    with pytest.raises(ValueError, match="2-D"):
        conv(x.unsqueeze(0), ei)
    with pytest.raises(ValueError, match=r"\(2, E\)"):
        conv(x, ei.t().contiguous())
    with pytest.raises(TypeError, match="int64 or int32"):
        conv(x, ei.float())
    with pytest.raises(ValueError, match="one per edge"):
        conv(x, ei, w[:-1])
    with pytest.raises(TypeError, match="requires grad"):
        conv(x, ei, w.clone().requires_grad_(True))
    with pytest.raises(ValueError, match="outside the graph"):
        conv(torch.randn(10, 6), ei)
    with pytest.raises(TypeError, match="edge_index"):
        conv(x, [[0, 1], [1, 0]])


# ---------------------------------------------------------------- equality with PyG (CPU)

@pytest.mark.parametrize("graph_kind", ["edge_index", "EdgeIndex", "coo", "csr"])
@pytest.mark.parametrize("kw,weighted", [({}, False), ({}, True), ({"improved": True}, False),
                                         ({"improved": True}, True),
                                         ({"add_self_loops": False}, True),
                                         ({"normalize": False}, True),
                                         ({"flow": "target_to_source"}, True)])
def test_gcn_equals_pyg_cpu(graph_kind, kw, weighted):
    if kw.get("flow") == "target_to_source" and graph_kind in ("coo", "csr"):
        pytest.skip("flow does not apply to a sparse adjacency")
    torch.manual_seed(3)
    n = 30
    ei, w = _small_graph(n)
    x = torch.randn(n, 7)
    if graph_kind == "EdgeIndex":
        from torch_geometric import EdgeIndex
        graph, extra = EdgeIndex(ei, sparse_size=(n, n)), ((w,) if weighted else ())
    elif graph_kind in ("coo", "csr"):
        graph, extra = _torch_adj(ei, w if weighted else torch.ones_like(w), n, graph_kind), ()
    else:
        graph, extra = ei, ((w,) if weighted else ())
    theirs = PygGCN(7, 4, **kw)
    ours = _copy_params(theirs, sdp.GCNConv(7, 4, **kw))
    up = torch.randn(n, 4)
    ot, gt = _run(theirs, x, graph, extra, up)
    oo, go = _run(ours, x, graph, extra, up)
    _close_cpu(oo, ot, "output")
    for k in gt:
        _close_cpu(go[k], gt[k], f"grad {k}")


@pytest.mark.parametrize("graph_kind", ["edge_index", "coo", "csr"])
@pytest.mark.parametrize("args,kw", [((7, 4), {}), ((3, 9), {}), ((7, 4), {"aggr": "sum"}),
                                     ((7, 4), {"root_weight": False}),
                                     ((7, 4), {"project": True}),
                                     ((7, 4), {"normalize": True, "bias": False})])
def test_sage_equals_pyg_cpu(graph_kind, args, kw):
    torch.manual_seed(4)
    n = 30
    ei, w = _small_graph(n)
    x = torch.randn(n, args[0])
    graph = ei if graph_kind == "edge_index" else _torch_adj(ei, w, n, graph_kind)
    theirs = PygSAGE(*args, **kw)
    ours = _copy_params(theirs, sdp.SAGEConv(*args, **kw))
    up = torch.randn(n, args[1])
    ot, gt = _run(theirs, x, graph, (), up)
    oo, go = _run(ours, x, graph, (), up)
    _close_cpu(oo, ot, "output")
    for k in gt:
        _close_cpu(go[k], gt[k], f"grad {k}")


def test_sage_bipartite_equals_pyg_cpu():
    torch.manual_seed(5)
    g = torch.Generator().manual_seed(5)
    n_src, n_dst = 40, 25
    ei = torch.stack([torch.randint(0, n_src, (150,), generator=g),
                      torch.randint(0, n_dst, (150,), generator=g)])
    xs, xd = torch.randn(n_src, 6), torch.randn(n_dst, 5)
    theirs = PygSAGE((6, 5), 3)
    ours = _copy_params(theirs, sdp.SAGEConv((6, 5), 3))
    _close_cpu(ours((xs, xd), ei), theirs((xs, xd), ei), "bipartite")
    _close_cpu(ours((xs, xd), ei, size=(n_src, n_dst)),
               theirs((xs, xd), ei, size=(n_src, n_dst)), "bipartite with size")


# ---------------------------------------------------------------- the cache rule

def test_cache_reuses_the_same_tensor_and_sees_changes():
    sdp.clear_cache()
    ei, w = _small_graph()
    x = torch.randn(30, 6)
    a, b = sdp.GCNConv(6, 4), sdp.GCNConv(6, 4)
    a(x, ei, w)
    first = a.adjacency
    a(x, ei, w)
    assert a.adjacency is first, "same edge_index object: the matrix is reused"
    b(x, ei, w)
    assert b.adjacency is first, "another layer with the same options shares it"
    a(x, ei.clone(), w)
    assert a.adjacency is not first, "a new tensor object builds again"
    w.mul_(2.0)  # in place: the version counter changes
    a(x, ei, w)
    assert a.adjacency is not first, "an in-place change builds again"
    a2 = sdp.GCNConv(6, 4, improved=True)
    a2(x, ei, w)
    assert a2.adjacency is not a.adjacency, "other graph options, other matrix"
    sdp.clear_cache()


def test_cached_keeps_the_first_graph_like_pyg():
    torch.manual_seed(6)
    ei1, _ = _small_graph(seed=1)
    ei2, _ = _small_graph(seed=2)
    x = torch.randn(30, 5)
    theirs = PygGCN(5, 3, cached=True)
    ours = _copy_params(theirs, sdp.GCNConv(5, 3, cached=True))
    ours(x, ei1), theirs(x, ei1)
    _close_cpu(ours(x, ei2), theirs(x, ei2), "second call uses the cached first graph")
    _close_cpu(ours(x, ei2), theirs(x, ei1), "cached graph")
    ours.reset_parameters()
    assert ours._cached_adj is None


def test_copy_and_pickle_keep_working():
    ei, _ = _small_graph()
    x = torch.randn(30, 5)
    conv = sdp.GCNConv(5, 3, cached=True)
    out = conv(x, ei)
    twin = copy.deepcopy(conv)
    torch.testing.assert_close(twin(x, ei), out)
    back = pickle.loads(pickle.dumps(conv))
    torch.testing.assert_close(back(x, ei), out)


# ---------------------------------------------------------------- patch

class _Net(torch.nn.Module):
    def __init__(self, conv_a, conv_b):
        super().__init__()
        self.convs = torch.nn.ModuleList([conv_a, conv_b])

    def forward(self, x, ei, w=None):
        h = torch.relu(self.convs[0](x, ei, w))
        return self.convs[1](h, ei)


def _models():
    from torch_geometric.nn.models import GCN, GraphSAGE
    torch.manual_seed(7)
    return [_Net(PygGCN(6, 8), PygSAGE(8, 3)),
            GCN(6, 8, num_layers=2, out_channels=3),
            GraphSAGE(6, 8, num_layers=2, out_channels=3)]


@pytest.mark.parametrize("index", [0, 1, 2])
def test_patch_replaces_layers_with_equal_outputs_cpu(index):
    model = _models()[index].eval()
    ei, w = _small_graph()
    x = torch.randn(30, 6)
    args = (x, ei, w) if index != 2 else (x, ei)
    with torch.no_grad():
        want = model(*args)
        patched = sdp.patch(copy.deepcopy(model))
        got = patched(*args)
    kinds = {type(m) for m in patched.modules()}
    assert PygGCN not in kinds and PygSAGE not in kinds, kinds
    assert kinds & {sdp.GCNConv, sdp.SAGEConv}
    _close_cpu(got, want, "patched model")


def test_patch_strict_and_lenient():
    model = _Net(PygGCN(6, 8), PygSAGE(8, 3, aggr="max"))
    with pytest.raises(ValueError, match="convs.1"):
        sdp.patch(copy.deepcopy(model))
    lenient = sdp.patch(copy.deepcopy(model), strict=False)
    assert type(lenient.convs[0]) is sdp.GCNConv and type(lenient.convs[1]) is PygSAGE
    single = sdp.to_sparseditto(PygGCN(6, 8))
    assert type(single) is sdp.GCNConv


# ---------------------------------------------------------------- GPU: kernels against PyG

def _karate(dev):
    """KarateClub's edge_index (no download), or a generated graph of its size."""
    try:
        from torch_geometric.datasets import KarateClub
        ei = KarateClub()[0].edge_index
        return ei.to(dev), "KarateClub"
    except Exception as e:  # networkx missing in older versions, for one
        rp, ci = graphs.powerlaw_graph(34, 156, seed=11)
        rp, ci = torch.as_tensor(rp), torch.as_tensor(ci).long()
        rows = torch.repeat_interleave(torch.arange(34), rp.diff())
        return torch.stack([ci, rows]).to(dev), f"generated (KarateClub failed: {e!r})"


def _large(dev, n=200_000, e=4_000_000, seed=12):
    """A directed power-law graph: powerlaw_graph's symmetric pattern with 10 % of the
    directed edges dropped; positive random weights."""
    rp, ci = graphs.powerlaw_graph(n, e, seed=seed, device=dev)
    rows = torch.repeat_interleave(torch.arange(n, device=dev), rp.diff())
    ei = torch.stack([ci.long(), rows])
    g = torch.Generator(device=dev).manual_seed(seed)
    keep = torch.rand(ei.shape[1], device=dev, generator=g) > 0.1
    ei = ei[:, keep].contiguous()
    w = torch.rand(ei.shape[1], device=dev, generator=g) + 0.25
    return ei, w


def _abs_state(layer):
    return {k: v.abs() for k, v in layer.state_dict().items()}


def _check_bound(got, ref, scale, terms, what):
    tol = 4.0 * (terms + 8.0) * U * scale + 1e-6
    err = (got.double() - ref).abs()
    bad = err > tol
    assert not bool(bad.any()), (
        f"{what}: {int(bad.sum())} of {bad.numel()} entries beyond the FP32 bound; worst "
        f"excess {float((err - tol).max()):.3e}, max |err| {float(err.max()):.3e}")


def _compare_gpu(make_pyg, make_ours, x, graph, extra, n, deg_in, deg_out, c_in, c_out, what):
    """Ours (float32, kernels) and PyG float32 against PyG float64 within the bound."""
    dev = x.device
    torch.manual_seed(13)
    ref_layer = make_pyg().to(dev)
    ours = _copy_params(ref_layer, make_ours().to(dev))
    pyg32 = copy.deepcopy(ref_layer)
    g = torch.Generator(device=dev).manual_seed(14)
    up = torch.randn(n, c_out, device=dev, generator=g)
    ref64 = copy.deepcopy(ref_layer).double()
    extra64 = tuple(t.double() for t in extra)
    o_ref, g_ref = _run(ref64, x.double(), graph, extra64, up.double())
    abs64 = copy.deepcopy(ref_layer).double()
    abs64.load_state_dict(_abs_state(abs64))
    o_s, g_s = _run(abs64, x.double().abs(), graph, tuple(t.abs() for t in extra64),
                    up.double().abs())
    fwd_terms = (deg_in.double() + 1 + 2 * c_in).view(-1, 1)
    xg_terms = (deg_out.double() + 1 + 2 * c_out).view(-1, 1)
    par_terms = float(n + int(deg_in.max()) + 1 + c_in)
    # PyG rounds the degrees in float32 too: a source's degree enters each of its entries.
    pyg_more = float(deg_in.max() + deg_out.max())
    for name, layer, more in (("sparseditto", ours, 0.0), ("pyg float32", pyg32, pyg_more)):
        o, gr = _run(layer, x, graph, extra, up)
        _check_bound(o, o_ref, o_s, fwd_terms + more, f"{what}: {name} output")
        _check_bound(gr["x"], g_ref["x"], g_s["x"].abs(), xg_terms + more,
                     f"{what}: {name} grad x")
        for k in g_ref:
            if k != "x":
                _check_bound(gr[k], g_ref[k], g_s[k].abs(), par_terms + more,
                             f"{what}: {name} grad {k}")
    return ours


def _degrees(ei, n):
    return (torch.bincount(ei[1], minlength=n), torch.bincount(ei[0], minlength=n))


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA device")
@pytest.mark.parametrize("which", ["small", "large"])
def test_gpu_layers_equal_pyg(which):
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device("cuda")
    if which == "small":
        ei, source = _karate(dev)
        print(f"small graph: {source}")
        n = int(ei.max()) + 1
        w = torch.rand(ei.shape[1], device=dev, generator=torch.Generator(device=dev).manual_seed(15)) + 0.5
        c_in, c_out = 16, 8
    else:
        n = 200_000
        ei, w = _large(dev, n)
        c_in, c_out = 24, 16
    x = torch.randn(n, c_in, device=dev, generator=torch.Generator(device=dev).manual_seed(16))
    deg_in, deg_out = _degrees(ei, n)
    for kw in ({}, {"improved": True}):
        ours = _compare_gpu(lambda: PygGCN(c_in, c_out, **kw),
                            lambda: sdp.GCNConv(c_in, c_out, compile_options=OPTS, **kw),
                            x, ei, (w,), n, deg_in, deg_out, c_in, c_out, f"{which} GCN {kw}")
        assert ours.adjacency.sparse_graph().kernels(), "the CUDA path ran no compiled kernel"
    ours = _compare_gpu(lambda: PygSAGE(c_in, c_out), lambda: sdp.SAGEConv(c_in, c_out, compile_options=OPTS),
                        x, ei, (), n, deg_in, deg_out, c_in, c_out, f"{which} SAGE")
    assert ours.adjacency.sparse_graph().kernels()
    # Wider output than input: SAGE aggregates before its linear map.
    _compare_gpu(lambda: PygSAGE(c_out, c_in), lambda: sdp.SAGEConv(c_out, c_in, compile_options=OPTS),
                 x[:, :c_out].contiguous(), ei, (), n, deg_in, deg_out, c_out, c_in,
                 f"{which} SAGE widening")


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA device")
def test_gpu_patch_and_engines_agree():
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device("cuda")
    ei, source = _karate(dev)
    n = int(ei.max()) + 1
    x = torch.randn(n, 6, device=dev)
    for index, model in enumerate(_models()):
        model = model.to(dev).eval()
        args = (x, ei) if index == 2 else (x, ei, None)
        with torch.no_grad():
            want = model(*args)
            patched = sdp.patch(copy.deepcopy(model), compile_options=OPTS)
            got = patched(*args)
            torch_path = sdp.patch(copy.deepcopy(model), engine="torch")(*args)
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)
        torch.testing.assert_close(got, torch_path, rtol=1e-4, atol=1e-5)
    conv = sdp.GCNConv(6, 3, compile_options=OPTS).to(dev)
    with pytest.raises(TypeError, match="float32"):
        conv.double()(x.double(), ei)
