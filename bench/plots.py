#!/usr/bin/env python3
"""bench/plots.py: plots of bench_compile JSON files (runs that continue one set with
--from are merged, a task measured again by a later file counted once, as
summarize_compile.py does) into PNG (and SVG too with --svg):
  speedup_geomean   geomean speed-up per task, 95 % bootstrap CI, per execution and
                    pipelined, with the SparseDitto paper's H200 figures as markers
  speedup_matrices  per-matrix speed-ups per task on a log scale, cuSPARSE = 1.0 line
  roofline          the winner's roofline fraction per task against nnz
  compile_time      compile time (cache miss) per task with the 10 s / 60 s goals, and
                    the cache-hit time
Needs matplotlib (imported lazily: exit 3 with a message when it is missing).

usage: plots.py [--svg] OUT_DIR IN.json[.gz] [IN.json[.gz] ...]"""
import os
import statistics
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside the committed scripts
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from summarize_compile import geomean_ci, latest_tasks, load_json  # noqa: E402  (one bootstrap, one reader)

TASKS = ["spmv", "spmm8", "spmm32", "spmm128", "spmm256", "spgemm"]
# SparseDitto paper, H200, geomean over cuSPARSE: SpMV, SpMM K = 8/32/128/256, SpGEMM,
# overall.
PAPER = {"spmv": 2.68, "spmm8": 4.18, "spmm32": 2.81, "spmm128": 1.96, "spmm256": 1.87,
         "spgemm": 4.09, "all": 2.79}
OUTS = ["speedup_geomean", "speedup_matrices", "roofline", "compile_time"]


def load(paths):
    runs = [load_json(p) for p in paths]
    tasks, _ = latest_tasks(runs)  # a task measured again counts once, the later record
    if not tasks:
        sys.exit("plots.py: no task with status ok in %s" % ", ".join(paths))
    return runs[0], tasks


def short(name):
    """Generator family or real matrix name: 'banded:n=200000,bw=8' -> 'banded'."""
    return name.split(":")[0] if not name.startswith("twin:") else name[5:]


def jitter(i, n, width=0.25):
    """Deterministic horizontal spread of the i-th of n points."""
    return 0.0 if n < 2 else -width + 2 * width * i / (n - 1)


def log_ticks(ax, ys):
    """Log y axis with plain-number ticks covering ys and 1.0."""
    from matplotlib.ticker import FixedLocator, NullLocator, ScalarFormatter
    ax.set_yscale("log")
    lo, hi = min(min(ys), 1.0) / 1.15, max(ys) * 1.15
    ax.set_ylim(lo, hi)
    ticks = [v for v in (0.5, 0.7, 0.8, 1, 1.5, 2, 3, 4, 6, 8, 12, 16, 24, 32) if lo <= v <= hi]
    ax.yaxis.set_major_locator(FixedLocator(ticks))
    ax.yaxis.set_major_formatter(ScalarFormatter())
    ax.yaxis.set_minor_locator(NullLocator())
    ax.grid(True, axis="y", alpha=0.3)


