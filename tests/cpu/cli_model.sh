# tests/cpu/cli_model.sh: `sparseditto train`, `rank`, `evalmodel` and `corpus`: training
# on a tiny synthetic corpus written here, ranking with the trained model, the model the
# search finds through SPARSEDITTO_MODELS (and its corrupt-file fallback) and the rules,
# ParamSpMM's decider as the search's PCSR preset,
# JSON fields, determinism of the weights, SpMM heads per K bucket, the ranker
# comparison, the corpus builder's argument errors and missing device, ParamSpMM's
# decider from builder lines, exit codes 1 (bad input), 2 (usage) and 3 (no device).
# Usage: bash cli_model.sh <sparseditto> <matrices-dir> <tests/data-dir>
set -u
BIN="$1"
SRC="$(cd "$(dirname "$0")/../.." && pwd)" # the checkout: models/ holds the shipped decider
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok   $*"; }

# 60 matrices: skewed rows (row_cv > 3) make coo fastest, uniform rows sell32, else csr.
awk 'BEGIN {
  split("rows cols nnz density row_mean row_max row_cv row_q25 row_q50 row_q75 empty_row_frac col_max col_cv row_span col_gap diag_frac dense_tile_frac dense_tile_nnz_frac rho_ell rho_sell16 rho_sell32 rho_sell512 rho_bsr4 rho_bsr8 rho_bsr16 rho_bell16 u_total u_max u_p95 u_cv ut_total ut_cv fit_512 fit_4k fit_32k gamma", names, " ");
  s = 7;
  for (m = 0; m < 60; m++) {
    r = m % 3;
    line = sprintf("{\"matrix\":\"m%d\",\"features\":{", m);
    for (i = 1; i <= 36; i++) {
      s = (s * 1103515245 + 12345) % 2147483648; u = s / 2147483648;
      v = u * 10;
      if (names[i] == "row_cv") v = (r == 0) ? 0.1 + u * 0.3 : (r == 1) ? 0.8 + u : 4 + 6 * u;
      if (names[i] == "rows" || names[i] == "nnz") v = int(1000 + u * 100000);
      line = line sprintf("%s\"%s\":%.6g", (i > 1 ? "," : ""), names[i], v);
    }
    shape = (r == 0) ? "uniform" : (r == 1) ? "moderate" : "power-law";
    csr = 10; coo = 25; sell = 18;
    if (r == 0) sell = 6; else if (r == 2) coo = 5;
    line = line sprintf("},\"shape_class\":\"%s\",\"tasks\":[{\"op\":\"spmv\",\"k\":1,\"baseline_us\":12,", shape);
    line = line sprintf("\"templates\":{\"csr\":%g,\"coo\":%g,\"sell32\":%g,\"bsr8\":null}}]}", csr, coo, sell);
    print line;
  }
}' > "$TMP/corpus.jsonl"
[ "$(wc -l < "$TMP/corpus.jsonl")" -eq 60 ] && ok "corpus written" || fail "corpus lines"

# A 4x4 matrix (M1 of test_features.c).
cat > "$TMP/m1.mtx" <<'EOM'
%%MatrixMarket matrix coordinate real general
4 4 7
1 1 1
1 2 2
1 4 3
2 2 4
4 1 5
4 3 6
4 4 7
EOM

"$BIN" train "$TMP/corpus.jsonl" -o "$TMP/w.json" --seed 3 --epochs 30 --ensemble 1 > "$TMP/train.txt" 2>&1
rc=$?
[ $rc -eq 0 ] && ok "train exit 0" || { fail "train exit $rc"; cat "$TMP/train.txt"; }
[ "$(grep -c '^epoch ' "$TMP/train.txt")" -eq 30 ] && ok "a loss line per epoch" || fail "epoch lines"
grep -Eq '^trained [0-9]+ parameters .* in [0-9.]+ s' "$TMP/train.txt" && ok "training time" || fail "no training time"
grep -Eq 'top-1 1\.000' "$TMP/train.txt" && ok "fits the corpus (top-1 1.000)" || fail "fit: $(grep top-1 "$TMP/train.txt")"
first=$(awk '/^epoch/{print $4; exit}' "$TMP/train.txt")
last=$(awk '/^epoch/{v=$4} END{print v}' "$TMP/train.txt")
awk -v a="$first" -v b="$last" 'BEGIN{exit !(b < a)}' && ok "loss falls ($first -> $last)" || fail "loss $first -> $last"

