# python/tests/test_torch_ops.py: the custom operators sparseditto::spmm / spmv: fake tensors, opcheck, torch.compile without graph breaks, CUDA graphs.
"""CPU part (no device; skipped without torch or numpy): graph ids, fake-tensor shape
inference and its errors, torch.library.opcheck, eager values and gradients against
torch.sparse in float64, bad inputs in eager and under torch.compile, and a two-layer GCN
compiled with fullgraph=True (aot_eager and, where a C++ compiler exists, inductor)
against eager and against torch.sparse.

GPU part (-m gpu; skipped, visibly, without CUDA): opcheck and values on CUDA (SpMM,
SpMV, a misaligned input), the GCN compiled with fullgraph=True against eager and
torch.sparse with zero graph breaks, CUDA graph capture and replay of the forward pass
and of a training step, torch.compile(mode="reduce-overhead") with no cudagraph skip, the
clear error for a kernel missing during capture, and examples/gcn.py's compiled backend.

Tolerance: our kernels are FP32; references are float64 (torch.sparse) or FP32 eager.
|got − ref| ≤ 1e-5·max|ref| + 1e-4·|ref| per entry: test_gpu_torch.py's FP32 gradient
tolerance (rtol 1e-4, atol 1e-5), with atol relative to the largest reference entry
(gradients of a mean loss are far below 1).
The GCN uses tanh so that FP32 and float64 runs cannot fall on two sides of ReLU's kink.
Seeds are in the bodies. GPU part: about 40-70 s on an H200, mostly torch.compile
(inductor) and a few kernel searches with budget SD_TEST_BUDGET (default 4).

    SPARSEDITTO_LIBRARY=build-gpu/libsparseditto.so PYTHONPATH=python \\
        python3 -m pytest -q python/tests/test_torch_ops.py
"""
import copy
import gc
import importlib.util
import json
import os
import pathlib
import shutil
import sysconfig

import pytest

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")

import sparseditto as sd  # noqa: E402
from sparseditto import graphs  # noqa: E402
from sparseditto import torch as sdt  # noqa: E402

pytest.importorskip("sparseditto.torch_ops")  # registers the operators (torch >= 2.4)

HAS_CUDA = torch.cuda.is_available()
gpu = [pytest.mark.gpu, pytest.mark.skipif(not HAS_CUDA, reason="needs PyTorch with a CUDA device")]
BUDGET = int(os.environ.get("SD_TEST_BUDGET", "4"))
REPO = pathlib.Path(__file__).resolve().parents[2]
OPS = torch.ops.sparseditto
F, K, C = 32, 16, 7  # GCN: input features, hidden width, classes


def _gpu(fn):
    for mark in gpu:
        fn = mark(fn)
    return fn


# ---------------------------------------------------------------- helpers

def _rect(rows, cols, density, seed):
    """A random matrix without symmetry (entries N(0, 1) at the given density)."""
    rng = np.random.default_rng(seed)
    d = (rng.random((rows, cols)) < density) * rng.standard_normal((rows, cols))
    r, c = np.nonzero(d)
    return sd.CSRMatrix.from_coo(r, c, d[r, c], (rows, cols))


def _gcn_graph(n, degree, seed):
    """Â of a generated heavy-tailed graph (symmetric), as a SparseGraph."""
    rp, ci = graphs.powerlaw_graph(n, n * degree, seed=seed)
    rp, ci, v = graphs.gcn_normalize(rp, ci)
    return sdt.SparseGraph(sd.CSRMatrix(rp, ci, v, (n, n)), budget=BUDGET)


def _coo(m, device, dtype=torch.float64):
    """The matrix as a torch sparse COO tensor: the reference (torch.sparse) operand."""
    idx = torch.from_numpy(np.stack([m.row_of_entries(), m.colind.astype(np.int64)]))
    return torch.sparse_coo_tensor(idx, torch.from_numpy(m.vals).to(dtype), m.shape,
                                   device=device).coalesce()


def _ref_mm(a, x):
    """torch.sparse.mm for a matrix or a vector x."""
    return torch.sparse.mm(a, x.unsqueeze(1)).squeeze(1) if x.dim() == 1 else torch.sparse.mm(a, x)


