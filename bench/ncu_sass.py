#!/usr/bin/env python3
"""bench/ncu_sass.py: where a kernel's time goes, instruction by instruction, from Nsight
Compute's source page.

The input is the CSV of

    ncu --section SourceCounters ... -o REP <program>
    ncu -i REP.ncu-rep --page source --csv --print-source sass > SASS.csv

(optionally gzipped): for every profiled kernel a line `"Kernel Name","NAME",`, a header,
then one row per SASS instruction with its PC-sampling counts ("Warp Stall Sampling (All
Samples)") and execution counts ("Instructions Executed", warp-level).

    python3 bench/ncu_sass.py SASS.csv[.gz] [--kernel SUBSTRING] [--top N] [--window W] [--out FILE]

For each kernel (those whose name contains SUBSTRING): its instruction count, samples and
warp instructions executed; the N instructions with the most samples (index, samples, share,
executions, instruction); and windows of W consecutive instructions holding at least 1 % of
the kernel's samples or executions, which shows the loops. Exit status 1 when no kernel
matches, 2 when the file cannot be read or holds no kernel.
"""
import argparse
import csv
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ncu_launches import number, open_csv  # noqa: E402

SAMPLES = "Warp Stall Sampling (All Samples)"
EXECUTED = "Instructions Executed"


def read_kernels(fh):
    """[(name, rows)] in file order; each row a dict of the header's columns."""
    kernels = []
    header = None
    rows = None
    for line in fh:
        if not line.strip():
            continue
        fields = next(csv.reader([line]))
        if fields and fields[0] == "Kernel Name":
            rows = []
            kernels.append((fields[1] if len(fields) > 1 else "", rows))
            header = None
            continue
        if rows is None:
            continue
        if header is None:
            header = fields
            continue
        rows.append(dict(zip(header, fields)))
    return kernels


def count(row, key):
    v = number(row.get(key))
    return int(v) if v is not None else 0


def report(name, rows, top, window):
    samples = [count(r, SAMPLES) for r in rows]
    executed = [count(r, EXECUTED) for r in rows]
    total_s, total_e = sum(samples), sum(executed)
    out = [f"## {name}", "",
           f"{len(rows)} instructions, {total_s} samples, {total_e} warp instructions executed", ""]
    out += ["| # | samples | share | executed | instruction |", "|---|---|---|---|---|"]
    order = sorted(range(len(rows)), key=lambda i: (-samples[i], i))
    for i in order[:top]:
        share = 100.0 * samples[i] / total_s if total_s else 0.0
        text = rows[i].get("Source", "").strip().replace("|", "\\|")
        out.append(f"| {i} | {samples[i]} | {share:.1f} % | {executed[i]} | `{text}` |")
    out += ["", f"Windows of {window} instructions with at least 1 % of the samples or executions:", "",
            "| instructions | samples | share | executed | share |", "|---|---|---|---|---|"]
    for lo in range(0, len(rows), window):
        s = sum(samples[lo:lo + window])
        e = sum(executed[lo:lo + window])
        if (total_s and 100 * s >= total_s) or (total_e and 100 * e >= total_e):
            hi = min(lo + window, len(rows)) - 1
            ss = 100.0 * s / total_s if total_s else 0.0
            es = 100.0 * e / total_e if total_e else 0.0
            out.append(f"| {lo}–{hi} | {s} | {ss:.1f} % | {e} | {es:.1f} % |")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv", help="ncu --page source --csv --print-source sass output (.csv or .csv.gz)")
    ap.add_argument("--kernel", default="", help="only kernels whose name contains this")
    ap.add_argument("--top", type=int, default=20, help="instructions listed by samples (default 20)")
    ap.add_argument("--window", type=int, default=50, help="instructions per window (default 50)")
    ap.add_argument("--out", help="write the report here instead of stdout")
    args = ap.parse_args()
    if args.top < 0 or args.window < 1:
        ap.error("--top must be >= 0 and --window >= 1")
    fh = open_csv(args.csv)
    if fh is None:
        print(f"ncu_sass.py: cannot read {args.csv}", file=sys.stderr)
        return 2
    with fh:
        kernels = read_kernels(fh)
    if not kernels:
        print(f"ncu_sass.py: {args.csv} holds no 'Kernel Name' section", file=sys.stderr)
        return 2
    chosen = [(n, r) for n, r in kernels if args.kernel in n]
    if not chosen:
        print(f"ncu_sass.py: no kernel of {len(kernels)} matches '{args.kernel}'", file=sys.stderr)
        return 1
    text = f"# SASS hot spots of {os.path.basename(args.csv)}\n\n" + "\n".join(
        report(n, r, args.top, args.window) for n, r in chosen)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
