#!/usr/bin/env python3
# bench/pyg_layers.py: epoch time of two-layer GCN and GraphSAGE models with PyG's layers, sparseditto.pyg's layers and torch.sparse.
"""Full-batch training epochs (forward, backward, Adam step) of a two-layer model,
conv1(F → K), relu, conv2(K → C), cross-entropy over all nodes, for K in --hidden and
three implementations of the same layers with the same initial weights:

  pyg          torch_geometric.nn.GCNConv(cached=True) / SAGEConv(aggr="mean") on
               edge_index: gather/scatter messages, E x width floats per layer; a run that
               does not fit is recorded as out of memory.
  sparseditto  sparseditto.pyg.GCNConv(cached=True) / SAGEConv on the same edge_index:
               the matrix built once, SpMM on kernels compiled for it.
  torch        the same sparseditto.pyg layers with engine="torch": torch.sparse.mm
               (cuSPARSE) on the same normalised CSR matrix, the transpose precomputed.

The graph: PyG's Reddit when --data names a directory holding it (nothing is
downloaded), else a generated heavy-tailed graph of Reddit's size (232,965 nodes,
114,615,892 directed edges by default; sparseditto.graphs.powerlaw_graph on the GPU),
labelled as generated. Features and labels are random (seeded).

Timing per (model, K, backend): a setup pass (the first forward and backward: the
matrix is built and kernels compiled or found in the cache), wall-clock; then --warmup
and --epochs epochs, each between two CUDA events; mean, median and min of the timed
epochs. compile_s, apart: the seconds sparseditto's graphs spent obtaining kernels.
Loss diff: the largest relative difference of the per-epoch losses from the torch
backend's (all start from the same weights).

Quick test:  python bench/pyg_layers.py --nodes 20000 --epochs 5 --warmup 2 --hidden 8,32 --out /tmp/pyg
Full run:    python bench/pyg_layers.py --out bench/results/pyg
"""
import argparse
import datetime
import gc
import importlib.util
import json
import os
import pathlib
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent
BACKENDS = ("pyg", "sparseditto", "torch")
MODELS = ("gcn", "sage")


def load_gcn_example():
    """examples/gcn.py as a module (its graph loader, training loop and statistics)."""
    spec = importlib.util.spec_from_file_location("sd_example_gcn", REPO / "examples" / "gcn.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", help="directory of PyG's Reddit dataset (used when present)")
    p.add_argument("--nodes", type=int, default=None, help="generated graph: nodes (232965)")
    p.add_argument("--edges", type=int, default=None,
                   help="generated graph: directed edges (default: Reddit's mean degree)")
    p.add_argument("--features", type=int, default=602, help="input width F (602)")
    p.add_argument("--classes", type=int, default=41, help="classes C (41)")
    p.add_argument("--hidden", default="8,32,128,256", help="hidden widths K, comma-separated")
    p.add_argument("--models", default="gcn,sage", help="comma-separated subset of gcn, sage")
    p.add_argument("--backends", default="pyg,sparseditto,torch",
                   help="comma-separated subset of pyg, sparseditto, torch")
    p.add_argument("--epochs", type=int, default=20, help="timed epochs (20)")
    p.add_argument("--warmup", type=int, default=5, help="warm-up epochs after setup (5)")
    p.add_argument("--budget", type=int, default=None, help="SparseDitto search budget")
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--loss-rtol", type=float, default=1e-3,
                   help="largest accepted relative loss difference sparseditto vs torch")
    p.add_argument("--time-limit", type=float, default=None,
                   help="seconds: start no new run after this (results so far are kept)")
    p.add_argument("--out", default="pyg-layers-out", help="directory for pyg_layers.{json,md}")
    a = p.parse_args(argv)
    try:
        a.hidden = [int(k) for k in a.hidden.split(",") if k.strip()]
    except ValueError:
        p.error(f"--hidden: expected comma-separated integers, got {a.hidden!r}")
    if not a.hidden or any(k < 1 for k in a.hidden):
        p.error("--hidden: widths must be positive")
    for name, allowed in (("models", MODELS), ("backends", BACKENDS)):
        vals = [v.strip() for v in getattr(a, name).split(",") if v.strip()]
        bad = [v for v in vals if v not in allowed]
        if bad or not vals:
            p.error(f"--{name}: unknown {bad}; choose from {', '.join(allowed)}")
        setattr(a, name, vals)
    for name in ("epochs", "features", "classes"):
        if getattr(a, name) < 1:
            p.error(f"--{name} must be at least 1")
    if a.warmup < 0:
        p.error("--warmup must be >= 0")
    if a.nodes is not None and a.nodes < 2:
        p.error("--nodes must be at least 2")
    return a


