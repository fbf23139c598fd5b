# python/tests/test_cupy_linalg.py: sparseditto.cupy_linalg, the cupyx LinearOperator: argument checks (CPU) and products, solvers, streams, cupyx input and the CG example (GPU).
"""Skipped as a whole without CuPy (importing CuPy needs no GPU). Unmarked tests need no
device: argument checks that come before any device use, the dtype rule, the host
canonicalisation of CSR / CSC / COO arrays and the CG example's Poisson assembly against
scipy, and NO_DEVICE without a GPU.
Tests marked gpu need CuPy with a CUDA device and are skipped, with the reason, otherwise:

    SPARSEDITTO_LIBRARY=build-gpu/libsparseditto.so PYTHONPATH=python \\
        python3 -m pytest -q python/tests/test_cupy_linalg.py

Reference and tolerance: products are checked against the cupyx csr_matrix product
(cuSPARSE, float32) and a float64 host product by the validation rule of
docs/ARCHITECTURE.md "Validation": |ŷ − y| ≤ 1e-5 + 1e-3·|y| + γ_{n+1}·(|A|·|x|) per
entry (n: the row's entries, γ_k = k·u / (1 − k·u), u = 2^-24); against cuSPARSE, twice
that (both sides within the bound). Solutions of cg / gmres with our operator and with
CuPy's matrix both reach the tolerance, and differ by at most κ(A)·(r_ours + r_cupy)
(‖x − x̂‖/‖x‖ ≤ κ·‖r‖/‖b‖ for each; κ from numpy on the dense matrix). Seeds in the
bodies. SD_TEST_BUDGET (default 4) keeps each search small: about 10-30 s on an H200.
"""
import importlib.util
import json
import os
import pathlib

import numpy as np
import pytest

cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
import cupyx.scipy.sparse as cps  # noqa: E402
from cupyx.scipy.sparse.linalg import LinearOperator as CupyLinearOperator, cg, gmres  # noqa: E402

import sparseditto as sd  # noqa: E402
from sparseditto import SparseDittoError, Status  # noqa: E402
from sparseditto import cupy_linalg as cl  # noqa: E402

try:
    import scipy.sparse as sp
except ImportError:
    sp = None
needs_scipy = pytest.mark.skipif(sp is None, reason="scipy is not installed")

try:
    HAS_CUDA = bool(cupy.cuda.is_available())
except Exception:  # a broken CUDA install reads as no device
    HAS_CUDA = False


def gpu(fn):
    """Marks a test gpu and skips it, saying why, without CuPy and a CUDA device."""
    return pytest.mark.gpu(pytest.mark.skipif(not HAS_CUDA,
                                              reason="needs CuPy with a CUDA device")(fn))


REPO = pathlib.Path(__file__).resolve().parents[2]
POISSON = REPO / "examples" / "data" / "poisson2d_32.mtx"
BUDGET = int(os.environ.get("SD_TEST_BUDGET", "4"))
U = 2.0 ** -24


def _raises(exc, fn, *args, match=None, **kw):
    with pytest.raises(exc) as info:
        fn(*args, **kw)
    assert match is None or match in str(info.value), f"{match!r} not in {info.value!r}"
    return info.value


