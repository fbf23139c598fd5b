#!/usr/bin/env python3
# examples/poisson_cg.py: conjugate gradients on 2-D and 3-D Poisson systems with cupyx cg, CuPy's csr_matrix (cuSPARSE) against a SparseDitto LinearOperator.
"""Solves A·x = b with cupyx.scipy.sparse.linalg.cg (no preconditioner) for two Poisson
matrices, Dirichlet boundary, unit grid spacing:

  2d   5-point stencil on an N×N grid (--n2d, default 2048: 4.2 M unknowns, 21 M nonzeros)
  3d   7-point stencil on an N×N×N grid (--n3d, default 128: 2.1 M unknowns, 14.6 M nonzeros)

Each system is solved twice from x0 = 0 to the same relative tolerance (--rtol; cg stops
when ‖r_k‖ ≤ rtol·‖b‖ on its recursive residual), with the same right-hand side b,
uniform in [-1, 1) (seeded, float32; cg's iteration count grows with the grid side, so
the default 2-D grid takes thousands of products):

  cupy         cupyx.scipy.sparse.csr_matrix, float32: cg's own cuSPARSE SpMV
  sparseditto  sparseditto.cupy_linalg.LinearOperator, float32 (our compiled SpMV kernel)

Both compute in float32 (same values, exactly representable), so the comparison is
same-precision. Reported per system:
  - iterations of each solve and the check that they agree (|Δ| ≤ max(2, --iter-rtol ×
    CuPy's count): FP32 rounding differs between the two SpMVs, nothing else does);
  - solve time: wall time between two synchronisations (perf_counter), and the CUDA
    event time between the same points; per-iteration time = wall time / iterations;
  - our compile time: building the LinearOperator (SpMV kernel search and compile; with
    --use-cache possibly a cache hit, which the row's note says);
  - speed-up per iteration, t_cupy / t_ours, and with compile included after 1,000
    iterations: S_1000 = (1000 · t_cupy) / (1000 · t_ours + T_compile);
    break-even iterations = T_compile / (t_cupy − t_ours) when t_ours < t_cupy;
  - SpMV alone: --spmv-reps back-to-back products with each (cg's cuSPARSE matvec
    and ours), CUDA events around the loop;
  - true relative residual ‖b − A·x‖ / ‖b‖ of both solutions, in float64 (cuSPARSE on a
    float64 copy of A); float32 CG stops on its recursive residual, so the true one can
    stay above rtol on the large grids, for both operators alike.
Checks (exit 1 when one fails): the iteration counts agree as above, both solves
converged, and our residual is at most 10 × max(rtol, CuPy's residual).
Warm-up: a 3-iteration solve with each operator before timing (cuBLAS handles, CuPy's
memory pool and kernel caches). CuPy's own setup (building its csr_matrix) is not timed.

Quick test:  python examples/poisson_cg.py --n2d 256 --n3d 32 --budget 4 --out /tmp/cg
Full run:    python examples/poisson_cg.py --out bench/results/cg
Exit status: 0, 1 when a check failed or a solve raised, 77 without CuPy or a device.
"""
import argparse
import datetime
import json
import math
import os
import pathlib
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
PROBLEMS = ("2d", "3d")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--problems", default="2d,3d", help="comma-separated subset of 2d, 3d")
    p.add_argument("--n2d", type=int, default=2048, help="2-D grid side (2048)")
    p.add_argument("--n3d", type=int, default=128, help="3-D grid side (128)")
    p.add_argument("--rtol", type=float, default=1e-5, help="cg's relative tolerance (1e-5)")
    p.add_argument("--maxiter", type=int, default=50000, help="cg's iteration limit (50000)")
    p.add_argument("--iter-rtol", type=float, default=0.05,
                   help="accepted relative difference of the iteration counts (0.05)")
    p.add_argument("--spmv-reps", type=int, default=200,
                   help="products per operator in the SpMV-only timing (0: skip it)")
    p.add_argument("--budget", type=int, default=None,
                   help="SparseDitto search budget (candidates; default: the library's)")
    p.add_argument("--use-cache", action="store_true",
                   help="let the kernel cache serve our kernel (default: a fresh compile, so "
                        "the compile time is the real one)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--time-limit", type=float, default=None,
                   help="seconds: a solve running past it stops at its next iteration "
                        "(reported as partial) and no new one starts; results so far kept")
    p.add_argument("--out", default="cg-out", help="directory for cg.json and cg.md")
    a = p.parse_args(argv)
    a.problems = [s.strip() for s in a.problems.split(",") if s.strip()]
    bad = [s for s in a.problems if s not in PROBLEMS]
    if bad or not a.problems:
        p.error(f"--problems: unknown {bad}; choose from 2d, 3d")
    if a.n2d < 2 or a.n3d < 2:
        p.error("--n2d and --n3d must be at least 2")
    if a.n2d ** 2 * 5 >= 2**31 or a.n3d ** 3 * 7 >= 2**31:
        p.error("the grid is too large for 32-bit indices")
    if not 0 < a.rtol < 1:
        p.error("--rtol must be in (0, 1)")
    if a.maxiter < 1:
        p.error("--maxiter must be at least 1")
    if a.iter_rtol < 0 or a.spmv_reps < 0:
        p.error("--iter-rtol and --spmv-reps must be >= 0")
    if a.budget is not None and a.budget < 0:
        p.error("--budget must be >= 0")
    return a