# Determinism: same seed, same bytes; another seed, other weights.
"$BIN" train "$TMP/corpus.jsonl" -o "$TMP/w2.json" --seed 3 --epochs 30 --ensemble 1 -q > /dev/null 2>&1
cmp -s "$TMP/w.json" "$TMP/w2.json" && ok "same seed, identical weights file" || fail "weights differ"
"$BIN" train "$TMP/corpus.jsonl" -o "$TMP/w3.json" --seed 4 --epochs 30 --ensemble 1 -q > /dev/null 2>&1
cmp -s "$TMP/w.json" "$TMP/w3.json" && fail "seed ignored" || ok "another seed, other weights"

# A seed ensemble: members listed in the file, per-member epoch lines, ranking with it.
"$BIN" train "$TMP/corpus.jsonl" -o "$TMP/we.json" --seed 3 --epochs 5 --ensemble 3 --cosine 1 \
  --lambda 0.1,0.2,0.3 --batch 16 > "$TMP/ens.txt" 2>&1 || fail "train --ensemble exit $?"
[ "$(grep -c '^member [1-3] of 3$' "$TMP/ens.txt")" -eq 3 ] && [ "$(grep -c '^  epoch ' "$TMP/ens.txt")" -eq 15 ] \
  && grep -Eq '^trained [0-9]+ parameters \(H = 16, 3 members of [0-9]+\)' "$TMP/ens.txt" \
  && grep -q '"ensemble":3' "$TMP/we.json" && grep -q '"version":2' "$TMP/we.json" \
  && grep -q '"lambda":\[0.10000000000000001,0.20000000000000001,0.29999999999999999\]' "$TMP/we.json" \
  && ok "train --ensemble 3: three members trained and stored" || fail "ensemble: $(cat "$TMP/ens.txt")"
"$BIN" rank "$TMP/m1.mtx" --op spmv --model "$TMP/we.json" > "$TMP/rank_e.txt" 2>&1 \
  && grep -q '^model  energy-v1' "$TMP/rank_e.txt" && ok "rank with an ensemble" || fail "rank ensemble: $(cat "$TMP/rank_e.txt")"

# SpMM heads per K bucket: a version 3 file naming its buckets; ranking spmm at any K.
"$BIN" train "$TMP/corpus.jsonl" -o "$TMP/wk.json" --seed 3 --epochs 5 --spmm-k-heads 1 > "$TMP/kh.txt" 2>&1 \
  && grep -q 'SpMM heads per K bucket' "$TMP/kh.txt" && grep -q '"version":3' "$TMP/wk.json" \
  && grep -q '"spmm_k_heads":\[8,32,128,256\]' "$TMP/wk.json" \
  && ok "train --spmm-k-heads 1: version 3 weights with the K buckets" || fail "k heads: $(cat "$TMP/kh.txt")"
kfails=$fails
for k in 1 20 1000; do
  "$BIN" rank "$TMP/m1.mtx" --op spmm -K $k --model "$TMP/wk.json" > "$TMP/rank_k.txt" 2>&1 \
    && grep -q '^model  energy-v1' "$TMP/rank_k.txt" || fail "rank K heads -K $k: $(cat "$TMP/rank_k.txt")"
done
[ $fails -eq $kfails ] && ok "rank with K heads at K = 1, 20, 1000"
"$BIN" train "$TMP/corpus.jsonl" -o "$TMP/wk0.json" --seed 3 --epochs 5 --spmm-k-heads 0 -q > /dev/null 2>&1 \
  && grep -q '"version":2' "$TMP/wk0.json" && ! grep -q 'spmm_k_heads' "$TMP/wk0.json" \
  && ok "train --spmm-k-heads 0: version 2 weights as before" || fail "k heads 0"

# Cross-validation grouped by matrix: one line per fold x seed, then the mean.
"$BIN" train "$TMP/corpus.jsonl" --cv 3 --cv-seeds 2 --epochs 10 > "$TMP/cv.txt" 2>&1 || fail "cv exit $?"
[ "$(grep -c '^  fold [0-2] seed [12]: 20 tasks' "$TMP/cv.txt")" -eq 6 ] && grep -q '^held-out mean (std): top-1' "$TMP/cv.txt" \
  && ok "--cv 3 --cv-seeds 2: six runs of 20 tasks and the mean" || fail "cv: $(cat "$TMP/cv.txt")"

