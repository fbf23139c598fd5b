/* tools/evalmodel/pcsr_eval.c: the held-out evaluation of ParamSpMM's decider (pcsr_eval.h):
 * evalmodel's split mapped onto the corpus's PCSR tasks, the runs, and the report. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plan/spmm.h"
#include "corpus/corpus.h"
#include "train/forest_fit.h"
#include "pcsr_eval.h"

static const char *const method_names[SDI_PE_N] = {"decider", "decider-k", "default",
                                                   "best-fixed"};

const char *sdi_pcsr_method_name(int m)
{
    return m >= 0 && m < SDI_PE_N ? method_names[m] : "?";
}

sdi_pcsr_eval_opts sdi_pcsr_eval_opts_default(void)
{
    sdi_pcsr_eval_opts o;
    memset(&o, 0, sizeof o);
    o.folds = 5;
    o.seeds = 5;
    o.holdout = 100;
    o.split_seed = 1;
    o.forest = sdi_forest_opts_default();
    return o;
}

static int ilog2(int v)
{
    int l = 0;
    while (v > 1) {
        v >>= 1;
        l++;
    }
    return l;
}

double sdi_pcsr_time_of(const sdi_pcsr_task *t, int c, int *measured)
{
    *measured = t->us[c] > 0;
    if (*measured)
        return t->us[c];
    sdi_paramspmm_params p, q;
    sdi_paramspmm_config_of(c, &p);
    int best_key = 1 << 30;
    double us = 0;
    for (int i = 0; i < SDI_PSPMM_NCONF; i++) {
        if (!(t->us[i] > 0))
            continue;
        sdi_paramspmm_config_of(i, &q);
        int dw = abs(ilog2(p.w) - ilog2(q.w)), df = abs(ilog2(p.f) - ilog2(q.f));
        /* Lexicographic as one number: dw ≤ 3, df ≤ 2, dv ≤ 1, ds ≤ 1. */
        int key = dw * 12 + df * 4 + abs(p.v - q.v) * 2 + abs(p.s - q.s);
        if (key < best_key || (key == best_key && t->us[i] > us)) {
            best_key = key;
            us = t->us[i];
        }
    }
    return us;
}

/* ParamSpMM's default for a task, from the library's rule (sdi_spmm_config_default) on
 * the row statistics its features hold. */
static sd_status default_index(const sdi_pcsr_task *t, int *out)
{
    const double *x = t->x;
    sdi_spmm_stats st;
    memset(&st, 0, sizeof st);
    st.rows = (int32_t)x[0];
    st.nnz = (int64_t)x[2];
    st.cols = x[3] > 0 && x[0] > 0 ? (int32_t)llround(x[2] / (x[3] * x[0])) : st.rows;
    st.row_mean = x[4];
    st.row_max = (int64_t)x[6];
    st.row_cv = x[7];
    st.rows_empty = (int64_t)(x[0] - x[1]);
    sdi_spmm_config c;
    sd_status s = sdi_spmm_config_default(SDI_SPMM_PCSR, t->k, &st, &c);
    if (s != SD_OK)
        return s;
    sdi_paramspmm_params p = {c.warps, c.coarsen, c.pcsr_v, c.pcsr_s};
    *out = sdi_paramspmm_config_index(&p);
    if (*out < 0)
        return SDI_ERR(SD_ERR_INTERNAL, "pcsr eval: the PCSR default <%d,%d,%d,%d> for K %d lies "
                       "outside ParamSpMM's space", p.w, p.f, p.v, p.s, t->k);
    return SD_OK;
}

static int k_pos(const sdi_pcsr_eval_result *r, int k)
{
    for (int i = 0; i < r->nk; i++)
        if (r->ks[i] == k)
            return i;
    return -1;
}

/* Best fixed configuration for K over the training tasks tr (those of that K): the lowest
 * Σ log regret among configurations measured on one of them at least; ties to the one
 * measured on more tasks, then the lower index. -1 when no training task has that K. */
static int best_fixed(const sdi_pcsr_task *T, const int *tr, int ntr, int k)
{
    int best = -1, best_meas = 0;
    double best_score = INFINITY;
    for (int c = 0; c < SDI_PSPMM_NCONF; c++) {
        int meas = 0, m;
        double score = 0;
        for (int i = 0; i < ntr; i++) {
            const sdi_pcsr_task *t = &T[tr[i]];
            if (t->k != k)
                continue;
            score += log(sdi_pcsr_time_of(t, c, &m) / t->us[t->best]);
            meas += m;
        }
        if (meas == 0)
            continue;
        double tol = 1e-12 * (1 + fabs(best_score));
        if (best < 0 || score < best_score - tol ||
            (score <= best_score + tol && meas > best_meas)) {
            best = c;
            best_score = score;
            best_meas = meas;
        }
    }
    return best;
}

