#!/usr/bin/env bash
# tests/cpu/cli_version.sh: the version is defined once, by project(VERSION) in CMakeLists.txt:
# the library (sd_version_string, through `sparseditto version`) reports it, and the regex
# pyproject.toml gives scikit-build-core for the Python package's metadata finds it.
# Usage (ctest): bash cli_version.sh <sparseditto-binary> <matrices-dir> <tests/data-dir>
set -euo pipefail
sd=${1:?usage: cli_version.sh <sparseditto-binary> <matrices-dir> <tests/data-dir>}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
fail() { echo "cli_version: FAIL: $*"; exit 1; }
want=$(sed -n 's/^project(sparseditto VERSION \([0-9.]*\) .*/\1/p' "$repo/CMakeLists.txt")
[ -n "$want" ] || fail "no project(sparseditto VERSION ...) line in CMakeLists.txt"
got=$("$sd" version)
[ "$got" = "sparseditto $want" ] || fail "'sparseditto version' says '$got', CMakeLists.txt $want"
echo "cli_version: the library reports $want"
if ! command -v python3 >/dev/null || ! python3 -c 'import tomllib' 2>/dev/null; then
  echo "cli_version: SKIPPED (after the library check passed): python3 with tomllib (3.11+) is needed to read pyproject.toml"
  exit 77
fi
python3 - "$repo" "$want" <<'PY' || fail "pyproject.toml's version regex does not give $want"
import re, sys, tomllib
repo, want = sys.argv[1], sys.argv[2]
cfg = tomllib.load(open(repo + "/pyproject.toml", "rb"))
assert "version" in cfg["project"].get("dynamic", []), "version is not dynamic"
v = cfg["tool"]["scikit-build"]["metadata"]["version"]
m = re.search(v["regex"], open(repo + "/" + v["input"]).read())
assert m and m.group("value") == want, m and m.group("value")
PY
echo "cli_version: pyproject.toml's metadata takes $want from CMakeLists.txt"
