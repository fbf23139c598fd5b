# python/tests/test_binding.py: pytest for the sparseditto package (CPU lane; GPU tests skip without CUDA).
"""Tests of the Python binding.

CPU tests run everywhere. Tests marked gpu need PyTorch with a CUDA device and are
skipped, with the reason, otherwise. The sparseditto CLI for the analyze comparison comes
from $SPARSEDITTO_CLI (tests/cpu/cli_python.sh sets it) or PATH; without one that check is
skipped visibly. Seeded random inputs: the seed is in each test's name or body.
"""
import json
import os
import re
import pathlib
import pickle
import shutil
import subprocess
import sys

import numpy as np
import pytest

import sparseditto as sd
from sparseditto import SparseDittoError, Status
from sparseditto.api import Kernel
from sparseditto.matrix import CSRMatrix
from sparseditto import torch_spmm

REPO = pathlib.Path(__file__).resolve().parents[2]
DATA = pathlib.Path(os.environ.get("SD_TEST_DATA_DIR", REPO / "tests" / "data"))
POISSON = REPO / "examples" / "data" / "poisson2d_32.mtx"

try:
    import scipy.sparse as sp
    import scipy.io as sio
except ImportError:  # scipy is a test dependency; the package itself needs only numpy
    sp = None
needs_scipy = pytest.mark.skipif(sp is None, reason="scipy is not installed")

try:
    import torch
except ImportError:
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
HAS_CUDA = torch is not None and torch.cuda.is_available()


def _cli():
    c = os.environ.get("SPARSEDITTO_CLI") or shutil.which("sparseditto")
    return c if c and os.access(c, os.X_OK) else None


# ---------------------------------------------------------------- import and statuses

def test_import_without_gpu_or_torch(tmp_path):
    # A fresh interpreter where torch cannot be imported: the package and torch_spmm load.
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "import sparseditto, sparseditto.torch_spmm as ts\n"
        "assert sparseditto.version() == sparseditto.__version__, sparseditto.version()\n"
        "try:\n"
        "    ts.SpMM\n"
        "except ImportError as e:\n"
        "    assert 'PyTorch' in str(e), e\n"
        "else:\n"
        "    raise SystemExit('SpMM was built without torch')\n"
        "print('ok')\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"


def test_library_beside_package_and_version():
    assert os.path.isfile(sd.library_path)
    # The one version number: project(VERSION) in CMakeLists.txt.
    cmake = open(os.path.join(os.path.dirname(__file__), "..", "..", "CMakeLists.txt")).read()
    want = re.search(r"project\(sparseditto VERSION ([0-9.]+)", cmake).group(1)
    assert sd.version() == sd.__version__ == want


def test_status_strings():
    expected = {
        Status.OK: "success", Status.INVALID_ARG: "invalid argument", Status.IO: "I/O error",
        Status.PARSE: "parse error", Status.UNSUPPORTED: "unsupported",
        Status.OUT_OF_MEMORY: "out of memory", Status.NO_DEVICE: "no CUDA device",
        Status.CUDA: "CUDA error", Status.COMPILE: "compilation failed",
        Status.VALIDATION: "validation failed", Status.CACHE: "kernel cache error",
        Status.INTERNAL: "internal error",
    }
    assert len(expected) == len(Status)
    for s, text in expected.items():
        assert sd.status_string(s) == text
    assert sd.status_string(99) == "unknown status"
    assert sd.status_string(-1) == "unknown status"


def test_error_carries_status_and_last_error(tmp_path):
    with pytest.raises(SparseDittoError) as ei:
        sd.read(tmp_path / "missing.mtx")
    e = ei.value
    assert e.status == Status.IO
    assert "missing.mtx" in e.message
    assert e.message == sd.last_error()
    assert str(e).startswith("IO: ")
    e2 = pickle.loads(pickle.dumps(e))
    assert e2.status == e.status and e2.message == e.message
    assert SparseDittoError(42, "x").status == 42  # unknown statuses stay ints


def test_parse_error_names_the_line(tmp_path):
    p = tmp_path / "bad.mtx"
    p.write_text("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1.0\n3 1 2.0\n")
    with pytest.raises(SparseDittoError) as ei:
        sd.read(p)
    assert ei.value.status == Status.PARSE
    assert "line 4" in ei.value.message