# Ranking with the model.
"$BIN" rank "$TMP/m1.mtx" --op spmv --model "$TMP/w.json" > "$TMP/rank.txt" 2>&1
rc=$?
[ $rc -eq 0 ] && ok "rank exit 0" || { fail "rank exit $rc"; cat "$TMP/rank.txt"; }
grep -q '^model  energy-v1' "$TMP/rank.txt" && ok "table names the energy model" || fail "model line"
[ "$(grep -Ec '^ +[0-9]+  [a-z0-9_]+ ' "$TMP/rank.txt")" -eq 9 ] && ok "9 spmv templates" || fail "rows: $(cat "$TMP/rank.txt")"
"$BIN" rank "$TMP/m1.mtx" --model "$TMP/w.json" --op spmm -K 64 --json > "$TMP/rank.json" 2>&1 || fail "rank --json exit $?"
if command -v python3 > /dev/null; then
  python3 - "$TMP/rank.json" "$TMP/w.json" <<'EOP' && ok "JSON fields, sorted energies, reasons by magnitude" || fail "JSON: $(head -c 600 "$TMP/rank.json")"
import json, sys
d = json.load(open(sys.argv[1]))
r = d["ranking"]
assert d["op"] == "spmm" and d["k"] == 64 and d["model_path"] == sys.argv[2], d
assert d["shape_class"] in ("uniform", "moderate", "skewed", "power-law", "bimodal")
assert r["model"] == "energy-v1"
t = r["templates"]
assert [x["label"] for x in t] and sorted(x["label"] for x in t) == sorted(["csr", "coo", "bsr4", "bsr8", "bsr16", "bell16", "bell32", "tc"])
e = [x["energy"] for x in t]
assert e == sorted(e), e
for x in t:
    rs = x["reasons"]
    assert len(rs) == 6
    for a in rs:
        assert set(a) == {"feature", "value", "contribution", "why"}, a
    mags = [abs(a["contribution"]) for a in rs]
    assert mags == sorted(mags, reverse=True), mags
EOP
else
  grep -q '"model": "energy-v1"' "$TMP/rank.json" && ok "JSON model" || fail "JSON model"
fi

# Without --model: the rules, and the output says so.
SPARSEDITTO_MODELS= "$BIN" rank "$TMP/m1.mtx" --op spgemm --json > "$TMP/rules.json" 2>&1 || fail "rules exit $?"
grep -q '"model": "rules-v1"' "$TMP/rules.json" && grep -q '"model_path": null' "$TMP/rules.json" \
  && ok "rules-v1 without --model" || fail "rules JSON: $(head -c 300 "$TMP/rules.json")"
SPARSEDITTO_MODELS= "$BIN" rank "$TMP/m1.mtx" | grep -q '^model  rules-v1 (rule-based' && ok "table names the rules" || fail "rules table"
# The search's model: SPARSEDITTO_MODELS names the directory of energy.json.
mkdir -p "$TMP/models" && cp "$TMP/w.json" "$TMP/models/energy.json"
SPARSEDITTO_MODELS="$TMP/models" "$BIN" rank "$TMP/m1.mtx" --json > "$TMP/shipped.json" 2>&1
grep -q '"model": "energy-v1"' "$TMP/shipped.json" && grep -q "\"note\": \"weights $TMP/models/energy.json\"" "$TMP/shipped.json" \
  && ok "rank without --model uses SPARSEDITTO_MODELS/energy.json" || fail "shipped: $(head -c 400 "$TMP/shipped.json")"
head -c 2000 "$TMP/w.json" > "$TMP/models/energy.json"
SPARSEDITTO_MODELS="$TMP/models" "$BIN" rank "$TMP/m1.mtx" > "$TMP/corrupt.txt" 2> "$TMP/corrupt.err"
rc=$?
[ $rc -eq 0 ] && grep -q '^model  rules-v1' "$TMP/corrupt.txt" && grep -q 'warning: .*energy.json' "$TMP/corrupt.err" \
  && ok "corrupt shipped model: warning and rules-v1, exit 0" || fail "corrupt model: rc $rc $(cat "$TMP/corrupt.txt" "$TMP/corrupt.err")"
