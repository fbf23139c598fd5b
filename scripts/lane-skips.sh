#!/usr/bin/env bash
# scripts/lane-skips.sh: after a ctest run with --output-junit, prints one line per test that
# did not run: "SKIPPED <test>: <reason>", the reason being the last line of the test's output
# that says SKIPPED (exit 77 alone tells nothing). Fails when a skipped test printed no reason.
# Usage: lane-skips.sh <junit.xml>
set -euo pipefail
xml=${1:?usage: lane-skips.sh <junit.xml>}
if [ ! -f "$xml" ]; then
  echo "lane-skips: $xml is missing (ctest --output-junit writes it)" >&2
  exit 1
fi
awk '
function unxml(s) {
  gsub(/&lt;/, "<", s); gsub(/&gt;/, ">", s); gsub(/&quot;/, "\"", s); gsub(/&apos;/, "\047", s)
  gsub(/&amp;/, "\\&", s)
  return s
}
function attr(line, key,   m) {
  if (match(line, key "=\"[^\"]*\"")) return substr(line, RSTART + length(key) + 2, RLENGTH - length(key) - 3)
  return ""
}
/<testcase / { name = unxml(attr($0, "name")); notrun = ($0 ~ /status="notrun"/); why = ""; msg = ""; out = 0 }
/<skipped / { msg = unxml(attr($0, "message")) }
{
  line = $0
  if (index(line, "<system-out>")) { line = substr(line, index(line, "<system-out>") + 12); out = 1 }
  end = index(line, "</system-out>")
  if (end) line = substr(line, 1, end - 1)
  if (out && notrun && line ~ /SKIPPED/) {
    sub(/^.*SKIPPED:? */, "", line)
    why = unxml(line)
  }
  if (end) out = 0
}
/<\/testcase>/ && notrun {
  if (why == "" && msg != "" && msg !~ /^SKIP_RETURN_CODE/) why = msg   # not run for another cause
  if (why == "") { why = "(no reason printed: the test must say why it skips)"; bad++ }
  printf "SKIPPED %s: %s\n", name, why
}
END { exit bad > 0 }
' "$xml"