def test_complex_file_unsupported(tmp_path):
    p = tmp_path / "c.mtx"
    p.write_text("%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1.0 2.0\n")
    with pytest.raises(SparseDittoError) as ei:
        sd.read(p)
    assert ei.value.status == Status.UNSUPPORTED


# ---------------------------------------------------------------- reading

def _canonical(m):
    assert m.rowptr.dtype == np.int64 and m.colind.dtype == np.int32
    assert m.vals.dtype == np.float32
    assert m.rowptr.shape == (m.shape[0] + 1,) and m.rowptr[0] == 0 and m.rowptr[-1] == m.nnz
    for r in range(m.shape[0]):
        c = m.colind[m.rowptr[r]:m.rowptr[r + 1]]
        assert np.all(np.diff(c) > 0), f"row {r} columns not sorted/unique"


@pytest.mark.parametrize("name", sorted(p.name for p in DATA.iterdir()
                                        if p.suffix in (".mtx", ".gz", ".sdm")))
def test_read_every_test_matrix(name):
    m = sd.read(DATA / name)
    _canonical(m)
    m.check()


def test_read_known_values():
    m = sd.read(DATA / "symmetric.mtx")  # (2,1)=1 and (1,2)=0.5 both given: mirrored and summed
    assert m.shape == (3, 3)
    np.testing.assert_array_equal(m.rowptr, [0, 2, 4, 6])
    np.testing.assert_array_equal(m.colind, [0, 1, 0, 2, 1, 2])
    np.testing.assert_array_equal(m.vals, np.array([2, 1.5, 1.5, -1, -1, 4], np.float32))
    one = sd.read(DATA / "one_entry.mtx")
    assert one.shape == (5, 7) and one.nnz == 1
    assert one.colind[0] == 5 and one.vals[0] == 4 and one.rowptr[3] == 1 and one.rowptr[2] == 0
    e = sd.read(DATA / "empty_0x0.mtx")
    assert e.shape == (0, 0) and e.nnz == 0
    np.testing.assert_array_equal(e.rowptr, [0])


def test_read_poisson_and_sdm_equals_mtx(tmp_path):
    a = sd.read(POISSON)
    assert a.shape == (1024, 1024) and a.nnz == 4992
    assert a.is_symmetric()
    for ext in (".sdm", ".mtx"):
        p = tmp_path / ("p" + ext)
        a.write(p)
        b = sd.read(p)
        assert b.shape == a.shape
        np.testing.assert_array_equal(b.rowptr, a.rowptr)
        np.testing.assert_array_equal(b.colind, a.colind)
        np.testing.assert_array_equal(b.vals, a.vals)


@needs_scipy
@pytest.mark.parametrize("name", ["symmetric.mtx", "skew.mtx", "pattern.mtx", "integer.mtx",
                                  "one_entry.mtx", "empty_rows.mtx", "dense_row.mtx"])
def test_read_agrees_with_scipy_mmread(name):
    ours = sd.read(DATA / name)
    theirs = sd.CSRMatrix.from_scipy(sio.mmread(str(DATA / name)))
    assert ours.shape == theirs.shape
    np.testing.assert_array_equal(ours.rowptr, theirs.rowptr)
    np.testing.assert_array_equal(ours.colind, theirs.colind)
    np.testing.assert_array_equal(ours.vals, theirs.vals)


# ---------------------------------------------------------------- scipy and COO

@needs_scipy
def test_scipy_round_trip_unsorted_duplicates():
    rng = np.random.default_rng(11)  # seed 11
    rows, cols, n = 40, 30, 500
    r = rng.integers(0, rows, n)
    c = rng.integers(0, cols, n)
    v = rng.integers(-2, 3, n).astype(np.float64)  # small integers: exact sums
    coo = sp.coo_matrix((v, (r, c)), shape=(rows, cols))
    m = sd.CSRMatrix.from_scipy(coo)
    _canonical(m)
    ref = sp.csr_matrix(coo)
    ref.sum_duplicates()
    assert m.shape == ref.shape and m.nnz == ref.nnz
    np.testing.assert_array_equal(m.rowptr, ref.indptr)
    np.testing.assert_array_equal(m.colind, ref.indices)
    np.testing.assert_array_equal(m.vals, ref.data.astype(np.float32))
    back = m.to_scipy()
    assert back.shape == (rows, cols)
    assert abs(back - ref).max() == 0
    # Explicit zeros (duplicates that cancel) are structural and kept.
    assert m.nnz == len(set(zip(r.tolist(), c.tolist())))
    # numpy-only COO gives the same canonical matrix.
    m2 = sd.CSRMatrix.from_coo(r, c, v, (rows, cols))
    np.testing.assert_array_equal(m2.rowptr, m.rowptr)
    np.testing.assert_array_equal(m2.colind, m.colind)
    np.testing.assert_array_equal(m2.vals, m.vals)