def plot_geomean(plt, head, tasks):
    names = [t for t in TASKS if any(x["task"] == t for x in tasks)] + ["all"]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    bars = [("speedup", "ours, per execution", "tab:blue"),
            ("speedup_pipelined", "ours, pipelined", "tab:cyan")]
    # Runs that measured it also carry the second baseline (cuSPARSE captured into a graph
    # by its caller): a third bar, over the tasks that have it.
    if any(t.get("speedup_vs_graph") is not None for t in tasks):
        bars.append(("speedup_vs_graph", "ours vs cuSPARSE in a graph (tasks that measured it)", "tab:gray"))
    w = 0.72 / len(bars)
    for j, (key, label, colour) in enumerate(bars):
        g, lo, hi, xs = [], [], [], []
        for i, n in enumerate(names):
            vals = [t[key] for t in tasks if (n == "all" or t["task"] == n) and t.get(key) is not None]
            if not vals:
                continue
            c = geomean_ci(vals)
            g.append(c[0]), lo.append(c[0] - c[1]), hi.append(c[2] - c[0])
            xs.append(i + (j - (len(bars) - 1) / 2) * w)
        ax.bar(xs, g, w, yerr=[lo, hi], capsize=3, color=colour, label=label)
        for x, v in zip(xs, g):
            ax.text(x, 0.05, "%.2f" % v, ha="center", va="bottom", fontsize=8 if len(bars) < 3 else 6.5)
    ax.plot(range(len(names)), [PAPER[n] for n in names], "D", color="tab:red",
            label="paper (H200)")
    ax.axhline(1.0, color="black", lw=0.8, ls="--")
    counts = ["%s\n(%d)" % (n, sum(1 for t in tasks if n == "all" or t["task"] == n)) for n in names]
    ax.set_xticks(range(len(names)), counts)
    ax.set_ylabel("geomean speed-up over best cuSPARSE (x)")
    ax.set_title("sd_compile vs cuSPARSE, %s, set %s: geomean with 95 %% bootstrap CI"
                 % (head["gpu"], head["set"]), fontsize=10)
    ax.legend(loc="upper left" if len(bars) > 2 else "upper right", fontsize=8)
    ax.set_ylim(0, max(6.0 if len(bars) > 2 else 5.0, ax.get_ylim()[1]))  # room for the legend
    return fig


def plot_matrices(plt, head, tasks):
    mats = list(dict.fromkeys(t["matrix"] for t in tasks))
    fig, ax = plt.subplots(figsize=(8, 4.5))
    markers = "osD^v<>ph*"
    many = len(mats) > 16  # a legend of every matrix stops being readable: box plots instead
    if many:
        per = [[t["speedup"] for t in tasks if t["task"] == n] for n in TASKS]
        ax.boxplot([v if v else [float("nan")] for v in per], positions=range(len(TASKS)),
                   widths=0.5, showfliers=False, medianprops={"color": "black"})
    for i, m in enumerate(mats):
        pts = [(TASKS.index(t["task"]), t["speedup"]) for t in tasks if t["matrix"] == m]
        ax.plot([x + jitter(i, len(mats)) for x, _ in pts], [y for _, y in pts],
                "o" if many else markers[i % len(markers)], ls="none", alpha=0.45 if many else 0.85,
                ms=3.5 if many else 6, color="tab:blue" if many else None,
                label=None if many else short(m))
    if many:
        ax.plot([], [], "o", color="tab:blue", alpha=0.45, label="one matrix (%d)" % len(mats))
    ax.axhline(1.0, color="black", lw=0.8, ls="--", label="cuSPARSE (1.0)")
    log_ticks(ax, [t["speedup"] for t in tasks])
    ax.set_xticks(range(len(TASKS)), TASKS)
    ax.set_ylabel("speed-up per execution (x, log)")
    ax.set_title("Per-matrix speed-up over best cuSPARSE, %s, set %s" % (head["gpu"], head["set"]),
                 fontsize=10)
    if many:
        ax.legend(loc="upper right", fontsize=8)
    else:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8)
    fig.tight_layout()
    return fig


