#!/usr/bin/env python3
"""bench/ncu_launches.py: launch by launch, what `sparseditto profile --keep DIR` recorded.

`sparseditto profile` pools ncu's counters over an execution's launches. Looking at the
launches themselves (a SpGEMM plan's bins run on side streams, so a launch of a few CTAs that
runs long is invisible in the sums) is what this script is for:

    python3 bench/ncu_launches.py DIR [--runs N] [--plan COMPILE.json] [--out FILE]

DIR holds ours.csv and cusparse.csv (or .csv.gz), ncu's long-form CSV. --runs is the
profile's --runs (default 1): launch i of an execution is the mean of launches i, L + i, …
of the N profiled executions (L = launches / N). --plan takes `sparseditto compile --json`'s
output for the same kernel (compile with the cache that profile then reads): each SpGEMM
launch is labelled with the stage, segments and shared memory of the first planned launch not
yet taken whose block count equals its grid, in its stage (the scan separates the stages), and
a line gives the bound the stages' overlap allows: the longest launch of stage 1, the scan and
the longest of stage 2 (what a product's critical path cannot go below). The report goes to
stdout or --out. Each launch's time is ncu's
gpu__time_duration with the launches serialised (ncu runs them one at a time): a launch that
overlaps others in a real run still shows its whole length here.
"""
import argparse
import csv
import gzip
import io
import json
import os
import sys

TIME = "gpu__time_duration.sum"
OCC = "sm__warps_active.avg.pct_of_peak_sustained_active"
DRAM = ("dram__bytes_read.sum", "dram__bytes_write.sum")
UNIT = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3,
        "second": 1e6, "s": 1e6, "byte": 1.0, "Kbyte": 1e3, "KB": 1e3, "Mbyte": 1e6, "MB": 1e6,
        "Gbyte": 1e9, "GB": 1e9}


def open_csv(path):
    """The CSV at path, or at path + '.gz'; None when neither exists."""
    for p in (path, path + ".gz"):
        if os.path.exists(p):
            return gzip.open(p, "rt") if p.endswith(".gz") else open(p)
    return None


def number(text):
    """ncu's '1,234.5' -> 1234.5; None when not a number."""
    try:
        return float(text.replace(",", ""))
    except (AttributeError, ValueError):
        return None


def read_launches(fh):
    """The launches of a long-form ncu CSV, in ID order: name, grid, block, time (us), and the
    occupancy (%) and DRAM bytes where ncu gave them."""
    rows = csv.DictReader(line for line in fh if line.startswith('"'))
    launches = {}
    for r in rows:
        if r.get("Metric Name") is None or r.get("ID") is None:
            continue
        k = int(r["ID"])
        l = launches.setdefault(k, {"name": r.get("Kernel Name", ""), "grid": r.get("Grid Size", ""),
                                    "block": r.get("Block Size", ""), "us": None, "occ": None,
                                    "dram": None})
        v = number(r.get("Metric Value"))
        if v is None:
            continue
        scale = UNIT.get(r.get("Metric Unit", ""), 1.0)
        m = r["Metric Name"]
        if m == TIME:
            l["us"] = v * scale
        elif m == OCC:
            l["occ"] = v
        elif m in DRAM:
            l["dram"] = (l["dram"] or 0.0) + v * scale
    return [launches[k] for k in sorted(launches)]


def per_execution(launches, runs):
    """Launch i of an execution: the mean over the runs (launches must divide evenly)."""
    if runs < 1 or len(launches) % runs != 0:
        raise ValueError(f"{len(launches)} launches do not split into {runs} executions")
    n = len(launches) // runs
    out = []
    for i in range(n):
        same = [launches[r * n + i] for r in range(runs)]
        e = dict(same[0])
        for key in ("us", "occ", "dram"):
            vals = [s[key] for s in same if s[key] is not None]
            e[key] = sum(vals) / len(vals) if len(vals) == len(same) else None
        out.append(e)
    return out


def grid_x(text):
    """'(10, 1, 1)' -> 10 (None otherwise)."""
    try:
        return int(text.strip("() ").split(",")[0])
    except (AttributeError, ValueError, IndexError):
        return None