@needs_scipy
@pytest.mark.parametrize("fmt", ["csc", "bsr", "lil", "dok", "dia"])
def test_scipy_formats(fmt):
    a = sp.random(25, 17, density=0.2, random_state=5, format="csr", dtype=np.float32)
    m = sd.CSRMatrix.from_scipy(a.asformat(fmt))
    ref = sd.CSRMatrix.from_scipy(a)
    np.testing.assert_array_equal(m.rowptr, ref.rowptr)
    np.testing.assert_array_equal(m.colind, ref.colind)
    np.testing.assert_array_equal(m.vals, ref.vals)


@needs_scipy
def test_float64_values_round_to_float32():
    # The documented rule: matrix values become float32, rounded to nearest.
    v = np.array([0.1, 1 / 3, 2.0 ** -30, 123456789.0])
    a = sp.csr_matrix((v, ([0, 0, 1, 1], [0, 1, 0, 1])), shape=(2, 2))
    m = sd.CSRMatrix.from_scipy(a)
    assert m.vals.dtype == np.float32
    np.testing.assert_array_equal(m.vals, v.astype(np.float32))
    ints = sd.CSRMatrix.from_scipy(sp.csr_matrix(np.array([[1, 0], [0, 7]], dtype=np.int64)))
    np.testing.assert_array_equal(ints.vals, [1.0, 7.0])


@needs_scipy
def test_bad_matrix_values():
    # NaN in row 3: SparseDittoError naming the row.
    a = sp.csr_matrix((np.array([1.0, np.nan]), ([1, 3], [0, 2])), shape=(5, 5))
    with pytest.raises(SparseDittoError) as ei:
        sd.CSRMatrix.from_scipy(a)
    assert ei.value.status == Status.INVALID_ARG and "row 3" in ei.value.message
    inf = sp.csr_matrix((np.array([np.inf]), ([2], [2])), shape=(4, 4))
    with pytest.raises(SparseDittoError, match="row 2"):
        sd.CSRMatrix.from_scipy(inf)
    big = sp.csr_matrix((np.array([1e300]), ([0], [1])), shape=(2, 2))  # overflows float32
    with pytest.raises(SparseDittoError, match="row 0"):
        sd.CSRMatrix.from_scipy(big)
    with pytest.raises(TypeError, match="complex"):
        sd.CSRMatrix.from_scipy(sp.csr_matrix(np.array([[1j]])))
    with pytest.raises(TypeError):
        sd.CSRMatrix.from_scipy(np.eye(2))


def test_bad_arrays():
    with pytest.raises(ValueError, match="rowptr"):
        CSRMatrix([0, 1], [0], [1.0], (2, 2))
    with pytest.raises(SparseDittoError) as ei:  # unsorted columns in row 1
        CSRMatrix([0, 1, 3], [0, 1, 0], [1.0, 2.0, 3.0], (2, 2))
    assert "row 1" in ei.value.message
    with pytest.raises(SparseDittoError):  # column out of range
        CSRMatrix([0, 1], [5], [1.0], (1, 2))
    with pytest.raises(ValueError, match="outside"):
        sd.CSRMatrix.from_coo([0, 2], [0, 0], [1.0, 1.0], (2, 2))
    with pytest.raises(ValueError, match="negative"):
        CSRMatrix([0], [], [], (-1, 2))
    with pytest.raises(ValueError, match="int32"):
        CSRMatrix(np.zeros(1, np.int64), [], [], (0, 2**31))
    with pytest.raises(TypeError):
        sd.as_matrix([[1, 0], [0, 1]])
    # The C view is built per call: in-place edits are seen, replaced dtypes refused.
    m = sd.CSRMatrix.from_coo([0, 1], [1, 0], [1.0, 2.0], (2, 2))
    m.vals[1] = np.nan
    with pytest.raises(SparseDittoError, match="row 1"):
        m.check()
    m.vals = np.array([1.0, 2.0])  # float64
    with pytest.raises(TypeError, match="float32"):
        sd.analyze(m)


