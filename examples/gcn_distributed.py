#!/usr/bin/env python3
# examples/gcn_distributed.py: full-batch two-layer GCN across processes (torch.distributed) with sparseditto.distributed, timed and checked against one process.
"""Two-layer full-batch GCN, Z = Â·relu(Â·X·W1 + b1)·W2 + b2 (the model of examples/gcn.py,
Â = D^-1/2 (A + I) D^-1/2), trained with Adam on cross-entropy over all nodes, with the
rows of Â and of the features split over the ranks (sparseditto.distributed: contiguous
row blocks balanced by nonzeros, halo rows exchanged with all_to_all_single, per-shard
kernels compiled on each rank; --replication c > 1 or auto: the 1.5-D layout; --order
metis: the blocks are a METIS k-way partition, which needs `pip install pymetis`).

    torchrun --nproc-per-node 4 examples/gcn_distributed.py --nodes 20000 --hidden 32 --out /tmp/gcnd
    python examples/gcn_distributed.py --nodes 20000 --hidden 32 --out /tmp/gcnd1   # one process

Backend: NCCL with one GPU per rank (cuda:LOCAL_RANK) when the host has a GPU for each of
its ranks, else gloo on the CPU (--backend forces one). Without torchrun the script runs one process.

The graph: a generated power-law graph (sparseditto.graphs.powerlaw_graph, numpy, the
same seed on every rank; checked by hash) or --matrix PATH (any file CSRMatrix.read
takes; used as the adjacency). Features and labels are seeded random tensors.

Measured per K (rank 0 writes gcn_distributed.json and .md under --out):
  epoch time   mean / median / min over --epochs after --warmup, each epoch between two
               synchronisations (torch.cuda.synchronize on GPUs) and a barrier, the
               slowest rank's mean reported;
  SpMM share, communication share
               a separate pass of --profile-epochs epochs with the exchange made
               synchronous (no overlap), the products and the exchanges (and the 1.5-D
               column all-gathers) bracketed by CUDA events or perf_counter on every rank:
               share = phase time / epoch time of that pass, on the rank whose pass
               was slowest (every rank's in the JSON);
  compile s    seconds each rank spent compiling (or loading) its shard's kernels;
  loss check   rank 0 then trains the same model in one process (sparseditto.torch.SpMM
               on the GPU, torch.sparse.mm on the CPU) and compares every epoch's loss:
               max |loss_dist − loss_one| / loss_one <= --loss-rtol (FP32 sums in another
               order). --reference none skips it.
"""
import os

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")  # multicast stays off (the machines' rule)
os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")

import argparse  # noqa: E402
import datetime  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import pathlib  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--matrix", help="adjacency file (.mtx, .mtx.gz, .sdm) instead of a generated graph")
    p.add_argument("--nodes", type=int, default=20000, help="generated graph: nodes (20000)")
    p.add_argument("--edges", type=int, default=None,
                   help="generated graph: directed edges (default: Reddit's mean degree)")
    p.add_argument("--features", type=int, default=602, help="input width (602, Reddit's)")
    p.add_argument("--classes", type=int, default=41, help="classes (41, Reddit's)")
    p.add_argument("--hidden", default="32", help="hidden widths K, comma-separated")
    p.add_argument("--epochs", type=int, default=20, help="timed epochs (20)")
    p.add_argument("--warmup", type=int, default=3, help="warm-up epochs (3)")
    p.add_argument("--profile-epochs", type=int, default=3, help="epochs of the share pass (0: skip)")
    p.add_argument("--backend", choices=("auto", "nccl", "gloo"), default="auto")
    p.add_argument("--balance", choices=("nnz", "rows"), default="nnz")
    p.add_argument("--order", choices=("none", "rcm", "degree", "rabbit", "metis"),
                   default="none", help="locality order before partitioning (none); metis: "
                   "the blocks are METIS parts (pymetis), --balance unused")
    p.add_argument("--replication", default="1",
                   help="1 (1-D), c > 1 dividing the world size (1.5-D), or auto (cost model)")
    p.add_argument("--budget", type=int, default=None, help="SparseDitto search budget")
    p.add_argument("--reference", choices=("auto", "none"), default="auto",
                   help="rank 0 trains the same model in one process and compares losses")
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--loss-rtol", type=float, default=1e-3)
    p.add_argument("--timeout", type=float, default=600, help="collective timeout, seconds")
    p.add_argument("--out", default="gcn-distributed-out")
    a = p.parse_args(argv)
    try:
        a.hidden = [int(k) for k in a.hidden.split(",") if k.strip()]
    except ValueError:
        p.error(f"--hidden: expected comma-separated integers, got {a.hidden!r}")
    if not a.hidden or any(k < 1 or k > 65536 for k in a.hidden):
        p.error("--hidden: widths must be in 1..65536")
    if a.replication != "auto":
        try:
            a.replication = int(a.replication)
        except ValueError:
            p.error(f"--replication: an integer or 'auto', got {a.replication!r}")
        if a.replication < 1:
            p.error("--replication must be at least 1")
    for name in ("epochs", "features", "classes", "nodes"):
        if getattr(a, name) < 1:
            p.error(f"--{name} must be at least 1")
    if a.warmup < 0 or a.profile_epochs < 0:
        p.error("--warmup and --profile-epochs must be >= 0")
    if a.budget is not None and a.budget < 0:
        p.error("--budget must be >= 0")
    return a


