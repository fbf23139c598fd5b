/* tools/evalmodel/rankers.c: the rankers of the comparison behind one interface (rankers.h),
 * their metrics per operator, and the evaluation protocol of `sparseditto evalmodel`
 * (stratified grouped k-fold cross-validation × seeds, plus a held-out test set) with
 * its JSON and markdown tables. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "analysis/analysis.h"
#include "rankers.h"

static const char *const kind_names[SDI_RANKER_COUNT] = {"energy-v1", "energy-nomargin", "mlp",
                                                         "gbt",       "forest",          "rules-v1"};

const char *sdi_ranker_name(sdi_ranker_kind k)
{
    return (unsigned)k < SDI_RANKER_COUNT ? kind_names[k] : "unknown";
}

int sdi_ranker_from_name(const char *name)
{
    for (int k = 0; name != NULL && k < SDI_RANKER_COUNT; k++)
        if (strcmp(name, kind_names[k]) == 0)
            return k;
    return -1;
}

sdi_ranker_opts sdi_ranker_opts_default(void)
{
    sdi_ranker_opts o;
    memset(&o, 0, sizeof o);
    o.seed = 1;
    o.energy = sdi_energy_train_opts_default();
    o.mlp = sdi_mlp_opts_default();
    o.gbt = sdi_gbt_opts_default();
    o.forest = sdi_forest_opts_default();
    o.forest.ntrees = 32;
    o.forest.max_depth = 10;
    o.forest.min_leaf = 2;
    return o;
}

void sdi_ranker_free(sdi_ranker *r)
{
    if (r == NULL)
        return;
    sdi_energy_model_free(&r->energy);
    sdi_mlp_free(&r->mlp);
    for (int t = 0; t < SDI_EM_MAX_TOTAL; t++) {
        sdi_gbt_free(&r->gbt[t]);
        sdi_forest_free(&r->forest[t]);
    }
    memset(r, 0, sizeof *r);
}

static void task_inputs(const sdi_energy_model *scaler, const sdi_corpus *c, int t, double *x)
{
    const sdi_corpus_task *task = &c->tasks[t];
    const sdi_corpus_record *r = &c->records[task->record];
    sdi_energy_inputs(scaler, r->features, r->shape, task->op, task->k, x);
}

/* Per-template regression data: rows of the tasks that measured global template tg,
 * target log2(time / fastest measured time of the task). */
static sd_status template_rows(const sdi_ranker *r, const sdi_corpus *c, int op, int s,
                               double **Xo, double **yo, int *no)
{
    *Xo = NULL;
    *yo = NULL;
    *no = 0;
    int n = 0;
    for (int t = 0; t < c->ntasks; t++)
        n += (int)c->tasks[t].op == op && c->tasks[t].us[s] > 0;
    if (n == 0)
        return SD_OK;
    double *X = sdi_malloc_array((size_t)n * SDI_EM_NIN, sizeof *X);
    double *y = sdi_malloc_array((size_t)n, sizeof *y);
    if (X == NULL || y == NULL) {
        sdi_free(X);
        sdi_free(y);
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for tree training data");
    }
    int i = 0;
    for (int t = 0; t < c->ntasks; t++) {
        const sdi_corpus_task *task = &c->tasks[t];
        if ((int)task->op != op || !(task->us[s] > 0))
            continue;
        double best = INFINITY;
        for (int q = 0; q < SDI_RANK_MAX_TEMPLATES; q++)
            if (task->us[q] > 0 && task->us[q] < best)
                best = task->us[q];
        task_inputs(&r->energy, c, t, X + (size_t)i * SDI_EM_NIN);
        y[i++] = log2(task->us[s] / best);
    }
    *Xo = X;
    *yo = y;
    *no = n;
    return SD_OK;
}