def _close(got, ref, what=""):
    got = got.detach().double().cpu()
    ref = ref.detach().double().cpu()
    assert got.shape == ref.shape, (what, got.shape, ref.shape)
    err = (got - ref).abs()
    scale = float(ref.abs().max()) if ref.numel() else 0.0
    bound = 1e-5 * scale + 1e-4 * ref.abs()
    assert bool(torch.isfinite(got).all()), f"{what}: non-finite values"
    if not bool((err <= bound).all()):
        worst = float((err / bound.clamp_min(1e-300)).max())
        raise AssertionError(f"{what}: worst |error| / bound = {worst:.3g} (max |error| "
                             f"{float(err.max()):.3e}, largest reference entry {scale:.3e})")


class TorchSparseAgg(torch.nn.Module):
    """Â·H with torch.sparse: the reference aggregation."""

    def __init__(self, a):
        super().__init__()
        self.a = a

    def forward(self, h):
        return torch.sparse.mm(self.a, h)


class GCN(torch.nn.Module):
    """Z = Â·tanh(Â·X·W1 + b1)·W2 + b2 (both aggregations at width K)."""

    def __init__(self, agg, seed):
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        self.agg = agg
        self.w1 = torch.nn.Parameter(torch.randn(F, K, generator=g) / F ** 0.5)
        self.b1 = torch.nn.Parameter(0.1 * torch.randn(K, generator=g))
        self.w2 = torch.nn.Parameter(torch.randn(K, C, generator=g) / K ** 0.5)
        self.b2 = torch.nn.Parameter(0.1 * torch.randn(C, generator=g))

    def forward(self, x):
        h = torch.tanh(self.agg(x @ self.w1) + self.b1)
        return self.agg(h) @ self.w2 + self.b2


def _models(graph, m, device, seed):
    """Our GCN (FP32) and the same weights over torch.sparse in float64."""
    ours = GCN(sdt.GCNAggregation(graph), seed).to(device)
    ref = GCN(TorchSparseAgg(_coo(m, device)), seed).to(device, torch.float64)
    return ours, ref


def _forward_backward(model, params, x, w):
    """Output and parameter gradients of loss = mean(out · w) (copies)."""
    for p in params:
        p.grad = None
    out = model(x)
    (out * w).mean().backward()
    return out.detach().clone(), [p.grad.detach().clone() for p in params]


def _compare_runs(got, ref, what):
    _close(got[0], ref[0], f"{what}: output")
    for i, (a, b) in enumerate(zip(got[1], ref[1])):
        _close(a, b, f"{what}: gradient of parameter {i}")


def _inputs(n, device, seed):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(n, F, generator=g).to(device), torch.randn(n, C, generator=g).to(device))


def _has_cxx():
    """What inductor's C++ kernels need: a compiler and Python's headers."""
    include = sysconfig.get_paths().get("include") or ""
    return (any(shutil.which(c) for c in ("g++", "c++", "clang++"))
            and os.path.exists(os.path.join(include, "Python.h")))


# ---------------------------------------------------------------- CPU: ids, fake, opcheck

def test_graph_ids_are_unique_and_stale_ids_fail_clearly():
    m = _rect(30, 20, 0.2, seed=1)  # seed 1
    a, b = sdt.SparseGraph(m), sdt.SparseGraph(m)
    assert b.id > a.id and sdt.graph_from_id(a.id) is a
    stale = b.id
    del b
    gc.collect()
    c = sdt.SparseGraph(m)
    assert c.id > stale  # never reused
    x = torch.randn(20, 4)
    with pytest.raises(ValueError, match="garbage-collected"):
        OPS.spmm(x, stale, False)
    with pytest.raises(ValueError, match="no SparseGraph was created"):
        OPS.spmm(x, c.id + 10**6, False)
    with pytest.raises(ValueError, match="no SparseGraph was created"):
        OPS.spmv(torch.randn(20), -1, False)
    with pytest.raises(TypeError, match="SparseGraph"):
        sdt.SpMM.apply(m, x)
    assert copy.deepcopy(c) is c  # immutable: a copied model shares its graph


