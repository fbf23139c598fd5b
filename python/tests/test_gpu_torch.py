# python/tests/test_gpu_torch.py: GPU lane of the Python package: kernels on torch tensors and streams, SpMM autograd, the GCN example.
"""Needs PyTorch with a CUDA device; skipped otherwise (under pytest: visibly; run as a
script: exit 77). Runs without pytest too (the GPU machine may lack it):

    SPARSEDITTO_LIBRARY=build/libsparseditto.so PYTHONPATH=python python3 python/tests/test_gpu_torch.py

Checks: compile on a torch sparse CSR tensor; kernel results against a float64 reference
(the bound of docs/ARCHITECTURE.md "Validation") and against torch.sparse, on the current
stream and on a non-default
stream; operands through __cuda_array_interface__ and DLPack; bad operands; SpMM backward
against torch.sparse autograd in float64 (our kernels are FP32, so gradcheck's float64
finite differences do not apply: the float64 autograd gradient is the reference and the
FP32 bound the tolerance); the forward kernel serving backward for a symmetric A; the
process-wide kernel table; the generator and normalisation on the GPU against numpy;
examples/gcn.py for 5 epochs with losses equal to the torch.sparse path. Seeds in the
bodies. About 20-40 s on an H200 (most of it sd_compile searches with a small budget).
"""
import importlib.util
import json
import os
import pathlib
import sys
import tempfile

import numpy as np

try:
    import torch
    HAS_CUDA = torch.cuda.is_available()
except ImportError:
    torch = None
    HAS_CUDA = False

if __name__ == "__main__" and not HAS_CUDA:  # before loading the library: a plain skip
    print("test_gpu_torch: SKIPPED: needs PyTorch with a CUDA device")
    sys.exit(77)

try:
    import pytest
    pytestmark = [pytest.mark.gpu,
                  pytest.mark.skipif(not HAS_CUDA, reason="needs PyTorch with a CUDA device")]
except ImportError:
    pytest = None

REPO = pathlib.Path(__file__).resolve().parents[2]
if "sparseditto" not in sys.modules:
    try:
        import sparseditto  # noqa: F401  (installed)
    except ImportError:
        sys.path.insert(0, str(REPO / "python"))
import sparseditto as sd  # noqa: E402
from sparseditto import SparseDittoError, graphs  # noqa: E402
from sparseditto import torch as sdt  # noqa: E402

BUDGET = int(os.environ.get("SD_TEST_BUDGET", "6"))  # a small search keeps the lane short


def _raises(exc, fn, *args, match=None, **kw):
    try:
        fn(*args, **kw)
    except exc as e:
        assert match is None or match in str(e), f"{match!r} not in {e!r}"
        return e
    raise AssertionError(f"{fn} did not raise {exc.__name__}")


def _random_csr(rows, cols, density, seed, symmetric=False):
    rng = np.random.default_rng(seed)
    d = (rng.random((rows, cols)) < density) * rng.standard_normal((rows, cols))
    if symmetric:
        d = np.triu(d) + np.triu(d, 1).T
    r, c = np.nonzero(d)
    return sd.CSRMatrix.from_coo(r, c, d[r, c], (rows, cols)), d.astype(np.float32).astype(np.float64)


def _bound_ok(y, a64, x64):
    """The validation rule (docs/ARCHITECTURE.md "Validation"):
    |ŷ − y| ≤ 1e-5 + 1e-3·|y| + γ_{n+1}·S per entry (dense float64 oracle)."""
    ref = a64 @ x64
    s = np.abs(a64) @ np.abs(x64)
    n = (a64 != 0).sum(axis=1).reshape(-1, *([1] * (x64.ndim - 1)))
    u = 2.0 ** -24
    gamma = (n + 1) * u / (1 - (n + 1) * u)
    err = np.abs(np.asarray(y, np.float64) - ref)
    ok = np.isfinite(y).all() and (err <= 1e-5 + 1e-3 * np.abs(ref) + gamma * s).all()
    return bool(ok)


def _torch_csr(m, device="cuda"):
    return torch.sparse_csr_tensor(torch.from_numpy(m.rowptr), torch.from_numpy(m.colind.astype(np.int64)),
                                   torch.from_numpy(m.vals), size=m.shape, device=device)