static sd_status train_trees(sdi_ranker *r, const sdi_corpus *c, const sdi_ranker_opts *o)
{
    for (int op = 0; op < SDI_EM_NOP; op++)
        for (int s = 0; s < r->energy.ntemp[op]; s++) {
            int tg = r->energy.toff[op] + s;
            double *X = NULL, *y = NULL;
            int n = 0;
            sd_status st = template_rows(r, c, op, s, &X, &y, &n);
            if (st == SD_OK && n > 0) {
                if (r->kind == SDI_RANKER_GBT) {
                    sdi_gbt_opts go = o->gbt;
                    go.seed = o->seed * 7919ull + (unsigned long long)tg;
                    st = sdi_gbt_fit(X, y, n, SDI_EM_NIN, &go, &r->gbt[tg]);
                } else {
                    sdi_forest_opts fo = o->forest;
                    fo.seed = o->seed * 7919ull + (unsigned long long)tg;
                    st = sdi_forest_fit(X, y, n, SDI_EM_NIN, 0, &fo, &r->forest[tg]);
                }
                r->has[tg] = st == SD_OK;
            }
            sdi_free(X);
            sdi_free(y);
            if (st != SD_OK)
                return st;
        }
    return SD_OK;
}

sd_status sdi_ranker_train(sdi_ranker_kind kind, const sdi_corpus *c, const sdi_ranker_opts *opts,
                           sdi_ranker *out)
{
#define SD_FREE_ALL sdi_ranker_free(out)
    memset(out, 0, sizeof *out);
    sdi_ranker_opts o = opts != NULL ? *opts : sdi_ranker_opts_default();
    if ((unsigned)kind >= SDI_RANKER_COUNT)
        return SDI_ERR(SD_ERR_INVALID_ARG, "ranker: unknown kind %d", (int)kind);
    out->kind = kind;
    if (kind == SDI_RANKER_ENERGY || kind == SDI_RANKER_ENERGY_NOMARGIN) {
        sdi_energy_train_opts eo = o.energy;
        eo.seed = o.seed;
        eo.verbose = 0;
        if (kind == SDI_RANKER_ENERGY_NOMARGIN)
            for (int i = 0; i < SDI_EM_NOP; i++)
                eo.lambda[i] = 0;
        SD_TRY(sdi_energy_train(c, &eo, &out->energy));
        return SD_OK;
    }
    /* The other rankers borrow the energy model's standardisation (same inputs). */
    SD_TRY(sdi_energy_model_alloc(&out->energy, 1));
    sdi_energy_fit_standardization(&out->energy, c);
    if (out->energy.ntotal > SDI_EM_MAX_TOTAL) {
        SD_FREE_ALL;
        return SDI_ERR(SD_ERR_INTERNAL, "ranker: %d templates, at most %d", out->energy.ntotal,
                       SDI_EM_MAX_TOTAL);
    }
    if (kind == SDI_RANKER_MLP) {
        sdi_mlp_opts mo = o.mlp;
        mo.seed = o.seed;
        SD_TRY(sdi_mlp_train(c, &out->energy, &mo, &out->mlp));
    } else if (kind == SDI_RANKER_GBT || kind == SDI_RANKER_FOREST) {
        SD_TRY(train_trees(out, c, &o));
    }
    return SD_OK;
#undef SD_FREE_ALL
}

void sdi_ranker_scores(const sdi_ranker *r, const sdi_corpus *c, int t, double *E)
{
    const sdi_corpus_task *task = &c->tasks[t];
    int op = task->op, nt = r->energy.ntemp[op];
    double x[SDI_EM_NIN];
    switch (r->kind) {
    case SDI_RANKER_ENERGY:
    case SDI_RANKER_ENERGY_NOMARGIN:
        task_inputs(&r->energy, c, t, x);
        sdi_energy_eval(&r->energy, x, task->op, E, NULL);
        return;
    case SDI_RANKER_MLP:
        task_inputs(&r->energy, c, t, x);
        sdi_mlp_eval(&r->mlp, x, r->energy.toff[op], nt, E);
        return;
    case SDI_RANKER_GBT:
    case SDI_RANKER_FOREST:
        task_inputs(&r->energy, c, t, x);
        for (int s = 0; s < nt; s++) {
            int tg = r->energy.toff[op] + s;
            E[s] = !r->has[tg]                    ? INFINITY
                   : r->kind == SDI_RANKER_GBT ? sdi_gbt_predict(&r->gbt[tg], x)
                                                  : sdi_forest_predict(&r->forest[tg], x);
        }
        return;
    case SDI_RANKER_RULES: {
        sd_features f;
        memset(&f, 0, sizeof f);
        const sdi_corpus_record *rec = &c->records[task->record];
        for (int i = 0; i < SD_NUM_FEATURES; i++)
            f.values[i] = i >= SDI_F_U_TOTAL && op != SD_OP_SPGEMM ? 0 : rec->features[i];
        f.shape_class = rec->shape;
        f.op = task->op;
        sdi_ranking rk;
        int nv = 0;
        const char *const *vocab = sdi_vocabulary(task->op, &nv);
        for (int s = 0; s < nv; s++)
            E[s] = INFINITY;
        if (sdi_rank_rules(&f, task->op, task->k, &rk) != SD_OK)
            return;
        for (int i = 0; i < rk.n; i++)
            for (int s = 0; s < nv; s++)
                if (strcmp(rk.e[i].label, vocab[s]) == 0)
                    E[s] = rk.e[i].energy;
        return;
    }
    default:
        for (int s = 0; s < nt; s++)
            E[s] = 0;
    }
}