def plan_labels(launches, plan):
    """Labels from a SpGEMM plan's lowering: the planned launches in stage order (stage 1,
    then the scan, then stage 2); each profiled launch is matched, in order, to the first
    planned launch of its stage not yet taken whose block count equals its grid."""
    low = ((plan.get("plan") or {}).get("lowering") or {}) if plan else {}
    planned = low.get("launches") or []
    labels = [""] * len(launches)
    used = [False] * len(planned)
    stage = 1
    for i, l in enumerate(launches):
        if "spgemm_scan" in l["name"]:
            labels[i] = "scan"
            stage = 2
            continue
        g = grid_x(l["grid"])
        hit = [j for j, p in enumerate(planned)
               if not used[j] and p.get("stage", 0) == stage and p.get("blocks") == g]
        if len(hit) >= 1:
            p = planned[hit[0]]
            used[hit[0]] = True
            labels[i] = f"stage {p.get('stage')}, {p.get('segments')} segment(s), smem {p.get('smem')} B"
    return labels


def stage_bound(launches):
    """A SpGEMM execution's lower bound were every launch of a stage to run side by side:
    (longest stage-1 launch, the scan, longest stage-2 launch) as (index, us) pairs, the
    stages split at the scan; None without a scan or a timed launch on each side."""
    scan = [i for i, l in enumerate(launches) if "spgemm_scan" in l["name"]]
    if len(scan) != 1:
        return None
    k = scan[0]

    def longest(idx):
        timed = [(i, launches[i]["us"]) for i in idx if launches[i]["us"] is not None]
        return max(timed, key=lambda x: x[1]) if timed else None

    s1, s2 = longest(range(k)), longest(range(k + 1, len(launches)))
    if s1 is None or s2 is None or launches[k]["us"] is None:
        return None
    return s1, (k, launches[k]["us"]), s2


def report(name, launches, labels, out, with_bound=False):
    total = sum(l["us"] or 0.0 for l in launches)
    out.write(f"## {name}: {len(launches)} launch(es) an execution, {total:.1f} us serialised\n\n")
    out.write("| # | kernel | grid | block | us | share | occupancy % | DRAM MB | plan |\n")
    out.write("|---|---|---|---|---|---|---|---|---|\n")
    for i, l in enumerate(launches):
        us = l["us"]
        share = f"{100 * us / total:.0f} %" if us is not None and total > 0 else "-"
        occ = f"{l['occ']:.1f}" if l["occ"] is not None else "-"
        dram = f"{l['dram'] / 1e6:.3f}" if l["dram"] is not None else "-"
        out.write(f"| {i} | {l['name'][:48]} | {l['grid']} | {l['block']} | "
                  f"{us:.1f} | {share} | {occ} | {dram} | {labels[i] if labels else ''} |\n"
                  if us is not None else
                  f"| {i} | {l['name'][:48]} | {l['grid']} | {l['block']} | - | - | {occ} | {dram} | |\n")
    out.write("\n")
    bound = stage_bound(launches) if with_bound else None
    if bound is not None:
        (i1, t1), (ks, ts), (i2, t2) = bound
        out.write(f"Were each stage's launches to run side by side (side streams): longest of stage 1 "
                  f"#{i1} {t1:.1f} us + scan #{ks} {ts:.1f} us + longest of stage 2 #{i2} {t2:.1f} us "
                  f"= {t1 + ts + t2:.1f} us, against {total:.1f} us serialised.\n\n")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir", help="a `sparseditto profile --keep DIR` folder")
    ap.add_argument("--runs", type=int, default=1, help="the profile's --runs (default 1)")
    ap.add_argument("--plan", help="`sparseditto compile --json` output of the same kernel")
    ap.add_argument("--out", help="write the report here instead of stdout")
    a = ap.parse_args(argv)
    plan = None
    if a.plan:
        with open(a.plan) as f:
            plan = json.load(f)
    parts = [f"# ncu launches of {a.dir} (per execution, mean of {a.runs} run(s))\n\n"]
    found = 0
    for who in ("ours", "cusparse"):
        fh = open_csv(os.path.join(a.dir, who + ".csv"))
        if fh is None:
            continue
        try:
            with fh:
                launches = per_execution(read_launches(fh), a.runs)
        except ValueError as e:
            sys.stderr.write(f"ncu_launches: {a.dir}/{who}: {e}\n")
            return 1
        found += 1
        buf = io.StringIO()
        report(who, launches, plan_labels(launches, plan) if who == "ours" else None, buf,
               with_bound=plan is not None and who == "ours")
        parts.append(buf.getvalue())
    if found == 0:
        sys.stderr.write(f"ncu_launches: no ours.csv or cusparse.csv (or .gz) in {a.dir}\n")
        return 2
    if a.out:
        with open(a.out, "w") as f:
            f.write("".join(parts))
    else:
        sys.stdout.write("".join(parts))
    return 0

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