# ---------------------------------------------------------------- kernels on tensors

def test_compile_torch_csr_and_streams():
    m, d = _random_csr(700, 500, 0.02, seed=1)  # seed 1
    t = _torch_csr(m)
    k = sd.compile(t, "spmm", K=24, budget=BUDGET)  # a torch CSR tensor as the input
    g = torch.Generator(device="cuda").manual_seed(1)
    x = torch.randn(500, 24, device="cuda", generator=g)
    y = k(x)  # the current (default) stream
    ref_t = torch.sparse.mm(t, x)
    torch.cuda.synchronize()
    assert _bound_ok(y.cpu().numpy(), d, x.double().cpu().numpy())
    assert _bound_ok(ref_t.cpu().numpy(), d, x.double().cpu().numpy())
    # A non-default stream: the kernel is enqueued on it (torch's current stream), after
    # work already queued there; nothing else synchronises.
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())  # x and ref_t come from the default stream
    with torch.cuda.stream(s):
        x2 = x * 2  # produced on s
        y2 = k(x2)
        z = y2 - 2 * ref_t
    s.synchronize()
    assert float(z.abs().max()) <= 1e-4 * float(ref_t.abs().max()) + 1e-5
    # __cuda_array_interface__ and DLPack operands (out= given for the interface object).
    class Cai:
        def __init__(self, t):
            self.__cuda_array_interface__ = t.__cuda_array_interface__
    out = torch.empty(700, 24, device="cuda")
    k(Cai(x), out=Cai(out), stream=torch.cuda.current_stream().cuda_stream)
    class DL:
        def __init__(self, t):
            self.t = t
        def __dlpack__(self, stream=None, **kw):
            return self.t.__dlpack__(stream=stream, **kw)
        def __dlpack_device__(self):
            return self.t.__dlpack_device__()
    y3 = k(DL(x))
    torch.cuda.synchronize()
    assert torch.equal(out, y) and torch.equal(y3, y)  # one kernel, one summation order
    # Bad operands: clear Python errors, nothing launched.
    _raises(ValueError, k, x.cpu(), match="CUDA")
    _raises(TypeError, k, x.double(), match="float32")
    _raises(ValueError, k, torch.randn(24, 500, device="cuda").t(), match="contiguous")
    _raises(ValueError, k, torch.randn(499, 24, device="cuda"), match="shape")
    _raises(ValueError, k, x, out=torch.empty(700, 23, device="cuda"), match="out: shape")
    d_ = k.describe()
    assert d_["rows"] == 700 and d_["nnz"] == m.nnz
    k.close()
    _raises(SparseDittoError, k, x, match="closed")


def test_spmm_autograd_against_torch_sparse_float64():
    m, d = _random_csr(400, 300, 0.03, seed=2)  # seed 2: rectangular, not symmetric
    graph = sdt.SparseGraph(m, budget=BUDGET)
    assert not graph.symmetric
    a64 = torch.sparse_csr_tensor(torch.from_numpy(m.rowptr),
                                  torch.from_numpy(m.colind.astype(np.int64)),
                                  torch.from_numpy(m.vals.astype(np.float64)), size=m.shape,
                                  device="cuda").to_sparse_coo()
    g = torch.Generator(device="cuda").manual_seed(2)
    for K in (16, 5):
        x = torch.randn(300, K, device="cuda", generator=g, requires_grad=True)
        w = torch.randn(400, K, device="cuda", generator=g)
        y = sdt.SpMM.apply(graph, x)
        (y * w).sum().backward()
        x64 = x.detach().double().requires_grad_()
        y64 = torch.sparse.mm(a64, x64)
        (y64 * w.double()).sum().backward()
        torch.cuda.synchronize()
        assert _bound_ok(y.detach().cpu().numpy(), d, x64.detach().cpu().numpy())
        # X̄ = Aᵀ·W: the reference gradient is torch's float64 autograd.
        assert _bound_ok(x.grad.cpu().numpy(), d.T, w.double().cpu().numpy())
        np.testing.assert_allclose(x.grad.cpu().numpy(), x64.grad.cpu().numpy(),
                                   rtol=1e-4, atol=1e-5)
    ks = graph.kernels()
    assert sorted(ks) == [(0, 5, False), (0, 5, True), (0, 16, False), (0, 16, True)], ks
    n_before = len(ks)
    sdt.SpMM.apply(graph, x.detach())  # cached: no new kernel
    assert len(graph.kernels()) == n_before
    # A second graph over the same matrix shares the kernels (process-wide table).
    twin = sdt.SparseGraph(sd.CSRMatrix(m.rowptr, m.colind, m.vals, m.shape), budget=BUDGET)
    assert twin.kernel(16, 0) is graph.kernel(16, 0)
    _raises(ValueError, sdt.SpMM.apply, graph, torch.zeros(400, 8, device="cuda"), match="X has shape")
    _raises(TypeError, sdt.SpMM.apply, graph, torch.zeros(300, 8, device="cuda", dtype=torch.float64),
            match="float32")