def build_graph(args, torch, dev, ex):
    """(info, edge_index (2, E) int64, x, y): the real Reddit graph or a generated one."""
    from sparseditto import graphs
    info, got = {}, None
    if args.data:
        got, why = ex.load_reddit(args.data, torch, dev)
        if got is None:
            print(f"pyg_layers: the real Reddit graph is not available: {why}; using a "
                  "generated graph", file=sys.stderr)
            info["real_graph_unavailable"] = why
    if got is not None:
        rowptr, colind, x, y, _mask = got
        n = rowptr.shape[0] - 1
        info.update(source="real", generated=False,
                    name="Reddit (PyG torch_geometric.datasets.Reddit, self loops removed)")
    else:
        n = args.nodes or graphs.REDDIT["nodes"]
        e = args.edges if args.edges is not None else ex.default_edges(n)
        t0 = time.perf_counter()
        rowptr, colind = graphs.powerlaw_graph(n, e, seed=args.seed, device=dev)
        size = ("of Reddit's size" if n == graphs.REDDIT["nodes"]
                else f"of Reddit's mean degree ({n} of Reddit's {graphs.REDDIT['nodes']} nodes)")
        torch.cuda.synchronize()
        info.update(source="generated", generated=True, generation_s=round(time.perf_counter() - t0, 3),
                    name=f"GENERATED power-law graph {size} ({n} nodes, {e} directed "
                         "edges), NOT the real Reddit graph")
        g = torch.Generator(device=dev)
        g.manual_seed(args.seed + 1)
        x = torch.randn(n, args.features, device=dev, generator=g)
        y = torch.randint(0, args.classes, (n,), device=dev, generator=g)
    rows = torch.repeat_interleave(torch.arange(n, device=dev), rowptr.diff())
    edge_index = torch.stack([colind.long(), rows])  # source = column, target = row
    info["adjacency_stats"] = graphs.degree_stats(rowptr)
    info["edges"] = int(edge_index.shape[1])
    return info, edge_index, x, y


def make_model(torch, kind, backend, f, k, c, edge_index, init, opts):
    """The two-layer model; init is the PyG model's state_dict (or None: seeded init)."""
    from sparseditto import pyg as sdp

    class Net(torch.nn.Module):
        def __init__(self, conv1, conv2):
            super().__init__()
            self.conv1, self.conv2 = conv1, conv2

        def forward(self, x):
            h = torch.relu(self.conv1(x, edge_index))
            return self.conv2(h, edge_index)

    if backend == "pyg":
        from torch_geometric.nn import GCNConv, SAGEConv
        extra = {}
    else:
        GCNConv, SAGEConv = sdp.GCNConv, sdp.SAGEConv
        extra = {"engine": "torch" if backend == "torch" else "sparseditto",
                 "compile_options": opts}
    if kind == "gcn":
        net = Net(GCNConv(f, k, cached=True, **extra), GCNConv(k, c, cached=True, **extra))
    else:
        net = Net(SAGEConv(f, k, **extra), SAGEConv(k, c, **extra))
    if init is not None:
        net.load_state_dict(init)
    return net.to(edge_index.device)


def sparseditto_details(net):
    """compile seconds and kernel families of the sparseditto layers' graphs."""
    seen, secs, fams = set(), 0.0, []
    for conv in (net.conv1, net.conv2):
        adj = getattr(conv, "adjacency", None)
        if adj is None or id(adj) in seen:
            continue
        seen.add(id(adj))
        secs += adj.compile_seconds
        for (_, K, transposed), kern in sorted(adj.sparse_graph().kernels().items()):
            try:
                plan = kern.describe().get("plan") or {}
                fams.append(f"K={K}{'ᵀ' if transposed else ''}:{plan.get('family')}")
            except Exception as e:  # describe is informative only
                fams.append(f"K={K}: describe failed ({type(e).__name__})")
    return round(secs, 3), fams