static void score(sdi_pcsr_split *acc, int m, int kp, int nk, const sdi_pcsr_task *t, int c,
                  int def)
{
    int meas, dm;
    double us = sdi_pcsr_time_of(t, c, &meas), us_def = sdi_pcsr_time_of(t, def, &dm);
    double slowest = 0;
    for (int q = 0; q < SDI_PSPMM_NCONF; q++)
        slowest = t->us[q] > slowest ? t->us[q] : slowest;
    double regret = us / t->us[t->best], strict = (meas ? us : slowest) / t->us[t->best];
    sdi_pcsr_cell *cells[2] = {&acc->cell[m][kp], &acc->cell[m][nk]};
    for (int i = 0; i < 2; i++) {
        sdi_pcsr_cell *e = cells[i];
        e->n++;
        e->hits += c == t->best;
        e->within5 += regret <= 1.05;
        e->unmeasured += !meas;
        e->log_regret += log(regret);
        e->log_speedup += log(us_def / us);
        e->within5_strict += strict <= 1.05;
        e->log_regret_strict += log(strict);
    }
}

typedef struct {
    double *X;                  /* ntasks × SDI_PSPMM_NFEAT */
    sdi_paramspmm_params *y;    /* ntasks */
    double train_s[2], decide_us;
} run_scratch;

/* One run: trains on tasks tr with seed, scores tasks te into acc. fixed_out (may be
 * NULL) receives the best fixed configuration per K. */
static sd_status one_run(const sdi_pcsr_task *T, const int *defidx, const int *tr, int ntr,
                         const int *te, int nte, const sdi_pcsr_eval_opts *o,
                         unsigned long long seed, const sdi_pcsr_eval_result *r,
                         run_scratch *w, sdi_pcsr_split *acc, int *fixed_out)
{
    sdi_paramspmm_decider all, perk[SDI_PE_MAXK];
    int has[SDI_PE_MAXK] = {0};
    memset(&all, 0, sizeof all);
    memset(perk, 0, sizeof perk);
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_paramspmm_decider_free(&all);                                                  \
        for (int q_ = 0; q_ < SDI_PE_MAXK; q_++)                                           \
            sdi_paramspmm_decider_free(&perk[q_]);                                         \
    } while (0)
    if (ntr == 0)
        return SDI_ERR(SD_ERR_INVALID_ARG, "pcsr eval: a split has no training task with PCSR "
                       "measurements (too few matrices for the folds)");
    sdi_forest_opts fo = o->forest;
    fo.seed = seed;
    for (int i = 0; i < ntr; i++) {
        memcpy(w->X + (size_t)i * SDI_PSPMM_NFEAT, T[tr[i]].x, sizeof T[tr[i]].x);
        sdi_paramspmm_config_of(T[tr[i]].best, &w->y[i]);
    }
    double t0 = sdi_now();
    SD_TRY(sdi_paramspmm_decider_fit(w->X, w->y, ntr, &fo, &all));
    double t1 = sdi_now();
    w->train_s[0] += t1 - t0;
    int fixed[SDI_PE_MAXK];
    for (int kp = 0; kp < r->nk; kp++) {
        int m = 0;
        for (int i = 0; i < ntr; i++)
            if (T[tr[i]].k == r->ks[kp]) {
                memcpy(w->X + (size_t)m * SDI_PSPMM_NFEAT, T[tr[i]].x, sizeof T[tr[i]].x);
                sdi_paramspmm_config_of(T[tr[i]].best, &w->y[m++]);
            }
        if (m > 0) {
            SD_TRY(sdi_paramspmm_decider_fit(w->X, w->y, m, &fo, &perk[kp]));
            has[kp] = 1;
        }
        fixed[kp] = best_fixed(T, tr, ntr, r->ks[kp]);
        if (fixed_out != NULL)
            fixed_out[kp] = fixed[kp];
    }
    w->train_s[1] += sdi_now() - t1;
    /* The decision time alone (the scoring below is the evaluation's, not the decider's). */
    double sink = 0;
    t0 = sdi_now();
    for (int i = 0; i < nte; i++) {
        sdi_paramspmm_params p;
        sdi_paramspmm_decide(&all, T[te[i]].x, &p);
        sink += p.w;
    }
    if (nte > 0)
        w->decide_us += (sdi_now() - t0) * 1e6 / nte + 0 * sink;
    for (int i = 0; i < nte; i++) {
        const sdi_pcsr_task *t = &T[te[i]];
        int kp = k_pos(r, t->k), def = defidx[te[i]];
        sdi_paramspmm_params p;
        sdi_paramspmm_decide(&all, t->x, &p);
        score(acc, SDI_PE_DECIDER, kp, r->nk, t, sdi_paramspmm_config_index(&p), def);
        /* No training task of this K: the per-K decider falls back to the pooled one. */
        sdi_paramspmm_decide(has[kp] ? &perk[kp] : &all, t->x, &p);
        score(acc, SDI_PE_DECIDER_K, kp, r->nk, t, sdi_paramspmm_config_index(&p), def);
        score(acc, SDI_PE_DEFAULT, kp, r->nk, t, def, def);
        score(acc, SDI_PE_FIXED, kp, r->nk, t, fixed[kp] >= 0 ? fixed[kp] : def, def);
    }
    acc->runs++;
    SD_FREE_ALL;
    return SD_OK;