def test_empty_matrices():
    z = sd.CSRMatrix.from_coo([], [], [], (0, 0))
    assert z.shape == (0, 0) and z.nnz == 0
    f = sd.analyze(z)
    assert all(v == 0 for v in f["features"].values())
    empty_rows = sd.CSRMatrix.from_coo([], [], [], (3, 4))
    np.testing.assert_array_equal(empty_rows.rowptr, [0, 0, 0, 0])
    assert empty_rows.transpose().shape == (4, 3)
    if sp is not None:
        s = sd.CSRMatrix.from_scipy(sp.csr_matrix((0, 0), dtype=np.float32))
        assert s.shape == (0, 0) and s.to_scipy().shape == (0, 0)


@needs_scipy
def test_transpose_and_symmetry():
    a = sp.random(30, 20, density=0.15, random_state=3, format="csr", dtype=np.float32)
    m = sd.CSRMatrix.from_scipy(a)
    t = m.transpose()
    ref = sd.CSRMatrix.from_scipy(a.T)
    assert t.shape == (20, 30)
    np.testing.assert_array_equal(t.rowptr, ref.rowptr)
    np.testing.assert_array_equal(t.colind, ref.colind)
    np.testing.assert_array_equal(t.vals, ref.vals)
    assert not m.is_symmetric()
    sq = a[:20, :]
    assert sd.CSRMatrix.from_scipy(sq + sq.T).is_symmetric()  # float32 + is commutative: exact
    assert not sd.CSRMatrix.from_scipy(sq + 2 * sq.T).is_symmetric() or sq.nnz == 0


# ---------------------------------------------------------------- analyze vs the CLI

def test_analyze_structure():
    r = sd.analyze(POISSON)
    assert r["op"] == "spmv"
    assert list(r["features"]) == sd.feature_names()
    assert len(r["features"]) == 36
    assert r["features"]["rows"] == 1024 and r["features"]["nnz"] == 4992
    assert r["shape_class"] in ("uniform", "moderate", "skewed", "power-law", "bimodal")
    d = sd.feature_descriptions()
    assert set(d) == set(r["features"]) and all(d.values())
    with pytest.raises(ValueError, match="unknown operator"):
        sd.analyze(POISSON, op="spmx")


ANALYZE_CASES = [(POISSON, "spmv"), (POISSON, "spgemm"), (DATA / "symmetric.mtx", "spmv"),
                 (DATA / "dense_row.mtx", "spmv"), (DATA / "empty_rows.mtx", "spgemm"),
                 (DATA / "one_entry.mtx", "spgemm"), (DATA / "empty_0x0.mtx", "spmv")]


@pytest.mark.parametrize("path,op", ANALYZE_CASES, ids=[f"{p.name}-{o}" for p, o in ANALYZE_CASES])
def test_analyze_equals_cli(path, op):
    cli = _cli()
    if cli is None:
        pytest.skip("the sparseditto CLI is not available (set SPARSEDITTO_CLI)")
    out = subprocess.run([cli, "analyze", str(path), "--op", op, "--json"], capture_output=True,
                         text=True, check=True).stdout
    ref = json.loads(out)
    ours = sd.analyze(path, op=op)
    assert ours["shape_class"] == ref["shape_class"]
    assert list(ours["features"]) == list(ref["features"])
    for name, v in ref["features"].items():
        # The CLI prints %.17g (exact); OpenMP reductions may differ in the last bits.
        assert ours["features"][name] == pytest.approx(v, rel=1e-12, abs=0), name


# ---------------------------------------------------------------- compile without a GPU

def test_compile_argument_errors():
    a = sd.read(POISSON)
    for K in (-1, 0):
        with pytest.raises(SparseDittoError) as ei:
            sd.compile(a, "spmm", K=K)
        assert ei.value.status == Status.INVALID_ARG and "K >= 1" in ei.value.message
    with pytest.raises(SparseDittoError) as ei:
        sd.compile(a, "spmm", K=65537)
    assert ei.value.status == Status.UNSUPPORTED and "65536" in ei.value.message
    with pytest.raises(SparseDittoError) as ei:
        sd.compile(a, "spmm")
    assert ei.value.status == Status.INVALID_ARG
    with pytest.raises(TypeError):
        sd.compile(a, "spmm", K=8.0)
    with pytest.raises(ValueError, match="SpMM width"):
        sd.compile(a, "spmv", K=8)
    with pytest.raises(SparseDittoError):
        sd.compile(a, "spmv", budget=-1)
    with pytest.raises(ValueError):
        sd.compile(a, "dense")


