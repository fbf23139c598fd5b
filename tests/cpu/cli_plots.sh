#!/usr/bin/env bash
# tests/cpu/cli_plots.sh: the benchmark report tooling on fixed runs (tests/data/bench,
# tests/data/ncu): bench/compare_compile.py compares two runs; bench/summarize_compile.py
# reproduces tests/data/bench/quick_parts.md byte for byte from the part JSON files and writes
# the merged run; bench/breakeven.py counts the calls that repay a compile;
# bench/corpus_report.py reproduces tests/data/bench/corpus_report.md from the corpus;
# bench/sets/ matches bench_suite.c's quick set and make_sets.sh's output; bench/plots.py
# writes every PNG (and SVG with --svg), non-empty.
# Usage (ctest): bash cli_plots.sh <sparseditto-binary> <matrices-dir> <tests/data-dir>
# Exit 77 (skipped, visibly) when python3 is missing, or when matplotlib is not importable
# (CI does not install it) after the standard-library checks have passed.
set -euo pipefail
matrices=${2:?usage: cli_plots.sh <sparseditto-binary> <matrices-dir> <tests/data-dir>}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"
fail() { echo "cli_plots: FAIL: $*"; exit 1; }

if ! command -v python3 >/dev/null; then
  echo "cli_plots: SKIPPED: python3 is not installed"
  exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sd-plots.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
data=tests/data/bench
parts=($data/quick_part1.json $data/quick_part2.json)

# 1. The combined summary is deterministic (seeded bootstrap): same bytes as committed.
python3 bench/summarize_compile.py "$tmp/bench_compile.md" "${parts[@]}"
cmp "$tmp/bench_compile.md" $data/quick_parts.md ||
  fail "summarize_compile.py no longer reproduces $data/quick_parts.md"
echo "cli_plots: summarize_compile.py reproduces quick_parts.md"
# --json writes the merged run: summarized again it gives the same tables.
python3 bench/summarize_compile.py --json "$tmp/merged.json.gz" "$tmp/m1.md" "${parts[@]}"
python3 bench/summarize_compile.py "$tmp/m2.md" "$tmp/merged.json.gz"
cmp <(grep '^| ' "$tmp/m1.md") <(grep '^| ' "$tmp/m2.md") ||
  fail "summarize_compile.py --json: the merged run summarizes to other tables"
echo "cli_plots: summarize_compile.py --json writes a merged run with the same tables"
# A file given twice: its tasks replace themselves (counted once, the header says so), so the
# figures are those of the parts alone.
python3 bench/summarize_compile.py "$tmp/again.md" "${parts[@]}" "${parts[1]}"
n2=$(python3 -c 'import json,sys; print(sum(t["status"] == "ok" for t in json.load(open(sys.argv[1]))["tasks"]))' "${parts[1]}")
grep -q "^$n2 tasks measured again by a later file" "$tmp/again.md" ||
  fail "summarize_compile.py: no 'measured again' line for the repeated part ($n2 tasks)"
cmp <(grep '^| ' "$tmp/again.md") <(grep '^| ' $data/quick_parts.md) ||
  fail "summarize_compile.py: a repeated part changed the table (a task counted twice)"
echo "cli_plots: summarize_compile.py counts a task measured again once"

# 1a. The second baseline (cuSPARSE captured into a graph; records that carry it): a
# section of its own, only when records carry it, counting the tasks below 1.0x.
python3 - "${parts[0]}" "$tmp/graph.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
n = 0
for t in d["tasks"]:
    if t.get("status") == "ok" and t["task"] == "spmv" and t.get("speedup") is not None:
        t["speedup_vs_graph"] = 0.5 if n == 0 else 2.0
        t["speedup_vs_graph_pipelined"] = 2.0
        n += 1
json.dump(d, open(sys.argv[2], "w"))
PY
python3 bench/summarize_compile.py "$tmp/graph.md" "$tmp/graph.json"
nsp=$(python3 -c 'import json,sys; print(sum(1 for t in json.load(open(sys.argv[1]))["tasks"] if "speedup_vs_graph" in t))' "$tmp/graph.json")
[ "$nsp" -ge 2 ] || fail "the synthetic run has $nsp SpMV tasks (need 2)"
grep -q "^| spmv | $nsp | .* | 2.00x | 1 | 0 |$" "$tmp/graph.md" ||
  fail "summarize_compile.py: no graph-baseline row for $nsp SpMV tasks: $(grep -A4 'captured into a CUDA graph' "$tmp/graph.md")"
grep -q "captured into a CUDA graph" "$tmp/bench_compile.md" &&
  fail "summarize_compile.py: a graph-baseline section for runs that did not measure it"
