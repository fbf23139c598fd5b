#!/usr/bin/env python3
"""bench/breakeven.py: how many calls of a compiled kernel repay its compile time against
cuSPARSE, per operator and size band, from bench_compile JSON files (the per-task records
of `sparseditto bench`; a task measured again by a later file counts once, as in
summarize_compile.py).

A task's break-even count is compile_s / (cuSPARSE time - our time) per execution (and
pipelined): the calls after which the compile has paid for itself. A task whose compiled
kernel runs cuSPARSE (cuSPARSE was faster) saves nothing and never repays its compile; it is
counted apart. A later process that finds the kernel in the disk cache pays only the
cache-hit time, so its break-even count is given too. Standard library only.

usage: breakeven.py OUT.md OUT.json SET=IN.json[.gz] [SET=IN.json[.gz] ...]"""
import json
import os
import statistics
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside the committed scripts
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from summarize_compile import latest_tasks, load_json  # noqa: E402  (one reader, one merge rule)

OPS = [("spmv", ["spmv"]), ("spmm", ["spmm8", "spmm32", "spmm128", "spmm256"]),
       ("spgemm", ["spgemm"])]
BANDS = [("< 10^5", 0, 1e5), ("10^5 - 10^6", 1e5, 1e6), ("10^6 - 10^7", 1e6, 1e7),
         (">= 10^7", 1e7, float("inf"))]


def calls(cost_s, ours_us, theirs_us):
    """Calls that repay cost_s at a saving of theirs - ours per call; None when nothing is saved."""
    saved = (theirs_us - ours_us) * 1e-6
    return cost_s / saved if saved > 0 else None


def rows_for(tasks):
    out = []
    for op, names in OPS:
        for band, lo, hi in BANDS:
            ts = [t for t in tasks if t["task"] in names and lo <= t["nnz"] < hi
                  and t.get("cusparse_us") and t.get("ours_us")]
            if not ts:
                continue
            won = [t for t in ts if not t["vendor_won"]]
            be = [calls(t["compile_s"], t["ours_us"], t["cusparse_us"]) for t in won]
            bp = [calls(t["compile_s"], t["ours_pipelined_us"], t["cusparse_pipelined_us"])
                  for t in won if t.get("ours_pipelined_us") and t.get("cusparse_pipelined_us")]
            bh = [calls(t["cache_hit_s"], t["ours_us"], t["cusparse_us"]) for t in won]
            be, bp, bh = ([x for x in xs if x is not None] for xs in (be, bp, bh))
            out.append({
                "op": op, "band": band, "tasks": len(ts), "won": len(won),
                "compile_median_s": statistics.median(t["compile_s"] for t in ts),
                "calls_median": statistics.median(be) if be else None,
                "calls_max": max(be) if be else None,
                "calls_pipelined_median": statistics.median(bp) if bp else None,
                "calls_cache_hit_median": statistics.median(bh) if bh else None,
            })
    return out


def fmt(x):
    if x is None:
        return "-"
    if x >= 1e6:
        return "%.1fM" % (x / 1e6)
    if x >= 1e4:
        return "%.0fk" % (x / 1e3)
    return "%.0f" % x


def main():
    if len(sys.argv) < 4 or any("=" not in a for a in sys.argv[3:]):
        sys.exit("usage: " + __doc__.split("usage: ")[1])
    out_md, out_json = sys.argv[1], sys.argv[2]
    result = {}
    lines = ["# Break-even: calls that repay a compile", "",
             "Per operator and size band (nonzeros of A): the compile time (cache miss, median "
             "over the band's tasks) and the calls of the compiled kernel after which it has paid "
             "for itself against the best cuSPARSE variant, compile_s / (cuSPARSE time - our "
             "time), median and max over the tasks our own plans won (per execution), the median "
             "pipelined, and the median when a later process finds the kernel in the disk cache. "
             "Tasks where cuSPARSE stayed faster run cuSPARSE and never repay a compile: "
             "'won' counts the others.", ""]
    for arg in sys.argv[3:]:
        name, paths = arg.split("=", 1)
        runs = [load_json(p) for p in paths.split(",")]
        tasks, _ = latest_tasks(runs)
        rows = rows_for(tasks)
        result[name] = {"runs": paths.split(","), "rows": rows}
        lines += ["## %s (%s)" % (name, ", ".join(paths.split(","))), "",
                  "| op | nonzeros | tasks | won | compile median s | calls median | calls max "
                  "| pipelined median | from disk cache median |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for r in rows:
            lines.append("| %s | %s | %d | %d | %.2f | %s | %s | %s | %s |" % (
                r["op"], r["band"], r["tasks"], r["won"], r["compile_median_s"],
                fmt(r["calls_median"]), fmt(r["calls_max"]), fmt(r["calls_pipelined_median"]),
                fmt(r["calls_cache_hit_median"])))
        lines.append("")
    open(out_md, "w").write("\n".join(lines))
    with open(out_json, "w") as f:
        json.dump(result, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