# ParamSpMM's decider as the search consults it: paramspmm.json beside energy.json picks
# the PCSR branch's first configuration (`plan` shows the first round; the log says so);
# a corrupt one is a warning and the PCSR default, never an error.
mkdir -p "$TMP/pm" && cp "$SRC/models/paramspmm-h200-2026-11-30.json" "$TMP/pm/paramspmm.json"
SPARSEDITTO_MODELS="$TMP/pm" SPARSEDITTO_VERBOSE=1 "$BIN" plan --gen uniform:rows=3000,deg=6 --op spmm -K 32 \
  --branches 8 > "$TMP/pm.txt" 2> "$TMP/pm.err"
rc=$?
[ $rc -eq 0 ] && grep -q "pcsr preset: decider $TMP/pm/paramspmm.json: <W [1248], F [124], V [12], S [01]>" "$TMP/pm.err" \
  && grep -q '^  spmm.pcsr  *pcsr k=32' "$TMP/pm.txt" \
  && ok "plan: the PCSR preset from SPARSEDITTO_MODELS/paramspmm.json" || fail "decider: rc $rc $(cat "$TMP/pm.err")"
printf '{"format":' > "$TMP/pm/paramspmm.json"
SPARSEDITTO_MODELS="$TMP/pm" "$BIN" plan --gen uniform:rows=3000,deg=6 --op spmm -K 32 --branches 8 \
  > "$TMP/pm.txt" 2> "$TMP/pm.err"
rc=$?
[ $rc -eq 0 ] && grep -q 'warning: .*paramspmm.json.*PCSR starts from its default' "$TMP/pm.err" \
  && ok "corrupt decider: warning and the PCSR default, exit 0" || fail "corrupt decider: rc $rc $(cat "$TMP/pm.err")"

# Exit codes.
expect() { # expected-code label command...
  local want=$1 label=$2; shift 2
  "$@" > "$TMP/out.txt" 2> "$TMP/err.txt"
  local got=$?
  [ $got -eq "$want" ] && ok "$label: exit $want" || fail "$label: exit $got, expected $want ($(cat "$TMP/err.txt"))"
}
expect 2 "train without -o" "$BIN" train "$TMP/corpus.jsonl"
expect 2 "train unknown option" "$BIN" train "$TMP/corpus.jsonl" -o "$TMP/x.json" --bogus
expect 2 "train --temperature 0" "$BIN" train "$TMP/corpus.jsonl" -o "$TMP/x.json" --temperature 0
expect 2 "train --epochs -1" "$BIN" train "$TMP/corpus.jsonl" -o "$TMP/x.json" --epochs -1
expect 2 "train --cv 1" "$BIN" train "$TMP/corpus.jsonl" --cv 1
expect 2 "train --ensemble 0" "$BIN" train "$TMP/corpus.jsonl" -o "$TMP/x.json" --ensemble 0
expect 2 "train --ensemble 17" "$BIN" train "$TMP/corpus.jsonl" -o "$TMP/x.json" --ensemble 17
expect 2 "train --lambda 1,2" "$BIN" train "$TMP/corpus.jsonl" -o "$TMP/x.json" --lambda 1,2
expect 2 "train --lambda 1,2,3,4" "$BIN" train "$TMP/corpus.jsonl" -o "$TMP/x.json" --lambda 1,2,3,4
expect 2 "train --lambda 1,-2,3" "$BIN" train "$TMP/corpus.jsonl" -o "$TMP/x.json" --lambda 1,-2,3
expect 2 "train --cosine 2" "$BIN" train "$TMP/corpus.jsonl" -o "$TMP/x.json" --cosine 2
expect 2 "train --spmm-k-heads 2" "$BIN" train "$TMP/corpus.jsonl" -o "$TMP/x.json" --spmm-k-heads 2
expect 2 "train no corpus" "$BIN" train -o "$TMP/x.json"
expect 1 "train missing corpus" "$BIN" train "$TMP/none.jsonl" -o "$TMP/x.json"
sed '2s/"row_cv"/"row_cvv"/' "$TMP/corpus.jsonl" > "$TMP/bad.jsonl"
expect 1 "train bad corpus line" "$BIN" train "$TMP/bad.jsonl" -o "$TMP/x.json"
grep -q 'line 2' "$TMP/err.txt" && ok "corpus error names line 2" || fail "message: $(cat "$TMP/err.txt")"
[ ! -e "$TMP/x.json" ] && ok "no weights written on error" || fail "x.json written"
expect 2 "rank bad --op" "$BIN" rank "$TMP/m1.mtx" --op spmx
expect 2 "rank -K 0" "$BIN" rank "$TMP/m1.mtx" --op spmm -K 0
expect 2 "rank no file" "$BIN" rank --op spmv
expect 1 "rank missing matrix" "$BIN" rank "$TMP/none.mtx"
expect 1 "rank missing model" "$BIN" rank "$TMP/m1.mtx" --model "$TMP/none.json"
head -c 3000 "$TMP/w.json" > "$TMP/trunc.json"
expect 1 "rank truncated model" "$BIN" rank "$TMP/m1.mtx" --model "$TMP/trunc.json"
grep -q 'energy model' "$TMP/err.txt" && ok "truncated model message" || fail "message: $(cat "$TMP/err.txt")"
sed 's/"row_cv"/"row_cz"/' "$TMP/w.json" > "$TMP/names.json"
expect 1 "rank model with other feature names" "$BIN" rank "$TMP/m1.mtx" --model "$TMP/names.json"
grep -q 'inputs\[6\] is "row_cz"' "$TMP/err.txt" && ok "names the mismatched input" || fail "message: $(cat "$TMP/err.txt")"
"$BIN" train --help | grep -q 'usage: sparseditto train' && ok "train --help" || fail "train --help"
"$BIN" rank --help | grep -q 'usage: sparseditto rank' && ok "rank --help" || fail "rank --help"