echo "cli_plots: summarize_compile.py reports the graph baseline when runs carry it"

# 1a'. Where the headroom is: a section only when records carry a ceiling (the old parts do
# not), one row per task and size class, the gap shares summing to 100 %.
grep -q "Where the headroom is" "$tmp/bench_compile.md" &&
  fail "summarize_compile.py: a headroom section for runs without ceilings"
python3 - "${parts[0]}" "$tmp/ceil.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for t in d["tasks"]:
    if t.get("status") == "ok" and t.get("speedup") is not None:
        t["ceiling"] = 2 * t["speedup"] if t["task"] == "spmv" else t["speedup"]
json.dump(d, open(sys.argv[2], "w"))
PY
python3 bench/summarize_compile.py "$tmp/ceil.md" "$tmp/ceil.json"
python3 - "$tmp/ceil.md" <<'PY' || fail "summarize_compile.py: headroom rows: $(grep -A12 'Where the headroom' "$tmp/ceil.md")"
import sys
rows = [[c.strip() for c in l.split("|")[1:-1]] for l in open(sys.argv[1])
        if l.startswith("| spm") and l.rstrip().endswith("% |")]
gap = lambda r: float(r[6].rstrip(" %"))
# every SpMV task sits at half its ceiling, every SpMM task at its ceiling: all the gap is SpMV's
assert any(r[0] == "spmv" for r in rows) and any(r[0] != "spmv" for r in rows), rows
assert abs(sum(gap(r) for r in rows if r[0] == "spmv") - 100) <= 1, rows
assert all(gap(r) == 0 and r[5] == "100 %" for r in rows if r[0] != "spmv"), rows
PY
echo "cli_plots: summarize_compile.py reports the headroom when runs carry ceilings"

# 1b. The corpus report is a pure function of the committed corpus.
python3 bench/corpus_report.py models/corpus/corpus.jsonl.gz >"$tmp/corpus_report.md"
cmp "$tmp/corpus_report.md" $data/corpus_report.md ||
  fail "bench/corpus_report.py no longer reproduces $data/corpus_report.md (rerun it after a corpus change)"
echo "cli_plots: corpus_report.py reproduces corpus_report.md"

# 1c. compare_compile.py: the A/B table of two runs of the quick set's SpMV / SpMM K = 8 / 256
# (the search's parallel precompile and JIT cache off and on).
python3 bench/compare_compile.py $data/switches_off.json.gz $data/switches_on.json.gz \
  --names off on >"$tmp/ab.md" || fail "compare_compile.py failed"
grep -q '^| all | 42 | 1.425x | 1.432x | 1.005 ' "$tmp/ab.md" ||
  fail "compare_compile.py: unexpected summary row: $(grep '^| all' "$tmp/ab.md")"
if python3 bench/compare_compile.py $data/switches_off.json.gz >/dev/null 2>&1; then
  fail "compare_compile.py with one file succeeded"
fi
echo "cli_plots: compare_compile.py compares two runs"

# 1c'. breakeven.py: a task won by ours (compile 1 s, 10 against 20 us a call) repays its compile
# after 100,000 calls (50,000 pipelined at 10 against 30 us; 2,000 from the disk cache at
# 0.02 s); a task cuSPARSE won (the kernel runs cuSPARSE) is counted but never repays.
python3 - "$tmp/be_in.json" <<'PY'
import json, sys
base = {"task": "spmv", "nnz": 5000, "status": "ok", "compile_s": 1.0, "cache_hit_s": 0.02,
        "ours_us": 10.0, "cusparse_us": 20.0, "ours_pipelined_us": 10.0, "cusparse_pipelined_us": 30.0}
tasks = [dict(base, matrix="a", vendor_won=False), dict(base, matrix="b", vendor_won=True, compile_s=3.0)]
json.dump({"date": "2026-01-01", "gpu": "G", "set": "s", "budget": 25, "tasks": tasks}, open(sys.argv[1], "w"))
PY
python3 bench/breakeven.py "$tmp/be.md" "$tmp/be.json" "s=$tmp/be_in.json" || fail "breakeven.py failed"
grep -q '^| spmv | < 10^5 | 2 | 1 | 2.00 | 100k | 100k | 50k | 2000 |$' "$tmp/be.md" ||
  fail "breakeven.py: unexpected row: $(grep '^| spmv' "$tmp/be.md")"
if python3 bench/breakeven.py "$tmp/be.md" "$tmp/be.json" "$tmp/be_in.json" 2>/dev/null; then
  fail "breakeven.py accepted an input without SET="