def run_one(torch, ex, args, kind, backend, K, edge_index, x, y, init, opts):
    from sparseditto import pyg as sdp
    F = torch.nn.functional
    sdp.clear_cache()  # every run builds its own matrix (part of its setup time)
    net = make_model(torch, kind, backend, x.shape[1], K, args.classes, edge_index, init, opts)
    r = {}
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    F.cross_entropy(net(x), y).backward()  # setup: matrices, kernels, PyG's cache
    torch.cuda.synchronize()
    r["setup_s"] = round(time.perf_counter() - t0, 3)
    net.zero_grad(set_to_none=True)
    if backend == "sparseditto":
        r["compile_s"], r["kernels"] = sparseditto_details(net)
    ms, losses, opt = ex.train(torch, net, x, y, None, args.lr, args.warmup, args.epochs)
    r.update(ex.stats(ms))
    r["losses"] = losses
    del net, opt
    return r


def write_report(out, result):
    out.mkdir(parents=True, exist_ok=True)
    (out / "pyg_layers.json").write_text(json.dumps(result, indent=2) + "\n")
    g = result["graph"]
    s = g["adjacency_stats"]
    lines = [
        "# PyG layers: epoch time of PyG's GCNConv / SAGEConv, sparseditto.pyg and torch.sparse",
        "",
        f"Date {result['date']}; GPU {result['gpu']}; torch {result['versions']['torch']}, "
        f"torch_geometric {result['versions'].get('torch_geometric') or 'not installed'}, "
        f"sparseditto {result['versions']['sparseditto']}.",
        "",
        f"Graph: **{g['name']}**; {g['edges']} edges (degrees: mean {s['mean']:.1f}, median "
        f"{s['median']:.0f}, max {s['max']}). Model: conv1({result['features']} → K), relu, "
        f"conv2(K → {result['classes']}), cross-entropy, Adam lr {result['lr']}.",
        "",
        f"Epoch = forward + backward + Adam step; mean / median of {result['epochs']} epochs "
        f"after a setup pass and {result['warmup']} warm-up epochs, CUDA events. Setup s: the "
        "first forward + backward (matrix built, kernels compiled or found in the cache); "
        "compile s: sparseditto's share of it. pyg: GCNConv(cached=True) / SAGEConv(mean) on "
        "edge_index; sparseditto: sparseditto.pyg layers; torch: the same layers with "
        "engine='torch' (torch.sparse.mm, cuSPARSE). Loss diff: max relative per-epoch loss "
        "difference from torch.",
        "",
        "| model | K | backend | epoch ms (mean / median) | vs pyg | vs torch | setup s | "
        "compile s | loss diff | note |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in result["rows"]:
        for name, r in row["backends"].items():
            head = f"| {row['model']} | {row['K']} | {name} |"
            if "mean_ms" not in r:
                lines.append(f"{head} – | – | – | – | – | – | {r.get('skipped') or r.get('error')} |")
                continue
            vp, vt = r.get("speedup_vs_pyg"), r.get("speedup_vs_torch")
            lines.append(
                f"{head} {r['mean_ms']:.2f} / {r['median_ms']:.2f} | "
                f"{'%.2fx' % vp if vp else '–'} | {'%.2fx' % vt if vt else '–'} | "
                f"{r['setup_s']:.1f} | {'%.1f' % r['compile_s'] if 'compile_s' in r else ''} | "
                f"{'%.1e' % r['loss_rel_diff_vs_torch'] if 'loss_rel_diff_vs_torch' in r else ''} | "
                f"{', '.join(r.get('kernels', []))} |")
    if result.get("loss_check"):
        lines += ["", f"Loss check (sparseditto vs torch, rtol {result['loss_rtol']}): "
                      f"{result['loss_check']}."]
    lines += ["", f"Command: `{result['command']}`; total wall time {result['wall_s']:.0f} s.", ""]
    (out / "pyg_layers.md").write_text("\n".join(lines))


def main(argv=None):
    args = parse_args(argv)
    start = time.perf_counter()
    try:
        import torch
    except ImportError:
        print("pyg_layers: PyTorch is not installed", file=sys.stderr)
        return 77
    if not torch.cuda.is_available():
        print("pyg_layers: no CUDA device visible to PyTorch", file=sys.stderr)
        return 77
    try:
        import sparseditto as sd
    except ImportError:  # the checkout's package (SPARSEDITTO_LIBRARY names the .so)
        sys.path.insert(0, str(REPO / "python"))
        import sparseditto as sd
    try:
        import torch_geometric
        pyg_version = torch_geometric.__version__
    except ImportError:
        pyg_version = None
    ex = load_gcn_example()
    torch.backends.cuda.matmul.allow_tf32 = False  # FP32 everywhere: the loss comparison
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda", torch.cuda.current_device())
    info, edge_index, x, y = build_graph(args, torch, dev, ex)
    print(f"pyg_layers: {info['name']}", file=sys.stderr)
    opts = {} if args.budget is None else {"budget": args.budget}
    result = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "gpu": torch.cuda.get_device_name(dev),
        "versions": {"torch": torch.__version__, "cuda": torch.version.cuda,
                     "torch_geometric": pyg_version, "sparseditto": sd.version()},
        "graph": info, "features": int(x.shape[1]), "classes": args.classes,
        "epochs": args.epochs, "warmup": args.warmup, "lr": args.lr, "seed": args.seed,
        "budget": args.budget, "loss_rtol": args.loss_rtol,
        "command": " ".join([os.path.basename(sys.argv[0])] + (argv if argv is not None
                                                                else sys.argv[1:])),
        "rows": [],
    }
    out = pathlib.Path(args.out)
    errors, failed_loss = [], []
    for kind in args.models:
        for K in args.hidden:
            row = {"model": kind, "K": K, "backends": {}}
            result["rows"].append(row)
            init = None
            if pyg_version is not None:  # the PyG model's initial weights serve all backends
                torch.manual_seed(args.seed)
                init = make_model(torch, kind, "pyg", x.shape[1], K, args.classes, edge_index,
                                  None, opts).state_dict()
            else:
                torch.manual_seed(args.seed)
                init = make_model(torch, kind, "torch", x.shape[1], K, args.classes, edge_index,
                                  None, opts).state_dict()
            for name in args.backends:
                if args.time_limit is not None and time.perf_counter() - start > args.time_limit:
                    row["backends"][name] = {"skipped": "time limit reached"}
                    continue
                if name == "pyg" and pyg_version is None:
                    row["backends"][name] = {"skipped": "torch_geometric is not installed"}
                    continue
                try:
                    r = run_one(torch, ex, args, kind, name, K, edge_index, x, y, init, opts)
                except torch.cuda.OutOfMemoryError as e:
                    r = {"error": f"out of GPU memory: {str(e).splitlines()[0]}"}
                except Exception as e:  # keep measuring the others; reported, exit 1
                    r = {"error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"}
                    errors.append(f"{kind} K={K} {name}")
                finally:
                    gc.collect()
                    torch.cuda.empty_cache()
                row["backends"][name] = r
                print(f"pyg_layers: {kind} K={K} {name}: "
                      + (f"{r['mean_ms']:.2f} ms/epoch" if "mean_ms" in r else r.get("error", "")),
                      file=sys.stderr)
            ref = row["backends"].get("torch", {})
            base_pyg = row["backends"].get("pyg", {}).get("mean_ms")
            for name, r in row["backends"].items():
                if "mean_ms" not in r:
                    continue
                if base_pyg:
                    r["speedup_vs_pyg"] = base_pyg / r["mean_ms"]
                if ref.get("mean_ms"):
                    r["speedup_vs_torch"] = ref["mean_ms"] / r["mean_ms"]
                if name != "torch" and "losses" in ref:
                    r["loss_rel_diff_vs_torch"] = ex.max_rel_diff(r["losses"], ref["losses"])
            sdr = row["backends"].get("sparseditto", {})
            if sdr.get("loss_rel_diff_vs_torch", 0.0) > args.loss_rtol:
                failed_loss.append(f"{kind} K={K}")
            result["wall_s"] = time.perf_counter() - start
            if failed_loss:
                result["loss_check"] = f"FAILED at {failed_loss}"
            elif "torch" in args.backends and "sparseditto" in args.backends:
                result["loss_check"] = "passed"
            write_report(out, result)  # after every row: a time-out keeps what was measured
    result["wall_s"] = time.perf_counter() - start
    write_report(out, result)
    print(f"pyg_layers: wrote {out / 'pyg_layers.json'} and {out / 'pyg_layers.md'}",
          file=sys.stderr)
    print((out / "pyg_layers.md").read_text())
    if errors:
        print(f"pyg_layers: errors in {errors}", file=sys.stderr)
    return 1 if failed_loss or errors else 0


if __name__ == "__main__":
    sys.exit(main())