def test_compile_without_gpu_is_no_device():
    try:
        ctx = sd.Context()
    except SparseDittoError as e:
        assert e.status == Status.NO_DEVICE, e
        assert "CUDA device" in e.message
    else:
        ctx.close()
        pytest.skip("a CUDA device is present: the no-device path cannot be exercised")
    with pytest.raises(SparseDittoError) as ei:
        sd.compile(POISSON, "spmv")
    assert ei.value.status == Status.NO_DEVICE
    assert "no usable CUDA device" in ei.value.message
    with pytest.raises(SparseDittoError) as ei:
        sd.Context(device=-1)
    assert ei.value.status == Status.INVALID_ARG


# ---------------------------------------------------------------- kernel operands (no GPU)

class _FakeCuda:
    """An object with __cuda_array_interface__ (never dereferenced: checks fail first, or
    the closed kernel stops the call)."""

    def __init__(self, shape, typestr="<f4", ptr=0x10000, strides=None, readonly=False):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr,
                                         "data": (ptr, readonly), "strides": strides,
                                         "version": 3, "stream": None}


class _FakeCtx:
    device = 0


def _closed_kernel(op, K=None, shape=(6, 4)):
    m = sd.CSRMatrix.from_coo([0], [0], [1.0], shape)
    return Kernel(None, _FakeCtx(), m, sd.Op.SPMV if op == "spmv" else sd.Op.SPMM, K)


def test_kernel_operand_checks():
    k = _closed_kernel("spmm", K=8)
    ok_x, ok_y = _FakeCuda((4, 8)), _FakeCuda((6, 8), ptr=0x20000)
    with pytest.raises(TypeError, match="float32"):
        k(_FakeCuda((4, 8), typestr="<f8"), out=ok_y)
    with pytest.raises(ValueError, match=r"expected \(4, 8\)"):
        k(_FakeCuda((4, 7)), out=ok_y)
    with pytest.raises(ValueError, match="out: shape"):
        k(ok_x, out=_FakeCuda((8, 6)))
    with pytest.raises(ValueError, match="contiguous"):
        k(_FakeCuda((4, 8), strides=(4, 16)), out=ok_y)
    with pytest.raises(ValueError, match="aligned"):
        k(_FakeCuda((4, 8), ptr=0x10004), out=ok_y)
    with pytest.raises(ValueError, match="read-only"):
        k(ok_x, out=_FakeCuda((6, 8), ptr=0x20000, readonly=True))
    with pytest.raises(ValueError, match="alias"):
        k(ok_x, out=_FakeCuda((6, 8), ptr=0x10000))
    with pytest.raises(ValueError, match="out= is required"):
        k(ok_x)
    with pytest.raises(TypeError, match="__cuda_array_interface__"):
        k(np.zeros((4, 8), np.float32), out=ok_y)
    # Every check passed: the call reaches the (closed) kernel.
    with pytest.raises(SparseDittoError, match="closed"):
        k(ok_x, out=ok_y)
    v = _closed_kernel("spmv")
    with pytest.raises(ValueError, match=r"expected \(4,\)"):
        v(_FakeCuda((6,)), out=_FakeCuda((6,), ptr=0x20000))
    with pytest.raises(SparseDittoError, match="closed"):
        v(_FakeCuda((4,)), out=_FakeCuda((6,), ptr=0x20000))
    with pytest.raises(ValueError, match="expected 1 values"):
        v.update_values(np.zeros(3, np.float32))
    v.close()  # closing a closed kernel is harmless


@needs_torch
def test_kernel_rejects_cpu_and_float64_tensors():
    k = _closed_kernel("spmv")
    with pytest.raises(ValueError, match="CUDA"):
        k(torch.zeros(4))
    if HAS_CUDA:
        with pytest.raises(TypeError, match="float32"):
            k(torch.zeros(4, dtype=torch.float64, device="cuda"))
        with pytest.raises(ValueError, match="contiguous"):
            _closed_kernel("spmm", K=2)(torch.zeros(2, 4, device="cuda").t())


