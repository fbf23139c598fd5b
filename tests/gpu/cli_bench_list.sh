# tests/gpu/cli_bench_list.sh: `sparseditto bench --set LIST-FILE` on a GPU: the matrices
# of a user's list (a generator spec, a .mtx.gz path, one skipped unread by its nnz= hint)
# are compiled and compared with cuSPARSE; the report has one record per (matrix, task),
# the skipped one says why. Skipped (exit 77) without a device.
# Usage: bash cli_bench_list.sh <sparseditto> <matrices-dir> <tests/data-dir>
set -u
BIN="$1"
DATA="$3"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
export SPARSEDITTO_CACHE="$TMP/cache"
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "cli_bench_list: SKIPPED: no GPU"
  exit 77
fi
printf '# my matrices\nstencil2d:n=64\n%s/small.mtx.gz\nuniform:rows=100000,deg=8 nnz=8e11\n' "$DATA" >"$TMP/mine.txt"
"$BIN" bench --set "$TMP/mine.txt" --ops spmv,spmm8 --out "$TMP/res" --time-limit 300 >"$TMP/out.txt" 2>&1
rc=$?
if [ "$rc" != 0 ]; then
  echo "FAIL: bench --set list: exit $rc"; tail -20 "$TMP/out.txt"; exit 1
fi
python3 - "$TMP/res/bench_compile.json" <<'EOP' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))
recs = {(r["matrix"], r["task"]): r for r in d["tasks"]}
assert len(recs) == 6, sorted(recs)
for m in ("stencil2d:n=64", "small"):
    for t in ("spmv", "spmm8"):
        r = recs[(m, t)]
        assert r["status"] == "ok" and r["speedup"] >= 0.999, (m, t, r["status"], r.get("speedup"))
big = recs[("uniform:rows=100000,deg=8", "spmv")]
assert big["status"] == "skipped" and "max-nnz" in big.get("detail", ""), big
print("ok   bench --set list: 4 tasks compiled and validated (speed-ups %s), the hinted one skipped unread"
      % ", ".join("%.2f" % recs[k]["speedup"] for k in sorted(recs) if recs[k]["status"] == "ok"))
EOP
echo "cli_bench_list: ok"
