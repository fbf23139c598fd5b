#!/usr/bin/env python3
"""bench/results/evalmodel_holdout40/study_table.py: the table of study.sh's results
(cross-validation on the non-hold-out matrices only), sorted by the selection score:
the mean over the three operators of log regret (lower is better; each operator counts
the same whatever its number of tasks). Usage: study_table.py OUTDIR [--md]"""
import glob, json, math, os, sys

rows = []
for path in glob.glob(os.path.join(sys.argv[1], "*.json")):
    with open(path) as f:
        r = json.load(f)
    m = r["models"][0]["cv"]
    e = r["energy_training"]
    score = sum(math.log(m[op]["regret"]) for op in ("spmv", "spmm", "spgemm")) / 3
    cap = sum(m[op]["capture"] for op in ("spmv", "spmm", "spgemm")) / 3
    times = (r["models"][0]["train_s"], r["models"][0]["rank_us"])
    rows.append((score, -cap, os.path.basename(path)[:-5], e, m, times))
rows.sort()
print("| config | epochs | batch | lr | cos | wd | λ spmv/spmm/spgemm | T | H | M | "
      "spmv regret / capture | spmm regret / capture | spgemm regret / capture | "
      "all top-1 / regret / capture / cliff | score | train s | rank µs |")
print("|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---|---|---|---|---:|---:|---:|")
for score, _, name, e, m, times in rows:
    lam = "/".join("%g" % l for l in e["lambda"])
    ops = " | ".join("%.4f / %.1f %%" % (m[o]["regret"], 100 * m[o]["capture"])
                     for o in ("spmv", "spmm", "spgemm"))
    a = m["all"]
    # Times are measured over the cross-validation runs by binaries that have --cv-only
    # timing (0 = not measured).
    tm = ("%.2f | %.2f" % times) if times[0] > 0 else "– | –"
    print("| %s | %d | %d | %g | %d | %g | %s | %g | %d | %d | %s | %.3f / %.4f / %.1f %% / %.2f %% | %.5f | %s |"
          % (name, e["epochs"], e["batch"], e["lr"], e["cosine"], e["weight_decay"], lam,
             e["temperature"], e["hidden"], e["ensemble"], ops, a["top1"], a["regret"],
             100 * a["capture"], 100 * a["cliff"], score, tm))
