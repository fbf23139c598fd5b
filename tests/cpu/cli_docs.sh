#!/usr/bin/env bash
# tests/cpu/cli_docs.sh: the repository stays a product: the docs' relative links resolve,
# README.md and BENCHMARKS.md keep to their sizes (200 / 250 lines), bench/results/ holds at
# most 60 files and 5 MB, no test reads bench/results/, and no tracked file
# speaks of work periods. Skipped (exit 77) outside a git checkout.
# Usage (ctest): bash cli_docs.sh <sparseditto-binary> <matrices-dir> <tests/data-dir>
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"
fail() { echo "cli_docs: FAIL: $*"; exit 1; }
if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "cli_docs: SKIPPED: not a git checkout (the checks read the tracked files)"
  exit 77
fi

# 1. Relative links of the tracked markdown files: [text](path) and [text](path#anchor).
bad=0
while IFS= read -r md; do
  dir=$(dirname "$md")
  while IFS= read -r target; do
    t=${target%%#*}
    [ -z "$t" ] && continue
    case "$t" in http://* | https://* | mailto:*) continue ;; esac
    [ -e "$dir/$t" ] || { echo "cli_docs: $md links to missing $t"; bad=1; }
  done < <(grep -o '\]([^)]*)' "$md" | sed 's/^](//; s/)$//; s/ .*//')
done < <(git ls-files '*.md')
[ "$bad" = 0 ] || fail "broken links (above)"
echo "cli_docs: every relative link of $(git ls-files '*.md' | wc -l) markdown files resolves"

# 2. Sizes.
r=$(wc -l < README.md) b=$(wc -l < BENCHMARKS.md)
[ "$r" -le 200 ] || fail "README.md has $r lines (at most 200)"
[ "$b" -le 250 ] || fail "BENCHMARKS.md has $b lines (at most 250)"
n=$(git ls-files bench/results | wc -l)
kb=$(git ls-files -z bench/results | xargs -0 cat | wc -c)
[ "$n" -le 60 ] || fail "bench/results holds $n tracked files (at most 60)"
[ "$kb" -le $((5 * 1024 * 1024)) ] || fail "bench/results holds $kb bytes (at most 5 MB)"
echo "cli_docs: README $r lines, BENCHMARKS $b lines, bench/results $n files, $((kb / 1024)) KiB"

# 3. Tests take nothing from bench/results (its files are replaced as figures move).
hits=$(git grep -n 'bench/results' -- tests ':!tests/cpu/cli_docs.sh' || true)
[ -z "$hits" ] || fail "tests read bench/results: $hits"

# 4. No work-period vocabulary in the tracked files.
word='sess''ion' # spelt in two pieces so that this file does not match itself
hits=$(git grep -niwE "${word}s?" | head -5 || true)
[ -z "$hits" ] || fail "tracked files speak of work periods ('$word'): $hits"
echo "cli_docs: no test reads bench/results; no tracked file speaks of work periods"