#undef SD_FREE_ALL
}

/* Index of the first record of c named name; -1 when none. */
static int record_of(const sdi_corpus *c, const char *name)
{
    for (int r = 0; r < c->nrecords; r++)
        if (strcmp(c->records[r].matrix, name) == 0)
            return r;
    return -1;
}

static int count_names(const sdi_pcsr_task *T, const int *idx, int n)
{
    int cnt = 0;
    for (int i = 0; i < n; i++) {
        int seen = 0;
        for (int j = 0; j < i && !seen; j++)
            seen = strcmp(T[idx[i]].matrix, T[idx[j]].matrix) == 0;
        cnt += !seen;
    }
    return cnt;
}

sd_status sdi_pcsr_split_roles(const sdi_corpus *c, const sdi_pcsr_task *T, int n,
                               const sdi_pcsr_eval_opts *o, int *role)
{
    int *held = NULL, *fold = NULL, *keep = NULL;
    sdi_corpus rest;
    memset(&rest, 0, sizeof rest);
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(held);                                                                    \
        sdi_free(fold);                                                                    \
        sdi_free(keep);                                                                    \
        sdi_corpus_free(&rest);                                                            \
    } while (0)
    /* evalmodel's split (sdi_model_evaluate): the hold-out, then folds of the rest. */
    size_t nr = c->nrecords > 0 ? (size_t)c->nrecords : 1;
    held = sdi_calloc(nr, sizeof *held);
    SD_CHECK_ALLOC(held, "hold-out flags");
    fold = sdi_calloc(nr, sizeof *fold);
    SD_CHECK_ALLOC(fold, "folds");
    keep = sdi_calloc(nr, sizeof *keep);
    SD_CHECK_ALLOC(keep, "folds");
    int nmat = sdi_corpus_count_matrices(c, NULL);
    if (o->holdout > 0) {
        if (nmat - o->holdout < o->folds) {
            SD_FREE_ALL;
            return SDI_ERR(SD_ERR_INVALID_ARG, "pcsr eval: %d matrices cannot give a hold-out of "
                           "%d and %d folds (lower --holdout)", nmat, o->holdout, o->folds);
        }
        SD_TRY(sdi_corpus_holdout(c, o->holdout, o->split_seed, held));
    }
    for (int r = 0; r < c->nrecords; r++)
        keep[r] = !held[r];
    SD_TRY(sdi_corpus_subset(c, keep, &rest));
    SD_TRY(sdi_corpus_folds_stratified(&rest, o->folds, o->split_seed, fold));
    for (int i = 0; i < n; i++) {
        /* The PCSR line is itself a corpus line, so its matrix has records; the split
         * gives every record of a matrix the same side and fold. */
        int rc = record_of(c, T[i].matrix);
        if (rc < 0) {
            SD_FREE_ALL;
            return SDI_ERR(SD_ERR_PARSE, "matrix \"%s\" has PCSR data but no corpus record",
                           T[i].matrix);
        }
        role[i] = held[rc] ? -1 : fold[record_of(&rest, T[i].matrix)];
    }
    SD_FREE_ALL;
    return SD_OK;
#undef SD_FREE_ALL
}