class Recorder:
    """begin(name) / end(name) pairs per phase: CUDA events on a GPU (read after a
    synchronisation), perf_counter on the CPU."""

    def __init__(self, torch, cuda):
        self.torch, self.cuda = torch, cuda
        self.open, self.pairs = {}, {}

    def _now(self):
        if self.cuda:
            ev = self.torch.cuda.Event(enable_timing=True)
            ev.record()
            return ev
        return time.perf_counter()

    def begin(self, name):
        self.open.setdefault(name, []).append(self._now())

    def end(self, name):
        self.pairs.setdefault(name, []).append((self.open[name].pop(), self._now()))

    def total_ms(self, name):
        if self.cuda:
            return sum(a.elapsed_time(b) for a, b in self.pairs.get(name, []))
        return sum(1e3 * (b - a) for a, b in self.pairs.get(name, []))


def setup(args):
    import torch
    import torch.distributed as dist
    launched = "RANK" in os.environ and "WORLD_SIZE" in os.environ
    world = int(os.environ.get("WORLD_SIZE", "1"))
    local = int(os.environ.get("LOCAL_RANK", "0"))
    backend = args.backend
    if backend == "auto":  # the same answer on every rank of the host
        per_host = int(os.environ.get("LOCAL_WORLD_SIZE", "1"))
        backend = ("nccl" if torch.cuda.is_available() and torch.cuda.device_count() >= per_host
                   else "gloo")
    if backend == "nccl":
        if not torch.cuda.is_available():
            raise SystemExit("gcn_distributed: --backend nccl needs CUDA")
        torch.cuda.set_device(local)
        dev = torch.device("cuda", local)
    else:
        dev = torch.device("cpu")
    timeout = datetime.timedelta(seconds=args.timeout)
    if launched:
        dist.init_process_group(backend, timeout=timeout)
        store_dir = None
    else:  # one process: a file store of our own
        store_dir = tempfile.mkdtemp(prefix="sd-gcnd-")
        dist.init_process_group(backend, init_method=f"file://{store_dir}/store", rank=0,
                                world_size=1, timeout=timeout)
    return torch, dist, dev, backend, world, store_dir


