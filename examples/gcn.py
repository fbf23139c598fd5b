#!/usr/bin/env python3
# examples/gcn.py: full-batch two-layer GCN on a Reddit-size graph, aggregation by torch.sparse, PyG or SparseDitto (eager and torch.compile).
"""Two-layer full-batch GCN, Z = Â·relu(Â·X·W1 + b1)·W2 + b2, with the symmetric
normalisation Â = D^-1/2 (A + I) D^-1/2, trained with Adam on cross-entropy, timed per
epoch with these implementations of the aggregation Â·H:

  torch        torch.sparse.mm on a CSR tensor (int32 indices): cuSPARSE SpMM. Wrapped in an
               autograd function whose backward multiplies by a precomputed Âᵀ (Â itself
               here: Â is symmetric), so both custom paths differ only in the SpMM kernel.
  pyg          torch_geometric.nn.GCNConv as installed, cached=True (normalisation computed
               once, in the warm-up), on edge_index (PyG's gather/scatter message passing;
               it materialises E×K messages, so large K may not fit: then skipped, said why).
  pyg-adj      (opt-in) GCNConv(normalize=False) on the precomputed Â as a torch sparse CSR
               adj_t: PyG's fused SpMM path.
  sparseditto  sparseditto.torch.SpMM (the custom operator sparseditto::spmm, eager) with
               kernels compiled for Â at width K (one kernel serves forward and
               backward: Â is symmetric).
  sparseditto-compiled
               the same model with GCNAggregation (the custom operator sparseditto::spmm,
               same kernels) under torch.compile(fullgraph=True, dynamic=False): no graph
               break. Its row gives the epoch time relative to the eager sparseditto
               epoch (goal: within 3 %); torch.compile's own time (first forward and
               backward, before the warm-up) is its compile s. No SpMM share: the event
               marks of the profiling pass would break the graph.

The model is the same function for every backend: the custom paths aggregate before the
second weight (Â·H)·W2 and GCNConv transforms first Â·(H·W2); both equal Â·H·W2 and start
from the same weights, so the loss curves agree up to FP32 rounding. Every aggregation in
the custom paths runs at width K (two forward, two backward SpMMs per epoch).

The graph: the real Reddit graph when --data names a directory holding PyG's Reddit
dataset (torch_geometric.datasets.Reddit; nothing is downloaded), else a generated graph
of Reddit's size (232,965 nodes, 114,615,892 directed edges, heavy-tailed degrees;
sparseditto.graphs.powerlaw_graph on the GPU), labelled as generated everywhere.

Timing: per backend and K, 10 warm-up epochs then 100 timed epochs, each between two
CUDA events (torch.cuda.synchronize before and after); mean, median and min reported.
The SpMM share comes from a separate profiling pass (10 epochs) in which the aggregation
is bracketed by CUDA events in forward and backward (identity autograd marks around it;
for GCNConv through its propagate hooks, so it includes PyG's message computation):
share = aggregation time / epoch time of that pass.

Quick test:  python examples/gcn.py --nodes 20000 --epochs 5 --warmup 2 --hidden 8,32 --out /tmp/gcn
Full run:    python examples/gcn.py --hidden 8,32,128,256 --out bench/results/gcn
"""
import argparse
import datetime
import gc
import json
import math
import os
import pathlib
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent

