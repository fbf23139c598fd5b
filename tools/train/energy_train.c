/* tools/train/energy_train.c: training of the energy model on a corpus (energy_train.h):
 * standardisation, AdamW over the ranking loss of src/model/energy.c, evaluation metrics
 * and grouped cross-validation. Single-threaded on purpose: the same seed gives
 * bit-identical weights, and training takes seconds anyway. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "core/rng.h"
#include "energy_train.h"

#define NIN SDI_EM_NIN

/* ------------------------------------------------------------------ standardisation */
/* The model's inputs for task t of c. */
static void task_inputs(const sdi_energy_model *m, const sdi_corpus *c, int t, double *x)
{
    const sdi_corpus_task *task = &c->tasks[t];
    const sdi_corpus_record *r = &c->records[task->record];
    sdi_energy_inputs(m, r->features, r->shape, task->op, task->k, x);
}

void sdi_energy_fit_standardization(sdi_energy_model *m, const sdi_corpus *c)
{
    /* Under the identity standardisation the inputs are the features as the model sees
     * them (log1p-ed sizes, operator-induced features 0 unless spgemm) and log2 K. */
    sdi_energy_model id = *m;
    for (int i = 0; i < SDI_EM_NFEAT; i++) {
        id.mean[i] = 0;
        id.std[i] = 1;
    }
    id.log2k_mean = 0;
    id.log2k_std = 1;
    double n = c->ntasks, x[NIN];
    /* Inputs 0..35 (the features) and NIN − 1 (log2 K): two passes each, mean then spread. */
    for (int j = 0; j < NIN; j++) {
        if (j >= SDI_EM_NFEAT && j != NIN - 1)
            continue;
        double s = 0, ss = 0;
        for (int t = 0; t < c->ntasks; t++) {
            task_inputs(&id, c, t, x);
            s += x[j];
        }
        double mean = n > 0 ? s / n : 0;
        for (int t = 0; t < c->ntasks; t++) {
            task_inputs(&id, c, t, x);
            double d = x[j] - mean;
            ss += d * d;
        }
        double sd = n > 0 ? sqrt(ss / n) : 0;
        if (j < SDI_EM_NFEAT) {
            m->mean[j] = mean;
            m->std[j] = sd > 1e-12 ? sd : 1.0;
        } else {
            m->log2k_mean = mean;
            m->log2k_std = sd > 1e-12 ? sd : 1.0;
        }
    }
}

/* ------------------------------------------------------------------ training */
sdi_energy_train_opts sdi_energy_train_opts_default(void)
{
    sdi_energy_train_opts o;
    memset(&o, 0, sizeof o);
    o.seed = 1;
    o.epochs = 60;
    o.batch = 32;
    o.lr = 0.01;
    /* λ 0.1 for SpMV and SpMM, 3 for SpGEMM, T 0.15 and the cosine decay: chosen by the
     * grouped cross-validation on the corpus's non-hold-out matrices (`sparseditto evalmodel
     * CORPUS --holdout 100 --cv-only` with --lambda, --temperature, --cosine, --ensemble
     * varied). SpGEMM's few templates differ by large factors, and weighting the gaps
     * (λ 3 against 0.1) cuts its CV regret 1.045 -> 1.031 on a 315-matrix corpus; the
     * cosine decay is the one clear gain among the rest; an ensemble does not clearly help
     * and costs M times the ranking time. */
    o.lambda[SD_OP_SPMV] = 0.1;
    o.lambda[SD_OP_SPMM] = 0.1;
    o.lambda[SD_OP_SPGEMM] = 3.0;
    o.temperature = 0.15;
    o.hidden = SDI_EM_HIDDEN;
    o.weight_decay = 0.1;
    o.ensemble = 1;
    o.cosine = 1;
    o.k_heads = 0;
    return o;
}