def _example():
    spec = importlib.util.spec_from_file_location("poisson_cg", REPO / "examples" / "poisson_cg.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _random_csr(rows, cols, density, seed):
    rng = np.random.default_rng(seed)
    d = (rng.random((rows, cols)) < density) * rng.standard_normal((rows, cols))
    r, c = np.nonzero(d)
    return sd.CSRMatrix.from_coo(r, c, d[r, c], (rows, cols))


def _dense(m):
    d = np.zeros(m.shape)
    d[m.row_of_entries(), m.colind] = m.vals
    return d


def _cupyx(m, dtype=np.float32, cls=None):
    cls = cls or cps.csr_matrix
    return cls((cupy.asarray(m.vals.astype(dtype)), cupy.asarray(m.colind),
                cupy.asarray(m.rowptr.astype(np.int32))), shape=m.shape)


def _check_product(y, d64, x, ref32, what):
    """y (device) against the float64 host product d64 @ x by the validation bound, and
    against cuSPARSE's float32 product ref32 within twice the bound."""
    x64 = cupy.asnumpy(x).astype(np.float64)
    ref = d64 @ x64
    s = np.abs(d64) @ np.abs(x64)
    n = (d64 != 0).sum(axis=1).reshape(-1, *([1] * (x64.ndim - 1)))
    bound = 1e-5 + 1e-3 * np.abs(ref) + (n + 1) * U / (1 - (n + 1) * U) * s
    yh = cupy.asnumpy(y).astype(np.float64)
    assert yh.shape == ref.shape, (what, yh.shape, ref.shape)
    assert np.isfinite(yh).all(), what
    worst = float((np.abs(yh - ref) / bound).max()) if yh.size else 0.0
    assert worst <= 1.0, f"{what}: worst |error| / bound = {worst}"
    r32 = cupy.asnumpy(ref32).astype(np.float64).reshape(yh.shape)
    worst = float((np.abs(yh - r32) / (2 * bound)).max()) if yh.size else 0.0
    assert worst <= 1.0, f"{what}: vs cuSPARSE, worst |difference| / (2 bound) = {worst}"


# ---------------------------------------------------------------- no device needed

def test_is_a_cupyx_linear_operator():
    assert issubclass(cl.LinearOperator, CupyLinearOperator)
    assert set(cl.__all__) == {"LinearOperator", "aslinearoperator"}


def test_argument_checks_need_no_device():
    m = sd.read(str(POISSON))
    _raises(TypeError, cl.LinearOperator, m, device="0", match="device must be an int")
    _raises(ValueError, cl.LinearOperator, m, device=-1, match=">= 0")
    _raises(TypeError, cl.LinearOperator, m, cast=1, match="cast must be True or False")
    _raises(ValueError, cl.LinearOperator, m, matmat="rows", match="'spmm' or 'columns'")
    _raises(ValueError, cl.LinearOperator, m, context=None, match="context")
    _raises(TypeError, cl.LinearOperator, m, K=4, match="unknown option")
    _raises(TypeError, cl.LinearOperator, [[1.0, 0.0], [0.0, 1.0]], match="cupyx.scipy.sparse")
    _raises(TypeError, cl.LinearOperator, np.eye(3), match="cannot make a sparse matrix")
    other = CupyLinearOperator((3, 3), matvec=lambda v: v, dtype=np.float32)
    _raises(TypeError, cl.LinearOperator, other, match="already a LinearOperator")
    _raises(TypeError, cl.aslinearoperator, other, match="already a LinearOperator")


def test_dtype_rule():
    assert cl._check_cast(np.float32, False, "x") is False
    for dt in (np.float64, np.float16, np.int32, np.bool_):
        _raises(TypeError, cl._check_cast, dt, False, "x", match="cast=True")
        assert cl._check_cast(dt, True, "x") is True
    for dt in (np.complex64, np.complex128):
        _raises(TypeError, cl._check_cast, dt, True, "x", match="complex")
    _raises(TypeError, cl._check_cast, np.dtype("U3"), True, "x", match="not a number")


@needs_scipy
def test_host_canonicalisation_matches_scipy():
    rng = np.random.default_rng(7)  # seed 7
    rows, cols, nnz = 40, 30, 300
    r = rng.integers(0, rows, nnz)
    c = rng.integers(0, cols, nnz)
    v = rng.integers(-4, 5, nnz).astype(np.float64) / 2  # sums of duplicates are exact
    want = sp.coo_matrix((v, (r, c)), shape=(rows, cols)).tocsr()
    want.sum_duplicates()

    def same(m):
        assert m.shape == (rows, cols)
        np.testing.assert_array_equal(m.rowptr, want.indptr)
        np.testing.assert_array_equal(m.colind, want.indices)
        np.testing.assert_array_equal(m.vals, want.data.astype(np.float32))

    same(cl._csr_from_host("coo", r, c, v, (rows, cols)))
    # CSR with duplicates and unsorted columns in each row (entries kept as given).
    order = np.lexsort((rng.random(nnz), r))
    indptr = np.zeros(rows + 1, dtype=np.int64)
    np.cumsum(np.bincount(r, minlength=rows), out=indptr[1:])
    same(cl._csr_from_host("csr", indptr, c[order], v[order], (rows, cols)))
    same(cl._csr_from_host("csr", want.indptr, want.indices, want.data, (rows, cols)))
    t = want.tocsc()
    same(cl._csr_from_host("csc", t.indptr, t.indices, t.data, (rows, cols)))
    _raises(ValueError, cl._csr_from_host, "csr", indptr[:-1], c, v, (rows, cols),
            match="indptr has shape")
    bad = indptr.copy()
    bad[5] = bad[6] + 1
    _raises(ValueError, cl._csr_from_host, "csr", bad, c, v, (rows, cols), match="never decrease")
    _raises(ValueError, cl._csr_from_host, "csr", want.indptr, want.indices + 100, want.data,
            (rows, cols), match="column index")
    _raises(TypeError, cl._csr_from_host, "coo", r, c, v.astype(np.complex64), (rows, cols),
            match="complex")
    _raises(ValueError, cl._csr_from_host, "bsr", r, c, v, (rows, cols), match="unknown")


@needs_scipy
def test_poisson_assembly_matches_kronecker_sums():
    """examples/poisson_cg.py's stencil assembly against sums of Kronecker products."""
    poisson_csr = _example().poisson_csr
    for dims in [(5, 5), (4, 7), (3, 4, 5), (2, 2, 2), (1, 3)]:
        rp, ci, v = poisson_csr(np, dims)
        n, d = int(np.prod(dims)), len(dims)
        a = 2 * d * sp.identity(n)
        for k in range(d):
            parts = [sp.identity(s) for s in dims]
            parts[k] = sp.diags([-np.ones(dims[k] - 1), -np.ones(dims[k] - 1)], [-1, 1],
                                shape=(dims[k], dims[k]))
            term = parts[0]
            for p in parts[1:]:
                term = sp.kron(term, p)
            a = a + term
        a = sp.csr_matrix(a)
        a.eliminate_zeros()
        a.sort_indices()
        np.testing.assert_array_equal(rp, a.indptr, err_msg=str(dims))
        np.testing.assert_array_equal(ci, a.indices, err_msg=str(dims))
        np.testing.assert_array_equal(v, a.data.astype(np.float32), err_msg=str(dims))
        assert rp.dtype == np.int64 and ci.dtype == np.int32 and v.dtype == np.float32


@pytest.mark.skipif(HAS_CUDA, reason="checks the error raised without a CUDA device")
def test_no_device_error():
    e = _raises(SparseDittoError, cl.LinearOperator, sd.read(str(POISSON)))
    assert e.status == Status.NO_DEVICE, e


# ---------------------------------------------------------------- GPU: products

@pytest.fixture(scope="module")
def rect():
    """A 300x200 random matrix (seed 1, not symmetric), its operator and references."""
    m = _random_csr(300, 200, 0.03, seed=1)
    return m, cl.LinearOperator(m, budget=BUDGET), _cupyx(m), _dense(m)


@gpu
def test_products_against_cupyx(rect):
    m, op, a32, d = rect
    assert op.shape == (300, 200) and op.dtype == np.float32 and op.device == 0
    g = cupy.random.default_rng(1)  # seed 1
    x = g.standard_normal(200, dtype=cupy.float32)
    _check_product(op.matvec(x), d, x, a32 @ x, "matvec")
    _check_product(op @ x, d, x, a32 @ x, "op @ x")
    y = op.matvec(x.reshape(200, 1))
    assert y.shape == (300, 1)
    _check_product(y[:, 0], d, x, a32 @ x, "matvec (n, 1)")
    u = g.standard_normal(300, dtype=cupy.float32)
    _check_product(op.rmatvec(u), d.T, u, a32.T @ u, "rmatvec")
    _check_product(op.H.matvec(u), d.T, u, a32.T @ u, "H.matvec")
    _check_product(op.T.matvec(u), d.T, u, a32.T @ u, "T.matvec")
    X = g.standard_normal((200, 8), dtype=cupy.float32)
    _check_product(op.matmat(X), d, X, a32 @ X, "matmat")
    _check_product(op @ X, d, X, a32 @ X, "op @ X")
    Uu = g.standard_normal((300, 8), dtype=cupy.float32)
    _check_product(op.rmatmat(Uu), d.T, Uu, a32.T @ Uu, "rmatmat")
    assert set(op.kernels()) == {("spmv", None, False), ("spmv", None, True),
                                 ("spmm", 8, False), ("spmm", 8, True)}, op.kernels()
    cols = cl.LinearOperator(m, matmat="columns", budget=BUDGET)
    _check_product(cols.matmat(X), d, X, a32 @ X, "matmat, columns")
    assert set(cols.kernels()) == {("spmv", None, False)}
    desc = op.describe()
    assert desc["rows"] == 300 and desc["nnz"] == m.nnz
    assert op.compile_seconds > 0


@gpu
def test_symmetric_rmatvec_reuses_forward_kernel():
    m = sd.read(str(POISSON))
    assert m.is_symmetric()
    op = cl.LinearOperator(m, budget=BUDGET)
    x = cupy.random.default_rng(2).standard_normal(m.shape[0], dtype=cupy.float32)  # seed 2
    _check_product(op.rmatvec(x), _dense(m), x, _cupyx(m) @ x, "rmatvec, symmetric")
    ks = op.kernels()
    assert ks[("spmv", None, True)] is ks[("spmv", None, False)]


@gpu
def test_bad_inputs(rect):
    m, op, a32, d = rect
    x = cupy.random.default_rng(3).standard_normal(200, dtype=cupy.float32)  # seed 3
    _raises(TypeError, op.matvec, cupy.asnumpy(x), match="host memory")
    _raises(TypeError, op.matvec, x.astype(cupy.float64), match="cast=True")
    _raises(TypeError, op.matvec, x.astype(cupy.complex64), match="complex")
    _raises(ValueError, op.matvec, cupy.zeros(201, cupy.float32), match="(200,) or (200, 1)")
    _raises(ValueError, op.matvec, cupy.zeros((200, 2), cupy.float32), match="(200, 1)")
    _raises(ValueError, op.rmatvec, x, match="(300,)")
    _raises(ValueError, op.matmat, x, match="(200, K)")
    _raises(TypeError, op.matvec, x.tolist(), match="cupy.ndarray")
    _raises(TypeError, op.dot, x.tolist(), match="list")
    # Layout is fixed by a copy: strided and misaligned (4 bytes in) views.
    big = cupy.random.default_rng(4).standard_normal(401, dtype=cupy.float32)  # seed 4
    for view in (big[1:401:2], big[1:201]):
        _check_product(op.matvec(view), d, view, a32 @ cupy.ascontiguousarray(view), "view")
    # cast=True converts real inputs to float32 and returns float32.
    op.cast = True
    try:
        y = op.matvec(x.astype(cupy.float64))
        assert y.dtype == cupy.float32
        _check_product(y, d, x, a32 @ x, "cast float64")
        _raises(TypeError, op.matvec, x.astype(cupy.complex128), match="complex")
    finally:
        op.cast = False


@gpu
def test_cupyx_sparse_inputs():
    m = _random_csr(120, 90, 0.05, seed=5)  # seed 5
    d = _dense(m)
    a32 = _cupyx(m)
    coo = a32.tocoo()
    # Every entry split into two halves: duplicates whose sum is exact.
    dup = cps.coo_matrix((cupy.concatenate([coo.data / 2, coo.data / 2]),
                          (cupy.concatenate([coo.row, coo.row]),
                           cupy.concatenate([coo.col, coo.col]))), shape=m.shape)
    inputs = {"csr": a32, "csr float64": _cupyx(m, np.float64), "csc": a32.tocsc(),
              "coo with duplicates": dup, "csr_array": _cupyx(m, cls=cps.csr_array)}
    x = cupy.random.default_rng(5).standard_normal(90, dtype=cupy.float32)
    for name, a in inputs.items():
        op = cl.LinearOperator(a, budget=BUDGET)
        np.testing.assert_array_equal(op.matrix.rowptr, m.rowptr, err_msg=name)
        np.testing.assert_array_equal(op.matrix.colind, m.colind, err_msg=name)
        np.testing.assert_array_equal(op.matrix.vals, m.vals, err_msg=name)
        _check_product(op.matvec(x), d, x, a32 @ x, name)
    assert cl.aslinearoperator(op) is op
    _raises(ValueError, cl.aslinearoperator, op, budget=2, match="already compiled")
    _raises(TypeError, cl.LinearOperator, a32.astype(cupy.complex64), match="complex")
    _raises(TypeError, cl.LinearOperator, cupy.eye(3, dtype=cupy.float32), match="dense cupy")


# ---------------------------------------------------------------- GPU: solvers

def _solve(solver, A, b, **kw):
    it = [0]

    def count(_):
        it[0] += 1

    x, info = solver(A, b, callback=count, **kw)
    return x, info, it[0]


def _rel_residual(d64, b, x):
    bh = cupy.asnumpy(b).astype(np.float64)
    return float(np.linalg.norm(bh - d64 @ cupy.asnumpy(x).astype(np.float64)) / np.linalg.norm(bh))


def _compare_solutions(d64, b, x_ours, x_cupy, rtol, what):
    r_o, r_c = _rel_residual(d64, b, x_ours), _rel_residual(d64, b, x_cupy)
    assert r_o <= 10 * max(rtol, r_c), f"{what}: residual {r_o} (ours) vs {r_c} (CuPy)"
    kappa = np.linalg.cond(d64)
    xo, xc = (cupy.asnumpy(v).astype(np.float64) for v in (x_ours, x_cupy))
    diff = np.linalg.norm(xo - xc) / np.linalg.norm(xc)
    assert diff <= 2 * kappa * (r_o + r_c) + 1e-6, f"{what}: solutions differ by {diff} (κ {kappa:.0f})"


@pytest.fixture(scope="module")
def poisson32():
    """The 2-D 5-point Laplacian on a 32x32 grid (examples/poisson_cg.py's assembly)."""
    rp, ci, v = _example().poisson_csr(np, (32, 32))
    m = sd.CSRMatrix(rp, ci, v, (1024, 1024))
    return m, cl.LinearOperator(m, budget=BUDGET), _cupyx(m), _dense(m)


@gpu
def test_cg_matches_cupy_matrix(poisson32):
    m, op, a32, d = poisson32
    xstar = np.random.default_rng(6).uniform(-1, 1, m.shape[0])  # seed 6
    b = cupy.asarray((d @ xstar).astype(np.float32))
    rtol = 1e-5
    xo, info_o, it_o = _solve(cg, op, b, rtol=rtol, maxiter=2000)
    xc, info_c, it_c = _solve(cg, a32, b, rtol=rtol, maxiter=2000)
    assert info_o == 0 and info_c == 0, (info_o, info_c)
    assert xo.dtype == cupy.float32
    assert abs(it_o - it_c) <= max(3, 0.1 * it_c), (it_o, it_c)
    _compare_solutions(d, b, xo, xc, rtol, "cg")
    # b of shape (n, 1) and a float64 b: cg casts to the operator's dtype itself.
    xo2, info2, _ = _solve(cg, op, b.reshape(-1, 1).astype(cupy.float64), rtol=rtol, maxiter=2000)
    assert info2 == 0
    _compare_solutions(d, b, xo2, xc, rtol, "cg, float64 b")


@gpu
def test_gmres_nonsymmetric_matches_cupy_matrix():
    # Convection-diffusion on a 16x16 grid: the 5-point Laplacian with an upwind
    # first-difference term (left neighbour -1.5, right -0.5): not symmetric.
    rp, ci, v = _example().poisson_csr(np, (16, 16))
    n = 256
    m0 = sd.CSRMatrix(rp, ci, v, (n, n))
    off = m0.colind.astype(np.int64) - m0.row_of_entries()
    vals = np.where(off == -1, -1.5, np.where(off == 1, -0.5, m0.vals)).astype(np.float32)
    m = sd.CSRMatrix(rp, ci, vals, (n, n))
    assert not m.is_symmetric()
    d = _dense(m)
    op = cl.LinearOperator(m, budget=BUDGET)
    xstar = np.random.default_rng(7).uniform(-1, 1, n)  # seed 7
    b = cupy.asarray((d @ xstar).astype(np.float32))
    rtol = 1e-5
    xo, info_o, _ = _solve(gmres, op, b, rtol=rtol, restart=40, maxiter=4000)
    xc, info_c, _ = _solve(gmres, _cupyx(m), b, rtol=rtol, restart=40, maxiter=4000)
    assert info_o == 0 and info_c == 0, (info_o, info_c)
    _compare_solutions(d, b, xo, xc, rtol, "gmres")


# ---------------------------------------------------------------- GPU: streams

@gpu
def test_runs_on_the_current_stream(poisson32):
    m, op, a32, d = poisson32
    # 2·x produced on a non-blocking stream by a kernel that spins about 10 ms first: a
    # product not enqueued behind it on that stream would read x2 unwritten.
    slow_double = cupy.ElementwiseKernel(
        "float32 x, int64 cycles", "float32 y",
        "long long t0 = clock64(); while (clock64() - t0 < cycles) {} y = 2.0f * x;",
        "sd_test_slow_double")
    x = cupy.random.default_rng(8).standard_normal(m.shape[0], dtype=cupy.float32)  # seed 8
    ref = a32 @ x
    cupy.cuda.Device().synchronize()
    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        x2 = slow_double(x, 20_000_000)
        y2 = op.matvec(x2)
        z = y2 - 2 * ref  # read on s as well
    s.synchronize()
    assert cupy.isfinite(y2).all()
    assert float(cupy.abs(z).max()) <= 1e-4 * float(cupy.abs(ref).max()) + 1e-5
    # A whole cg on the stream gives the default stream's solution.
    b = a32 @ cupy.ones(m.shape[0], dtype=cupy.float32)
    x_default, info_d = cg(op, b, rtol=1e-5, maxiter=2000)
    with s:
        x_stream, info_s = cg(op, b, rtol=1e-5, maxiter=2000)
    s.synchronize()
    assert info_d == 0 and info_s == 0
    _compare_solutions(d, b, x_stream, x_default, 1e-5, "cg on a stream")


# ---------------------------------------------------------------- GPU: the example

@gpu
def test_poisson_cg_example_small(tmp_path):
    rc = _example().main(["--n2d", "64", "--n3d", "12", "--budget", str(BUDGET),
                          "--spmv-reps", "20", "--out", str(tmp_path)])
    res = json.loads((tmp_path / "cg.json").read_text())
    assert rc == 0, json.dumps(res, indent=1)
    assert [r["system"] for r in res["rows"]] == ["2d 64x64", "3d 12x12x12"]
    for row in res["rows"]:
        assert row["iterations_match"], row
        for key in ("speedup_per_iter", "speedup_1000_with_compile"):
            assert row[key] > 0, (key, row)
        assert row["sparseditto"]["compile_s"] > 0
        assert row["spmv"]["sparseditto_us"] > 0 and row["spmv"]["cupy_us"] > 0
    assert res["checks"] == "passed"
    assert "| 2d 64x64 | 4096 |" in (tmp_path / "cg.md").read_text()
