# python/tests/test_graphs_gcn.py: CPU tests of sparseditto.graphs, rank/plan, C helpers and examples/gcn.py's arguments.
"""numpy only (scipy and torch not needed): the generator's size and degree statistics at
small scale, GCN normalisation against a dense computation, sd_rank / sd_plan against
the CLI, the transpose and hash helpers, and examples/gcn.py's argument errors.
Seeds are in the test bodies."""
import importlib.util
import json
import os
import pathlib
import shutil
import subprocess

import numpy as np
import pytest

import sparseditto as sd
from sparseditto import SparseDittoError, Status, graphs
from sparseditto.matrix import CSRMatrix

REPO = pathlib.Path(__file__).resolve().parents[2]
POISSON = REPO / "examples" / "data" / "poisson2d_32.mtx"


def _cli():
    c = os.environ.get("SPARSEDITTO_CLI") or shutil.which("sparseditto")
    return c if c and os.access(c, os.X_OK) else None


def _dense(rowptr, colind, vals, n):
    d = np.zeros((n, n))
    rows = np.repeat(np.arange(n), np.diff(rowptr))
    np.add.at(d, (rows, colind), vals)
    return d


# ---------------------------------------------------------------- generator

@pytest.mark.parametrize("n,e,seed", [(3000, 3000 * 40, 1), (500, 500 * 492 // 4 * 2, 2),
                                      (10, 20, 3)])
def test_powerlaw_graph_size_and_canonical(n, e, seed):
    rp, ci = graphs.powerlaw_graph(n, e, seed=seed)
    assert rp.dtype == np.int64 and ci.dtype == np.int32
    assert rp.shape == (n + 1,) and rp[0] == 0 and rp[-1] == e  # exactly e entries
    m = CSRMatrix(rp, ci, np.ones(e, np.float32), (n, n))  # sd_csr_check: sorted, unique
    rows = m.row_of_entries()
    assert not np.any(rows == ci), "self loop"
    assert m.is_symmetric(), "not symmetric"


def test_powerlaw_graph_degrees_are_heavy_tailed():
    n, e = 20000, 20000 * 50  # mean degree 50, Reddit's max/mean ratio by default
    rp, _ = graphs.powerlaw_graph(n, e, seed=7)  # seed 7
    s = graphs.degree_stats(rp)
    assert s["nodes"] == n and s["edges"] == e and s["mean"] == pytest.approx(50.0)
    target_max = 50 * graphs.REDDIT["max_degree"] * graphs.REDDIT["nodes"] / graphs.REDDIT["edges"]
    # The hub's degree approaches its weight (pairs among hubs saturate, so a little less).
    assert 0.5 * target_max <= s["max"] <= 1.1 * target_max, s
    assert s["median"] < 0.8 * s["mean"], s   # right-skewed: most nodes below the mean
    assert s["cv"] > 1.0, s                    # heavy tail (a uniform random graph: ~0.14)
    assert s["p99"] > 4 * s["mean"], s
    # Same seed, same graph; another seed, another graph with the same statistics.
    rp2, _ = graphs.powerlaw_graph(n, e, seed=7)
    np.testing.assert_array_equal(rp, rp2)
    s3 = graphs.degree_stats(graphs.powerlaw_graph(n, e, seed=8)[0])
    assert s3["cv"] == pytest.approx(s["cv"], rel=0.15)


def test_powerlaw_graph_argument_errors():
    with pytest.raises(ValueError, match="even"):
        graphs.powerlaw_graph(100, 101)
    with pytest.raises(ValueError, match="do not fit"):
        graphs.powerlaw_graph(10, 100)
    with pytest.raises(ValueError, match="at least 2"):
        graphs.powerlaw_graph(1, 0)
    with pytest.raises(ValueError, match="beta"):
        graphs.powerlaw_graph(100, 200, beta=1.5)


# ---------------------------------------------------------------- normalisation

def test_gcn_normalize_matches_dense():
    # A weighted graph with some diagonal entries present and some missing, an isolated
    # node (degree 1 after its self loop) and unsorted-looking insert positions.
    rng = np.random.default_rng(5)  # seed 5
    n = 30
    d = (rng.random((n, n)) < 0.15) * rng.integers(1, 4, (n, n))
    d = np.triu(d, 1)
    d = d + d.T
    d[3, 3], d[17, 17] = 2, 1      # existing diagonals: + 1
    d[9, :] = d[:, 9] = 0           # isolated node 9
    m = CSRMatrix.from_coo(*np.nonzero(d), d[np.nonzero(d)], (n, n))
    rp, ci, v = graphs.gcn_normalize(m.rowptr, m.colind, m.vals)
    ah = d + np.eye(n)
    dinv = 1 / np.sqrt(ah.sum(1))
    ref = dinv[:, None] * ah * dinv[None, :]
    got = _dense(rp, ci, v, n)
    np.testing.assert_allclose(got, ref, rtol=1e-6, atol=0)
    assert np.array_equal(got != 0, ref != 0)
    out = CSRMatrix(rp, ci, v, (n, n))  # canonical (sd_csr_check)
    assert out.is_symmetric()           # bitwise, by construction
    assert v.dtype == np.float32 and out.nnz == m.nnz + n - 2


def test_gcn_normalize_pattern_only_and_no_self_loops():
    rp, ci = graphs.powerlaw_graph(200, 2000, seed=3)  # seed 3
    n = 200
    a = _dense(rp, ci, np.ones(ci.shape[0]), n)
    r2, c2, v2 = graphs.gcn_normalize(rp, ci, add_self_loops=False)
    deg = a.sum(1)
    dinv = np.where(deg > 0, 1 / np.sqrt(np.maximum(deg, 1)), 0.0)  # isolated nodes: 0
    np.testing.assert_allclose(_dense(r2, c2, v2, n), dinv[:, None] * a * dinv[None, :],
                               rtol=1e-6)
    r3, c3, v3 = graphs.gcn_normalize(rp, ci)
    assert r3[-1] == rp[-1] + n
    # The package's CSRMatrix path (torch_spmm.gcn_normalize) gives the same matrix.
    from sparseditto import torch_spmm
    m = torch_spmm.gcn_normalize(CSRMatrix(rp, ci, np.ones(ci.shape[0], np.float32), (n, n)))
    np.testing.assert_array_equal(m.rowptr, r3)
    np.testing.assert_array_equal(m.colind, c3)
    np.testing.assert_array_equal(m.vals, v3)
    with pytest.raises(ValueError, match="outside"):
        graphs.gcn_normalize(np.array([0, 1]), np.array([3], np.int32))


# ---------------------------------------------------------------- C helpers

def test_transpose_and_hash():
    m = CSRMatrix.from_coo([0, 0, 2, 1], [1, 3, 0, 2], [1.0, 2.0, 3.0, 4.0], (3, 4))
    t = m.transpose()
    assert t.shape == (4, 3)
    np.testing.assert_array_equal(t.rowptr, [0, 1, 2, 3, 4])
    np.testing.assert_array_equal(t.colind, [2, 0, 1, 0])
    np.testing.assert_array_equal(t.vals, [3.0, 1.0, 4.0, 2.0])
    h = m.hash()
    assert len(h) == 32 and int(h, 16) >= 0
    assert h == CSRMatrix.from_coo([0, 0, 2, 1], [1, 3, 0, 2], [1.0, 2.0, 3.0, 4.0], (3, 4)).hash()
    other_vals = CSRMatrix(m.rowptr, m.colind, m.vals * 2, m.shape)
    assert other_vals.hash() != h                              # values count by default
    assert other_vals.hash(values=False) == m.hash(values=False)  # the pattern alone
    assert m.hash(values=False) != h
    e = CSRMatrix.from_coo([], [], [], (0, 0))
    assert e.transpose().shape == (0, 0) and len(e.hash()) == 32


# ---------------------------------------------------------------- rank and plan

def test_rank_and_plan_dicts():
    r = sd.rank(POISSON, "spmm", K=64)
    assert r["op"] == "spmm" and r["k"] == 64
    labels = [t["label"] for t in r["ranking"]["templates"]]
    assert {"csr", "coo"} <= set(labels)
    energies = [t["energy"] for t in r["ranking"]["templates"]]
    assert energies == sorted(energies)
    assert sd.rank(POISSON)["k"] == 1  # spmv: K means nothing
    p = sd.plan(POISSON, "spmm", K=32, gpu="H200")
    assert p["gpu"]["name"].endswith("H200") and p["gpu"]["from_device"] is False
    assert isinstance(p["plans"], list) and p["plans"]
    assert all("bounds" in x for x in p["plans"])
    assert "record" in p
    g = sd.plan(POISSON, "spgemm", gpu="H200", branches=2)  # C = A·A (square)
    assert g["plans"] and all("bounds" in x for x in g["plans"])


def test_rank_plan_errors():
    with pytest.raises(SparseDittoError) as ei:
        sd.plan(POISSON, "spmv", gpu="Z80")
    assert ei.value.status == Status.INVALID_ARG and "H200" in ei.value.message
    with pytest.raises(SparseDittoError) as ei:
        sd.rank(POISSON, "spmm", K=0)
    assert ei.value.status == Status.INVALID_ARG and "k >= 1" in ei.value.message
    with pytest.raises(SparseDittoError) as ei:
        sd.rank(POISSON, "spmv", model="/nonexistent/energy.json")
    assert ei.value.status == Status.IO and "sd_rank" in ei.value.message
    with pytest.raises(SparseDittoError) as ei:
        sd.plan(POISSON, "spmv", branches=99)
    assert ei.value.status == Status.INVALID_ARG
    with pytest.raises(ValueError, match="SpMM width"):
        sd.rank(POISSON, "spmv", K=8)
    with pytest.raises(TypeError):
        sd.plan(POISSON, "spmm", K="8")


@pytest.mark.parametrize("op,k", [("spmv", None), ("spmm", 128)])
def test_rank_plan_equal_cli(op, k):
    cli = _cli()
    if cli is None:
        pytest.skip("the sparseditto CLI is not available (set SPARSEDITTO_CLI)")
    extra = ["-K", str(k)] if k else []
    ref = json.loads(subprocess.run([cli, "rank", str(POISSON), "--op", op, "--json"] + extra,
                                    capture_output=True, text=True, check=True).stdout)
    ours = sd.rank(POISSON, op, K=k)
    assert ours["ranking"] == ref["ranking"]
    assert ours["shape_class"] == ref["shape_class"] and ours["k"] == ref["k"]
    refp = json.loads(subprocess.run([cli, "plan", str(POISSON), "--op", op, "--gpu", "H200",
                                      "--json"] + extra,
                                     capture_output=True, text=True, check=True).stdout)
    assert _untimed(sd.plan(POISSON, op, K=k, gpu="H200")["plans"]) == _untimed(refp)


def _untimed(v):
    """v without wall-clock fields ("build_ms", ...), which differ from run to run."""
    if isinstance(v, dict):
        return {k: _untimed(x) for k, x in v.items() if not k.endswith("_ms")}
    if isinstance(v, list):
        return [_untimed(x) for x in v]
    return v


# ---------------------------------------------------------------- examples/gcn.py

def _gcn_module():
    spec = importlib.util.spec_from_file_location("gcn_example", REPO / "examples" / "gcn.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # imports torch only inside main()
    return mod


def test_gcn_example_arguments():
    gcn = _gcn_module()
    a = gcn.parse_args(["--hidden", "8,32", "--backends", "torch,sparseditto", "--nodes", "100"])
    assert a.hidden == [8, 32] and a.backends == ["torch", "sparseditto"] and a.nodes == 100
    d = gcn.parse_args([])
    assert d.hidden == [8, 32, 128, 256] and d.epochs == 100 and d.warmup == 10
    assert d.features == 602 and d.classes == 41
    for bad in (["--hidden", "8,x"], ["--hidden", "0"], ["--backends", "dgl"],
                ["--epochs", "0"], ["--nodes", "1"], ["--budget", "-1"]):
        with pytest.raises(SystemExit) as ei:
            gcn.parse_args(bad)
        assert ei.value.code == 2, bad
    assert gcn.default_edges(graphs.REDDIT["nodes"]) == graphs.REDDIT["edges"]
    assert gcn.default_edges(10) == 90  # capped by the complete graph
    assert gcn.max_rel_diff([1.0, 2.0], [1.0, 2.002]) == pytest.approx(0.002 / 2.002)


def test_gcn_example_skips_without_torch_or_gpu(tmp_path):
    # Without torch (or without a GPU) the example exits 77, the skip code of the lanes.
    import sys
    code = ("import sys, runpy; sys.modules['torch'] = None\n"
            "out = sys.argv[1]; sys.argv = ['gcn.py', '--out', out]\n"
            "runpy.run_path(%r, run_name='__main__')\n" % str(REPO / "examples" / "gcn.py"))
    r = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True,
                       text=True)
    assert r.returncode == 77, r.stderr
    assert "PyTorch is not installed" in r.stderr