/* ------------------------------------------------------------------ metrics */
typedef struct {
    int n, hits, ncsr, cliffs, hits3;
    double lreg, got, best, lreg3;
} metric_acc;

/* ch: the top choice, or: the fastest, b3: the fastest of the top 3 (sdi_best_of_top). */
static void acc_add(metric_acc *a, const sdi_corpus_task *task, int ch, int or, int b3)
{
    a->n++;
    a->hits += task->us[ch] == task->us[or];
    a->lreg += log(task->us[ch] / task->us[or]);
    a->hits3 += task->us[b3] == task->us[or];
    a->lreg3 += log(task->us[b3] / task->us[or]);
    a->got += log(task->baseline_us / task->us[ch]);
    a->best += log(task->baseline_us / task->us[or]);
    if (task->us[0] > 0) { /* vocabulary index 0 is the op's CSR template */
        a->ncsr++;
        a->cliffs += task->us[ch] > 2.0 * task->us[0];
    }
}

static void acc_finish(const metric_acc *a, sdi_energy_metrics *m)
{
    memset(m, 0, sizeof *m);
    m->ntasks = a->n;
    m->top1 = a->n > 0 ? (double)a->hits / a->n : 0;
    m->regret = a->n > 0 ? exp(a->lreg / a->n) : 1;
    m->capture = a->best > 0 ? a->got / a->best : 0;
    m->cliff = a->ncsr > 0 ? (double)a->cliffs / a->ncsr : 0;
    m->top3 = a->n > 0 ? (double)a->hits3 / a->n : 0;
    m->regret3 = a->n > 0 ? exp(a->lreg3 / a->n) : 1;
}

void sdi_ranker_evaluate(const sdi_ranker *r, const sdi_corpus *c, sdi_ranker_metrics *out)
{
    metric_acc acc[SDI_EM_NOP + 1];
    memset(acc, 0, sizeof acc);
    double E[SDI_RANK_MAX_TEMPLATES];
    for (int t = 0; t < c->ntasks; t++) {
        const sdi_corpus_task *task = &c->tasks[t];
        int nv = 0;
        sdi_vocabulary(task->op, &nv);
        sdi_ranker_scores(r, c, t, E);
        int ch = -1, or = -1;
        for (int s = 0; s < nv; s++) {
            if (!(task->us[s] > 0))
                continue;
            if (ch < 0 || E[s] < E[ch])
                ch = s;
            if (or < 0 || task->us[s] < task->us[or])
                or = s;
        }
        if (ch < 0)
            continue;
        const int b3 = sdi_best_of_top(E, task->us, nv, 3);
        acc_add(&acc[task->op], task, ch, or, b3);
        acc_add(&acc[SDI_EM_NOP], task, ch, or, b3);
    }
    for (int o = 0; o < SDI_EM_NOP; o++)
        acc_finish(&acc[o], &out->op[o]);
    acc_finish(&acc[SDI_EM_NOP], &out->all);
}

/* ------------------------------------------------------------------ protocol */
sdi_model_eval_opts sdi_model_eval_opts_default(void)
{
    sdi_model_eval_opts o;
    memset(&o, 0, sizeof o);
    o.folds = 5;
    o.seeds = 5;
    o.holdout = 100;
    o.split_seed = 1;
    o.kinds = (1u << SDI_RANKER_COUNT) - 1;
    o.ranker = sdi_ranker_opts_default();
    return o;
}