def _matrices_dir():
    for d in (os.environ.get("SD_MATRICES_DIR"), REPO.parent / "shared" / "matrices",
              REPO / "shared" / "matrices"):
        if d and (pathlib.Path(d) / "suitesparse").is_dir():
            return pathlib.Path(d) / "suitesparse"
    return None


def test_forward_on_real_matrices():
    """Forward A·X through sparseditto.torch against torch.sparse in float64 on shared
    SuiteSparse matrices (the bound of docs/ARCHITECTURE.md "Validation", with n and S per
    row from the matrix)."""
    base = _matrices_dir()
    if base is None:
        print("  test_forward_on_real_matrices: no shared matrices found (SD_MATRICES_DIR): skipped")
        return
    names = [n for n in ("bcsstk13", "wiki-Vote", "cage8", "Chem97Zt")
             if (base / f"{n}.mtx.gz").exists()]
    assert names, f"none of the expected matrices in {base}"
    g = torch.Generator(device="cuda").manual_seed(4)  # seed 4
    for name in names:
        m = sd.read(str(base / f"{name}.mtx.gz"))
        graph = sdt.SparseGraph(m, budget=BUDGET)
        rows, cols = m.shape
        x = torch.randn(cols, 32, device="cuda", generator=g)
        y = sdt.SpMM.apply(graph, x)
        rp = torch.from_numpy(m.rowptr)
        ci = torch.from_numpy(m.colind.astype(np.int64))
        v64 = torch.from_numpy(m.vals.astype(np.float64))
        a64 = torch.sparse_csr_tensor(rp, ci, v64, size=m.shape, device="cuda")
        abs64 = torch.sparse_csr_tensor(rp, ci, v64.abs(), size=m.shape, device="cuda")
        ref = torch.sparse.mm(a64, x.double())
        s_ = torch.sparse.mm(abs64, x.double().abs())
        n = torch.from_numpy(np.diff(m.rowptr)).to("cuda", torch.float64).unsqueeze(1)
        u = 2.0 ** -24
        bound = 1e-5 + 1e-3 * ref.abs() + (n + 1) * u / (1 - (n + 1) * u) * s_
        err = (y.double() - ref).abs()
        assert bool(torch.isfinite(y).all()), name
        worst = float((err / bound).max()) if err.numel() else 0.0
        assert worst <= 1.0, f"{name}: worst |error| / bound = {worst}"
        print(f"  {name}: {rows}x{cols}, nnz {m.nnz}: worst error/bound {worst:.3f}")


def test_symmetric_graph_reuses_forward_kernel():
    m, d = _random_csr(600, 600, 0.01, seed=3, symmetric=True)  # seed 3
    layer = sdt.GCNAggregation(m, budget=BUDGET)
    assert layer.graph.symmetric
    h = torch.randn(600, 32, device="cuda", generator=torch.Generator(device="cuda").manual_seed(3),
                    requires_grad=True)
    out = layer(h)
    out.square().sum().backward()
    torch.cuda.synchronize()
    assert list(layer.graph.kernels()) == [(0, 32, False)]  # Aᵀ = A: one kernel
    ahat = _dense(layer.graph.matrix)
    assert _bound_ok(out.detach().cpu().numpy(), ahat, h.detach().double().cpu().numpy())
    assert _bound_ok(h.grad.cpu().numpy(), ahat, 2 * out.detach().double().cpu().numpy())
    # A second layer over the same SparseGraph shares it as is.
    layer2 = sdt.GCNAggregation(layer.graph)
    assert layer2.graph is layer.graph
    _raises(ValueError, sdt.GCNAggregation, layer.graph, normalize=True)


