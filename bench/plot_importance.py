#!/usr/bin/env python3
"""bench/plot_importance.py: heat-map of the energy model's permutation importance (the
importance.json that `sparseditto evalmodel --importance N --out DIR` writes): features ×
operators, colour = regret increase (%) when the feature is shuffled. Writes
OUT_DIR/importance.png and .svg. Needs matplotlib.

usage: plot_importance.py IMPORTANCE.json OUT_DIR"""
import json
import os
import sys


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_importance: matplotlib is not installed", file=sys.stderr)
        return 77
    with open(sys.argv[1]) as f:
        imp = json.load(f)
    ops = list(imp["operators"])
    names = [x["name"] for x in imp["operators"][ops[0]]["features"]]
    grid = [[imp["operators"][op]["features"][i]["regret_increase_pct"] for op in ops]
            for i in range(len(names))]
    vmax = max(1e-9, max(abs(v) for row in grid for v in row))
    fig, ax = plt.subplots(figsize=(4.8, 0.26 * len(names) + 1.6))
    im = ax.imshow(grid, cmap="RdBu_r", vmin=-vmax, vmax=vmax, aspect="auto")
    ax.set_xticks(range(len(ops)), [f"{op}\n({imp['operators'][op]['tasks']} tasks)" for op in ops])
    ax.set_yticks(range(len(names)), names, fontsize=7)
    for i, row in enumerate(grid):
        for j, v in enumerate(row):
            ax.text(j, i, f"{v:.1f}", ha="center", va="center", fontsize=6)
    fig.colorbar(im, ax=ax, label="regret increase when shuffled (%)")
    ax.set_title(f"Energy model: permutation importance ({imp['repeats']} shuffles)", fontsize=9)
    fig.tight_layout()
    os.makedirs(sys.argv[2], exist_ok=True)
    for ext in ("png", "svg"):
        fig.savefig(os.path.join(sys.argv[2], f"importance.{ext}"), dpi=150)
    print(f"plot_importance: wrote {sys.argv[2]}/importance.png and .svg")
    return 0


if __name__ == "__main__":
    sys.exit(main())