double sdi_energy_corpus_loss(const sdi_energy_model *m, const sdi_corpus *c)
{
    double x[NIN], sum = 0;
    for (int t = 0; t < c->ntasks; t++) {
        task_inputs(m, c, t, x);
        const sdi_corpus_task *task = &c->tasks[t];
        sum += sdi_energy_task_loss(m, x, task->op, task->us, task->baseline_us,
                                    m->lambda[task->op], m->temperature, 0, NULL);
    }
    return c->ntasks > 0 ? sum / c->ntasks : 0.0;
}

void sdi_adamw_step(double *theta, const double *grad, double *mom, double *vel, long n,
                    long step, double lr, double wd, long lo0, long hi0, long lo1, long hi1)
{
    const double b1 = 0.9, b2 = 0.999, eps = 1e-8;
    const double c1 = 1.0 - pow(b1, (double)step), c2 = 1.0 - pow(b2, (double)step);
    for (long i = 0; i < n; i++) {
        mom[i] = b1 * mom[i] + (1 - b1) * grad[i];
        vel[i] = b2 * vel[i] + (1 - b2) * grad[i] * grad[i];
        double d = ((i >= lo0 && i < hi0) || (i >= lo1 && i < hi1)) ? wd : 0.0;
        theta[i] -= lr * ((mom[i] / c1) / (sqrt(vel[i] / c2) + eps) + d * theta[i]);
    }
}

/* Trains member i of m (standardisation fitted, member initialised) on the tasks of c
 * with inputs X; grad, mom, vel (nparams) and order (ntasks) are scratch. */
static void train_member(sdi_energy_model *m, int i, const sdi_corpus *c,
                         const sdi_energy_train_opts *o, const double *X, double *grad,
                         double *mom, double *vel, int *order)
{
    /* A single-member view of member i (borrows m's storage, never freed): the loss
     * and its gradient are those of one member. */
    sdi_energy_model one = *m;
    long P = m->nparams, nh = (long)NIN * m->hidden, nw2end = 2 * nh + (long)m->nrows * nh;
    one.members = 1;
    one.theta = m->theta + (long)i * P;
    one.w1 = one.theta;
    one.b1 = one.w1 + nh;
    one.w2 = one.b1 + nh;
    one.beta = one.w2 + (long)m->nrows * nh;
    memset(mom, 0, sizeof(double) * (size_t)P);
    memset(vel, 0, sizeof(double) * (size_t)P);
    for (int t = 0; t < c->ntasks; t++)
        order[t] = t;
    sdi_rng rs;
    sdi_rng_seed(&rs, o->seed, 0x5a1e /* stream: example order */, (uint64_t)i);
    long step = 0, steps = (long)o->epochs * ((c->ntasks + o->batch - 1) / o->batch);
    double t0 = sdi_now();
    for (int ep = 0; ep < o->epochs; ep++) {
        sdi_rng_shuffle_int(&rs, order, c->ntasks);
        double eloss = 0;
        for (int b0 = 0; b0 < c->ntasks; b0 += o->batch) {
            int bn = c->ntasks - b0 < o->batch ? c->ntasks - b0 : o->batch;
            memset(grad, 0, sizeof(double) * (size_t)P);
            for (int k = 0; k < bn; k++) {
                int t = order[b0 + k];
                const sdi_corpus_task *task = &c->tasks[t];
                eloss += sdi_energy_task_loss(&one, X + (long)t * NIN, task->op, task->us,
                                              task->baseline_us, m->lambda[task->op],
                                              m->temperature, 1.0 / bn, grad);
            }
            /* Cosine decay: large steps early, a settled end point instead of the last
             * noisy minibatch step. */
            double lr = o->cosine ? o->lr * 0.5 * (1.0 + cos(3.14159265358979323846 * (double)step / (double)steps))
                                  : o->lr;
            /* Decoupled weight decay on w1 and w2 only: few matrices, 16 K parameters,
             * 36 inputs of which many are irrelevant to a template. */
            sdi_adamw_step(one.theta, grad, mom, vel, P, ++step, lr, o->weight_decay, 0, nh,
                           2 * nh, nw2end);
        }
        if (o->verbose)
            printf("%sepoch %4d  loss %.6f  (%.3f s)\n", m->members > 1 ? "  " : "", ep + 1,
                   eloss / c->ntasks, sdi_now() - t0);
    }
}