# ---- evalmodel: every ranker on the corpus above (spmv tasks only), tables and JSON.
"$BIN" evalmodel "$TMP/corpus.jsonl" --folds 3 --seeds 2 --holdout 12 --epochs 10 --out "$TMP/eval" > "$TMP/eval.md" 2> "$TMP/eval.err"
rc=$?
[ $rc -eq 0 ] && ok "evalmodel exit 0" || { fail "evalmodel exit $rc"; cat "$TMP/eval.err"; }
for m in energy-v1 energy-nomargin mlp gbt forest rules-v1; do
  [ "$(grep -c "^| $m |" "$TMP/eval.md")" -eq 3 ] || fail "evalmodel: no cv + test + search-view rows for $m"
done
grep -q 'Held-out test set: 12 matrices' "$TMP/eval.md" && grep -q '48 matrices' "$TMP/eval.md" \
  && grep -q "The search's view (held-out test set)" "$TMP/eval.md" \
  && ok "evalmodel: a cv and a test row per model, 12 held out of 60" || fail "evalmodel table: $(cat "$TMP/eval.md")"
[ "$(grep -c 'cv runs' "$TMP/eval.err")" -eq 6 ] && ok "a progress line per model" || fail "progress: $(cat "$TMP/eval.err")"
cmp -s "$TMP/eval.md" "$TMP/eval/evalmodel.md" && [ -s "$TMP/eval/evalmodel.json" ] && ok "--out writes evalmodel.md and .json" || fail "--out files"
if command -v python3 > /dev/null; then
  python3 - "$TMP/eval/evalmodel.json" <<'EOP' && ok "evalmodel JSON: six models, per-op metrics, gbt/forest fit the rule" || fail "evalmodel JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["corpus"]["matrices"] == 60 and d["protocol"]["folds"] == 3 and d["protocol"]["holdout_matrices"] == 12
names = [m["name"] for m in d["models"]]
assert names == ["energy-v1", "energy-nomargin", "mlp", "gbt", "forest", "rules-v1"], names
for m in d["models"]:
    for split in ("cv", "test"):
        s = m[split]
        assert s["spmv"]["tasks"] > 0 and s["spmm"]["tasks"] == 0, s
        for k in ("top1", "regret", "capture", "cliff", "top1_sd", "top3", "regret3"):
            assert k in s["spmv"], k
        assert s["spmv"]["regret"] >= 1.0
        assert s["spmv"]["top3"] >= s["spmv"]["top1"] and 1.0 <= s["spmv"]["regret3"] <= s["spmv"]["regret"]