def _dense(m):
    d = np.zeros(m.shape)
    d[m.row_of_entries(), m.colind] = m.vals
    return d


# ---------------------------------------------------------------- graphs on the GPU

def test_generator_and_normalisation_on_gpu():
    n, e = 20000, 20000 * 60
    rp, ci = graphs.powerlaw_graph(n, e, seed=4, device="cuda")  # seed 4
    assert rp.is_cuda and rp.dtype == torch.int64 and ci.dtype == torch.int32
    m = sd.CSRMatrix(rp.cpu().numpy(), ci.cpu().numpy(), np.ones(e, np.float32), (n, n))
    assert m.is_symmetric() and not np.any(m.row_of_entries() == m.colind)
    s_gpu = graphs.degree_stats(rp)
    s_cpu = graphs.degree_stats(graphs.powerlaw_graph(n, e, seed=4)[0])
    assert s_gpu["edges"] == s_cpu["edges"] == e
    for key in ("median", "max", "cv", "p99"):  # same model, different random streams
        assert abs(s_gpu[key] - s_cpu[key]) <= 0.15 * s_cpu[key], (key, s_gpu, s_cpu)
    r1, c1, v1 = graphs.gcn_normalize(rp, ci)          # torch path
    r2, c2, v2 = graphs.gcn_normalize(m.rowptr, m.colind)  # numpy path
    np.testing.assert_array_equal(r1.cpu().numpy(), r2)
    np.testing.assert_array_equal(c1.cpu().numpy(), c2)
    np.testing.assert_allclose(v1.cpu().numpy(), v2, rtol=1e-6)


# ---------------------------------------------------------------- the GCN example

def test_gcn_example_five_epochs(tmp_path=None):
    spec = importlib.util.spec_from_file_location("gcn_example", REPO / "examples" / "gcn.py")
    gcn = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gcn)
    if tmp_path is None:  # the standalone runner: a folder of our own, removed afterwards
        with tempfile.TemporaryDirectory(prefix="sd-gcn-") as d:
            return test_gcn_example_five_epochs(pathlib.Path(d))
    out = pathlib.Path(tmp_path)
    rc = gcn.main(["--nodes", "3000", "--features", "64", "--hidden", "16", "--epochs", "5",
                   "--warmup", "0", "--profile-epochs", "2", "--backends", "torch,sparseditto",
                   "--budget", str(BUDGET), "--out", str(out)])
    res = json.loads((out / "gcn.json").read_text())
    assert rc == 0, res
    row = res["rows"][0]["backends"]
    assert res["graph"]["generated"] is True and "GENERATED" in res["graph"]["name"]
    assert res["sparseditto_symmetric"] is True
    t, s = row["torch"], row["sparseditto"]
    assert len(t["losses"]) == len(s["losses"]) == 5
    assert s["loss_rel_diff_vs_torch"] <= 1e-4, s["loss_rel_diff_vs_torch"]
    assert t["losses"][-1] < t["losses"][0]  # it trains
    assert s["profile"]["spmm_calls_per_epoch"] == 4  # two forward, two backward
    assert 0 < s["profile"]["share"] < 1
    assert "| 16 | sparseditto |" in (out / "gcn.md").read_text()


# ---------------------------------------------------------------- standalone runner

def _main():
    if not HAS_CUDA:
        print("test_gpu_torch: SKIPPED: needs PyTorch with a CUDA device")
        return 77
    failed = 0
    names = [k for k in sorted(globals()) if k.startswith("test_") and callable(globals()[k])]
    for name in names:
        try:
            globals()[name]()
            print(f"PASS {name}")
        except Exception:
            import traceback
            failed += 1
            print(f"FAIL {name}")
            traceback.print_exc()
    print(f"test_gpu_torch: {len(names) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(_main())
