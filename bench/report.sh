#!/usr/bin/env bash
# bench/report.sh: remakes every summary and plot under bench/results from the JSON runs
# there (the markdown tables, breakeven.md / .json, the PNG / SVG plots), so that the
# committed figures are a function of the committed runs. Plots need matplotlib; without
# it they are left as they are, and the script says so.
# Usage: bash bench/report.sh [RESULTS_DIR]   (default bench/results; run from the repository root)
set -euo pipefail
case "${1:-}" in -h|--help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
res=${1:-bench/results}
sets=()
for s in quick real paper60; do
  run=$res/$s/bench_compile.json.gz
  [ -f "$run" ] || { echo "report: no $run; skipped"; continue; }
  python3 bench/summarize_compile.py "$res/$s/bench_compile.md" "$run"
  sets+=("$s=$run")
  if python3 -c 'import matplotlib' 2>/dev/null; then
    python3 bench/plots.py "$res/plots/$s" "$run" >/dev/null
  else
    echo "report: matplotlib is not importable: $res/plots/$s left as it is"
  fi
done
[ ${#sets[@]} -gt 0 ] && python3 bench/breakeven.py "$res/breakeven.md" "$res/breakeven.json" "${sets[@]}"
echo "report: $res remade from ${#sets[@]} run(s)"