/* Running sums of the metrics over runs (for mean and population std). */
typedef struct {
    int n;
    sdi_ranker_metrics sum, sq;
} run_acc;

#define NMETRICS 6
static void metrics_fields(sdi_energy_metrics *m, double *f[NMETRICS])
{
    f[0] = &m->top1;
    f[1] = &m->regret;
    f[2] = &m->capture;
    f[3] = &m->cliff;
    f[4] = &m->top3;
    f[5] = &m->regret3;
}

static void run_add(run_acc *a, const sdi_ranker_metrics *m)
{
    a->n++;
    for (int o = 0; o <= SDI_EM_NOP; o++) {
        sdi_energy_metrics *s = o < SDI_EM_NOP ? &a->sum.op[o] : &a->sum.all;
        sdi_energy_metrics *q = o < SDI_EM_NOP ? &a->sq.op[o] : &a->sq.all;
        sdi_energy_metrics v = o < SDI_EM_NOP ? m->op[o] : m->all;
        double *fs[NMETRICS], *fq[NMETRICS], *fv[NMETRICS];
        metrics_fields(s, fs);
        metrics_fields(q, fq);
        metrics_fields(&v, fv);
        for (int i = 0; i < NMETRICS; i++) {
            *fs[i] += *fv[i];
            *fq[i] += *fv[i] * *fv[i];
        }
        s->ntasks += v.ntasks;
    }
}

static void run_finish(const run_acc *a, sdi_eval_summary *out)
{
    memset(out, 0, sizeof *out);
    out->n = a->n;
    if (a->n == 0)
        return;
    for (int o = 0; o <= SDI_EM_NOP; o++) {
        sdi_energy_metrics s = o < SDI_EM_NOP ? a->sum.op[o] : a->sum.all;
        sdi_energy_metrics q = o < SDI_EM_NOP ? a->sq.op[o] : a->sq.all;
        sdi_energy_metrics *mm = o < SDI_EM_NOP ? &out->mean.op[o] : &out->mean.all;
        sdi_energy_metrics *sd = o < SDI_EM_NOP ? &out->sd.op[o] : &out->sd.all;
        double *fs[NMETRICS], *fq[NMETRICS], *fm[NMETRICS], *fd[NMETRICS];
        metrics_fields(&s, fs);
        metrics_fields(&q, fq);
        metrics_fields(mm, fm);
        metrics_fields(sd, fd);
        for (int i = 0; i < NMETRICS; i++) {
            *fm[i] = *fs[i] / a->n;
            double var = *fq[i] / a->n - *fm[i] * *fm[i];
            *fd[i] = var > 0 ? sqrt(var) : 0;
        }
        mm->ntasks = (int)((double)s.ntasks / a->n + 0.5);
    }
}

/* Trains kind with seed on train, scores test; adds the metrics to acc and the times. */
static sd_status one_run(sdi_ranker_kind kind, const sdi_model_eval_opts *o, unsigned long long seed,
                         const sdi_corpus *train, const sdi_corpus *test, run_acc *acc,
                         double *train_s, double *rank_us)
{
    sdi_ranker r;
    sdi_ranker_opts ro = o->ranker;
    ro.seed = seed;
    double t0 = sdi_now();
    sd_status s = sdi_ranker_train(kind, train, &ro, &r);
    if (s != SD_OK)
        return s;
    if (train_s != NULL)
        *train_s += sdi_now() - t0;
    sdi_ranker_metrics m;
    sdi_ranker_evaluate(&r, test, &m);
    run_add(acc, &m);
    if (rank_us != NULL && test->ntasks > 0) {
        double E[SDI_RANK_MAX_TEMPLATES], sink = 0;
        double t1 = sdi_now();
        for (int t = 0; t < test->ntasks; t++) {
            sdi_ranker_scores(&r, test, t, E);
            sink += E[0];
        }
        *rank_us += (sdi_now() - t1) * 1e6 / test->ntasks + 0 * sink;
    }
    sdi_ranker_free(&r);
    return SD_OK;
}