# ---------------------------------------------------------------- matrices

def poisson_csr(np, dims):
    """Canonical CSR (int64 rowptr, int32 colind, float32 vals) of the (2d+1)-point
    Laplacian on a grid of shape dims (row-major numbering, Dirichlet boundary):
    2d on the diagonal, -1 for each neighbour inside the grid."""
    d = len(dims)
    n = int(np.prod(dims))
    idx = np.arange(n, dtype=np.int64)
    coords = np.unravel_index(idx, dims)
    strides = [int(np.prod(dims[k + 1:])) for k in range(d)]
    # Offsets in increasing order (strides decrease with k), so each row's columns come
    # out sorted: -s_0 < ... < -s_{d-1} = -1 < 0 < 1 < ... < s_0.
    stencil = ([(-strides[k], k, -1) for k in range(d)] + [(0, None, 0)]
               + [(strides[k], k, 1) for k in reversed(range(d))])
    cols = np.empty((n, len(stencil)), dtype=np.int64)
    keep = np.empty((n, len(stencil)), dtype=bool)
    vals = np.empty(len(stencil), dtype=np.float32)
    for j, (off, axis, step) in enumerate(stencil):
        cols[:, j] = idx + off
        if axis is None:
            keep[:, j] = True
            vals[j] = 2 * d
        else:
            c = coords[axis] + step
            keep[:, j] = (c >= 0) & (c < dims[axis])
            vals[j] = -1
    colind = cols[keep].astype(np.int32)
    v = np.broadcast_to(vals, keep.shape)[keep]
    rowptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(keep.sum(axis=1), out=rowptr[1:])
    return rowptr, colind, np.ascontiguousarray(v)


# ---------------------------------------------------------------- timing

class _TimeUp(Exception):
    pass


def solve(cupy, cg, A, b, rtol, maxiter, deadline):
    """cg from x0 = 0, counting iterations; stops at the deadline (partial)."""
    it = [0]
    last = [None]

    def callback(xk):
        it[0] += 1
        last[0] = xk
        if deadline is not None and time.perf_counter() > deadline:
            raise _TimeUp

    dev = cupy.cuda.Device()
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    dev.synchronize()
    t0 = time.perf_counter()
    start.record()
    partial = False
    try:
        x, info = cg(A, b, rtol=rtol, atol=0.0, maxiter=maxiter, callback=callback)
    except _TimeUp:
        x, info, partial = last[0], None, True
    end.record()
    end.synchronize()
    dev.synchronize()
    wall = time.perf_counter() - t0
    return x, {"iterations": it[0], "info": info, "partial": partial, "solve_s": wall,
               "event_ms": cupy.cuda.get_elapsed_time(start, end),
               "per_iter_ms": 1e3 * wall / it[0] if it[0] else None}