REDDIT_FEATURES, REDDIT_CLASSES = 602, 41
GOALS = {8: 3.4, 32: 1.9, 128: 1.0, 256: 1.0}  # target epoch speed-up over the cuSPARSE path
COMPILED_GOAL = 1.03  # compiled epoch / eager sparseditto epoch, at most
BACKENDS = ("torch", "pyg", "pyg-adj", "sparseditto", "sparseditto-compiled")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", help="directory of PyG's Reddit dataset (used when present)")
    p.add_argument("--nodes", type=int, default=None,
                   help="generated graph: nodes (default 232965, Reddit's)")
    p.add_argument("--edges", type=int, default=None,
                   help="generated graph: directed edges (default: Reddit's mean degree, "
                        "about 492 per node; 114615892 at full size)")
    p.add_argument("--features", type=int, default=REDDIT_FEATURES, help="input width (602)")
    p.add_argument("--classes", type=int, default=REDDIT_CLASSES, help="classes (41)")
    p.add_argument("--hidden", default="8,32,128,256", help="hidden widths K, comma-separated")
    p.add_argument("--epochs", type=int, default=100, help="timed epochs (100)")
    p.add_argument("--warmup", type=int, default=10, help="warm-up epochs (10)")
    p.add_argument("--profile-epochs", type=int, default=10,
                   help="epochs of the SpMM-share pass (0: skip it)")
    p.add_argument("--backends", default="torch,pyg,sparseditto,sparseditto-compiled",
                   help="comma-separated subset of " + ", ".join(BACKENDS))
    p.add_argument("--budget", type=int, default=None,
                   help="SparseDitto search budget (candidates; default: the library's)")
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--loss-rtol", type=float, default=1e-3,
                   help="largest accepted relative loss difference SparseDitto vs torch")
    p.add_argument("--time-limit", type=float, default=None,
                   help="seconds: start no new (K, backend) run after this (results so far kept)")
    p.add_argument("--out", default="gcn-out", help="directory for gcn.json and gcn.md")
    a = p.parse_args(argv)
    try:
        a.hidden = [int(k) for k in a.hidden.split(",") if k.strip()]
    except ValueError:
        p.error(f"--hidden: expected comma-separated integers, got {a.hidden!r}")
    if not a.hidden or any(k < 1 or k > 65536 for k in a.hidden):
        p.error("--hidden: widths must be in 1..65536")
    a.backends = [b.strip() for b in a.backends.split(",") if b.strip()]
    bad = [b for b in a.backends if b not in BACKENDS]
    if bad or not a.backends:
        p.error(f"--backends: unknown {bad}; choose from {', '.join(BACKENDS)}")
    for name in ("epochs", "features", "classes"):
        if getattr(a, name) < 1:
            p.error(f"--{name} must be at least 1")
    if a.warmup < 0 or a.profile_epochs < 0:
        p.error("--warmup and --profile-epochs must be >= 0")
    if a.nodes is not None and a.nodes < 2:
        p.error("--nodes must be at least 2")
    if a.budget is not None and a.budget < 0:
        p.error("--budget must be >= 0")
    return a