sd_status sdi_model_evaluate(const sdi_corpus *c, const sdi_model_eval_opts *opts,
                             void (*progress)(const char *line), sdi_model_eval_result *out)
{
    int *held = NULL, *fold = NULL, *keep = NULL;
    sdi_corpus rest, test, tr, te;
    memset(&rest, 0, sizeof rest);
    memset(&test, 0, sizeof test);
    memset(&tr, 0, sizeof tr);
    memset(&te, 0, sizeof te);
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(held);                                                                    \
        sdi_free(fold);                                                                    \
        sdi_free(keep);                                                                    \
        sdi_corpus_free(&rest);                                                            \
        sdi_corpus_free(&test);                                                            \
        sdi_corpus_free(&tr);                                                              \
        sdi_corpus_free(&te);                                                              \
    } while (0)
    memset(out, 0, sizeof *out);
    sdi_model_eval_opts o = opts != NULL ? *opts : sdi_model_eval_opts_default();
    if (o.folds < 2 || o.seeds < 1 || o.holdout < 0)
        return SDI_ERR(SD_ERR_INVALID_ARG, "evaluation: %d folds, %d seeds, hold-out %d: need "
                       "folds >= 2, seeds >= 1, hold-out >= 0", o.folds, o.seeds, o.holdout);
    size_t nr = c->nrecords > 0 ? (size_t)c->nrecords : 1;
    held = sdi_calloc(nr, sizeof *held);
    SD_CHECK_ALLOC(held, "hold-out flags");
    fold = sdi_malloc_array(nr, sizeof *fold);
    SD_CHECK_ALLOC(fold, "folds");
    keep = sdi_malloc_array(nr, sizeof *keep);
    SD_CHECK_ALLOC(keep, "folds");
    out->nmatrices = sdi_corpus_count_matrices(c, NULL);
    out->ntasks = c->ntasks;
    for (int t = 0; t < c->ntasks; t++)
        out->ntasks_op[c->tasks[t].op]++;
    if (o.holdout > 0) {
        if (out->nmatrices - o.holdout < o.folds) {
            SD_FREE_ALL;
            return SDI_ERR(SD_ERR_INVALID_ARG, "evaluation: %d matrices cannot give a hold-out of "
                           "%d and %d folds (lower --holdout)", out->nmatrices, o.holdout, o.folds);
        }
        SD_TRY(sdi_corpus_holdout(c, o.holdout, o.split_seed, held));
    }
    for (int r = 0; r < c->nrecords; r++)
        keep[r] = !held[r];
    SD_TRY(sdi_corpus_subset(c, keep, &rest));
    SD_TRY(sdi_corpus_subset(c, held, &test));
    out->holdout_matrices = o.holdout > 0 ? sdi_corpus_count_matrices(&test, NULL) : 0;
    out->cv_matrices = sdi_corpus_count_matrices(&rest, NULL);
    SD_TRY(sdi_corpus_folds_stratified(&rest, o.folds, o.split_seed, fold));
    for (int k = 0; k < SDI_RANKER_COUNT; k++) {
        if (!(o.kinds & (1u << k)))
            continue;
        /* rules-v1 is not trained: one run per split says everything. */
        int nseeds = k == SDI_RANKER_RULES ? 1 : o.seeds;
        run_acc cv, ts;
        memset(&cv, 0, sizeof cv);
        memset(&ts, 0, sizeof ts);
        double train_s = 0, rank_us = 0;
        double t0 = sdi_now();
        for (int f = 0; f < o.folds; f++) {
            for (int r = 0; r < rest.nrecords; r++)
                keep[r] = fold[r] != f;
            SD_TRY(sdi_corpus_subset(&rest, keep, &tr));
            for (int r = 0; r < rest.nrecords; r++)
                keep[r] = fold[r] == f;
            SD_TRY(sdi_corpus_subset(&rest, keep, &te));
            /* --cv-only: the times come from the cross-validation runs instead. */
            for (int s = 0; s < nseeds; s++)
                SD_TRY(one_run((sdi_ranker_kind)k, &o, o.ranker.seed + (unsigned long long)s, &tr,
                               &te, &cv, o.cv_only ? &train_s : NULL,
                               o.cv_only ? &rank_us : NULL));
            sdi_corpus_free(&tr);
            sdi_corpus_free(&te);
        }
        if (test.ntasks > 0 && !o.cv_only)
            for (int s = 0; s < nseeds; s++)
                SD_TRY(one_run((sdi_ranker_kind)k, &o, o.ranker.seed + (unsigned long long)s, &rest,
                               &test, &ts, &train_s, &rank_us));
        out->kind[k].evaluated = 1;
        run_finish(&cv, &out->kind[k].cv);
        run_finish(&ts, &out->kind[k].test);
        int nt = o.cv_only ? cv.n : ts.n;
        out->kind[k].train_s = nt > 0 ? train_s / nt : 0;
        out->kind[k].rank_us = nt > 0 ? rank_us / nt : 0;
        if (progress != NULL) {
            char line[256];
            snprintf(line, sizeof line, "%-16s %d cv runs, %d test runs, %.1f s", sdi_ranker_name(k),
                     cv.n, ts.n, sdi_now() - t0);
            progress(line);
        }
    }
    SD_FREE_ALL;
    return SD_OK;