# ---------------------------------------------------------------- torch on the CPU

@needs_torch
@needs_scipy
def test_from_torch_coo_and_csr():
    i = torch.tensor([[2, 0, 2, 1], [1, 3, 1, 0]])
    v = torch.tensor([1.0, 2.0, 3.0, -1.0], dtype=torch.float64)
    coo = torch.sparse_coo_tensor(i, v, (3, 4))
    m = sd.CSRMatrix.from_torch(coo)
    ref = sd.CSRMatrix.from_scipy(sp.coo_matrix((v.numpy(), (i[0].numpy(), i[1].numpy())),
                                                shape=(3, 4)))
    np.testing.assert_array_equal(m.rowptr, ref.rowptr)
    np.testing.assert_array_equal(m.colind, ref.colind)
    np.testing.assert_array_equal(m.vals, ref.vals)
    m2 = sd.CSRMatrix.from_torch(coo.to_sparse_csr())
    np.testing.assert_array_equal(m2.colind, ref.colind)
    back = m.to_torch().to_dense()
    np.testing.assert_array_equal(back.numpy(), ref.to_scipy().toarray())
    with pytest.raises(TypeError, match="to_sparse_csr"):
        sd.CSRMatrix.from_torch(torch.eye(3))


# ---------------------------------------------------------------- GCN normalisation (CPU)

@needs_scipy
def test_gcn_normalize_matches_scipy():
    a = sd.read(POISSON).to_scipy()
    a.data[:] = 1.0
    a.setdiag(0)
    a.eliminate_zeros()
    n = torch_spmm.gcn_normalize(sd.CSRMatrix.from_scipy(a))
    ahat = a + sp.identity(a.shape[0], format="csr")
    dinv = 1.0 / np.sqrt(np.asarray(ahat.sum(axis=1)).ravel())
    ref = sd.CSRMatrix.from_scipy(sp.diags(dinv) @ ahat @ sp.diags(dinv))
    np.testing.assert_array_equal(n.colind, ref.colind)
    np.testing.assert_allclose(n.vals, ref.vals, rtol=1e-6)
    assert n.is_symmetric()
    with pytest.raises(ValueError, match="square"):
        torch_spmm.gcn_normalize(sd.CSRMatrix.from_coo([0], [0], [1.0], (2, 3)))


def test_sparse_graph_transpose_reuse():
    sym = torch_spmm.SparseGraph(POISSON)
    assert sym.symmetric and sym.transpose() is sym.matrix
    rect = torch_spmm.SparseGraph(sd.CSRMatrix.from_coo([0, 1], [2, 0], [1.0, 2.0], (2, 3)))
    assert not rect.symmetric
    t = rect.transpose()
    assert t.shape == (3, 2)
    np.testing.assert_array_equal(t.rowptr, [0, 1, 1, 2])


# ---------------------------------------------------------------- GPU (skipped without CUDA)