def default_edges(nodes):
    """Reddit's mean degree at any size, even (both directions), capped by a simple graph."""
    from sparseditto.graphs import REDDIT
    e = int(round(nodes * REDDIT["edges"] / REDDIT["nodes"] / 2)) * 2
    return min(e, nodes * (nodes - 1) // 2 * 2)


# ---------------------------------------------------------------- graph

def load_reddit(root, torch, dev):
    """PyG's Reddit from root (no download): CSR of A without self loops, x, y, train mask."""
    try:
        from torch_geometric.datasets import Reddit
    except ImportError as e:
        return None, f"torch_geometric is not importable ({e})"
    raw = pathlib.Path(root)
    if not (raw / "processed").is_dir() and not (raw / "raw").is_dir():
        return None, f"{root} holds no PyG Reddit dataset (raw/ or processed/)"
    try:
        data = Reddit(str(root))[0]
    except Exception as e:  # a download attempt without internet, a corrupt file
        return None, f"loading Reddit from {root} failed: {type(e).__name__}: {e}"
    n = int(data.num_nodes)
    ei = data.edge_index.to(dev)
    keep = ei[0] != ei[1]
    keys = torch.unique(ei[0, keep] * n + ei[1, keep])  # sorted (row, col), duplicates merged
    rowptr = torch.zeros(n + 1, dtype=torch.int64, device=dev)
    rowptr[1:] = torch.cumsum(torch.bincount(keys // n, minlength=n), 0)
    colind = (keys % n).to(torch.int32)
    return (rowptr, colind, data.x.to(dev).float(), data.y.to(dev).long(),
            data.train_mask.to(dev)), "real"


def build_graph(args, torch, dev):
    from sparseditto import graphs
    info = {}
    got = None
    if args.data:
        got, why = load_reddit(args.data, torch, dev)
        if got is None:
            print(f"gcn: the real Reddit graph is not available: {why}; using a generated "
                  "graph of Reddit's size", file=sys.stderr)
            info["real_graph_unavailable"] = why
    if got is not None:
        rowptr, colind, x, y, mask = got
        info.update(source="real", name="Reddit (PyG torch_geometric.datasets.Reddit)",
                    generated=False)
    else:
        n = args.nodes or graphs.REDDIT["nodes"]
        e = args.edges if args.edges is not None else default_edges(n)
        t0 = time.perf_counter()
        rowptr, colind = graphs.powerlaw_graph(n, e, seed=args.seed, device=dev)
        size = ("of Reddit's size" if n == graphs.REDDIT["nodes"]
                else f"of Reddit's mean degree ({n} of Reddit's {graphs.REDDIT['nodes']} nodes)")
        torch.cuda.synchronize()
        info.update(source="generated", generated=True,
                    name=f"GENERATED power-law graph {size} ({n} nodes, {e} directed "
                         "edges), NOT the real Reddit graph",
                    generator="sparseditto.graphs.powerlaw_graph (Chung-Lu, Zipf weights, "
                              f"seed {args.seed}, on the GPU)",
                    generation_s=round(time.perf_counter() - t0, 3))
        g = torch.Generator(device=dev)
        g.manual_seed(args.seed + 1)
        x = torch.randn(n, args.features, device=dev, generator=g)
        y = torch.randint(0, args.classes, (n,), device=dev, generator=g)
        mask = None  # every node is a training node
    t0 = time.perf_counter()
    rp, ci, vals = graphs.gcn_normalize(rowptr, colind)
    torch.cuda.synchronize()
    info["normalize_s"] = round(time.perf_counter() - t0, 3)
    info["adjacency_stats"] = graphs.degree_stats(rowptr)
    info["normalized_nnz"] = int(ci.shape[0])
    del rowptr, colind
    return info, (rp, ci, vals), x, y, mask


# ---------------------------------------------------------------- models

class Recorder:
    """CUDA event pairs around aggregations (active only in the profiling pass)."""

    def __init__(self, torch):
        self.torch = torch
        self.active = False
        self.open = []
        self.pairs = []

    def start(self):
        ev = self.torch.cuda.Event(enable_timing=True)
        ev.record()
        self.open.append(ev)

    def stop(self):
        ev = self.torch.cuda.Event(enable_timing=True)
        ev.record()
        self.pairs.append((self.open.pop(), ev))

    def total_ms(self):
        return sum(a.elapsed_time(b) for a, b in self.pairs)


def make_classes(torch):
    F = torch.nn.functional

    class Mark(torch.autograd.Function):
        """Identity; records the recorder's events (forward: 'begin' starts, 'end' stops;
        backward runs in reverse order, so 'end' starts and 'begin' stops)."""

        @staticmethod
        def forward(ctx, x, rec, begin):
            ctx.rec, ctx.begin = rec, begin
            if rec.active:
                rec.start() if begin else rec.stop()
            return x.view_as(x)

        @staticmethod
        def backward(ctx, g):
            if ctx.rec.active:
                ctx.rec.stop() if ctx.begin else ctx.rec.start()
            return g, None, None

    class TorchSpMM(torch.autograd.Function):
        """Â·H with torch.sparse (cuSPARSE); backward Âᵀ·G with the precomputed Âᵀ."""

        @staticmethod
        def forward(ctx, a, at, h):
            ctx.at = at
            return torch.sparse.mm(a, h)

        @staticmethod
        def backward(ctx, g):
            return None, None, torch.sparse.mm(ctx.at, g.contiguous())

    class GCN(torch.nn.Module):
        """Z = (Â·relu(Â·(X·W1) + b1))·W2 + b2 with a pluggable aggregation."""

        def __init__(self, agg, init, rec):
            super().__init__()
            self.agg, self.rec = agg, rec
            self.w1 = torch.nn.Parameter(init["w1"].clone())
            self.b1 = torch.nn.Parameter(init["b1"].clone())
            self.w2 = torch.nn.Parameter(init["w2"].clone())
            self.b2 = torch.nn.Parameter(init["b2"].clone())

        def aggregate(self, h):
            if self.rec is None:  # no marks (the compiled model: they would break the graph)
                return self.agg(h)
            h = Mark.apply(h, self.rec, True)
            return Mark.apply(self.agg(h), self.rec, False)

        def forward(self, x):
            h = F.relu(self.aggregate(x @ self.w1) + self.b1)
            return self.aggregate(h) @ self.w2 + self.b2

    class PygGCN(torch.nn.Module):
        """Two GCNConv layers with the same weights as GCN."""

        def __init__(self, adj, init, rec, normalize):
            super().__init__()
            from torch_geometric.nn import GCNConv
            f, k = init["w1"].shape
            c = init["w2"].shape[1]
            self.adj = adj
            self.conv1 = GCNConv(f, k, cached=True, normalize=normalize)
            self.conv2 = GCNConv(k, c, cached=True, normalize=normalize)
            with torch.no_grad():
                self.conv1.lin.weight.copy_(init["w1"].t())
                self.conv1.bias.copy_(init["b1"])
                self.conv2.lin.weight.copy_(init["w2"].t())
                self.conv2.bias.copy_(init["b2"])
            self.to(init["w1"].device)  # GCNConv builds its parameters on the CPU
            for conv in (self.conv1, self.conv2):
                conv.register_propagate_forward_pre_hook(self._pre)
                conv.register_propagate_forward_hook(self._post)
            self.rec = rec

        def _pre(self, module, inputs):
            edge_index, size, kwargs = inputs
            kwargs = dict(kwargs)
            kwargs["x"] = Mark.apply(kwargs["x"], self.rec, True)
            return edge_index, size, kwargs

        def _post(self, module, inputs, out):
            return Mark.apply(out, self.rec, False)

        def forward(self, x):
            h = F.relu(self.conv1(x, self.adj))
            return self.conv2(h, self.adj)

    return TorchSpMM, GCN, PygGCN


# ---------------------------------------------------------------- training and timing

def train(torch, model, x, y, mask, lr, warmup, epochs):
    """Epoch times (ms, the timed epochs) and the loss of every epoch (warm-up included)."""
    F = torch.nn.functional
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    total = warmup + epochs
    losses = torch.zeros(total, device=x.device)
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
          for _ in range(epochs)]
    yy = y if mask is None else y[mask]
    torch.cuda.synchronize()
    for e in range(total):
        timed = e >= warmup
        if timed:
            ev[e - warmup][0].record()
        opt.zero_grad(set_to_none=True)
        out = model(x)
        loss = F.cross_entropy(out if mask is None else out[mask], yy)
        loss.backward()
        opt.step()
        losses[e] = loss.detach()  # no host sync inside the loop
        if timed:
            ev[e - warmup][1].record()
    torch.cuda.synchronize()
    return [a.elapsed_time(b) for a, b in ev], losses.cpu().tolist(), opt


def compile_model(torch, model, x, y, mask):
    """torch.compile(model, fullgraph=True, dynamic=False) and the seconds of its first
    forward and backward (Dynamo, AOT autograd and inductor compile there); the gradients
    that step leaves are dropped."""
    F = torch.nn.functional
    torch._dynamo.reset()  # each K starts clean: no recompile limit, no dynamic shapes
    compiled = torch.compile(model, fullgraph=True, dynamic=False)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    out = compiled(x)
    F.cross_entropy(out if mask is None else out[mask], y if mask is None else y[mask]).backward()
    torch.cuda.synchronize()
    seconds = time.perf_counter() - t0
    model.zero_grad(set_to_none=True)
    return compiled, seconds


def profile_share(torch, model, opt, rec, x, y, mask, epochs):
    """Aggregation share of the epoch over `epochs` epochs with event marks."""
    if epochs <= 0:
        return None
    F = torch.nn.functional
    yy = y if mask is None else y[mask]
    rec.pairs.clear()
    rec.active = True
    begin = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    begin.record()
    for _ in range(epochs):
        opt.zero_grad(set_to_none=True)
        out = model(x)
        loss = F.cross_entropy(out if mask is None else out[mask], yy)
        loss.backward()
        opt.step()
    end.record()
    torch.cuda.synchronize()
    rec.active = False
    if rec.open:
        raise RuntimeError(f"profiling marks unbalanced: {len(rec.open)} open")
    epoch_ms = begin.elapsed_time(end) / epochs
    agg_ms = rec.total_ms() / epochs
    return {"epoch_ms": epoch_ms, "spmm_ms": agg_ms, "share": agg_ms / epoch_ms,
            "spmm_calls_per_epoch": len(rec.pairs) / epochs}


def stats(ms):
    s = sorted(ms)
    return {"mean_ms": sum(ms) / len(ms), "median_ms": s[len(s) // 2], "min_ms": s[0]}


def max_rel_diff(a, b):
    return max((abs(p - q) / max(abs(q), 1e-30) for p, q in zip(a, b)), default=0.0)


# ---------------------------------------------------------------- report

def write_report(out, result):
    out.mkdir(parents=True, exist_ok=True)
    (out / "gcn.json").write_text(json.dumps(result, indent=2) + "\n")
    g = result["graph"]
    lines = [
        "# Full-batch GCN epoch time: torch.sparse (cuSPARSE), PyG GCNConv, SparseDitto "
        "(eager and torch.compile)",
        "",
        f"Date {result['date']}; GPU {result['gpu']}; torch {result['versions']['torch']}, "
        f"torch_geometric {result['versions'].get('torch_geometric') or 'not installed'}, "
        f"sparseditto {result['versions']['sparseditto']}.",
        "",
        f"Graph: **{g['name']}**; normalised Â has {g['normalized_nnz']} nonzeros "
        f"(degrees of A: mean {g['adjacency_stats']['mean']:.1f}, median "
        f"{g['adjacency_stats']['median']:.0f}, max {g['adjacency_stats']['max']}, "
        f"CV {g['adjacency_stats']['cv']:.2f}). Features {result['features']}, classes "
        f"{result['classes']}; two layers, hidden width K; Adam lr {result['lr']}.",
        "",
        f"Epoch time: mean of {result['epochs']} epochs after {result['warmup']} warm-up, each "
        "between two CUDA events. Speed-up = torch epoch / backend epoch. SpMM share = "
        "aggregation time / epoch time in a separate profiling pass of "
        f"{result['profile_epochs']} epochs (CUDA events around every aggregation, forward "
        "and backward). Loss diff = max over all epochs of |loss − loss_torch| / loss_torch. "
        "PyG: GCNConv(cached=True) on edge_index (gather/scatter messages); pyg-adj: "
        "GCNConv(normalize=False) on the precomputed Â as torch sparse CSR. "
        "sparseditto-compiled: the sparseditto model under torch.compile(fullgraph=True) "
        f"(goal: epoch at most {COMPILED_GOAL:.2f}x the eager sparseditto epoch; its compile s "
        "is torch.compile's first forward and backward, the kernels being those of the "
        "eager row; no SpMM share: the event marks would break the graph).",
        "",
        "| K | backend | epoch ms (mean / median) | speed-up vs torch | goal | SpMM share | "
        "compile s | loss diff vs torch | note |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in result["rows"]:
        K = row["K"]
        for name, r in row["backends"].items():
            if "error" in r or "skipped" in r:
                lines.append(f"| {K} | {name} | – | – | – | – | – | – | "
                             f"{r.get('skipped') or r.get('error')} |")
                continue
            sp = r.get("speedup_vs_torch")
            goal = GOALS.get(K) if name == "sparseditto" else None
            met = "" if goal is None or sp is None else (" (met)" if (sp >= goal if K in (8, 32)
                                                                     else sp > goal) else " (not met)")
            goal_text = ('%.1fx' % goal) + met if goal else ''
            compile_s = r.get("compile_s")
            if name == "sparseditto-compiled":
                ratio = r.get("ratio_vs_sparseditto_eager")
                goal_text = f"≤ {COMPILED_GOAL:.2f}x eager" + (
                    "" if ratio is None else (" (met)" if ratio <= COMPILED_GOAL else " (not met)"))
                compile_s = r.get("torch_compile_s")
            share = r.get("profile", {}) or {}
            lines.append(
                f"| {K} | {name} | {r['mean_ms']:.2f} / {r['median_ms']:.2f} | "
                f"{'%.2fx' % sp if sp else '–'} | {goal_text} | "
                f"{'%.0f %%' % (100 * share['share']) if share else '–'} | "
                f"{'%.1f' % compile_s if compile_s is not None else ''} | "
                f"{'%.2e' % r['loss_rel_diff_vs_torch'] if 'loss_rel_diff_vs_torch' in r else ''} | "
                f"{r.get('note', '')} |")
    if result.get("loss_check"):
        lines += ["", f"Loss check (SparseDitto vs torch, rtol {result['loss_rtol']}): "
                      f"{result['loss_check']}."]
    lines += ["", f"Command: `{result['command']}`; total wall time {result['wall_s']:.0f} s.", ""]
    (out / "gcn.md").write_text("\n".join(lines))


# ---------------------------------------------------------------- main

def main(argv=None):
    args = parse_args(argv)
    start = time.perf_counter()
    try:
        import torch
    except ImportError:
        print("gcn: PyTorch is not installed", file=sys.stderr)
        return 77
    if not torch.cuda.is_available():
        print("gcn: no CUDA device visible to PyTorch", file=sys.stderr)
        return 77
    try:
        import sparseditto as sd
    except ImportError:  # not installed: the checkout's package (SPARSEDITTO_LIBRARY names the .so)
        sys.path.insert(0, str(HERE.parent / "python"))
        import sparseditto as sd
    from sparseditto import torch as sdt
    torch.backends.cuda.matmul.allow_tf32 = False  # FP32 everywhere: the loss comparison
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda", torch.cuda.current_device())
    TorchSpMM, GCN, PygGCN = make_classes(torch)
    try:
        import torch_geometric
        pyg_version = torch_geometric.__version__
    except ImportError:
        pyg_version = None

    ginfo, (rp, ci, vals), x, y, mask = build_graph(args, torch, dev)
    n = rp.shape[0] - 1
    print(f"gcn: {ginfo['name']}; Â nnz {ginfo['normalized_nnz']}", file=sys.stderr)
    a_t = torch.sparse_csr_tensor(rp.to(torch.int32), ci, vals, (n, n))
    at_t = a_t  # Â is symmetric by construction (checked below by SparseDitto's graph)

    result = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "gpu": torch.cuda.get_device_name(dev),
        "versions": {"torch": torch.__version__, "cuda": torch.version.cuda,
                     "torch_geometric": pyg_version, "sparseditto": sd.version()},
        "graph": ginfo, "features": x.shape[1], "classes": args.classes,
        "epochs": args.epochs, "warmup": args.warmup, "profile_epochs": args.profile_epochs,
        "lr": args.lr, "seed": args.seed, "budget": args.budget, "loss_rtol": args.loss_rtol,
        "command": " ".join([os.path.basename(sys.argv[0])] + (argv if argv is not None
                                                                else sys.argv[1:])),
        "rows": [],
    }
    out = pathlib.Path(args.out)

    graph = None
    if any(b.startswith("sparseditto") for b in args.backends):
        t0 = time.perf_counter()
        m = sd.CSRMatrix(rp.cpu().numpy(), ci.cpu().numpy(), vals.cpu().numpy(), (n, n))
        opts = {} if args.budget is None else {"budget": args.budget}
        graph = sdt.SparseGraph(m, **opts)
        sym = graph.symmetric  # detected once (pattern and values)
        result["sparseditto_prep_s"] = round(time.perf_counter() - t0, 3)
        result["sparseditto_symmetric"] = sym
        if not sym:
            at_t = a_t.t().to_sparse_csr()

    edge_index = None
    if "pyg" in args.backends and pyg_version is not None:
        rows = torch.repeat_interleave(torch.arange(n, device=dev), rp[1:] - rp[:-1])
        cols = ci.to(torch.int64)
        off = rows != cols  # A without the self loops GCNConv adds back
        edge_index = torch.stack([rows[off], cols[off]])
        del rows, cols, off

    gen = torch.Generator(device=dev)
    failed_loss, errors = [], []
    for K in args.hidden:
        gen.manual_seed(args.seed + 100 + K)
        f, c = x.shape[1], args.classes
        init = {"w1": torch.randn(f, K, device=dev, generator=gen) * math.sqrt(2.0 / (f + K)),
                "b1": torch.zeros(K, device=dev),
                "w2": torch.randn(K, c, device=dev, generator=gen) * math.sqrt(2.0 / (K + c)),
                "b2": torch.zeros(c, device=dev)}
        row = {"K": K, "backends": {}}
        result["rows"].append(row)
        losses = {}
        for name in args.backends:
            if args.time_limit is not None and time.perf_counter() - start > args.time_limit:
                row["backends"][name] = {"skipped": f"--time-limit {args.time_limit:.0f} s reached"}
                continue
            rec = Recorder(torch)
            r = {}
            model = opt = None
            try:
                if name == "torch":
                    model = GCN(lambda h: TorchSpMM.apply(a_t, at_t, h), init, rec)
                elif name in ("sparseditto", "sparseditto-compiled"):
                    t0 = time.perf_counter()
                    graph.prepare(K, dev.index)  # compile (or cache hit) before timing
                    r["compile_s"] = round(time.perf_counter() - t0, 3)
                    kern = graph.kernels()[(dev.index, K, False)]
                    try:
                        d = kern.describe()
                        plan = d.get("plan") or {}
                        r["kernel"] = {"from_cache": d.get("from_cache"),
                                       "family": plan.get("family"),
                                       "config": plan.get("config")}
                        r["note"] = (f"{plan.get('family')}"
                                     f"{' (cache hit)' if d.get('from_cache') else ''}")
                    except sd.SparseDittoError as e:
                        r["kernel"] = {"describe_error": str(e)}
                    if name == "sparseditto":
                        model = GCN(lambda h: sdt.SpMM.apply(graph, h), init, rec)
                    else:
                        model, secs = compile_model(
                            torch, GCN(sdt.GCNAggregation(graph), init, None), x, y, mask)
                        r["torch_compile_s"] = round(secs, 3)
                else:
                    if pyg_version is None:
                        row["backends"][name] = {"skipped": "torch_geometric is not installed"}
                        continue
                    if name == "pyg":
                        free, _ = torch.cuda.mem_get_info(dev)
                        need = 2 * edge_index.shape[1] * max(K, c) * 4
                        if need > free:
                            row["backends"][name] = {
                                "skipped": f"edge_index messages need about {need / 2**30:.0f} "
                                           f"GiB (E x {max(K, c)} floats, twice), "
                                           f"{free / 2**30:.0f} GiB free"}
                            continue
                        model = PygGCN(edge_index, init, rec, normalize=True)
                    else:
                        model = PygGCN(a_t, init, rec, normalize=False)
                ms, curve, opt = train(torch, model, x, y, mask, args.lr, args.warmup,
                                       args.epochs)
                r.update(stats(ms))
                r["loss_first"], r["loss_last"] = curve[0], curve[-1]
                r["losses"] = curve
                losses[name] = curve
                r["profile"] = (None if name == "sparseditto-compiled" else
                                profile_share(torch, model, opt, rec, x, y, mask,
                                              args.profile_epochs))
                if name == "pyg":
                    r["note"] = "GCNConv(cached=True), edge_index"
                elif name == "pyg-adj":
                    r["note"] = "GCNConv(normalize=False), torch sparse CSR adj_t"
            except torch.cuda.OutOfMemoryError as e:
                r = {"error": f"out of GPU memory: {str(e).splitlines()[0]}"}
            except Exception as e:  # keep measuring the others; reported and exit 1
                r = {"error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"}
                errors.append(f"K={K} {name}")
            finally:
                del model, opt
                gc.collect()
                torch.cuda.empty_cache()
            row["backends"][name] = r
            print(f"gcn: K={K} {name}: " + (f"{r['mean_ms']:.2f} ms/epoch" if "mean_ms" in r
                                           else r.get("error", "")), file=sys.stderr)
        base = row["backends"].get("torch", {}).get("mean_ms")
        for name, r in row["backends"].items():
            if "mean_ms" in r and base:
                r["speedup_vs_torch"] = base / r["mean_ms"]
            if name != "torch" and name in losses and "torch" in losses:
                r["loss_rel_diff_vs_torch"] = max_rel_diff(losses[name], losses["torch"])
        sdr = row["backends"].get("sparseditto", {})
        sdc = row["backends"].get("sparseditto-compiled", {})
        if "mean_ms" in sdc:
            extra = "fullgraph"
            if "mean_ms" in sdr:
                sdc["ratio_vs_sparseditto_eager"] = sdc["mean_ms"] / sdr["mean_ms"]
                extra += f", {sdc['ratio_vs_sparseditto_eager']:.3f}x the eager epoch"
            sdc["note"] = "; ".join(filter(None, [sdc.get("note"), extra]))
        if "loss_rel_diff_vs_torch" in sdr and sdr["loss_rel_diff_vs_torch"] > args.loss_rtol:
            failed_loss.append(K)
        if "loss_rel_diff_vs_torch" in sdc and sdc["loss_rel_diff_vs_torch"] > args.loss_rtol:
            failed_loss.append(f"{K} (compiled)")
        if graph is not None:
            graph.close()  # the kernels of this K are no longer needed
        result["wall_s"] = time.perf_counter() - start
        if failed_loss:
            result["loss_check"] = f"FAILED at K = {failed_loss}"
        elif "torch" in args.backends and any(b.startswith("sparseditto") for b in args.backends):
            result["loss_check"] = "passed"
        write_report(out, result)  # after every K: a time-out keeps what was measured
    print(f"gcn: wrote {out / 'gcn.json'} and {out / 'gcn.md'} in "
          f"{time.perf_counter() - start:.0f} s", file=sys.stderr)
    print((out / "gcn.md").read_text())
    if errors:
        print(f"gcn: errors in {errors}", file=sys.stderr)
    return 1 if failed_loss or errors else 0


if __name__ == "__main__":
    sys.exit(main())