def build_graph(args, sd, graphs):
    """Â as a CSRMatrix and its description (the same on every rank)."""
    t0 = time.perf_counter()
    if args.matrix:
        a = sd.CSRMatrix.read(args.matrix)
        if a.shape[0] != a.shape[1]:
            raise SystemExit(f"gcn_distributed: {args.matrix} is not square ({a.shape})")
        rp, ci, v = graphs.gcn_normalize(a.rowptr, a.colind, a.vals)
        info = {"source": "file", "name": str(args.matrix), "generated": False}
        rowptr = a.rowptr
    else:
        n = args.nodes
        e = args.edges
        if e is None:
            e = int(round(n * graphs.REDDIT["edges"] / graphs.REDDIT["nodes"] / 2)) * 2
            e = min(e, n * (n - 1) // 2 * 2)
        rowptr, colind = graphs.powerlaw_graph(n, e, seed=args.seed)
        rp, ci, v = graphs.gcn_normalize(rowptr, colind)
        info = {"source": "generated", "generated": True,
                "name": f"GENERATED power-law graph ({n} nodes, {e} directed edges; "
                        f"sparseditto.graphs.powerlaw_graph, seed {args.seed}, numpy)"}
    m = sd.CSRMatrix(rp, ci, v, (rp.shape[0] - 1, rp.shape[0] - 1))
    info.update(adjacency_stats=graphs.degree_stats(rowptr), normalized_nnz=m.nnz,
                build_s=round(time.perf_counter() - t0, 3))
    return m, info


def make_model(torch, F, K, C, seed):
    g = torch.Generator().manual_seed(seed)
    return {"w1": torch.randn(F, K, generator=g) * math.sqrt(2.0 / (F + K)),
            "b1": torch.zeros(K),
            "w2": torch.randn(K, C, generator=g) * math.sqrt(2.0 / (K + C)),
            "b2": torch.zeros(C)}


def train(torch, agg, params, x, y, n_global, lr, epochs, sync, reduce=None, timed_from=0):
    """Adam on sum-of-cross-entropy / n_global; returns (epoch ms after timed_from,
    global loss per epoch). reduce(tensors) sums across ranks (None: one process)."""
    F = torch.nn.functional
    opt = torch.optim.Adam(params.values(), lr=lr)
    ms, losses = [], []
    for e in range(epochs):
        sync()
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        h = F.relu(agg(x @ params["w1"]) + params["b1"])
        z = agg(h) @ params["w2"] + params["b2"]
        loss = F.cross_entropy(z, y, reduction="sum") / n_global
        loss.backward()
        total = loss.detach().reshape(1)
        if reduce is not None:
            reduce([p.grad for p in params.values()] + [total])
        opt.step()
        sync()
        if e >= timed_from:
            ms.append(1e3 * (time.perf_counter() - t0))
        losses.append(float(total))
    return ms, losses


def stats(ms):
    s = sorted(ms)
    return {"mean_ms": sum(ms) / len(ms), "median_ms": s[len(s) // 2], "min_ms": s[0]} if ms else {}


def write_report(out, result):
    out.mkdir(parents=True, exist_ok=True)
    (out / "gcn_distributed.json").write_text(json.dumps(result, indent=2) + "\n")
    g = result["graph"]
    lines = [
        "# Distributed full-batch GCN (sparseditto.distributed)",
        "",
        f"Date {result['date']}; {result['world_size']} rank(s), backend {result['backend']}, "
        f"device {result['device']}; torch {result['versions']['torch']}, sparseditto "
        f"{result['versions']['sparseditto']}.",
        "",
        f"Graph: **{g['name']}**; Â has {g['normalized_nnz']} nonzeros. Features "
        f"{result['features']}, classes {result['classes']}; partition: balance "
        f"{result['balance']}, order {result['order']}"
        + (f", edge cut {result['edge_cut']}" if result.get("edge_cut") is not None else "")
        + f"; layout {result['layout']}.",
        "",
        "Epoch time: the slowest rank's mean over the timed epochs. Shares: a separate pass "
        "with the exchange synchronous; phase time / epoch time on the rank slowest in it. Loss "
        "diff: max over epochs of |loss − loss_one_process| / loss_one_process.",
        "",
        "| K | epoch ms (mean / median / min) | SpMM share | comm share | compile s (max rank) "
        "| halo rows (max rank) | loss diff vs one process |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in result["rows"]:
        p = r.get("profile") or {}
        lines.append(
            f"| {r['K']} | {r['mean_ms']:.2f} / {r['median_ms']:.2f} / {r['min_ms']:.2f} | "
            f"{'%.0f %%' % (100 * p['spmm_share']) if p else '–'} | "
            f"{'%.0f %%' % (100 * p['comm_share']) if p else '–'} | "
            f"{max(r['compile_s']):.2f} | {max(s['halo_rows'] for s in r['ranks'])} | "
            f"{'%.2e' % r['loss_rel_diff'] if r.get('loss_rel_diff') is not None else '–'} |")
    if result.get("cost_model"):
        lines += ["", "Cost model (seconds per aggregation, by replication c): " + ", ".join(
            f"c={c}: {v['seconds']:.3g}" for c, v in result["cost_model"].items())
            + f"; the model picks c = {result['cost_model_choice']}, this run used "
            f"c = {result['replication']}."]
    if result.get("loss_check"):
        lines += ["", f"Loss check (rtol {result['loss_rtol']}): {result['loss_check']}."]
    lines += ["", f"Command: `{result['command']}`; wall time {result['wall_s']:.0f} s.", ""]
    (out / "gcn_distributed.md").write_text("\n".join(lines))


def main(argv=None):
    args = parse_args(argv)
    start = time.perf_counter()
    import importlib.util
    if importlib.util.find_spec("torch") is None:
        print("gcn_distributed: PyTorch is not installed", file=sys.stderr)
        return 77
    try:
        import sparseditto as sd
    except ImportError:  # the checkout's package (SPARSEDITTO_LIBRARY names the .so)
        sys.path.insert(0, str(HERE.parent / "python"))
        import sparseditto as sd
    from sparseditto import distributed as sdd
    from sparseditto import graphs
    torch, dist, dev, backend, world, store_dir = setup(args)
    rank = dist.get_rank()
    cuda = dev.type == "cuda"
    torch.backends.cuda.matmul.allow_tf32 = False  # FP32 everywhere: the loss comparison
    torch.set_num_threads(max(1, (os.cpu_count() or 1) // world))

    def sync():
        if cuda:
            torch.cuda.synchronize()
        dist.barrier()

    def log(msg):
        if rank == 0:
            print(f"gcn_distributed: {msg}", file=sys.stderr, flush=True)

    m, ginfo = build_graph(args, sd, graphs)
    hashes = [None] * world
    dist.all_gather_object(hashes, m.hash())
    if len(set(hashes)) != 1:
        raise SystemExit(f"gcn_distributed: the ranks built different graphs: {hashes}")
    n = m.shape[0]
    log(f"{ginfo['name']}; Â nnz {m.nnz}; {world} rank(s), {backend}, {dev}")

    opts = {} if args.budget is None else {"budget": args.budget}
    order = None if args.order == "none" else args.order
    costs = sdd.replication_costs(m, world, max(args.hidden), args.balance)
    replication = sdd.choose_replication(costs) if args.replication == "auto" else args.replication
    if world % replication:
        raise SystemExit(f"gcn_distributed: --replication {replication} does not divide "
                         f"{world} ranks")
    t0 = time.perf_counter()
    try:
        if replication == 1:
            dg = sdd.DistributedGraph(m, balance=args.balance, order=order, device=dev, **opts)
        else:
            dg = sdd.ReplicatedGraph(m, replication, balance=args.balance, order=order,
                                     device=dev, **opts)
    except ImportError as e:  # --order metis without pymetis: every rank stops alike
        raise SystemExit(f"gcn_distributed: {e}") from None
    setup_s = time.perf_counter() - t0
    log(f"partition {dg.bounds} ({setup_s:.2f} s)")

    gen = torch.Generator().manual_seed(args.seed + 1)
    X = torch.randn(n, args.features, generator=gen)
    Y = torch.randint(0, args.classes, (n,), generator=gen)
    x, y = dg.local_rows(X), dg.local_rows(Y)
    agg = lambda h: sdd.aggregate(dg, h)  # noqa: E731

    def reduce(ts):  # over the row blocks (1.5-D: the column replicas hold equal values)
        for t in ts:
            dist.all_reduce(t, group=dg.group)

    result = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "world_size": world, "backend": backend,
        "device": torch.cuda.get_device_name(dev) if cuda else "cpu",
        "versions": {"torch": torch.__version__, "sparseditto": sd.version()},
        "graph": ginfo, "features": args.features, "classes": args.classes,
        "epochs": args.epochs, "warmup": args.warmup, "profile_epochs": args.profile_epochs,
        "lr": args.lr, "seed": args.seed, "budget": args.budget, "loss_rtol": args.loss_rtol,
        "balance": "METIS parts" if order == "metis" else args.balance,
        "order": (f"{dg.order_info['method']} ({dg.order_info['by']})" if dg.order_info
                  else "none"),
        "edge_cut": (dg.order_info or {}).get("edge_cut"),
        "layout": "1-D" if replication == 1 else f"1.5-D (c = {replication})",
        "replication": replication,
        "cost_model": {str(c): v for c, v in costs.items()},
        "cost_model_choice": sdd.choose_replication(costs),
        "cost_model_rates": "layout_costs defaults (50 GB/s per rank, 100 GFLOP/s SpMM)",
        "bounds": list(dg.bounds), "setup_s": setup_s,
        "command": " ".join([os.path.basename(sys.argv[0])] + (argv if argv is not None
                                                               else sys.argv[1:])),
        "rows": [],
    }
    failed = []
    for K in args.hidden:
        init = make_model(torch, args.features, K, args.classes, args.seed + 100 + K)
        params = {k: v.clone().to(dev).requires_grad_() for k, v in init.items()}
        compile_s = dg.prepare(K)
        sync()
        ms, losses = train(torch, agg, params, x, y, n, args.lr, args.warmup + args.epochs,
                           sync, reduce, timed_from=args.warmup)
        row = {"K": K, **stats(ms), "losses": losses}
        # The slowest rank's times and every rank's compile seconds and halo.
        per_rank = [None] * world
        dist.all_gather_object(per_rank, {"stats": stats(ms), "compile_s": compile_s,
                                          "shard": dg.stats(K)})
        slow = max(per_rank, key=lambda r: r["stats"]["mean_ms"])
        row.update(slow["stats"])
        row["compile_s"] = [r["compile_s"] for r in per_rank]
        row["ranks"] = [r["shard"] for r in per_rank]
        if args.profile_epochs:
            rec = Recorder(torch, cuda)
            dg.profile = rec
            pms, _ = train(torch, agg, params, x, y, n, args.lr, args.profile_epochs, sync,
                           reduce)
            dg.profile = None
            sync()
            ep = sum(pms) / len(pms)
            spmm = rec.total_ms("spmm") / len(pms)
            comm = (rec.total_ms("exchange") + rec.total_ms("gather")) / len(pms)
            shares = [None] * world
            dist.all_gather_object(shares, {"epoch_ms": ep, "spmm_ms": spmm, "comm_ms": comm})
            slow = max(shares, key=lambda s: s["epoch_ms"])  # one rank's shares, both
            row["profile"] = {"per_rank": shares, "rank": shares.index(slow),
                              "spmm_share": slow["spmm_ms"] / slow["epoch_ms"],
                              "comm_share": slow["comm_ms"] / slow["epoch_ms"]}
        if args.reference == "auto":
            if rank == 0:
                row["loss_rel_diff"] = reference_diff(torch, sd, m, X, Y, init, args, dev,
                                                      losses, opts)
                if row["loss_rel_diff"] > args.loss_rtol:
                    failed.append(K)
            dist.barrier()
        result["rows"].append(row)
        log(f"K={K}: {row['mean_ms']:.2f} ms/epoch (slowest rank), loss {losses[-1]:.4f}"
            + (f", diff vs one process {row['loss_rel_diff']:.2e}" if "loss_rel_diff" in row
               else ""))
        if rank == 0:
            result["wall_s"] = time.perf_counter() - start
            if args.reference == "auto":
                result["loss_check"] = f"FAILED at K = {failed}" if failed else "passed"
            write_report(pathlib.Path(args.out), result)
    if rank == 0:
        print((pathlib.Path(args.out) / "gcn_distributed.md").read_text())
    dist.destroy_process_group()
    if store_dir:
        import shutil
        shutil.rmtree(store_dir, ignore_errors=True)
    return 1 if failed else 0


def reference_diff(torch, sd, m, X, Y, init, args, dev, losses, opts):
    """One process, the whole graph: the same model and epochs; the largest relative
    loss difference from the distributed run."""
    if dev.type == "cuda":
        from sparseditto import torch as sdt
        graph = sdt.SparseGraph(m, **opts)
        agg = lambda h: sdt.SpMM.apply(graph, h)  # noqa: E731
    else:
        a = m.to_torch()
        at = m.transpose().to_torch()

        class Mm(torch.autograd.Function):
            @staticmethod
            def forward(ctx, h):
                return torch.sparse.mm(a, h)

            @staticmethod
            def backward(ctx, g):
                return torch.sparse.mm(at, g.contiguous())

        agg = Mm.apply
    params = {k: v.clone().to(dev).requires_grad_() for k, v in init.items()}

    def sync():
        if dev.type == "cuda":
            torch.cuda.synchronize()

    _, ref = train(torch, agg, params, X.to(dev), Y.to(dev), m.shape[0], args.lr,
                   len(losses), sync)
    return max(abs(p - q) / max(abs(q), 1e-30) for p, q in zip(losses, ref))


if __name__ == "__main__":
    sys.exit(main())
