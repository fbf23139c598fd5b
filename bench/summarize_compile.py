#!/usr/bin/env python3
"""bench/summarize_compile.py: merges bench_compile JSON files (runs that continue one
set with --from) into one markdown summary: geomean speed-up per task with a 95 %
bootstrap interval (20 000 resamples of the log speed-ups, seeded), share won by our own
plans, compile-time median / max. SpGEMM products that cuSPARSE could not do (no
speed-up) are counted apart, never in a geomean. A task (matrix and task) that a later file
measured again replaces the earlier file's record (a partial rerun refreshes a combined table
without counting a task twice); the header says how many. With --json, the merged run (each
task's latest record, the runs' date range) is also written as one bench_compile JSON file,
gzip-compressed when its name ends in .gz: the file a combined table is committed as.
Standard library only.

usage: summarize_compile.py [--json MERGED.json[.gz]] OUT.md IN.json[.gz] [IN.json[.gz] ...]"""
import gzip
import json
import math
import random
import statistics
import sys


def geomean_ci(xs, seed=1):
    logs = [math.log(x) for x in xs]
    rng = random.Random(seed)
    means = sorted(sum(rng.choice(logs) for _ in logs) / len(logs) for _ in range(20000))
    return math.exp(sum(logs) / len(logs)), math.exp(means[500]), math.exp(means[19499])


def load_json(path):
    """A bench JSON file, gzip-compressed when its name ends in .gz (large committed runs)."""
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        return json.load(f)


def matrix_key(name):
    """One name per matrix: a twin listed by a list file ("twin:name=X") is the paper60 set's
    "twin:X"."""
    if name.startswith("twin:name=") and "," not in name:
        return "twin:" + name[len("twin:name="):]
    return name


def latest_tasks(runs):
    """The runs' completed tasks, each (matrix, task) once: a later run's record replaces an
    earlier one's. Returns the tasks and how many records were replaced."""
    latest = {}
    n = 0
    for r in runs:
        for t in r["tasks"]:
            if t["status"] == "ok":
                n += 1
                key = (matrix_key(t["matrix"]), t["task"])
                latest.pop(key, None)  # re-inserted last: the later run's
                latest[key] = t
    return list(latest.values()), n - len(latest)


SPMV_SPMM = ["spmv", "spmm8", "spmm32", "spmm128", "spmm256"]
SIZES = [("< 2e5", 0, 2e5), ("2e5-2e6", 2e5, 2e6), (">= 2e6", 2e6, float("inf"))]


def headroom(tasks):
    """Where the headroom is (runs that record a ceiling: SpMV/SpMM records of bench_compile):
    per task and size class (nonzeros), the speed-up and ceiling geomeans (ceiling = best
    cuSPARSE time / max(empty launch, CSR streaming limit)), the share of the ceiling reached,
    and the class's share of the set's total log gap sum(log(max(ceiling, speed-up) /
    speed-up)): the classes where work pays most. Empty when no task records a ceiling."""
    ts = [t for t in tasks if t["task"] != "spgemm" and (t.get("ceiling") or 0) > 0]
    if not ts:
        return []
    gap = {id(t): math.log(max(t["ceiling"], t["speedup"]) / t["speedup"]) for t in ts}
    total = sum(gap.values())
    out = ["", "Where the headroom is (SpMV/SpMM tasks whose record has a ceiling: best cuSPARSE "
           "time / max(empty launch, CSR streaming limit)); gap share = the class's share of the "
           "set's sum of log(ceiling / speed-up) over %d tasks." % len(ts), "",
           "| task | nonzeros | tasks | speed-up | ceiling | share of ceiling | gap share |",
           "|---|---|---|---|---|---|---|"]
    for name in SPMV_SPMM:
        for label, lo, hi in SIZES:
            cl = [t for t in ts if t["task"] == name and lo <= t["nnz"] < hi]
            if not cl:
                continue
            g = math.exp(sum(math.log(t["speedup"]) for t in cl) / len(cl))
            c = math.exp(sum(math.log(t["ceiling"]) for t in cl) / len(cl))
            out.append("| %s | %s | %d | %.2fx | %.2fx | %.0f %% | %.0f %% |" % (
                name, label, len(cl), g, c, 100 * math.log(g) / math.log(c) if c > 1 else 100,
                100 * sum(gap[id(t)] for t in cl) / total if total > 0 else 0))
    return out


def write_merged(path, runs, done):
    """One bench_compile JSON holding the merged tasks: the first run's GPU, set and budget,
    the first and the last run's dates, the number of runs merged."""
    dates = sorted(r["date"] for r in runs)
    merged = {"date": dates[-1], "first_date": dates[0], "gpu": runs[0]["gpu"],
              "set": runs[0]["set"], "budget": runs[0]["budget"], "runs_merged": len(runs),
              "tasks": done}
    text = json.dumps(merged, indent=0, sort_keys=True) + "\n"
    if path.endswith(".gz"):
        with gzip.GzipFile(path, "wb", mtime=0) as f:  # mtime 0: the same runs give the same bytes
            f.write(text.encode())
    else:
        open(path, "w").write(text)