def test_fake_tensors_give_shapes_and_the_same_errors():
    from torch._subclasses.fake_tensor import FakeTensorMode
    g = sdt.SparseGraph(_rect(30, 20, 0.2, seed=2))  # seed 2; A is 30x20
    devices = ["cpu"] + (["cuda"] if HAS_CUDA else [])
    with FakeTensorMode():
        for dev in devices:
            y = OPS.spmm(torch.empty(20, 8, device=dev), g.id, False)
            assert tuple(y.shape) == (30, 8) and y.dtype == torch.float32
            assert y.device.type == dev
            assert tuple(OPS.spmm(torch.empty(30, 5, device=dev), g.id, True).shape) == (20, 5)
            assert tuple(OPS.spmm(torch.empty(20, device=dev), g.id, False).shape) == (30,)
            assert tuple(OPS.spmv(torch.empty(20, device=dev), g.id, False).shape) == (30,)
            assert tuple(OPS.spmv(torch.empty(30, device=dev), g.id, True).shape) == (20,)
            with pytest.raises(ValueError, match="X has shape"):
                OPS.spmm(torch.empty(30, 8, device=dev), g.id, False)
            with pytest.raises(ValueError, match="X has shape"):
                OPS.spmm(torch.empty(20, 8, device=dev), g.id, True)
            with pytest.raises(TypeError, match="float32"):
                OPS.spmm(torch.empty(20, 8, dtype=torch.float64, device=dev), g.id, False)
            with pytest.raises(ValueError, match="x has shape"):
                OPS.spmv(torch.empty(20, 1, device=dev), g.id, False)
            with pytest.raises(ValueError, match="unknown"):
                OPS.spmm(torch.empty(20, 8, device=dev), 10**9, False)
    assert g.kernels() == {}  # shape inference compiles nothing


@pytest.mark.parametrize("transposed", [False, True])
def test_opcheck_cpu(transposed):
    g = sdt.SparseGraph(_rect(30, 20, 0.2, seed=3))  # seed 3
    n = 30 if transposed else 20
    gen = torch.Generator().manual_seed(3)
    for x in (torch.randn(n, 6, generator=gen),
              torch.randn(n, 6, generator=gen).requires_grad_(),
              torch.randn(n, generator=gen).requires_grad_()):
        torch.library.opcheck(OPS.spmm.default, (x, g.id, transposed))
    torch.library.opcheck(OPS.spmv.default,
                          (torch.randn(n, generator=gen).requires_grad_(), g.id, transposed))


def test_cpu_values_and_gradients_against_torch_sparse():
    m = _rect(40, 25, 0.15, seed=4)  # seed 4: rectangular, not symmetric
    g = sdt.SparseGraph(m)
    assert not g.symmetric
    a64 = _coo(m, "cpu")
    gen = torch.Generator().manual_seed(4)
    for shape in ((25, 7), (25,)):
        x = torch.randn(*shape, generator=gen).requires_grad_()
        w = torch.randn(40, *shape[1:], generator=gen)
        x64 = x.detach().double().requires_grad_()
        for name, run in (("SpMM.apply", lambda: sdt.SpMM.apply(g, x)),
                          ("spmm", lambda: sdt.spmm(g, x)),
                          ("spmv", lambda: sdt.spmv(g, x) if x.dim() == 1 else None)):
            x.grad = x64.grad = None
            y = run()
            if y is None:
                continue
            (y * w).sum().backward()
            y64 = _ref_mm(a64, x64)
            (y64 * w.double()).sum().backward()
            _close(y, y64, f"{name} {shape}: value")
            _close(x.grad, x64.grad, f"{name} {shape}: gradient")
    # A bare matrix makes a transient graph; backward still finds it (held by autograd).
    x = torch.randn(25, 3, generator=gen).requires_grad_()
    y = sdt.spmm(m, x)
    gc.collect()
    y.sum().backward()
    _close(x.grad, _ref_mm(a64.t(), torch.ones(40, 3, dtype=torch.float64)), "transient graph")