sd_status sdi_pcsr_evaluate(const char *path, const sdi_pcsr_eval_opts *opts,
                            void (*progress)(const char *line), sdi_pcsr_eval_result *out)
{
    char *buf = NULL;
    sdi_pcsr_task *T = NULL;
    int *role = NULL, *defidx = NULL, *tr = NULL, *te = NULL;
    run_scratch w;
    memset(&w, 0, sizeof w);
    sdi_corpus c;
    memset(&c, 0, sizeof c);
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(buf);                                                                     \
        sdi_free(T);                                                                       \
        sdi_free(role);                                                                    \
        sdi_free(defidx);                                                                  \
        sdi_free(tr);                                                                      \
        sdi_free(te);                                                                      \
        sdi_free(w.X);                                                                     \
        sdi_free(w.y);                                                                     \
        sdi_corpus_free(&c);                                                               \
    } while (0)
    memset(out, 0, sizeof *out);
    sdi_pcsr_eval_opts o = opts != NULL ? *opts : sdi_pcsr_eval_opts_default();
    if (o.folds < 2 || o.seeds < 1 || o.holdout < 0)
        return SDI_ERR(SD_ERR_INVALID_ARG, "pcsr eval: %d folds, %d seeds, hold-out %d: need "
                       "folds >= 2, seeds >= 1, hold-out >= 0", o.folds, o.seeds, o.holdout);
    size_t len = 0;
    int n = 0;
    SD_TRY(sdi_model_read_file(path, &buf, &len));
    sd_status s = sdi_pcsr_tasks_parse(buf, len, 0, &T, &n);
    if (s == SD_OK)
        s = sdi_corpus_parse(buf, len, &c);
    if (s != SD_OK) {
        sdi_error_prefix("%s", path);
        SD_FREE_ALL;
        return s;
    }
    if (n == 0) {
        SD_FREE_ALL;
        return SDI_ERR(SD_ERR_INVALID_ARG, "%s: no spmm task with measured ParamSpMM (PCSR) "
                       "configurations (a corpus built by `sparseditto corpus` has them in "
                       "\"pcsr\")", path);
    }
    size_t nt = (size_t)n;
    role = sdi_malloc_array(nt, sizeof *role);
    SD_CHECK_ALLOC(role, "task roles");
    defidx = sdi_malloc_array(nt, sizeof *defidx);
    SD_CHECK_ALLOC(defidx, "defaults");
    tr = sdi_malloc_array(nt, sizeof *tr);
    SD_CHECK_ALLOC(tr, "training tasks");
    te = sdi_malloc_array(nt, sizeof *te);
    SD_CHECK_ALLOC(te, "test tasks");
    w.X = sdi_malloc_array(nt * SDI_PSPMM_NFEAT, sizeof *w.X);
    SD_CHECK_ALLOC(w.X, "decider examples");
    w.y = sdi_malloc_array(nt, sizeof *w.y);
    SD_CHECK_ALLOC(w.y, "decider examples");
    s = sdi_pcsr_split_roles(&c, T, n, &o, role);
    if (s != SD_OK) {
        sdi_error_prefix("%s", path);
        SD_FREE_ALL;
        return s;
    }
    int measured = 0;
    for (int i = 0; i < n; i++) {
        SD_TRY(default_index(&T[i], &defidx[i]));
        for (int q = 0; q < SDI_PSPMM_NCONF; q++)
            measured += T[i].us[q] > 0;
        if (k_pos(out, T[i].k) < 0) {
            if (out->nk == SDI_PE_MAXK) {
                SD_FREE_ALL;
                return SDI_ERR(SD_ERR_INVALID_ARG, "pcsr eval: more than %d distinct K",
                               SDI_PE_MAXK);
            }
            int p = out->nk++;
            while (p > 0 && out->ks[p - 1] > T[i].k) { /* keep ascending */
                out->ks[p] = out->ks[p - 1];
                p--;
            }
            out->ks[p] = T[i].k;
        }
    }
    out->ntasks = n;
    out->configs_per_task = (double)measured / n;
    for (int i = 0; i < n; i++)
        tr[i] = i;
    out->nmatrices = count_names(T, tr, n);
    int ntr = 0, nte = 0;
    for (int i = 0; i < n; i++)
        if (role[i] < 0)
            te[nte++] = i;
        else
            tr[ntr++] = i;
    out->holdout_matrices = count_names(T, te, nte);
    out->cv_matrices = count_names(T, tr, ntr);
    /* The default most tasks of each K get. */
    for (int kp = 0; kp < out->nk; kp++) {
        int cnt[SDI_PSPMM_NCONF] = {0}, best = 0;
        for (int i = 0; i < n; i++)
            if (T[i].k == out->ks[kp])
                cnt[defidx[i]]++;
        for (int q = 1; q < SDI_PSPMM_NCONF; q++)
            if (cnt[q] > cnt[best])
                best = q;
        out->default_common[kp] = best;
        out->fixed[kp] = -1;
    }
    double t0 = sdi_now();
    for (int f = 0; f < o.folds; f++) {
        ntr = nte = 0;
        for (int i = 0; i < n; i++)
            if (role[i] == f)
                te[nte++] = i;
            else if (role[i] >= 0)
                tr[ntr++] = i;
        for (int sd = 0; sd < o.seeds; sd++)
            SD_TRY(one_run(T, defidx, tr, ntr, te, nte, &o, o.forest.seed + (unsigned long long)sd,
                           out, &w, &out->cv, NULL));
        if (progress != NULL) {
            char line[160];
            snprintf(line, sizeof line, "fold %d: %d training, %d held-out tasks, %d seeds "
                     "(%.1f s)", f, ntr, nte, o.seeds, sdi_now() - t0);
            progress(line);
        }
    }
    ntr = nte = 0;
    for (int i = 0; i < n; i++)
        if (role[i] < 0)
            te[nte++] = i;
        else
            tr[ntr++] = i;
    if (nte > 0) {
        /* The times reported are the hold-out runs' (trained on every other matrix). */
        memset(w.train_s, 0, sizeof w.train_s);
        w.decide_us = 0;
        for (int sd = 0; sd < o.seeds; sd++)
            SD_TRY(one_run(T, defidx, tr, ntr, te, nte, &o, o.forest.seed + (unsigned long long)sd,
                           out, &w, &out->test, out->fixed));
        if (progress != NULL) {
            char line[160];
            snprintf(line, sizeof line, "hold-out: %d training, %d held-out tasks, %d seeds "
                     "(%.1f s)", ntr, nte, o.seeds, sdi_now() - t0);
            progress(line);
        }
    }
    int runs = nte > 0 ? out->test.runs : out->cv.runs;
    out->train_s[0] = w.train_s[0] / runs;
    out->train_s[1] = w.train_s[1] / runs;
    out->decide_us = w.decide_us / runs;
    SD_FREE_ALL;
    return SD_OK;