def time_spmv(cupy, matvec, x, reps):
    """Mean µs per product over reps back-to-back calls (CUDA events around the loop)."""
    matvec(x)
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    cupy.cuda.Device().synchronize()
    start.record()
    for _ in range(reps):
        matvec(x)
    end.record()
    end.synchronize()
    return 1e3 * cupy.cuda.get_elapsed_time(start, end) / reps


def rel_residual(cupy, a64, b64, x):
    """‖b − A·x‖ / ‖b‖ in float64 (None without a solution)."""
    if x is None:
        return None
    r = b64 - a64 @ x.astype(cupy.float64)
    return float(cupy.linalg.norm(r) / cupy.linalg.norm(b64))


# ---------------------------------------------------------------- report

def _f(v, fmt):
    return "–" if v is None else fmt % v


def write_report(out, result):
    out.mkdir(parents=True, exist_ok=True)
    (out / "cg.json").write_text(json.dumps(result, indent=2) + "\n")
    lines = [
        "# Conjugate gradients on Poisson systems: CuPy csr_matrix (cuSPARSE) vs SparseDitto",
        "",
        f"Date {result['date']}; GPU {result['gpu']}; CuPy {result['versions']['cupy']} "
        f"(CUDA runtime {result['versions']['cuda_runtime']}), sparseditto "
        f"{result['versions']['sparseditto']}.",
        "",
        f"cupyx.scipy.sparse.linalg.cg, no preconditioner, x0 = 0, rtol {result['rtol']}, "
        "b uniform in [-1, 1); float32 for both. Per-iteration time = solve "
        "wall time (synchronised, perf_counter) / iterations. Compile = building our "
        "LinearOperator"
        f"{' (kernel cache allowed)' if result['use_cache'] else ' (fresh compile, no cache)'}"
        f", budget {result['budget'] if result['budget'] is not None else 'default'}. "
        "S_1000 = 1000·t_cupy / (1000·t_ours + T_compile). SpMV µs: "
        f"{result['spmv_reps']} back-to-back products, CUDA events. Residual = "
        "‖b − A·x‖/‖b‖ in float64.",
        "",
        "| system | n | nnz | iterations (CuPy / ours) | ms/iter CuPy | ms/iter ours | "
        "speed-up per iter | compile s | S_1000 incl. compile | break-even iters | "
        "SpMV µs (CuPy / ours) | residual (CuPy / ours) | note |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in result["rows"]:
        c, s = row.get("cupy", {}), row.get("sparseditto", {})
        sp = row.get("spmv", {})
        note = "; ".join(row.get("notes", []))
        lines.append(
            f"| {row['system']} | {row['n']} | {row['nnz']} | "
            f"{c.get('iterations', '–')} / {s.get('iterations', '–')} | "
            f"{_f(c.get('per_iter_ms'), '%.3f')} | {_f(s.get('per_iter_ms'), '%.3f')} | "
            f"{_f(row.get('speedup_per_iter'), '%.2fx')} | {_f(s.get('compile_s'), '%.2f')} | "
            f"{_f(row.get('speedup_1000_with_compile'), '%.2fx')} | "
            f"{_f(row.get('break_even_iterations'), '%.0f')} | "
            f"{_f(sp.get('cupy_us'), '%.1f')} / {_f(sp.get('sparseditto_us'), '%.1f')} | "
            f"{_f(c.get('rel_residual'), '%.1e')} / {_f(s.get('rel_residual'), '%.1e')} | "
            f"{note} |")
    lines += ["", f"Checks: {result.get('checks', 'none run')}.",
              "", f"Command: `{result['command']}`; total wall time {result['wall_s']:.0f} s.", ""]
    (out / "cg.md").write_text("\n".join(lines))


# ---------------------------------------------------------------- main

def run_system(args, name, cupy, cps, cg, sd, cl, deadline):
    import numpy as np
    dims = (args.n2d,) * 2 if name == "2d" else (args.n3d,) * 3
    rowptr, colind, vals = poisson_csr(np, dims)
    n = rowptr.shape[0] - 1
    row = {"system": f"{name} {'x'.join(map(str, dims))}", "n": n, "nnz": int(colind.shape[0]),
           "notes": []}
    print(f"poisson_cg: {row['system']}: n {n}, nnz {row['nnz']}", file=sys.stderr)

    a32 = cps.csr_matrix((cupy.asarray(vals), cupy.asarray(colind),
                          cupy.asarray(rowptr.astype(np.int32))), shape=(n, n))
    a64 = cps.csr_matrix((cupy.asarray(vals.astype(np.float64)), cupy.asarray(colind),
                          cupy.asarray(rowptr.astype(np.int32))), shape=(n, n))
    rng = np.random.default_rng(args.seed)
    b = cupy.asarray(rng.uniform(-1.0, 1.0, n).astype(np.float32))
    b64 = b.astype(cupy.float64)

    t0 = time.perf_counter()
    m = sd.CSRMatrix(rowptr, colind, vals, (n, n))
    opts = {"use_cache": bool(args.use_cache)}
    if args.budget is not None:
        opts["budget"] = args.budget
    op = cl.LinearOperator(m, **opts)
    compile_s = time.perf_counter() - t0
    ours = {"compile_s": compile_s, "kernel_seconds": op.compile_seconds}
    try:
        d = op.describe() or {}
        plan = d.get("plan") or {}
        ours["kernel"] = {"from_cache": d.get("from_cache"), "family": plan.get("family"),
                          "config": plan.get("config")}
        row["notes"].append(f"ours: {plan.get('family')}"
                            f"{' (cache hit)' if d.get('from_cache') else ''}")
    except sd.SparseDittoError as e:
        ours["kernel"] = {"describe_error": str(e)}

    for A in (a32, op):  # warm-up
        cg(A, b, rtol=args.rtol, atol=0.0, maxiter=3)

    results = {}
    for label, A in (("cupy", a32), ("sparseditto", op)):
        if deadline is not None and time.perf_counter() > deadline:
            results[label] = {"skipped": f"--time-limit {args.time_limit:.0f} s reached"}
            continue
        x, r = solve(cupy, cg, A, b, args.rtol, args.maxiter, deadline)
        r["rel_residual"] = rel_residual(cupy, a64, b64, x)
        results[label] = r
        print(f"poisson_cg: {name} {label}: {r['iterations']} iterations, "
              f"{_f(r['per_iter_ms'], '%.3f')} ms/iter, residual "
              f"{_f(r['rel_residual'], '%.1e')}{' (partial)' if r['partial'] else ''}",
              file=sys.stderr)
    ours.update(results.get("sparseditto", {}))
    row["cupy"], row["sparseditto"] = results.get("cupy", {}), ours

    if args.spmv_reps:
        from cupyx.scipy.sparse.linalg import _iterative
        fast = getattr(_iterative, "_make_fast_matvec", None)  # the matvec cg itself uses
        mv = fast(a32) if fast is not None else None
        if mv is None:
            mv = a32.dot
            row["notes"].append("CuPy SpMV timed through csr_matrix.dot")
        x = cupy.asarray(rng.uniform(-1.0, 1.0, n).astype(np.float32))
        row["spmv"] = {"cupy_us": time_spmv(cupy, mv, x, args.spmv_reps),
                       "sparseditto_us": time_spmv(cupy, op.matvec, x, args.spmv_reps)}
        row["spmv"]["speedup"] = row["spmv"]["cupy_us"] / row["spmv"]["sparseditto_us"]

    tc, to = row["cupy"].get("per_iter_ms"), ours.get("per_iter_ms")
    if tc and to:
        row["speedup_per_iter"] = tc / to
        row["speedup_1000_with_compile"] = 1000 * tc / (1000 * to + 1e3 * compile_s)
        if to < tc:
            row["break_even_iterations"] = 1e3 * compile_s / (tc - to)

    checks = []
    ic, io = row["cupy"].get("iterations"), ours.get("iterations")
    complete = all(not r.get("partial", True) for r in results.values()) and len(results) == 2
    if complete and "skipped" not in row["cupy"] and "skipped" not in ours:
        tol = max(2, math.ceil(args.iter_rtol * ic))
        ok = abs(ic - io) <= tol
        row["iterations_match"] = ok
        checks.append(None if ok else f"{name}: iterations {ic} (CuPy) vs {io} (ours), "
                                      f"more than {tol} apart")
        for label in ("cupy", "sparseditto"):
            if results[label]["info"] != 0:
                checks.append(f"{name}: {label} did not converge in {results[label]['iterations']} "
                              "iterations")
        rc, ro = row["cupy"]["rel_residual"], ours["rel_residual"]
        if not (ro is not None and math.isfinite(ro) and ro <= 10 * max(args.rtol, rc)):
            checks.append(f"{name}: our residual {ro} is beyond 10 x max(rtol, CuPy's {rc})")
    else:
        row["notes"].append("checks skipped: a solve was cut by --time-limit")
    del op, a32, a64
    cupy.get_default_memory_pool().free_all_blocks()
    return row, [c for c in checks if c]


def main(argv=None):
    args = parse_args(argv)
    start = time.perf_counter()
    deadline = start + args.time_limit if args.time_limit is not None else None
    try:
        import cupy
        import cupyx.scipy.sparse as cps
        from cupyx.scipy.sparse.linalg import cg
    except ImportError as e:
        print(f"poisson_cg: CuPy is not installed ({e})", file=sys.stderr)
        return 77
    if not cupy.cuda.is_available():
        print("poisson_cg: no CUDA device visible to CuPy", file=sys.stderr)
        return 77
    try:
        import sparseditto as sd
    except ImportError:  # not installed: the checkout's package (SPARSEDITTO_LIBRARY names the .so)
        sys.path.insert(0, str(HERE.parent / "python"))
        import sparseditto as sd
    from sparseditto import cupy_linalg as cl

    dev = cupy.cuda.Device()
    name = cupy.cuda.runtime.getDeviceProperties(dev.id)["name"]
    result = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "gpu": name.decode() if isinstance(name, bytes) else str(name),
        "versions": {"cupy": cupy.__version__,
                     "cuda_runtime": cupy.cuda.runtime.runtimeGetVersion(),
                     "sparseditto": sd.version()},
        "rtol": args.rtol, "maxiter": args.maxiter, "iter_rtol": args.iter_rtol,
        "spmv_reps": args.spmv_reps, "budget": args.budget, "use_cache": args.use_cache,
        "seed": args.seed,
        "formula": "S_1000 = 1000 * t_cupy / (1000 * t_ours + T_compile); t = per-iteration "
                   "wall time, T_compile = time to build the LinearOperator",
        "command": " ".join([os.path.basename(sys.argv[0])] + (argv if argv is not None
                                                                else sys.argv[1:])),
        "rows": [],
    }
    out = pathlib.Path(args.out)
    failed, errors = [], []
    for name_ in args.problems:
        if deadline is not None and time.perf_counter() > deadline:
            result["rows"].append({"system": name_, "n": "–", "nnz": "–",
                                   "notes": [f"skipped: --time-limit {args.time_limit:.0f} s reached"]})
            continue
        try:
            row, bad = run_system(args, name_, cupy, cps, cg, sd, cl, deadline)
            failed += bad
        except Exception as e:  # keep the other system; reported and exit 1
            row = {"system": name_, "n": "–", "nnz": "–",
                   "notes": [f"error: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"]}
            errors.append(name_)
        result["rows"].append(row)
        result["wall_s"] = time.perf_counter() - start
        result["checks"] = ("FAILED: " + "; ".join(failed)) if failed else "passed"
        write_report(out, result)  # after every system: a time-out keeps what was measured
    print(f"poisson_cg: wrote {out / 'cg.json'} and {out / 'cg.md'} in "
          f"{result['wall_s']:.0f} s", file=sys.stderr)
    print((out / "cg.md").read_text())
    if errors:
        print(f"poisson_cg: errors in {errors}", file=sys.stderr)
    return 1 if failed or errors else 0


if __name__ == "__main__":
    sys.exit(main())