def test_bad_inputs_raise_clear_errors():
    g = sdt.SparseGraph(_rect(30, 20, 0.2, seed=5))  # seed 5; A is 30x20
    with pytest.raises(ValueError, match="X has shape"):
        sdt.SpMM.apply(g, torch.randn(30, 4))
    with pytest.raises(ValueError, match="X has shape"):
        sdt.SpMM.apply(g, torch.randn(20, 4, 1))
    with pytest.raises(TypeError, match="float32"):
        sdt.SpMM.apply(g, torch.randn(20, 4, dtype=torch.float64))
    with pytest.raises(ValueError, match="width 0"):
        sdt.SpMM.apply(g, torch.randn(20, 0))
    with pytest.raises(ValueError, match="x has shape"):
        sdt.spmv(g, torch.randn(20, 2))
    with pytest.raises(TypeError, match="SparseGraph"):
        sdt.SpMM.apply("A.mtx", torch.randn(20, 4))
    # Under torch.compile the fake implementation refuses the same inputs while tracing.
    torch._dynamo.reset()
    f = torch.compile(lambda x: sdt.SpMM.apply(g, x), backend="aot_eager", fullgraph=True)
    with pytest.raises(Exception, match="X has shape"):
        f(torch.randn(30, 4))
    with pytest.raises(Exception, match="float32"):
        f(torch.randn(20, 4, dtype=torch.float64))
    x = torch.randn(20, 4)
    _close(f(x), sdt.SpMM.apply(g, x), "compiled after errors")
    torch._dynamo.reset()


# ---------------------------------------------------------------- CPU: torch.compile

@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_compile_fullgraph_gcn_cpu(backend):
    if backend == "inductor" and not _has_cxx():
        pytest.skip("inductor on the CPU needs a C++ compiler and Python.h")
    graph = _gcn_graph(300, 8, seed=6)  # seed 6
    model, ref = _models(graph, graph.matrix, "cpu", seed=6)
    params, rparams = list(model.parameters()), list(ref.parameters())
    x, w = _inputs(300, "cpu", seed=6)
    eager = _forward_backward(model, params, x, w)
    expect = _forward_backward(ref, rparams, x.double(), w.double())
    torch._dynamo.reset()
    ex = torch._dynamo.explain(model)(x)
    assert ex.graph_count == 1 and ex.graph_break_count == 0, ex.break_reasons
    torch._dynamo.reset()
    from torch._dynamo.testing import CompileCounterWithBackend
    cnt = CompileCounterWithBackend(backend)
    compiled = torch.compile(model, backend=cnt, fullgraph=True)
    for _ in range(2):
        got = _forward_backward(compiled, params, x, w)
    assert cnt.frame_count == 1, cnt.frame_count  # one graph, no recompile
    _compare_runs(got, eager, f"{backend} vs eager")
    _compare_runs(got, expect, f"{backend} vs torch.sparse float64")
    torch._dynamo.reset()


# ---------------------------------------------------------------- GPU

@pytest.fixture(scope="module")
def cuda_gcn_graph():
    if not HAS_CUDA:
        pytest.skip("needs PyTorch with a CUDA device")
    torch.backends.cuda.matmul.allow_tf32 = False  # FP32 matmuls: the tolerance above
    graph = _gcn_graph(600, 10, seed=8)  # seed 8; shared: one kernel search for the file
    graph.prepare(K, "cuda")
    return graph