#undef SD_FREE_ALL
}

void sdi_pcsr_cell_metrics(const sdi_pcsr_cell *c, double *regret, double *within5, double *hit,
                           double *speedup)
{
    if (c->n == 0) {
        *regret = *within5 = *hit = *speedup = NAN;
        return;
    }
    *regret = exp(c->log_regret / c->n);
    *within5 = (double)c->within5 / c->n;
    *hit = (double)c->hits / c->n;
    *speedup = exp(c->log_speedup / c->n);
}

void sdi_pcsr_cell_strict(const sdi_pcsr_cell *c, double *regret, double *within5)
{
    *regret = c->n > 0 ? exp(c->log_regret_strict / c->n) : NAN;
    *within5 = c->n > 0 ? (double)c->within5_strict / c->n : NAN;
}

/* ------------------------------------------------------------------ reports */
static void today(char *buf, size_t cap)
{
    time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm) == NULL || strftime(buf, cap, "%Y-%m-%d", &tm) == 0)
        snprintf(buf, cap, "unknown");
}

static void config_text(int idx, char *buf, size_t cap)
{
    if (idx < 0) {
        snprintf(buf, cap, "none");
        return;
    }
    sdi_paramspmm_params p;
    sdi_paramspmm_config_of(idx, &p);
    snprintf(buf, cap, "⟨%d, %d, %d, %d⟩", p.w, p.f, p.v, p.s);
}

#define MD_CAP (64 * 1024)
#define PUT(...) (len += (size_t)snprintf(b + len, len < MD_CAP ? MD_CAP - len : 0, __VA_ARGS__))

static size_t table(char *b, size_t len, const sdi_pcsr_eval_result *r, const sdi_pcsr_split *sp,
                    int times)
{
    PUT("| method |");
    for (int kp = 0; kp <= r->nk; kp++) {
        if (kp < r->nk)
            PUT(" K=%d regret | ≤5 %% | hit | ×default |", r->ks[kp]);
        else
            PUT(" all regret | ≤5 %% | hit | ×default |");
    }
    PUT(" unmeasured | strict regret | strict ≤5 %% |%s\n|---|",
        times ? " train s | decide µs |" : "");
    for (int kp = 0; kp <= r->nk; kp++)
        PUT("---:|---:|---:|---:|");
    PUT("---:|---:|---:|%s\n", times ? "---:|---:|" : "");
    for (int m = 0; m < SDI_PE_N; m++) {
        PUT("| %s |", method_names[m]);
        for (int kp = 0; kp <= r->nk; kp++) {
            double rg, w5, hit, sp_;
            sdi_pcsr_cell_metrics(&sp->cell[m][kp], &rg, &w5, &hit, &sp_);
            if (sp->cell[m][kp].n == 0)
                PUT(" – | – | – | – |");
            else
                PUT(" %.4f | %.1f %% | %.1f %% | %.3f |", rg, 100 * w5, 100 * hit, sp_);
        }
        const sdi_pcsr_cell *all = &sp->cell[m][r->nk];
        double srg, sw5;
        sdi_pcsr_cell_strict(all, &srg, &sw5);
        PUT(" %d of %d | %.4f | %.1f %% |", all->unmeasured, all->n, srg, 100 * sw5);
        if (times && m == SDI_PE_DECIDER)
            PUT(" %.3f | %.2f |", r->train_s[m], r->decide_us);
        else if (times && m == SDI_PE_DECIDER_K)
            PUT(" %.3f | – |", r->train_s[m]);
        else if (times)
            PUT(" – | – |");
        PUT("\n");
    }
    return len;
}

