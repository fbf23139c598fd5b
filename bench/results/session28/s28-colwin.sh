#!/usr/bin/env bash
# s28-colwin.sh: SpMM compiles of five paper-60 twins at K = 8 and 32 on branch
# s27-colwin-wide after session 28 (col_window's segment-parallel shape: the CTA streams
# each segment into panel sums in shared memory, panels split over 1..4 CTAs), to compare
# every col_window trial with the winner (csr_split in session 27: 67..383 us against
# 709..1987 us for the wide windows).
# Run on the GPU machine from the repo root, the project built into build-gpu/ and
# ../shared/matrices copied to shared/matrices; $OUT receives NAME_K.json (sd_kernel_describe:
# plan + search record), NAME_K.log (SPARSEDITTO_VERBOSE=1 stderr) and summary.txt
# (winner and its time, then every col_window trial with its time and its ratio to the
# winner's, per task).
# 10 compiles of 5..20 s, each at most 55 s; no new compile starts after 180 s, so that the
# whole run stays under 4 minutes (skipped tasks are named in summary.txt).
set -u
OUT="${OUT:?set OUT to the output folder}"
BIN=build-gpu/sparseditto
TSV=shared/matrices/paper60.tsv
[ -x "$BIN" ] || { echo "no $BIN (build the project into build-gpu/ first)" >&2; exit 2; }
[ -f "$TSV" ] || { echo "no $TSV (copy ../shared/matrices to shared/matrices)" >&2; exit 2; }
NAMES="Belcastro_mouse_gene Belcastro_human_gene1 Gupta_gupta3 Norris_heart1 Nemeth_nemeth26"
T0=$(date +%s)
: > "$OUT/runs.txt"
for NAME in $NAMES; do
    for K in 8 32; do
        now=$(date +%s)
        if [ $((now - T0)) -ge 180 ]; then
            echo "$NAME K=$K: skipped (time budget)" | tee -a "$OUT/runs.txt"
            continue
        fi
        SPARSEDITTO_VERBOSE=1 timeout 55 "$BIN" compile --no-cache \
            --gen "twin:name=$NAME,file=$TSV" --op spmm -K "$K" --json \
            > "$OUT/${NAME}_${K}.json" 2> "$OUT/${NAME}_${K}.log"
        rc=$?
        echo "$NAME K=$K: rc $rc, $(( $(date +%s) - now )) s" | tee -a "$OUT/runs.txt"
    done
done
echo "total $(( $(date +%s) - T0 )) s" | tee -a "$OUT/runs.txt"

# Summary: winner and its time, the diagnosis, every col_window trial next to the winner.
if command -v python3 > /dev/null; then
    python3 - "$OUT" > "$OUT/summary.txt" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
for line in open(os.path.join(out, "runs.txt")):
    if "skipped" in line:
        print(line.strip())
for path in sorted(glob.glob(os.path.join(out, "*.json"))):
    task = os.path.basename(path)[:-5]
    try:
        d = json.load(open(path))
    except Exception as e:  # an empty file: the compile failed (see the log)
        print(f"{task}: no JSON ({e})")
        continue
    s = d.get("search") or {}
    def us(t):
        return t.get("mean_us") if isinstance(t, dict) else t
    w = s.get("winner") or {}
    wt = us(w.get("time"))
    print(f"{task}: winner {w.get('config')}: {round(wt, 2) if wt else wt} us "
          f"(roofline {w.get('roofline_frac')}); compile "
          f"{(s.get('compile_ms') or {}).get('total', '?')} ms")
    print(f"    diagnosis: {s.get('diagnosis')}")
    n = 0
    for tr in s.get("trials") or []:
        if "col_window" not in str(tr.get("family", "")) + str(tr.get("config", "")):
            continue
        n += 1
        t = us(tr.get("time"))
        ratio = f"{t / wt:.2f}x the winner" if t and wt else "-"
        print(f"    round {tr.get('round')} {tr.get('config')}: {tr.get('status')} "
              f"{round(t, 2) if t else t} us vs winner {round(wt, 2) if wt else wt} us ({ratio})"
              f"{' ' + str(tr.get('detail')) if tr.get('detail') else ''}")
    if n == 0:
        print("    no col_window trial")
PY
    cat "$OUT/summary.txt"
fi