#undef SD_FREE_ALL
}

/* ------------------------------------------------------------------ reports */
static const char *const metric_names[NMETRICS] = {"top1", "regret", "capture", "cliff", "top3", "regret3"};

static void summary_json(sdi_json *j, const sdi_eval_summary *s)
{
    sdi_json_begin_object(j);
    sdi_json_key(j, "runs");
    sdi_json_int(j, s->n);
    for (int o = 0; o <= SDI_EM_NOP; o++) {
        sdi_energy_metrics m = o < SDI_EM_NOP ? s->mean.op[o] : s->mean.all;
        sdi_energy_metrics d = o < SDI_EM_NOP ? s->sd.op[o] : s->sd.all;
        double *fm[NMETRICS], *fd[NMETRICS];
        metrics_fields(&m, fm);
        metrics_fields(&d, fd);
        sdi_json_key(j, o < SDI_EM_NOP ? sdi_op_name((sd_op)o) : "all");
        sdi_json_begin_object(j);
        sdi_json_key(j, "tasks");
        sdi_json_int(j, m.ntasks);
        for (int i = 0; i < NMETRICS; i++) {
            char key[24];
            sdi_json_key(j, metric_names[i]);
            sdi_json_number(j, *fm[i]);
            snprintf(key, sizeof key, "%s_sd", metric_names[i]);
            sdi_json_key(j, key);
            sdi_json_number(j, *fd[i]);
        }
        sdi_json_end_object(j);
    }
    sdi_json_end_object(j);
}