sd_status sdi_energy_train(const sdi_corpus *c, const sdi_energy_train_opts *opts,
                           sdi_energy_model *m)
{
    double *X = NULL, *grad = NULL, *mom = NULL, *vel = NULL;
    int *order = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(X);                                                                       \
        sdi_free(grad);                                                                    \
        sdi_free(mom);                                                                     \
        sdi_free(vel);                                                                     \
        sdi_free(order);                                                                   \
        sdi_energy_model_free(m);                                                          \
    } while (0)
    memset(m, 0, sizeof *m);
    sdi_energy_train_opts o = opts != NULL ? *opts : sdi_energy_train_opts_default();
    if (o.epochs < 0 || o.batch < 1 || !(o.lr > 0) || !(o.temperature > 0) ||
        !(o.weight_decay >= 0) || o.hidden < 1 || o.hidden > 64)
        return SDI_ERR(SD_ERR_INVALID_ARG, "train: epochs %d, batch %d, lr %g, temperature %g: "
                       "need epochs >= 0, batch >= 1, lr > 0, T > 0, weight decay >= 0, hidden 1..64",
                       o.epochs, o.batch, o.lr, o.temperature);
    if (o.k_heads != 0 && o.k_heads != 1)
        return SDI_ERR(SD_ERR_INVALID_ARG, "train: k_heads %d, need 0 or 1", o.k_heads);
    if (o.ensemble < 1 || o.ensemble > SDI_EM_MAX_MEMBERS)
        return SDI_ERR(SD_ERR_INVALID_ARG, "train: ensemble of %d members, need 1..%d",
                       o.ensemble, SDI_EM_MAX_MEMBERS);
    for (int i = 0; i < SDI_EM_NOP; i++)
        if (!(o.lambda[i] >= 0))
            return SDI_ERR(SD_ERR_INVALID_ARG, "train: lambda %g is negative", o.lambda[i]);
    if (c->ntasks == 0)
        return SDI_ERR(SD_ERR_INVALID_ARG, "train: the corpus has no tasks");
    SD_TRY(sdi_energy_model_alloc_layout(m, o.hidden, o.ensemble, o.k_heads));
    sdi_energy_fit_standardization(m, c);
    m->trained_ops = 0;
    for (int t = 0; t < c->ntasks; t++)
        for (int q = 0; q < SDI_RANK_MAX_TEMPLATES; q++)
            if (c->tasks[t].us[q] > 0) {
                m->trained_ops |= 1u << c->tasks[t].op;
                break;
            }
    sdi_energy_model_init(m, o.seed);
    m->epochs = o.epochs;
    m->batch = o.batch;
    m->cosine = o.cosine;
    m->lr = o.lr;
    m->weight_decay = o.weight_decay;
    m->temperature = o.temperature;
    for (int i = 0; i < SDI_EM_NOP; i++)
        m->lambda[i] = o.lambda[i];
    long P = m->nparams;
    X = sdi_malloc_array((size_t)c->ntasks * NIN, sizeof *X);
    SD_CHECK_ALLOC(X, "training inputs");
    grad = sdi_malloc_array((size_t)P, sizeof *grad);
    SD_CHECK_ALLOC(grad, "gradient");
    mom = sdi_malloc_array((size_t)P, sizeof *mom);
    SD_CHECK_ALLOC(mom, "Adam moments");
    vel = sdi_malloc_array((size_t)P, sizeof *vel);
    SD_CHECK_ALLOC(vel, "Adam moments");
    order = sdi_malloc_array((size_t)c->ntasks, sizeof *order);
    SD_CHECK_ALLOC(order, "task order");
    for (int t = 0; t < c->ntasks; t++)
        task_inputs(m, c, t, X + (long)t * NIN);
    for (int i = 0; i < m->members; i++) {
        if (o.verbose && m->members > 1)
            printf("member %d of %d\n", i + 1, m->members);
        train_member(m, i, c, &o, X, grad, mom, vel, order);
    }
    for (long i = 0; i < P * m->members; i++)
        if (!isfinite(m->theta[i])) {
            SD_FREE_ALL;
            return SDI_ERR(SD_ERR_INTERNAL, "train: parameter %ld of member %ld diverged (not "
                           "finite); lower the learning rate", i % P, i / P);
        }
    sdi_free(X);
    sdi_free(grad);
    sdi_free(mom);
    sdi_free(vel);
    sdi_free(order);
    return SD_OK;