# The corpus's rule (row_cv decides) is one threshold: trees find it.
g = [m for m in d["models"] if m["name"] in ("gbt", "forest")]
assert all(m["cv"]["spmv"]["top1"] > 0.95 for m in g), [m["cv"]["spmv"] for m in g]
EOP
fi
"$BIN" evalmodel "$TMP/corpus.jsonl" --folds 3 --seeds 1 --holdout 0 --models gbt,rules-v1 --json -q > "$TMP/e2.json" 2>&1 \
  && grep -q '"name": "gbt"' "$TMP/e2.json" && ! grep -q '"name": "mlp"' "$TMP/e2.json" && grep -q '"test": null' "$TMP/e2.json" \
  && ok "evalmodel --models --holdout 0 --json" || fail "evalmodel --models: $(head -c 300 "$TMP/e2.json")"
"$BIN" evalmodel "$TMP/corpus.jsonl" --folds 3 --seeds 1 --holdout 12 --epochs 10 --models rules-v1 \
    --importance 2 --out "$TMP/imp" -q > "$TMP/imp.md" 2>&1 \
  && grep -q '^| row_cv |' "$TMP/imp/importance.md" && grep -q 'regret_increase_pct' "$TMP/imp/importance.json" \
  && grep -q 'measured on the hold-out (12 matrices)' "$TMP/imp.md" \
  && ok "evalmodel --importance writes importance.md and .json" || fail "evalmodel --importance: $(head -c 400 "$TMP/imp.md")"
# --cv-only: the cross-validation on the non-hold-out matrices, the hold-out never scored.
"$BIN" evalmodel "$TMP/corpus.jsonl" --folds 3 --seeds 1 --holdout 12 --epochs 5 --models energy-v1 \
  --cv-only --ensemble 2 --lambda 0,0.1,0.2 --spmm-k-heads 1 -q > "$TMP/cvonly.md" 2>&1
rc=$?
[ $rc -eq 0 ] && ! grep -q 'Held-out test set' "$TMP/cvonly.md" && grep -q 'hold-out of 12 matrices was set aside' "$TMP/cvonly.md" \
  && grep -q '(48 matrices)' "$TMP/cvonly.md" && grep -q 'ensemble of 2, one SpMM head per K bucket' "$TMP/cvonly.md" \
  && grep -q 'λ 0 / 0.1 / 0.2' "$TMP/cvonly.md" && ok "evalmodel --cv-only" || fail "cv-only: rc $rc $(cat "$TMP/cvonly.md")"
expect 2 "evalmodel --cv-only --importance" "$BIN" evalmodel "$TMP/corpus.jsonl" --cv-only --importance 2
expect 2 "evalmodel --importance 0" "$BIN" evalmodel "$TMP/corpus.jsonl" --importance 0
expect 2 "evalmodel --folds 1" "$BIN" evalmodel "$TMP/corpus.jsonl" --folds 1
expect 2 "evalmodel --models bogus" "$BIN" evalmodel "$TMP/corpus.jsonl" --models energy-v1,bogus
expect 2 "evalmodel no corpus" "$BIN" evalmodel
expect 1 "evalmodel missing corpus" "$BIN" evalmodel "$TMP/none.jsonl"
expect 1 "evalmodel hold-out too large" "$BIN" evalmodel "$TMP/corpus.jsonl" --holdout 59
grep -q 'lower --holdout' "$TMP/err.txt" && ok "says to lower --holdout" || fail "message: $(cat "$TMP/err.txt")"