fi
echo "cli_plots: breakeven.py counts the calls that repay a compile"

# 1d. ncu_launches.py: launch by launch from a `profile --keep` folder. The fixture (2
# executions x 2 launches, ns and us units) gives 10 and 5 us per execution; a run count that
# does not divide the launches fails with status 1 and prints nothing; an empty folder is
# status 2; a plan labels the launches by block count and stage and adds the stages' bound
# (longest stage-1 launch + scan + longest stage-2 launch); the fixture's report
# (written without a plan) are reproduced byte for byte from their CSVs.
mkdir -p "$tmp/ncu" "$tmp/ncu_empty"
cp tests/data/ncu_memory.csv "$tmp/ncu/ours.csv"
python3 bench/ncu_launches.py "$tmp/ncu" --runs 2 > "$tmp/ncu.md"
grep -q '^| 0 | sd_spmv_csr_vector_1a2b3c | (1024, 1, 1) | (256, 1, 1) | 10.0 | 67 % |' "$tmp/ncu.md" &&
  grep -q '^| 1 | .* | 5.0 | 33 % |' "$tmp/ncu.md" && grep -q '2 launch(es) an execution, 15.0 us' "$tmp/ncu.md" ||
  fail "ncu_launches.py: the fixture's launches are not 10 and 5 us: $(cat "$tmp/ncu.md")"
set +e
python3 bench/ncu_launches.py "$tmp/ncu" --runs 3 > "$tmp/ncu3.md" 2>/dev/null; rc3=$?
python3 bench/ncu_launches.py "$tmp/ncu_empty" > /dev/null 2>&1; rc0=$?
set -e
[ "$rc3" = 1 ] && [ ! -s "$tmp/ncu3.md" ] || fail "ncu_launches.py --runs 3 on 4 launches: status $rc3, output $(wc -c < "$tmp/ncu3.md") bytes"
[ "$rc0" = 2 ] || fail "ncu_launches.py on an empty folder: status $rc0 (want 2)"
ncu=tests/data/ncu
cat > "$tmp/plan.json" <<'JSON'
{"plan": {"lowering": {"launches": [
  {"stage": 1, "blocks": 10, "segments": 1, "smem": 114688},
  {"stage": 2, "blocks": 10, "segments": 1, "smem": 229376},
  {"stage": 2, "blocks": 42, "segments": 2, "smem": 135240}]}}}
JSON
python3 bench/ncu_launches.py "$ncu/prof_Schenk_IBMNA_c-50" --plan "$tmp/plan.json" > "$tmp/plan.md"
grep -q '^| 0 | sd_sg_d766d116969c437c | (10, 1, 1) .* | stage 1, 1 segment(s), smem 114688 B |$' "$tmp/plan.md" &&
  grep -q '^| 1 | .* | (42, 1, 1) .* |  |$' "$tmp/plan.md" &&
  grep -q '^| 4 | sd_spgemm_scan .* | scan |$' "$tmp/plan.md" &&
  grep -q '^| 5 | .* | (10, 1, 1) .* | stage 2, 1 segment(s), smem 229376 B |$' "$tmp/plan.md" &&
  grep -q '^| 6 | .* | (42, 1, 1) .* | stage 2, 2 segment(s), smem 135240 B |$' "$tmp/plan.md" ||
  fail "ncu_launches.py --plan: labels wrong: $(grep '^| [0-9]' "$tmp/plan.md" | head -7)"
grep -q '^Were each stage.s launches to run side by side (side streams): longest of stage 1 #0 66.8 us + scan #4 4.9 us + longest of stage 2 #5 121.0 us = 192.7 us, against 573.0 us serialised.$' "$tmp/plan.md" ||
  fail "ncu_launches.py --plan: no stage bound of 192.7 us: $(grep 'side by side' "$tmp/plan.md")"
(cd "$ncu" && python3 "$repo/bench/ncu_launches.py" prof_Schenk_IBMNA_c-50) |
  cmp - "$ncu/prof_Schenk_IBMNA_c-50/launches.md" ||
  fail "ncu_launches.py no longer reproduces $ncu/prof_Schenk_IBMNA_c-50/launches.md"
echo "cli_plots: ncu_launches.py reads launches, runs, plans and reproduces its report"

