#!/usr/bin/env python3
"""bench/corpus_report.py: where the mechanism library wins and loses, read from the
measured corpus (`sparseditto corpus`, models/corpus/corpus.jsonl.gz): for every task, the
fastest template of V_o (each at the best of its small sweep, validated, timed on the GPU
that built the corpus) against the fastest valid cuSPARSE variant of the same run. Prints
markdown: per task (SpMV, SpMM per K, SpGEMM) the geomean speed-up and the share below
1.0x, by shape class and by nnz decade (SpGEMM: by multiplications), and the worst tasks.
A corpus is a training set, measured with a small sweep: these are library figures, not
sd_compile's (which searches further and keeps cuSPARSE where it is faster).

usage: corpus_report.py CORPUS.jsonl[.gz] [WORST]"""
import collections
import gzip
import json
import math
import sys


def read(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError as e:
                raise SystemExit(f"corpus_report: {path}: line {n} is not JSON ({e})")


def geomean(v):
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else float("nan")


def row(label, v):
    below = sum(x < 1.0 for x in v)
    return (f"| {label} | {len(v)} | {geomean(v):.2f}x | {below} ({100.0 * below / len(v):.0f} %) "
            f"| {min(v):.2f}x | {max(v):.2f}x |")


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    worst_n = int(sys.argv[2]) if len(sys.argv) == 3 else 10
    tasks = collections.defaultdict(list)  # task name -> [(speed-up, record)]
    gpus, matrices = set(), set()
    for r in read(sys.argv[1]):
        if "tasks" not in r:
            continue  # an error line: nothing measured
        for t in r["tasks"]:
            times = [x for x in t["templates"].values() if x]
            if not times or not t.get("baseline_us"):
                continue
            name = "spmv" if t["op"] == "spmv" else ("spgemm" if t["op"] == "spgemm"
                                                     else f"spmm K={t['k']}")
            best = min(t["templates"], key=lambda k: t["templates"][k] or math.inf)
            tasks[name].append((t["baseline_us"] / t["templates"][best], best, r))
        gpus.add(r.get("gpu", "?"))
        matrices.add(r["matrix"])
    order = ["spmv", "spmm K=8", "spmm K=32", "spmm K=128", "spmm K=256", "spgemm"]
    names = [n for n in order if n in tasks] + sorted(n for n in tasks if n not in order)
    print(f"# The mechanism library against cuSPARSE on the corpus ({', '.join(sorted(gpus))})\n")
    print(f"Corpus `{sys.argv[1]}`: {len(matrices)} matrices with measurements. Speed-up = the "
          "best cuSPARSE variant's time / the fastest template's time (each template at the best "
          "of its small sweep), measured side by side in one run. Made by "
          "`bench/corpus_report.py`.\n")
    head = "| {} | tasks | geomean | below 1.0x | min | max |\n|---|---:|---:|---:|---:|---:|"
    print("## Per task\n")
    print(head.format("task"))
    for n in names:
        print(row(n, [s for s, _, _ in tasks[n]]))
    print()
    for n in names:
        v = tasks[n]
        print(f"## {n}\n")
        print(head.format("shape class"))
        by = collections.defaultdict(list)
        for s, _, r in v:
            by[r.get("shape_class", "?")].append(s)
        for k in sorted(by, key=lambda k: geomean(by[k])):
            print(row(k, by[k]))
        print()
        size = "multiplications" if n == "spgemm" else "nonzeros"
        print(head.format(size))
        by = collections.defaultdict(list)
        for s, _, r in v:
            x = r["features"]["u_total"] if n == "spgemm" else r["nnz"]
            by[int(math.floor(math.log10(max(x, 1))))].append(s)
        for k in sorted(by):
            print(row(f"10^{k}", by[k]))
        print()
        print(f"Worst {min(worst_n, len(v))}: " + "; ".join(
            f"`{r['matrix']}` {s:.2f}x ({b})" for s, b, r in sorted(v, key=lambda x: x[0])[:worst_n]))
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