# ---- corpus: argument errors (no GPU needed), then no device -> exit 3.
printf 'stencil2d:n=8\n' > "$TMP/list.txt"
expect 2 "corpus without --set" "$BIN" corpus --out "$TMP/c.jsonl"
expect 2 "corpus without --out" "$BIN" corpus --set "$TMP/list.txt"
expect 2 "corpus bad --ops" "$BIN" corpus --set "$TMP/list.txt" --out "$TMP/c.jsonl" --ops spmv,spmm
expect 2 "corpus bad --sweep" "$BIN" corpus --set "$TMP/list.txt" --out "$TMP/c.jsonl" --sweep 99
expect 2 "corpus bad --time-limit" "$BIN" corpus --set "$TMP/list.txt" --out "$TMP/c.jsonl" --time-limit -3
expect 2 "corpus bad --max-nnz" "$BIN" corpus --set "$TMP/list.txt" --out "$TMP/c.jsonl" --max-nnz lots
expect 2 "corpus bad --min-nnz" "$BIN" corpus --set "$TMP/list.txt" --out "$TMP/c.jsonl" --min-nnz -5
expect 2 "corpus --min-nnz above --max-nnz" "$BIN" corpus --set "$TMP/list.txt" --out "$TMP/c.jsonl" --min-nnz 5e6 --max-nnz 1e6
grep -q 'min-nnz 5e+06 is above --max-nnz 1e+06' "$TMP/err.txt" && ok "the empty size band is named" || fail "band message: $(cat "$TMP/err.txt")"
expect 1 "corpus missing list" "$BIN" corpus --set "$TMP/nolist.txt" --out "$TMP/c.jsonl"
printf 'stencil2d:n=8 size=3\n' > "$TMP/badlist.txt"
expect 1 "corpus bad list line" "$BIN" corpus --set "$TMP/badlist.txt" --out "$TMP/c.jsonl"
grep -q 'line 1' "$TMP/err.txt" && ok "list error names the line" || fail "message: $(cat "$TMP/err.txt")"
printf '# nothing\n' > "$TMP/empty.txt"
expect 1 "corpus empty list" "$BIN" corpus --set "$TMP/empty.txt" --out "$TMP/c.jsonl"
CUDA_VISIBLE_DEVICES= expect 3 "corpus without a device" "$BIN" corpus --set "$TMP/list.txt" --out "$TMP/c.jsonl"
grep -q 'needs a GPU' "$TMP/err.txt" && ok "no device: says a GPU is needed" || fail "message: $(cat "$TMP/err.txt")"
"$BIN" corpus --help | grep -q 'usage: sparseditto corpus' && ok "corpus --help" || fail "corpus --help"

# ---- train --forest: ParamSpMM's decider from builder lines with PCSR measurements.
awk 'BEGIN {
  split("rows cols nnz density row_mean row_max row_cv row_q25 row_q50 row_q75 empty_row_frac col_max col_cv row_span col_gap diag_frac dense_tile_frac dense_tile_nnz_frac rho_ell rho_sell16 rho_sell32 rho_sell512 rho_bsr4 rho_bsr8 rho_bsr16 rho_bell16 u_total u_max u_p95 u_cv ut_total ut_cv fit_512 fit_4k fit_32k gamma", names, " ");
  for (m = 0; m < 40; m++) {
    f = ""; for (i = 1; i <= 36; i++) f = f sprintf("%s\"%s\":%d", (i > 1 ? "," : ""), names[i], m + i);
    long = (m % 2);   # long rows: W 8, balancing on; short rows: W 1, off
    p = sprintf("[%d,%d,%d,0.01,%d,%d,%d,0.5,0.5,0.2,0.3,0.3,0.2,0.5,%d,%d,0.1,0.3]", 1000+m, 1000, 10000, (long ? 300 : 3), (long ? 300 : 3), (long ? 900 : 9), 100, 200);
    c1 = sprintf("{\"w\":8,\"f\":2,\"v\":2,\"s\":1,\"group\":32,\"us\":%d}", long ? 5 : 9);
    c2 = sprintf("{\"w\":1,\"f\":1,\"v\":1,\"s\":0,\"group\":32,\"us\":%d}", long ? 9 : 5);
    printf "{\"matrix\":\"p%d\",\"op\":\"spmm\",\"k\":32,\"features\":{%s},\"shape_class\":\"uniform\",\"tasks\":[{\"op\":\"spmm\",\"k\":32,\"baseline_us\":10,\"templates\":{\"csr\":5}}],\"pcsr\":{\"features\":%s,\"configs\":[%s,%s]}}\n", m, f, p, c1, c2;
  }
}' > "$TMP/pcsr.jsonl"
"$BIN" train "$TMP/pcsr.jsonl" --forest "$TMP/decider.json" > "$TMP/forest.txt" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -q 'ParamSpMM decider: 40 examples' "$TMP/forest.txt" && grep -q 'of 40 (100.0 %)' "$TMP/forest.txt" \
  && grep -q '"format":"sparseditto-paramspmm"' "$TMP/decider.json" && ok "train --forest: 40 examples, fits them, writes the decider" \
  || fail "train --forest: rc $rc $(cat "$TMP/forest.txt")"
expect 1 "train --forest without PCSR data" "$BIN" train "$TMP/corpus.jsonl" --forest "$TMP/d2.json"
expect 1 "train --forest-k without examples" "$BIN" train "$TMP/pcsr.jsonl" --forest "$TMP/d2.json" --forest-k 8

[ $fails -eq 0 ] && echo "all passed" || echo "$fails failed"
[ $fails -eq 0 ]