# 1e. ncu_sass.py: instruction by instruction from ncu's source page. On the fixture's
# Schenk_IBMNA_c-50 export, the 4,096-slot stage-2 kernel has 2,752 instructions, 907 samples
# and 916,361 warp instructions executed, its top instruction #176 (22 samples); an unknown
# kernel is status 1, a missing file 2; the committed reports are reproduced byte for byte.
sass=$ncu/sass_Schenk_IBMNA_c-50
python3 bench/ncu_sass.py "$sass.csv.gz" --kernel sd_sg_418dc --top 1 > "$tmp/sass.md"
grep -q '^2752 instructions, 907 samples, 916361 warp instructions executed$' "$tmp/sass.md" &&
  grep -q '^| 176 | 22 | 2.4 % | 950 | `FMUL R33, R36, R33` |$' "$tmp/sass.md" ||
  fail "ncu_sass.py: unexpected report: $(head -12 "$tmp/sass.md")"
set +e
python3 bench/ncu_sass.py "$sass.csv.gz" --kernel no_such_kernel > /dev/null 2>&1; rc1=$?
python3 bench/ncu_sass.py "$tmp/no_such.csv" > /dev/null 2>&1; rc2=$?
set -e
[ "$rc1" = 1 ] && [ "$rc2" = 2 ] || fail "ncu_sass.py: status $rc1 for an unknown kernel (want 1), $rc2 for a missing file (want 2)"
(cd "$ncu" && python3 "$repo/bench/ncu_sass.py" sass_Schenk_IBMNA_c-50.csv.gz --top 25) | cmp - "$sass.md" ||
  fail "ncu_sass.py no longer reproduces $sass.md"
echo "cli_plots: ncu_sass.py reads ncu's source page and reproduces its report"

# 2. bench/sets/quick.txt lists bench_suite.c's quick set (quick_gen, then quick_real).
{
  sed -n '/^static const char \*quick_gen\[\] = {/,/^};/p' tools/bench/bench_suite.c | grep -o '"[^"]*"'
  sed -n 's/^static const char \*quick_real\[\] = {\(.*\)};/\1/p' tools/bench/bench_suite.c | grep -o '"[^"]*"'
} | tr -d '"' >"$tmp/quick.c.txt"
[ "$(wc -l <"$tmp/quick.c.txt")" -ge 2 ] || fail "could not read the quick set from tools/bench/bench_suite.c"
grep -v '^#' bench/sets/quick.txt | diff "$tmp/quick.c.txt" - ||
  fail "bench/sets/quick.txt differs from bench_suite.c's quick set (< the C source, > the file)"
echo "cli_plots: bench/sets/quick.txt matches bench_suite.c ($(wc -l <"$tmp/quick.c.txt") matrices)"

# 3. real.txt and paper60.txt are what make_sets.sh writes from the matrices' tables.
if [ -r "$matrices/suitesparse/INDEX.tsv" ] && [ -r "$matrices/paper60.tsv" ]; then
  bash bench/sets/make_sets.sh "$matrices" "$tmp"
  for f in real.txt paper60.txt; do
    cmp "$tmp/$f" "bench/sets/$f" || fail "bench/sets/$f is stale: rerun bench/sets/make_sets.sh"
  done
  echo "cli_plots: bench/sets/real.txt and paper60.txt are current"
else
  echo "cli_plots: note: no INDEX.tsv / paper60.tsv under $matrices; set files not compared"
fi

# 4. The plots (needs matplotlib).
if ! python3 -c 'import matplotlib' 2>/dev/null; then
  echo "cli_plots: SKIPPED (after checks 1-3 passed): matplotlib is not importable (pip install matplotlib)"
  exit 77
fi
python3 bench/plots.py --svg "$tmp/plots" "${parts[@]}" >"$tmp/plots.log" 2>&1 ||
  { cat "$tmp/plots.log"; fail "bench/plots.py failed"; }
python3 bench/plots.py "$tmp/png" "${parts[@]}" >"$tmp/png.log" 2>&1 ||
  { cat "$tmp/png.log"; fail "bench/plots.py (PNG only) failed"; }
[ "$(ls "$tmp/png" | grep -c '\.png$')" = 4 ] && ! ls "$tmp/png" | grep -q '\.svg$' ||
  fail "bench/plots.py without --svg: want 4 PNG and no SVG, got $(ls "$tmp/png")"
for base in speedup_geomean speedup_matrices roofline compile_time; do
  png=$tmp/plots/$base.png svg=$tmp/plots/$base.svg
  [ -s "$png" ] || fail "$base.png missing or empty"
  [ -s "$svg" ] || fail "$base.svg missing or empty"
  [ "$(head -c 8 "$png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "$base.png is not a PNG"
  grep -q '<svg' "$svg" || fail "$base.svg is not an SVG"
done
if python3 bench/plots.py "$tmp/none" >/dev/null 2>&1; then fail "plots.py without input succeeded"; fi
echo "cli_plots: bench/plots.py wrote 4 PNG (+ 4 SVG with --svg)"
