#!/usr/bin/env bash
# s27-colwin.sh: SpMM compiles of six paper-60 twins at K = 8 and 32 on branch
# s27-colwin-wide (col_window's wide windows: 512..4096 columns staged in opt-in shared
# memory, panels of 128..512 rows), to compare each winner and its time with main's.
# Run on the GPU machine from the repo root, the project built into build-gpu/ and
# ../shared/matrices copied to shared/matrices; $OUT receives NAME_K.json (sd_kernel_describe:
# plan + search record), NAME_K.log (SPARSEDITTO_VERBOSE=1 stderr) and summary.txt
# (winner, time, diagnosis and every col_window trial per task).
# About 12 compiles of 5..20 s: the script stops starting new ones after 270 s so that the
# whole run stays under 5 minutes (skipped tasks are named in summary.txt).
set -u
OUT="${OUT:?set OUT to the output folder}"
BIN=build-gpu/sparseditto
TSV=shared/matrices/paper60.tsv
[ -x "$BIN" ] || { echo "no $BIN (build the project into build-gpu/ first)" >&2; exit 2; }
[ -f "$TSV" ] || { echo "no $TSV (copy ../shared/matrices to shared/matrices)" >&2; exit 2; }
NAMES="Belcastro_mouse_gene Belcastro_human_gene1 Gupta_gupta3"
T0=$(date +%s)
: > "$OUT/runs.txt"
for NAME in $NAMES; do
    for K in 8 32; do
        now=$(date +%s)
        if [ $((now - T0)) -ge 270 ]; then
            echo "$NAME K=$K: skipped (time budget)" | tee -a "$OUT/runs.txt"
            continue
        fi
        SPARSEDITTO_VERBOSE=1 timeout 90 "$BIN" compile \
            --gen "twin:name=$NAME,file=$TSV" --op spmm -K "$K" --json \
            > "$OUT/${NAME}_${K}.json" 2> "$OUT/${NAME}_${K}.log"
        rc=$?
        echo "$NAME K=$K: rc $rc, $(( $(date +%s) - now )) s" | tee -a "$OUT/runs.txt"
    done
done
echo "total $(( $(date +%s) - T0 )) s" | tee -a "$OUT/runs.txt"

# Summary: winner, its time, the diagnosis and the col_window trials of each task.
if command -v python3 > /dev/null; then
    python3 - "$OUT" > "$OUT/summary.txt" <<'EOF'
import glob, json, os, sys
out = sys.argv[1]
for path in sorted(glob.glob(os.path.join(out, "*.json"))):
    task = os.path.basename(path)[:-5]
    try:
        d = json.load(open(path))
    except Exception as e:  # an empty file: the compile failed (see the log)
        print(f"{task}: no JSON ({e})")
        continue
    s = d.get("search") or {}
    def us(t):
        return round(t.get("mean_us"), 2) if isinstance(t, dict) and t.get("mean_us") else t
    w, o = s.get("winner") or {}, s.get("ours_best") or {}
    print(f"{task}: winner {w.get('config')}: {us(w.get('time'))} us "
          f"(roofline {w.get('roofline_frac')}); ours {o.get('config')}: {us(o.get('time'))} us; "
          f"compile {(s.get('compile_ms') or {}).get('total', '?')} ms")
    print(f"    diagnosis: {s.get('diagnosis')}")
    for tr in s.get("trials") or []:
        if "col_window" in str(tr.get("family", "")) + str(tr.get("config", "")):
            print(f"    round {tr.get('round')} {tr.get('config')}: {tr.get('status')} "
                  f"{us(tr.get('time'))}{' ' + str(tr.get('detail')) if tr.get('detail') else ''}")
EOF
    cat "$OUT/summary.txt"
fi