#undef SD_FREE_ALL
}

/* ------------------------------------------------------------------ evaluation */
int sdi_best_of_top(const double *E, const double *us, int n, int k)
{
    bool taken[SDI_RANK_MAX_TEMPLATES] = {false};
    int best = -1;
    for (int r = 0; r < k; r++) {
        int pick = -1;
        for (int s = 0; s < n && s < SDI_RANK_MAX_TEMPLATES; s++)
            if (us[s] > 0 && !taken[s] && (pick < 0 || E[s] < E[pick]))
                pick = s;
        if (pick < 0)
            break;
        taken[pick] = true;
        if (best < 0 || us[pick] < us[best])
            best = pick;
    }
    return best;
}

void sdi_energy_evaluate(const sdi_energy_model *m, const sdi_corpus *c, sdi_energy_metrics *out)
{
    memset(out, 0, sizeof *out);
    double x[NIN], E[SDI_RANK_MAX_TEMPLATES];
    int n = 0, hits = 0, ncsr = 0, cliffs = 0, hits3 = 0;
    double lreg = 0, got = 0, best = 0, lreg3 = 0;
    for (int t = 0; t < c->ntasks; t++) {
        const sdi_corpus_task *task = &c->tasks[t];
        task_inputs(m, c, t, x);
        sdi_energy_eval(m, x, task->op, E, NULL);
        int ch = -1, or = -1;
        for (int s = 0; s < m->ntemp[task->op]; s++) {
            if (!(task->us[s] > 0))
                continue;
            if (ch < 0 || E[s] < E[ch])
                ch = s;
            if (or < 0 || task->us[s] < task->us[or])
                or = s;
        }
        if (ch < 0)
            continue;
        n++;
        hits += task->us[ch] == task->us[or];
        lreg += log(task->us[ch] / task->us[or]);
        const int b3 = sdi_best_of_top(E, task->us, m->ntemp[task->op], 3);
        hits3 += task->us[b3] == task->us[or];
        lreg3 += log(task->us[b3] / task->us[or]);
        got += log(task->baseline_us / task->us[ch]);
        best += log(task->baseline_us / task->us[or]);
        if (task->us[0] > 0) { /* vocabulary index 0 is the op's CSR template */
            ncsr++;
            cliffs += task->us[ch] > 2.0 * task->us[0];
        }
    }
    out->ntasks = n;
    out->top1 = n > 0 ? (double)hits / n : 0;
    out->regret = n > 0 ? exp(lreg / n) : 1;
    out->capture = best > 0 ? got / best : 0;
    out->cliff = ncsr > 0 ? (double)cliffs / ncsr : 0;
    out->top3 = n > 0 ? (double)hits3 / n : 0;
    out->regret3 = n > 0 ? exp(lreg3 / n) : 1;
    out->loss = sdi_energy_corpus_loss(m, c);
}

/* ------------------------------------------------------------------ cross-validation */
static void metrics_acc(sdi_energy_metrics *sum, sdi_energy_metrics *sq,
                        const sdi_energy_metrics *m)
{
    double v[7] = {m->top1, m->regret, m->capture, m->cliff, m->top3, m->regret3, m->loss};
    double *s[7] = {&sum->top1, &sum->regret, &sum->capture, &sum->cliff, &sum->top3, &sum->regret3, &sum->loss};
    double *q[7] = {&sq->top1, &sq->regret, &sq->capture, &sq->cliff, &sq->top3, &sq->regret3, &sq->loss};
    for (int i = 0; i < 7; i++) {
        *s[i] += v[i];
        *q[i] += v[i] * v[i];
    }
    sum->ntasks += m->ntasks;
}