def _bound_ok(y, a64, x64):
    """The validation rule (docs/ARCHITECTURE.md "Validation"):
    |ŷ − y| ≤ 1e-5 + 1e-3·|y| + γ_{n+1}·S per entry."""
    ref = a64 @ x64
    s = abs(a64) @ abs(x64)
    n = np.diff(a64.indptr).reshape(-1, *([1] * (x64.ndim - 1)))
    u = 2.0 ** -24
    gamma = (n + 1) * u / (1 - (n + 1) * u)
    err = np.abs(y.astype(np.float64) - ref)
    return bool(np.all(np.isfinite(y)) and np.all(err <= 1e-5 + 1e-3 * np.abs(ref) + gamma * s))


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason="needs PyTorch with a CUDA device")
@needs_scipy
def test_gpu_spmv_kernel(tmp_path):
    a = sd.read(POISSON)
    ctx = sd.Context(cache_dir=str(tmp_path))
    with sd.compile(a, "spmv", context=ctx) as k:
        g = torch.Generator().manual_seed(7)  # seed 7
        x = torch.randn(1024, generator=g).cuda()
        y = k(x)
        torch.cuda.synchronize()
        a64 = a.to_scipy().astype(np.float64)
        assert _bound_ok(y.cpu().numpy(), a64, x.cpu().double().numpy())
        d = k.describe()
        assert d["rows"] == 1024 and d["nnz"] == 4992 and "plan" in d
        new = np.full(a.nnz, 2.0, np.float32)
        k.update_values(new)
        y2 = k(x)
        torch.cuda.synchronize()
        a2 = sd.CSRMatrix(a.rowptr, a.colind, new, a.shape).to_scipy().astype(np.float64)
        assert _bound_ok(y2.cpu().numpy(), a2, x.cpu().double().numpy())
        with pytest.raises(SparseDittoError):
            k.update_values(np.full(a.nnz, np.nan, np.float32))
        with pytest.raises(TypeError, match="float32"):
            k(x.double())
    ctx.close()


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason="needs PyTorch with a CUDA device")
@needs_scipy
def test_gpu_spmm_autograd_against_torch_sparse():
    rng = np.random.default_rng(21)  # seed 21
    a = sp.random(300, 200, density=0.03, random_state=rng, format="csr", dtype=np.float32)
    a.data[:] = rng.standard_normal(a.nnz).astype(np.float32)
    graph = torch_spmm.SparseGraph(a)
    assert not graph.symmetric
    SpMM = torch_spmm.SpMM
    g = torch.Generator().manual_seed(21)
    for K in (8, 33):
        x = torch.randn(200, K, generator=g).cuda().requires_grad_()
        w = torch.randn(300, K, generator=g).cuda()
        y = SpMM.apply(graph, x)
        (y * w).sum().backward()
        torch.cuda.synchronize()
        # torch.sparse in float32 gives the operator; the bound is judged in float64.
        at = torch.sparse_csr_tensor(torch.from_numpy(a.indptr.astype(np.int64)),
                                     torch.from_numpy(a.indices.astype(np.int64)),
                                     torch.from_numpy(a.data), size=a.shape).cuda()
        y_torch = (at @ x.detach()).cpu().numpy()
        a64 = a.astype(np.float64)
        x64 = x.detach().cpu().double().numpy()
        assert _bound_ok(y.detach().cpu().numpy(), a64, x64)
        assert _bound_ok(y_torch, a64, x64)  # the reference itself meets the rule
        gx = x.grad.cpu().numpy()
        assert _bound_ok(gx, a64.T.tocsr(), w.cpu().double().numpy())
    assert len(graph._kernels) == 4  # forward and Aᵀ per width, each compiled once
    y = SpMM.apply(graph, x)  # cached: no new compile
    assert len(graph._kernels) == 4
    with pytest.raises(ValueError, match="X has shape"):
        SpMM.apply(graph, torch.zeros(300, 8, device="cuda"))
    with pytest.raises(TypeError, match="float32"):
        SpMM.apply(graph, torch.zeros(200, 8, device="cuda", dtype=torch.float64))
    graph.close()


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason="needs PyTorch with a CUDA device")
@needs_scipy
def test_gpu_gcn_aggregation_symmetric_reuses_forward_kernel():
    layer = torch_spmm.GCNAggregation(POISSON)
    assert layer.graph.symmetric
    g = torch.Generator().manual_seed(3)  # seed 3
    h = torch.randn(1024, 16, generator=g).cuda().requires_grad_()
    out = layer(h)
    out.square().sum().backward()
    torch.cuda.synchronize()
    assert len(layer.graph._kernels) == 1  # Aᵀ = A: the forward kernel served backward
    ahat = layer.graph.matrix.to_scipy().astype(np.float64)
    assert _bound_ok(out.detach().cpu().numpy(), ahat, h.detach().cpu().double().numpy())
    gout = 2 * out.detach().cpu().double().numpy()
    assert _bound_ok(h.grad.cpu().numpy(), ahat, gout)


def test_describe_size_message_is_parsed():
    # Kernel.describe grows its buffer to the size sd_kernel_describe names; the C text is
    # "sd_kernel_describe: the buffer needs %zu bytes" (src/api/execute.c).
    from sparseditto.api import _size_needed
    src = (REPO / "src" / "api" / "execute.c").read_text()
    assert '"sd_kernel_describe: the buffer needs %zu bytes"' in src
    assert _size_needed("sd_kernel_describe: the buffer needs 5123 bytes") == 5123
    assert _size_needed("sd_kernel_describe: kern is NULL") is None