void sdi_model_eval_json(const sdi_model_eval_result *r, const sdi_model_eval_opts *o, sdi_json *j)
{
    sdi_json_begin_object(j);
    sdi_json_key(j, "corpus");
    sdi_json_begin_object(j);
    sdi_json_key(j, "matrices");
    sdi_json_int(j, r->nmatrices);
    sdi_json_key(j, "tasks");
    sdi_json_int(j, r->ntasks);
    for (int op = 0; op < SDI_EM_NOP; op++) {
        char key[32];
        snprintf(key, sizeof key, "tasks_%s", sdi_op_name((sd_op)op));
        sdi_json_key(j, key);
        sdi_json_int(j, r->ntasks_op[op]);
    }
    sdi_json_end_object(j);
    sdi_json_key(j, "protocol");
    sdi_json_begin_object(j);
    sdi_json_key(j, "folds");
    sdi_json_int(j, o->folds);
    sdi_json_key(j, "seeds");
    sdi_json_int(j, o->seeds);
    sdi_json_key(j, "holdout_matrices");
    sdi_json_int(j, r->holdout_matrices);
    sdi_json_key(j, "cv_matrices");
    sdi_json_int(j, r->cv_matrices);
    sdi_json_key(j, "split_seed");
    sdi_json_int(j, (long long)o->split_seed);
    sdi_json_key(j, "grouping");
    sdi_json_string(j, "matrix name; folds and hold-out stratified by shape class");
    sdi_json_key(j, "cv_only");
    sdi_json_bool(j, o->cv_only != 0);
    sdi_json_end_object(j);
    const sdi_energy_train_opts *e = &o->ranker.energy;
    sdi_json_key(j, "energy_training");
    sdi_json_begin_object(j);
    sdi_json_key(j, "hidden");
    sdi_json_int(j, e->hidden);
    sdi_json_key(j, "epochs");
    sdi_json_int(j, e->epochs);
    sdi_json_key(j, "batch");
    sdi_json_int(j, e->batch);
    sdi_json_key(j, "lr");
    sdi_json_number(j, e->lr);
    sdi_json_key(j, "cosine");
    sdi_json_bool(j, e->cosine != 0);
    sdi_json_key(j, "spmm_k_heads");
    sdi_json_bool(j, e->k_heads != 0);
    sdi_json_key(j, "weight_decay");
    sdi_json_number(j, e->weight_decay);
    sdi_json_key(j, "lambda");
    sdi_json_begin_array(j);
    for (int i = 0; i < SDI_EM_NOP; i++)
        sdi_json_number(j, e->lambda[i]);
    sdi_json_end_array(j);
    sdi_json_key(j, "temperature");
    sdi_json_number(j, e->temperature);
    sdi_json_key(j, "ensemble");
    sdi_json_int(j, e->ensemble);
    sdi_json_end_object(j);
    sdi_json_key(j, "models");
    sdi_json_begin_array(j);
    for (int k = 0; k < SDI_RANKER_COUNT; k++) {
        if (!r->kind[k].evaluated)
            continue;
        sdi_json_begin_object(j);
        sdi_json_key(j, "name");
        sdi_json_string(j, sdi_ranker_name(k));
        sdi_json_key(j, "cv");
        summary_json(j, &r->kind[k].cv);
        sdi_json_key(j, "test");
        if (r->kind[k].test.n > 0)
            summary_json(j, &r->kind[k].test);
        else
            sdi_json_null(j);
        sdi_json_key(j, "train_s");
        sdi_json_number(j, r->kind[k].train_s);
        sdi_json_key(j, "rank_us");
        sdi_json_number(j, r->kind[k].rank_us);
        sdi_json_end_object(j);
    }
    sdi_json_end_array(j);
    sdi_json_end_object(j);
}

/* Appends printf text to a growing buffer; returns 0 on allocation failure. */
static int appendf(char **buf, size_t *len, size_t *cap, const char *fmt, ...) SDI_PRINTF(4, 5);
static int appendf(char **buf, size_t *len, size_t *cap, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(*buf != NULL ? *buf + *len : NULL, *buf != NULL ? *cap - *len : 0, fmt, ap);
        va_end(ap);
        if (n < 0)
            return 0;
        if (*buf != NULL && *len + (size_t)n < *cap) {
            *len += (size_t)n;
            return 1;
        }
        size_t nc = (*cap > 0 ? *cap * 2 : 4096) + (size_t)n;
        char *p = sdi_realloc_array(*buf, nc, 1);
        if (p == NULL)
            return 0;
        *buf = p;
        *cap = nc;
    }
}

/* One table: the cross-validation (test 0) or the hold-out (test 1). search 0: top-1 ±
 * std, regret, capture and cliff per operator (times when given); search 1: the search's
 * view, top-3 and regret@3 (its first round measures the 3 best-ranked branches, so what
 * counts there is whether the fastest is among them and what the best of them costs). */
static int table(char **b, size_t *len, size_t *cap, const sdi_model_eval_result *r, int test, int times,
                 int search)
{
    static const char *const head[2] = {" %s top-1 | regret | capture | cliff |", " %s top-3 | regret@3 |"};
    static const char *const rule[2] = {"---:|---:|---:|---:|", "---:|---:|"};
    static const char *const none[2] = {" – | – | – | – |", " – | – |"};
    int ok = appendf(b, len, cap, "| model |");
    for (int op = 0; op <= SDI_EM_NOP; op++)
        ok &= appendf(b, len, cap, head[search], op < SDI_EM_NOP ? sdi_op_name((sd_op)op) : "all");
    ok &= appendf(b, len, cap, times ? " train s | rank µs |\n|---|" : "\n|---|");
    for (int op = 0; op <= SDI_EM_NOP; op++)
        ok &= appendf(b, len, cap, "%s", rule[search]);
    ok &= appendf(b, len, cap, times ? "---:|---:|\n" : "\n");
    for (int k = 0; k < SDI_RANKER_COUNT; k++) {
        const sdi_eval_summary *s = test ? &r->kind[k].test : &r->kind[k].cv;
        if (!r->kind[k].evaluated || s->n == 0)
            continue;
        ok &= appendf(b, len, cap, "| %s |", sdi_ranker_name(k));
        for (int op = 0; op <= SDI_EM_NOP; op++) {
            const sdi_energy_metrics *m = op < SDI_EM_NOP ? &s->mean.op[op] : &s->mean.all;
            const sdi_energy_metrics *d = op < SDI_EM_NOP ? &s->sd.op[op] : &s->sd.all;
            if (m->ntasks == 0)
                ok &= appendf(b, len, cap, "%s", none[search]);
            else if (search)
                ok &= appendf(b, len, cap, " %.3f | %.3f |", m->top3, m->regret3);
            else
                ok &= appendf(b, len, cap, " %.3f ± %.3f | %.3f | %.1f %% | %.2f %% |", m->top1, d->top1, m->regret,
                              100 * m->capture, 100 * m->cliff);
        }
        if (times)
            ok &= appendf(b, len, cap, " %.2f | %.2f |", r->kind[k].train_s, r->kind[k].rank_us);
        ok &= appendf(b, len, cap, "\n");
    }
    return ok;
}