@_gpu
def test_gpu_opcheck_values_and_spmv():
    m = _rect(400, 300, 0.03, seed=7)  # seed 7: rectangular, not symmetric
    g = sdt.SparseGraph(m, budget=BUDGET)
    a64 = _coo(m, "cuda")
    gen = torch.Generator(device="cuda").manual_seed(7)
    x = torch.randn(300, K, device="cuda", generator=gen).requires_grad_()
    torch.library.opcheck(OPS.spmm.default, (x, g.id, False))  # forward and Aᵀ backward
    v = torch.randn(300, device="cuda", generator=gen).requires_grad_()
    torch.library.opcheck(OPS.spmv.default, (v, g.id, False))
    w = torch.randn(400, K, device="cuda", generator=gen)
    for name, run, xin, win in (("spmm", sdt.spmm, x, w), ("spmv", sdt.spmv, v, w[:, 0])):
        xin.grad = None
        y = run(g, xin)
        (y * win).sum().backward()
        x64 = xin.detach().double().requires_grad_()
        y64 = _ref_mm(a64, x64)
        (y64 * win.double()).sum().backward()
        _close(y, y64, f"{name}: value")
        _close(xin.grad, x64.grad, f"{name}: gradient")
    dev = torch.cuda.current_device()
    assert sorted(g.kernels(), key=repr) == sorted(
        [(dev, K, False), (dev, K, True), (dev, None, False), (dev, None, True)], key=repr)
    # A misaligned view: copied to an aligned buffer, same result.
    base = torch.randn(300 * K + 1, device="cuda", generator=gen)
    xm = base[1:].view(300, K)
    assert xm.data_ptr() % 16 != 0
    _close(sdt.spmm(g, xm), sdt.spmm(g, xm.clone()), "misaligned")


@_gpu
def test_gpu_compile_fullgraph_gcn(cuda_gcn_graph):
    graph = cuda_gcn_graph
    model, ref = _models(graph, graph.matrix, "cuda", seed=9)  # seed 9
    params, rparams = list(model.parameters()), list(ref.parameters())
    x, w = _inputs(600, "cuda", seed=9)
    eager = _forward_backward(model, params, x, w)
    expect = _forward_backward(ref, rparams, x.double(), w.double())
    _compare_runs(eager, expect, "eager vs torch.sparse float64")
    torch._dynamo.reset()
    ex = torch._dynamo.explain(model)(x)
    assert ex.graph_count == 1 and ex.graph_break_count == 0, ex.break_reasons
    torch._dynamo.reset()
    from torch._dynamo.testing import CompileCounterWithBackend
    cnt = CompileCounterWithBackend("inductor")
    compiled = torch.compile(model, backend=cnt, fullgraph=True)
    for _ in range(2):
        got = _forward_backward(compiled, params, x, w)
    torch.cuda.synchronize()
    assert cnt.frame_count == 1, cnt.frame_count
    _compare_runs(got, eager, "compiled vs eager")
    _compare_runs(got, expect, "compiled vs torch.sparse float64")
    # Â is symmetric: one kernel serves forward and backward.
    assert list(graph.kernels()) == [(torch.cuda.current_device(), K, False)]
    torch._dynamo.reset()


@_gpu
def test_gpu_cuda_graph_forward_and_training_step(cuda_gcn_graph):
    graph = cuda_gcn_graph
    n = graph.shape[0]
    model = GCN(sdt.GCNAggregation(graph), seed=10).cuda()  # seed 10
    twin = copy.deepcopy(model)  # eager replica (shares the SparseGraph)
    batches = [_inputs(n, "cuda", seed=10 + i) for i in range(6)]
    static_x = torch.zeros(n, F, device="cuda")
    static_w = torch.zeros(n, C, device="cuda")
    side = torch.cuda.Stream()

    # Forward: capture once, replay with new inputs copied into the static input.
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side), torch.no_grad():
        model(static_x)  # torch's lazy initialisation, outside the capture
    torch.cuda.current_stream().wait_stream(side)
    fwd = torch.cuda.CUDAGraph()
    with torch.no_grad(), torch.cuda.graph(fwd):
        static_out = model(static_x)
    for x, _ in batches[:2]:
        static_x.copy_(x)
        fwd.replay()
        with torch.no_grad():
            expect = twin(x)
        torch.cuda.synchronize()
        _close(static_out, expect, "replayed forward")

    # A training step (forward, backward, SGD): three warm-up steps, then capture.
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    topt = torch.optim.SGD(twin.parameters(), lr=0.1)

    def step(m, o, x, w):
        o.zero_grad(set_to_none=True)
        loss = (m(x) * w).mean()
        loss.backward()
        o.step()
        return loss.detach()

    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for x, w in batches[:3]:
            static_x.copy_(x)
            static_w.copy_(w)
            step(model, opt, static_x, static_w)
    torch.cuda.current_stream().wait_stream(side)
    for x, w in batches[:3]:
        step(twin, topt, x, w)
    opt.zero_grad(set_to_none=True)
    train = torch.cuda.CUDAGraph()
    with torch.cuda.graph(train):
        static_loss = (model(static_x) * static_w).mean()
        static_loss.backward()
        opt.step()
    for x, w in batches[3:]:
        static_x.copy_(x)
        static_w.copy_(w)
        train.replay()
        loss = step(twin, topt, x, w)
        torch.cuda.synchronize()
        _close(static_loss, loss, "replayed training step: loss")
    for i, (p, q) in enumerate(zip(model.parameters(), twin.parameters())):
        _close(p, q, f"replayed training step: parameter {i}")