def plot_roofline(plt, head, tasks):
    fig, ax = plt.subplots(figsize=(8, 4.5))
    markers = "os^Dv"
    for i, name in enumerate(TASKS[:5]):  # SpGEMM has no streaming limit
        ts = [t for t in tasks if t["task"] == name]
        if ts:
            ax.plot([t["nnz"] for t in ts], [100 * t["roofline"] for t in ts],
                    markers[i], ls="none", label=name, alpha=0.85)
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter
    ax.set_xscale("log")
    nz = [t["nnz"] for t in tasks if t["task"] != "spgemm"] or [t["nnz"] for t in tasks]
    ax.set_xlim(min(nz) / 1.3, max(nz) * 1.3)
    ticks = [m * 10 ** e for e in range(2, 10) for m in (1, 2, 5)]
    ax.xaxis.set_major_locator(FixedLocator([v for v in ticks if min(nz) / 1.3 <= v <= max(nz) * 1.3]))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: "%gM" % (v / 1e6) if v >= 1e6 else "%gk" % (v / 1e3)))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_ylim(0, 100)
    ax.set_xlabel("nnz (log)")
    ax.set_ylabel("winner's achieved bandwidth, % of roofline")
    ax.set_title("Roofline fraction of the compiled kernel (CSR streaming limit), %s"
                 % head["gpu"], fontsize=10)
    ax.legend(loc="upper left", fontsize=8)
    ax.grid(True, which="major", alpha=0.3)
    return fig


def plot_compile(plt, head, tasks):
    names = [t for t in TASKS if any(x["task"] == t for x in tasks)]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 4.5))
    for ax, key, title in [(a1, "compile_s", "compile (cache miss)"),
                           (a2, "cache_hit_s", "compile again (cache hit)")]:
        for i, n in enumerate(names):
            ys = [t[key] for t in tasks if t["task"] == n]
            ax.plot([i + jitter(k, len(ys), 0.2) for k in range(len(ys))], ys, "o",
                    color="tab:blue", alpha=0.7, label="per matrix" if i == 0 else None)
            med = statistics.median(ys)
            ax.plot([i - 0.3, i + 0.3], [med, med], color="black", lw=2,
                    label="median" if i == 0 else None)
        ax.set_yscale("log")
        ax.set_xticks(range(len(names)), names, fontsize=8)
        ax.set_ylabel("seconds (log)")
        ax.set_title(title, fontsize=10)
    a1.axhline(10, color="tab:green", ls="--", label="goal median 10 s")
    a1.axhline(60, color="tab:red", ls="--", label="goal max 60 s")
    # A memo hit can compile in under a millisecond (logged as 0.0): keep the log axis positive.
    a1.set_ylim(max(min(t["compile_s"] for t in tasks), 1e-3) / 1.5, 100)
    a1.legend(loc="upper center", bbox_to_anchor=(0.5, -0.08), ncol=4, fontsize=8)
    a2.legend(loc="upper center", bbox_to_anchor=(0.5, -0.08), ncol=2, fontsize=8)
    fig.suptitle("sd_compile time per task, %s, set %s" % (head["gpu"], head["set"]), fontsize=10)
    fig.tight_layout()
    return fig


def main():
    args = sys.argv[1:]
    exts = ("png",)
    if args[:1] == ["--svg"]:  # SVG beside the PNG (vector copies; the committed plots are PNG)
        exts, args = ("png", "svg"), args[1:]
    if len(args) < 2:
        sys.exit("usage: plots.py [--svg] OUT_DIR IN.json[.gz] [IN.json[.gz] ...]")
    out, ins = args[0], args[1:]
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.stderr.write("plots.py: matplotlib is not installed (pip install matplotlib)\n")
        sys.exit(3)
    # Reproducible SVG: no date, fixed ids.
    plt.rcParams["svg.hashsalt"] = "sparseditto"
    head, tasks = load(ins)
    # A SpGEMM product that cuSPARSE could not do has no speed-up (summarize_compile.py
    # counts it apart): left out of the speed-up plots, kept in the compile times.
    rated = [t for t in tasks if t.get("speedup") is not None]
    os.makedirs(out, exist_ok=True)
    for base, fn, ts in zip(OUTS, [plot_geomean, plot_matrices, plot_roofline, plot_compile],
                            [rated, rated, rated, tasks]):
        fig = fn(plt, head, ts)
        for ext in exts:
            p = os.path.join(out, base + "." + ext)
            fig.savefig(p, dpi=80, bbox_inches="tight", metadata={"Date": None} if ext == "svg" else {})
            print(p)
        plt.close(fig)


if __name__ == "__main__":
    main()