def main():
    args = sys.argv[1:]
    merged_out = None
    if args[:1] == ["--json"]:
        merged_out, args = args[1], args[2:]
    if len(args) < 2:
        sys.exit(__doc__.split("usage: ")[1])
    out, ins = args[0], args[1:]
    runs = [load_json(p) for p in ins]
    done, replaced = latest_tasks(runs)
    if merged_out:
        write_merged(merged_out, runs, done)
    # A product cuSPARSE could not do has no speed-up: reported apart, not in a geomean.
    tasks = [t for t in done if t.get("speedup") is not None]
    failed = [t for t in done if t.get("speedup") is None]
    lines = ["# sd_compile end to end against the best cuSPARSE variant (combined)", ""]
    # Combined runs span days: the header names the first and the last date.
    dates = sorted(d for r in runs for d in (r.get("first_date", r["date"]), r["date"]))
    when = dates[0] if dates[0] == dates[-1] else "%s to %s" % (dates[0], dates[-1])
    lines.append("Date %s; GPU %s; set %s; budget %s; runs: %s." % (
        when, runs[0]["gpu"], runs[0]["set"], runs[0]["budget"], ", ".join(ins)))
    if replaced:
        lines.append("")
        lines.append("%d task%s measured again by a later file: the later record counts." % (
            replaced, "" if replaced == 1 else "s"))
    lines.append("")
    lines.append("Speed-up = best valid cuSPARSE variant's time / the compiled kernel's time, "
                 "both measured in the same search (mean of 10 event-timed executions; "
                 "pipelined = 10 back-to-back / 10). 'ours alone' = our best plan whether or not "
                 "it won (the compiled kernel runs cuSPARSE where cuSPARSE is faster, so its "
                 "speed-up is never below 1.0x per execution).")
    lines.append("")
    # Part files written before the vocabulary label existed carry no "vo_label" key.
    has_vo = all("vo_label" in t for t in tasks)
    lines.append("| task | tasks | geomean (95 % CI) | pipelined | ours alone | won by ours | "
                 + ("won outside V_o | " if has_vo else "") + "compile median / max s | cache hit median s |")
    lines.append("|---|---|---|---|---|---|" + ("---|" if has_vo else "") + "---|---|")
    for name in SPMV_SPMM + ["spgemm", "all"]:
        ts = [t for t in tasks if name == "all" or t["task"] == name]
        if not ts:
            continue
        g, lo, hi = geomean_ci([t["speedup"] for t in ts])
        gp, _, _ = geomean_ci([t["speedup_pipelined"] for t in ts])
        go, _, _ = geomean_ci([t["speedup_ours"] for t in ts])
        won = sum(1 for t in ts if not t["vendor_won"])
        cs = [t["compile_s"] for t in ts]
        hs = [t["cache_hit_s"] for t in ts]
        out_vo = ("%d of %d | " % (sum(1 for t in ts if not t["vendor_won"] and t["vo_label"] is None), won)
                  if has_vo else "")
        lines.append("| %s | %d | %.2fx (%.2f-%.2f) | %.2fx | %.2fx | %d of %d | %s%.1f / %.1f | %.2f |" % (
            name, len(ts), g, lo, hi, gp, go, won, len(ts), out_vo, statistics.median(cs), max(cs),
            statistics.median(hs)))
    # The second baseline (records that carry it): cuSPARSE captured into a graph by its
    # caller. Only tasks whose record has it; the count says how many.
    gr = [t for t in tasks if t.get("speedup_vs_graph") is not None
          and t.get("speedup_vs_graph_pipelined") is not None]
    if gr:
        lines.append("")
        lines.append("Against cuSPARSE's best variant captured into a CUDA graph by its caller (what a "
                     "user of cuSPARSE can do; our programs replay graphs themselves), on the %d tasks "
                     "whose run measured it: it separates the launch path from the kernel." % len(gr))
        lines.append("")
        lines.append("| task | tasks | geomean (95 % CI) | pipelined | below 1.0x | below 1.0x pipelined |")
        lines.append("|---|---|---|---|---|---|")
        for name in SPMV_SPMM + ["all"]:
            ts = [t for t in gr if name == "all" or t["task"] == name]
            if not ts:
                continue
            g, lo, hi = geomean_ci([t["speedup_vs_graph"] for t in ts])
            gp, _, _ = geomean_ci([t["speedup_vs_graph_pipelined"] for t in ts])
            lines.append("| %s | %d | %.2fx (%.2f-%.2f) | %.2fx | %d | %d |" % (
                name, len(ts), g, lo, hi, gp, sum(1 for t in ts if t["speedup_vs_graph"] < 1.0),
                sum(1 for t in ts if t["speedup_vs_graph_pipelined"] < 1.0)))
    lines.extend(headroom(tasks))
    below = [t for t in tasks if t["speedup"] < 1.0]
    sg = [t for t in done if t["task"] == "spgemm"]
    if sg:
        peaks = [t["peak_mib"] for t in sg if t.get("peak_mib") is not None]
        lines.append("")
        lines.append("SpGEMM: %d products; %d that cuSPARSE could not do were completed and validated "
                     "by the compiled kernel (not in the geomean); peak device memory median %.1f MiB, "
                     "max %.1f MiB." % (len(sg), len(failed), statistics.median(peaks) if peaks else 0,
                                        max(peaks) if peaks else 0))
    lines.append("")
    lines.append("Tasks below 1.0x per execution: %d. Per-task records: the JSON file(s) named above." % len(below))
    # Pipelined, the compiled kernel is not cuSPARSE's fallback: a task can fall below 1.0x
    # there while it wins per execution. Named, so that it is not lost in a geomean.
    below_p = [t for t in tasks if t.get("speedup_pipelined") is not None and t["speedup_pipelined"] < 1.0]
    lines.append("")
    lines.append("Tasks below 1.0x pipelined: %d%s" % (len(below_p), "".join(
        "%s%s %s %.2fx (per execution %.2fx)" % (": " if i == 0 else "; ", t["matrix"], t["task"],
                                                  t["speedup_pipelined"], t["speedup"])
        for i, t in enumerate(below_p)) + "."))
    open(out, "w").write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