sd_status sdi_energy_cross_validate(const sdi_corpus *c, const sdi_energy_train_opts *opts,
                                    int folds, int nseeds, unsigned long long split_seed,
                                    sdi_energy_metrics *mean, sdi_energy_metrics *sd,
                                    sdi_energy_metrics *per_run)
{
    int *fold = NULL, *keep = NULL;
    sdi_corpus train, test;
    sdi_energy_model m;
    memset(&train, 0, sizeof train);
    memset(&test, 0, sizeof test);
    memset(&m, 0, sizeof m);
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(fold);                                                                    \
        sdi_free(keep);                                                                    \
        sdi_corpus_free(&train);                                                           \
        sdi_corpus_free(&test);                                                            \
        sdi_energy_model_free(&m);                                                         \
    } while (0)
    memset(mean, 0, sizeof *mean);
    memset(sd, 0, sizeof *sd);
    if (nseeds < 1)
        return SDI_ERR(SD_ERR_INVALID_ARG, "cross-validation: %d seeds", nseeds);
    size_t nr = c->nrecords > 0 ? (size_t)c->nrecords : 1;
    fold = sdi_malloc_array(nr, sizeof *fold);
    SD_CHECK_ALLOC(fold, "folds");
    keep = sdi_malloc_array(nr, sizeof *keep);
    SD_CHECK_ALLOC(keep, "folds");
    SD_TRY(sdi_corpus_folds(c, folds, split_seed, fold));
    sdi_energy_train_opts o = opts != NULL ? *opts : sdi_energy_train_opts_default();
    unsigned long long seed0 = o.seed;
    sdi_energy_metrics sum, sq;
    memset(&sum, 0, sizeof sum);
    memset(&sq, 0, sizeof sq);
    for (int f = 0; f < folds; f++) {
        for (int r = 0; r < c->nrecords; r++)
            keep[r] = fold[r] != f;
        SD_TRY(sdi_corpus_subset(c, keep, &train));
        for (int r = 0; r < c->nrecords; r++)
            keep[r] = fold[r] == f;
        SD_TRY(sdi_corpus_subset(c, keep, &test));
        for (int s = 0; s < nseeds; s++) {
            o.seed = seed0 + (unsigned long long)s;
            o.verbose = 0;
            SD_TRY(sdi_energy_train(&train, &o, &m));
            sdi_energy_metrics em;
            sdi_energy_evaluate(&m, &test, &em);
            sdi_energy_model_free(&m);
            metrics_acc(&sum, &sq, &em);
            if (per_run != NULL)
                per_run[f * nseeds + s] = em;
        }
        sdi_corpus_free(&train);
        sdi_corpus_free(&test);
    }
    double n = (double)folds * nseeds;
    double *sv[7] = {&sum.top1, &sum.regret, &sum.capture, &sum.cliff, &sum.top3, &sum.regret3, &sum.loss};
    double *qv[7] = {&sq.top1, &sq.regret, &sq.capture, &sq.cliff, &sq.top3, &sq.regret3, &sq.loss};
    double *mv[7] = {&mean->top1, &mean->regret, &mean->capture, &mean->cliff, &mean->top3, &mean->regret3,
                     &mean->loss};
    double *dv[7] = {&sd->top1, &sd->regret, &sd->capture, &sd->cliff, &sd->top3, &sd->regret3, &sd->loss};
    for (int i = 0; i < 7; i++) {
        *mv[i] = *sv[i] / n;
        double var = *qv[i] / n - *mv[i] * *mv[i];
        *dv[i] = var > 0 ? sqrt(var) : 0;
    }
    mean->ntasks = (int)(sum.ntasks / n + 0.5);
    sdi_free(fold);
    sdi_free(keep);
    return SD_OK;
#undef SD_FREE_ALL
}
