#!/usr/bin/env python3
"""bench/compare_compile.py: two bench_compile JSON files of the same tasks side by side (an
A/B of a switch: the same set run twice in one device call), as markdown: per task group
the geomean speed-up of each run and their ratio (B over A, with a 95 % bootstrap interval
of the paired log ratios, 20 000 resamples, seeded), tasks won, compile time (sum, median,
max) and its stages (NVRTC, measurement); then every task whose winner or compile time
changed much. Tasks present in only one run are counted and left out. Standard library
only.

usage: compare_compile.py A.json[.gz] B.json[.gz] [--names A-NAME B-NAME] [--out FILE.md]"""
import math
import os
import random
import statistics
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside the committed scripts
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from summarize_compile import geomean_ci, load_json  # noqa: E402  (one bootstrap, one reader)

GROUPS = ["spmv", "spmm8", "spmm32", "spmm128", "spmm256", "spgemm", "all"]


def paired_ratio_ci(pairs, seed=1):
    """Geomean of b/a over the pairs and its 95 % bootstrap interval (paired resampling)."""
    logs = [math.log(b / a) for a, b in pairs]
    rng = random.Random(seed)
    means = sorted(sum(rng.choice(logs) for _ in logs) / len(logs) for _ in range(20000))
    return math.exp(sum(logs) / len(logs)), math.exp(means[500]), math.exp(means[19499])


def tasks_of(run):
    """(matrix, task) → record, for the tasks that completed with a speed-up."""
    return {(t["matrix"], t["task"]): t for t in run["tasks"]
            if t.get("status") == "ok" and t.get("speedup") is not None}


def compare(a, b, name_a="A", name_b="B"):
    ta, tb = tasks_of(a), tasks_of(b)
    both = [k for k in ta if k in tb]
    lines = ["# bench_compile: %s vs %s" % (name_a, name_b), ""]
    lines.append("%s: %s, set %s (%d tasks); %s: %s, set %s (%d tasks); %d in both%s." % (
        name_a, a.get("date", "?"), a.get("set", "?"), len(ta), name_b, b.get("date", "?"),
        b.get("set", "?"), len(tb), len(both),
        "" if len(both) == len(ta) == len(tb) else " (the others are left out)"))
    lines.append("")
    lines.append("Ratio = geomean of (%s speed-up / %s speed-up) over the tasks of the group, "
                 "95 %% bootstrap interval of the paired log ratios. Compile: seconds per task "
                 "(cache miss); NVRTC and measurement: the search's stages, seconds summed." % (name_b, name_a))
    lines.append("")
    lines.append("| group | tasks | %s geomean | %s geomean | ratio (CI) | won %s / %s | compile sum s %s / %s | "
                 "median s | max s | NVRTC s | measure s |" % (name_a, name_b, name_a, name_b, name_a, name_b))
    lines.append("|---|---|---|---|---|---|---|---|---|---|---|")
    for g in GROUPS:
        ks = [k for k in both if g == "all" or k[1] == g]
        if not ks:
            continue
        ga, _, _ = geomean_ci([ta[k]["speedup"] for k in ks])
        gb, _, _ = geomean_ci([tb[k]["speedup"] for k in ks])
        r, lo, hi = paired_ratio_ci([(ta[k]["speedup"], tb[k]["speedup"]) for k in ks])
        wa = sum(1 for k in ks if not ta[k]["vendor_won"])
        wb = sum(1 for k in ks if not tb[k]["vendor_won"])
        ca = [ta[k]["compile_s"] for k in ks]
        cb = [tb[k]["compile_s"] for k in ks]

        def stage(t, s):
            return sum(t[k].get("ms", {}).get(s, 0.0) for k in ks) / 1e3

        lines.append("| %s | %d | %.3fx | %.3fx | %.3f (%.3f-%.3f) | %d / %d | %.1f / %.1f | %.2f / %.2f | "
                     "%.1f / %.1f | %.1f / %.1f | %.1f / %.1f |" % (
                         g, len(ks), ga, gb, r, lo, hi, wa, wb, sum(ca), sum(cb), statistics.median(ca),
                         statistics.median(cb), max(ca), max(cb), stage(ta, "nvrtc"), stage(tb, "nvrtc"),
                         stage(ta, "measure"), stage(tb, "measure")))
    changed = [k for k in both if ta[k]["config"] != tb[k]["config"]]
    lines.append("")
    lines.append("%d of %d tasks changed their winner's configuration; those that moved by more "
                 "than 5 %% or whose compile time changed by more than a third:" % (len(changed), len(both)))
    lines.append("")
    lines.append("| matrix | task | %s winner | %s winner | %s speed-up | %s speed-up | compile s %s / %s |"
                 % (name_a, name_b, name_a, name_b, name_a, name_b))
    lines.append("|---|---|---|---|---|---|---|")
    for k in both:
        x, y = ta[k], tb[k]
        moved = abs(math.log(y["speedup"] / x["speedup"])) > math.log(1.05)
        slow = x["compile_s"] > 0 and abs(math.log(max(y["compile_s"], 1e-3) / x["compile_s"])) > math.log(1.5)
        if (x["config"] != y["config"] and moved) or slow:
            lines.append("| %s | %s | %s | %s | %.2fx | %.2fx | %.1f / %.1f |" % (
                k[0], k[1], x["winner"], y["winner"], x["speedup"], y["speedup"], x["compile_s"],
                y["compile_s"]))
    return "\n".join(lines) + "\n"


def main(argv):
    args = argv[1:]
    out, names = None, ["A", "B"]
    files = []
    i = 0
    while i < len(args):
        if args[i] == "--out" and i + 1 < len(args):
            out = args[i + 1]
            i += 2
        elif args[i] == "--names" and i + 2 < len(args):
            names = [args[i + 1], args[i + 2]]
            i += 3
        elif args[i].startswith("--"):
            sys.stderr.write("compare_compile.py: unknown option %s\n%s\n" % (args[i], __doc__))
            return 2
        else:
            files.append(args[i])
            i += 1
    if len(files) != 2:
        sys.stderr.write(__doc__ + "\n")
        return 2
    try:
        a, b = load_json(files[0]), load_json(files[1])
    except (OSError, ValueError) as e:
        sys.stderr.write("compare_compile.py: %s\n" % e)
        return 1
    text = compare(a, b, names[0], names[1])
    if out:
        with open(out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