static const char *compare(double a, double b)
{
    return a > b ? "**worse than**" : a < b ? "better than" : "equal to";
}

/* The verdict on one split, from its overall geomean regrets (nearest rule, then strict). */
static size_t verdict(char *b, size_t len, const sdi_pcsr_eval_result *r, const sdi_pcsr_split *sp,
                      const char *split)
{
    double g[SDI_PE_N], gs[SDI_PE_N], x, y, z;
    for (int m = 0; m < SDI_PE_N; m++) {
        sdi_pcsr_cell_metrics(&sp->cell[m][r->nk], &g[m], &x, &y, &z);
        sdi_pcsr_cell_strict(&sp->cell[m][r->nk], &gs[m], &x);
    }
    for (int m = SDI_PE_DECIDER; m <= SDI_PE_DECIDER_K; m++)
        PUT("- %s, %s: geomean regret %.4f, %s best-fixed (%.4f), %s the default (%.4f); "
            "strict (%d of %d choices unmeasured) %.4f, %s best-fixed (%.4f), %s the default "
            "(%.4f).\n", split, method_names[m], g[m], compare(g[m], g[SDI_PE_FIXED]),
            g[SDI_PE_FIXED], compare(g[m], g[SDI_PE_DEFAULT]), g[SDI_PE_DEFAULT],
            sp->cell[m][r->nk].unmeasured, sp->cell[m][r->nk].n, gs[m],
            compare(gs[m], gs[SDI_PE_FIXED]), gs[SDI_PE_FIXED], compare(gs[m], gs[SDI_PE_DEFAULT]),
            gs[SDI_PE_DEFAULT]);
    for (int m = SDI_PE_DECIDER; m <= SDI_PE_DECIDER_K; m++) {
        const sdi_pcsr_cell *c = &sp->cell[m][r->nk];
        if (c->n > 0 && 4 * c->unmeasured > c->n)
            PUT("- %s, %s: %.0f %% of its choices were never measured, so its nearest-rule "
                "figure mostly times configurations it did not choose: read the strict one.\n",
                split, method_names[m], 100.0 * c->unmeasured / c->n);
    }
    return len;
}