sd_status sdi_model_eval_markdown(const sdi_model_eval_result *r, const sdi_model_eval_opts *o,
                                  char **out)
{
    char *b = NULL;
    size_t len = 0, cap = 0;
    int ok = appendf(&b, &len, &cap,
                     "Corpus: %d matrices, %d tasks (spmv %d, spmm %d, spgemm %d).\n\n"
                     "### Cross-validation: %d folds grouped by matrix, stratified by shape class, "
                     "%d seeds (%d matrices)\n\n",
                     r->nmatrices, r->ntasks, r->ntasks_op[0], r->ntasks_op[1], r->ntasks_op[2],
                     o->folds, o->seeds, r->cv_matrices);
    ok = ok && table(&b, &len, &cap, r, 0, o->cv_only, 0);
    if (ok && r->holdout_matrices > 0 && o->cv_only)
        ok = appendf(&b, &len, &cap, "\n(--cv-only: the hold-out of %d matrices was set aside and "
                     "not scored.)\n", r->holdout_matrices);
    if (ok && r->holdout_matrices > 0 && !o->cv_only) {
        ok = appendf(&b, &len, &cap,
                     "\n### Held-out test set: %d matrices (stratified), trained on the other %d, "
                     "%d seeds\n\n", r->holdout_matrices, r->cv_matrices, o->seeds);
        ok = ok && table(&b, &len, &cap, r, 1, 1, 0);
    }
    const int scored_test = r->holdout_matrices > 0 && !o->cv_only;
    ok = ok && appendf(&b, &len, &cap,
                       "\n### The search's view (%s): the first round measures the 3 best-ranked "
                       "templates\n\n", scored_test ? "held-out test set" : "cross-validation");
    ok = ok && table(&b, &len, &cap, r, scored_test, 0, 1);
    ok = ok && appendf(&b, &len, &cap,
                       "\ntop-1 ± std over runs; regret = geomean slowdown of the top choice vs "
                       "the fastest measured template; capture = share of the oracle's log "
                       "speed-up over cuSPARSE realised; cliff = share of tasks whose top choice "
                       "is > 2x slower than csr; top-3 = share of tasks whose fastest template is among the 3 "
                       "best-ranked; regret@3 = geomean slowdown of the best of those 3.\n");
    const sdi_energy_train_opts *e = &o->ranker.energy;
    ok = ok && appendf(&b, &len, &cap,
                       "energy-v1 training: H %d, %d epochs, batch %d, lr %g%s, weight decay %g, "
                       "λ %g / %g / %g (spmv / spmm / spgemm), T %g, ensemble of %d%s; "
                       "energy-nomargin the same with λ = 0.\n", e->hidden, e->epochs, e->batch,
                       e->lr, e->cosine ? " (cosine decay)" : "", e->weight_decay, e->lambda[0],
                       e->lambda[1], e->lambda[2], e->temperature, e->ensemble,
                       e->k_heads ? ", one SpMM head per K bucket" : "");
    if (!ok) {
        sdi_free(b);
        *out = NULL;
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for the evaluation table");
    }
    *out = b;
    return SD_OK;
}