@_gpu
def test_gpu_reduce_overhead(cuda_gcn_graph):
    from torch._dynamo.utils import counters
    graph = cuda_gcn_graph
    n = graph.shape[0]
    model = GCN(sdt.GCNAggregation(graph), seed=11).cuda()  # seed 11
    twin = copy.deepcopy(model)
    params, tparams = list(model.parameters()), list(twin.parameters())
    torch._dynamo.reset()
    skips = counters["inductor"]["cudagraph_skips"]
    compiled = torch.compile(model, mode="reduce-overhead", fullgraph=True)
    for i in range(4):  # warm-up, record, then replays
        x, w = _inputs(n, "cuda", seed=11 + i)
        torch.compiler.cudagraph_mark_step_begin()
        got = _forward_backward(compiled, params, x, w)
        _compare_runs(got, _forward_backward(twin, tparams, x, w), f"reduce-overhead step {i}")
    assert counters["inductor"]["cudagraph_skips"] == skips, "inductor skipped CUDA graphs"
    torch._dynamo.reset()


@_gpu
def test_gpu_missing_kernel_during_capture_is_a_clear_error():
    m = _rect(200, 200, 0.05, seed=12)  # seed 12
    g = sdt.SparseGraph(m, budget=BUDGET)  # a new graph holds no kernel
    x = torch.randn(200, 8, device="cuda")
    torch.cuda.synchronize()
    with pytest.raises(RuntimeError, match="before capture"):
        with torch.cuda.graph(torch.cuda.CUDAGraph()):
            sdt.SpMM.apply(g, x)
    assert g.kernels() == {}  # nothing was compiled inside the capture
    g.prepare(8, "cuda", backward=False)
    cg = torch.cuda.CUDAGraph()
    with torch.cuda.graph(cg):
        y = sdt.SpMM.apply(g, x)
    x.copy_(torch.randn(200, 8, device="cuda"))
    cg.replay()
    torch.cuda.synchronize()
    _close(y, _ref_mm(_coo(m, "cuda"), x.double()), "captured after prepare")


@_gpu
def test_gpu_gcn_example_compiled_backend(tmp_path):
    spec = importlib.util.spec_from_file_location("gcn_example", REPO / "examples" / "gcn.py")
    gcn = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gcn)
    rc = gcn.main(["--nodes", "2000", "--features", "32", "--hidden", "16", "--epochs", "3",
                   "--warmup", "1", "--profile-epochs", "1",
                   "--backends", "torch,sparseditto,sparseditto-compiled",
                   "--budget", str(BUDGET), "--out", str(tmp_path)])
    res = json.loads((tmp_path / "gcn.json").read_text())
    assert rc == 0, res
    row = res["rows"][0]["backends"]
    eager, comp = row["sparseditto"], row["sparseditto-compiled"]
    assert len(comp["losses"]) == 4
    assert comp["loss_rel_diff_vs_torch"] <= 1e-4, comp["loss_rel_diff_vs_torch"]
    assert comp["ratio_vs_sparseditto_eager"] == pytest.approx(comp["mean_ms"] / eager["mean_ms"])
    assert comp["torch_compile_s"] > 0
    md = (tmp_path / "gcn.md").read_text()
    assert "| 16 | sparseditto-compiled |" in md and "x the eager epoch" in md