sd_status sdi_pcsr_eval_markdown(const sdi_pcsr_eval_result *r, const sdi_pcsr_eval_opts *o,
                                 const char *command, char **md)
{
    *md = NULL;
    char *b = sdi_malloc(MD_CAP);
    if (b == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "pcsr eval: out of host memory for the report");
    size_t len = 0;
    char date[32], cfg[64];
    today(date, sizeof date);
    PUT("# ParamSpMM's ⟨W, F, V, S⟩ decider on held-out matrices\n\n");
    PUT("Corpus: %d matrices, %d spmm tasks with PCSR measurements (K", r->nmatrices, r->ntasks);
    for (int kp = 0; kp < r->nk; kp++)
        PUT("%s %d", kp > 0 ? "," : "", r->ks[kp]);
    PUT("), %.2f of ParamSpMM's %d configurations measured per task on average. Date %s. "
        "Command: `%.400s`.\n\n", r->configs_per_task, SDI_PSPMM_NCONF, date, command);
    PUT("Protocol: the split of `sparseditto evalmodel` (split seed %llu): a hold-out of %d "
        "matrices stratified by shape class; %d-fold cross-validation grouped by matrix (every "
        "K of a matrix in one fold) and stratified by shape class on the other %d; every split "
        "trained with %d seeds (from %llu; forests of %d trees, depth %d).\n\n",
        (unsigned long long)o->split_seed, r->holdout_matrices, o->folds, r->cv_matrices, o->seeds,
        (unsigned long long)o->forest.seed, o->forest.ntrees, o->forest.max_depth);
    PUT("Methods: **decider** = ParamSpMM's four random forests trained on the tasks of every "
        "K together (K is not one of its 18 features); **decider-k** = one decider per K, as "
        "`train --forest` ships it "
        "(`--forest-k K` trains one of them); **default** = the library's PCSR "
        "default (`sdi_spmm_config_default`; most common per K:");
    for (int kp = 0; kp < r->nk; kp++) {
        config_text(r->default_common[kp], cfg, sizeof cfg);
        PUT("%s K=%d %s", kp > 0 ? "," : "", r->ks[kp], cfg);
    }
    PUT("); **best-fixed** = per K, the one configuration with the lowest geomean regret on "
        "the split's training matrices (on the %d non-hold-out matrices:", r->cv_matrices);
    for (int kp = 0; kp < r->nk; kp++) {
        config_text(r->fixed[kp], cfg, sizeof cfg);
        PUT("%s K=%d %s", kp > 0 ? "," : "", r->ks[kp], cfg);
    }
    PUT(").\n\n");
    PUT("Scores per (task, seed): regret = time(choice) / time(fastest measured configuration "
        "of ParamSpMM's space), geomean; ≤5 %% = share within 5 %% of that fastest; hit = share "
        "choosing exactly it; ×default = geomean time(default) / time(choice). A choice not "
        "measured for the task is timed as the nearest measured configuration in ⟨W, F, V, S⟩ "
        "order (|Δlog2 W| first, then |Δlog2 F|, |ΔV|, |ΔS|; ties to the slower), never counts "
        "as a hit, and is counted in \"unmeasured\"; the strict columns time it as the task's "
        "slowest measured configuration instead (a miss).\n\n");
    if (r->holdout_matrices > 0) {
        PUT("## Held-out test set: %d matrices, %d tasks × %d seeds\n\n", r->holdout_matrices,
            r->test.cell[0][r->nk].n / (r->test.runs > 0 ? r->test.runs : 1), r->test.runs);
        len = table(b, len, r, &r->test, 1);
        PUT("\n");
    }
    PUT("## Cross-validation: %d folds × %d seeds on %d matrices\n\n", o->folds, o->seeds,
        r->cv_matrices);
    len = table(b, len, r, &r->cv, r->holdout_matrices == 0);
    PUT("\ntrain s: mean seconds to train the decider (decider-k: all its per-K deciders) on "
        "the %s; decide µs: mean time of one decision of the decider.\n\n",
        r->holdout_matrices > 0 ? "non-hold-out matrices" : "cross-validation folds");
    PUT("## Verdict\n\n");
    if (r->holdout_matrices > 0)
        len = verdict(b, len, r, &r->test, "hold-out");
    len = verdict(b, len, r, &r->cv, "cross-validation");
    if (r->configs_per_task < 0.5 * SDI_PSPMM_NCONF)
        PUT("\nOnly %.2f of the %d configurations were measured per task (a corpus built "
            "without `sparseditto corpus --pcsr-space`), so \"fastest\" is the fastest of "
            "those, the decider was trained on that narrow choice, and a regret here is a "
            "lower bound of the regret against the whole space.\n", r->configs_per_task,
            SDI_PSPMM_NCONF);
    if (len >= MD_CAP) {
        sdi_free(b);
        return SDI_ERR(SD_ERR_INTERNAL, "pcsr eval: report longer than %d bytes", MD_CAP);
    }
    *md = b;
    return SD_OK;
}
#undef PUT

static void split_json(sdi_json *j, const sdi_pcsr_eval_result *r, const sdi_pcsr_split *sp)
{
    sdi_json_begin_object(j);
    sdi_json_key(j, "runs");
    sdi_json_int(j, sp->runs);
    sdi_json_key(j, "methods");
    sdi_json_begin_array(j);
    for (int m = 0; m < SDI_PE_N; m++) {
        sdi_json_begin_object(j);
        sdi_json_key(j, "name");
        sdi_json_string(j, method_names[m]);
        for (int kp = 0; kp <= r->nk; kp++) {
            char key[16];
            snprintf(key, sizeof key, kp < r->nk ? "k%d" : "all", r->ks[kp < r->nk ? kp : 0]);
            const sdi_pcsr_cell *c = &sp->cell[m][kp];
            double rg, w5, hit, su;
            sdi_pcsr_cell_metrics(c, &rg, &w5, &hit, &su);
            sdi_json_key(j, key);
            sdi_json_begin_object(j);
            sdi_json_key(j, "n");
            sdi_json_int(j, c->n);
            sdi_json_key(j, "regret");
            sdi_json_number(j, rg);
            sdi_json_key(j, "within5");
            sdi_json_number(j, w5);
            sdi_json_key(j, "hit");
            sdi_json_number(j, hit);
            sdi_json_key(j, "speedup_vs_default");
            sdi_json_number(j, su);
            sdi_json_key(j, "unmeasured");
            sdi_json_int(j, c->unmeasured);
            sdi_pcsr_cell_strict(c, &rg, &w5);
            sdi_json_key(j, "regret_strict");
            sdi_json_number(j, rg);
            sdi_json_key(j, "within5_strict");
            sdi_json_number(j, w5);
            sdi_json_end_object(j);
        }
        sdi_json_end_object(j);
    }
    sdi_json_end_array(j);
    sdi_json_end_object(j);
}

static void config_json(sdi_json *j, int idx)
{
    if (idx < 0) {
        sdi_json_null(j);
        return;
    }
    sdi_paramspmm_params p;
    sdi_paramspmm_config_of(idx, &p);
    sdi_json_begin_array(j);
    sdi_json_int(j, p.w);
    sdi_json_int(j, p.f);
    sdi_json_int(j, p.v);
    sdi_json_int(j, p.s);
    sdi_json_end_array(j);
}

void sdi_pcsr_eval_json(const sdi_pcsr_eval_result *r, const sdi_pcsr_eval_opts *o,
                        const char *command, sdi_json *j)
{
    char date[32];
    today(date, sizeof date);
    sdi_json_begin_object(j);
    sdi_json_key(j, "format");
    sdi_json_string(j, "sparseditto-paramspmm-eval");
    sdi_json_key(j, "date");
    sdi_json_string(j, date);
    sdi_json_key(j, "command");
    sdi_json_string(j, command);
    sdi_json_key(j, "corpus");
    sdi_json_begin_object(j);
    sdi_json_key(j, "matrices");
    sdi_json_int(j, r->nmatrices);
    sdi_json_key(j, "spmm_tasks");
    sdi_json_int(j, r->ntasks);
    sdi_json_key(j, "k");
    sdi_json_begin_array(j);
    for (int kp = 0; kp < r->nk; kp++)
        sdi_json_int(j, r->ks[kp]);
    sdi_json_end_array(j);
    sdi_json_key(j, "configs_per_task");
    sdi_json_number(j, r->configs_per_task);
    sdi_json_end_object(j);
    sdi_json_key(j, "protocol");
    sdi_json_begin_object(j);
    sdi_json_key(j, "holdout_matrices");
    sdi_json_int(j, r->holdout_matrices);
    sdi_json_key(j, "cv_matrices");
    sdi_json_int(j, r->cv_matrices);
    sdi_json_key(j, "folds");
    sdi_json_int(j, o->folds);
    sdi_json_key(j, "seeds");
    sdi_json_int(j, o->seeds);
    sdi_json_key(j, "split_seed");
    sdi_json_int(j, (long long)o->split_seed);
    sdi_json_key(j, "first_seed");
    sdi_json_int(j, (long long)o->forest.seed);
    sdi_json_key(j, "trees");
    sdi_json_int(j, o->forest.ntrees);
    sdi_json_key(j, "max_depth");
    sdi_json_int(j, o->forest.max_depth);
    sdi_json_key(j, "unmeasured_choice");
    sdi_json_string(j, "timed as the nearest measured configuration in <W,F,V,S> order "
                       "(|dlog2 W|, |dlog2 F|, |dV|, |dS|; ties to the slower); never a hit; "
                       "*_strict: timed as the task's slowest measured configuration");
    sdi_json_end_object(j);
    sdi_json_key(j, "default");
    sdi_json_begin_object(j);
    for (int kp = 0; kp < r->nk; kp++) {
        char key[16];
        snprintf(key, sizeof key, "k%d", r->ks[kp]);
        sdi_json_key(j, key);
        config_json(j, r->default_common[kp]);
    }
    sdi_json_end_object(j);
    sdi_json_key(j, "best_fixed");
    sdi_json_begin_object(j);
    for (int kp = 0; kp < r->nk; kp++) {
        char key[16];
        snprintf(key, sizeof key, "k%d", r->ks[kp]);
        sdi_json_key(j, key);
        config_json(j, r->fixed[kp]);
    }
    sdi_json_end_object(j);
    if (r->holdout_matrices > 0) {
        sdi_json_key(j, "test");
        split_json(j, r, &r->test);
    }
    sdi_json_key(j, "cv");
    split_json(j, r, &r->cv);
    sdi_json_key(j, "train_s");
    sdi_json_begin_object(j);
    sdi_json_key(j, "decider");
    sdi_json_number(j, r->train_s[0]);
    sdi_json_key(j, "decider_k");
    sdi_json_number(j, r->train_s[1]);
    sdi_json_end_object(j);
    sdi_json_key(j, "decide_us");
    sdi_json_number(j, r->decide_us);
    sdi_json_end_object(j);
}
