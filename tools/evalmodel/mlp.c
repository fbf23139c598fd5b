/* tools/evalmodel/mlp.c: the MLP ranker (rankers.h): inputs → one tanh layer of H units →
 * an energy per template, trained with the energy model's listwise + margin loss
 * (sdi_rank_loss) and AdamW. Unlike the additive energy model, its hidden units see all
 * inputs at once, so it can learn feature interactions; it has no per-feature
 * explanation. Single-threaded: a seed gives bit-identical weights. */
#include <math.h>
#include <string.h>

#include "core/rng.h"
#include "rankers.h"

sdi_mlp_opts sdi_mlp_opts_default(void)
{
    sdi_mlp_opts o;
    memset(&o, 0, sizeof o);
    o.seed = 1;
    o.hidden = 32;
    o.epochs = 80;
    o.batch = 32;
    o.lr = 0.003;
    o.weight_decay = 0.01;
    for (int i = 0; i < SDI_EM_NOP; i++)
        o.lambda[i] = 0.1;
    o.temperature = 0.25;
    return o;
}

void sdi_mlp_free(sdi_mlp *m)
{
    if (m == NULL)
        return;
    sdi_free(m->theta);
    memset(m, 0, sizeof *m);
}

sd_status sdi_mlp_alloc(sdi_mlp *m, int hidden)
{
    memset(m, 0, sizeof *m);
    if (hidden < 1 || hidden > 1024)
        return SDI_ERR(SD_ERR_INVALID_ARG, "mlp: hidden width %d not in 1..1024", hidden);
    int nout = 0;
    for (int o = 0; o < SDI_EM_NOP; o++) {
        int n = 0;
        sdi_vocabulary((sd_op)o, &n);
        nout += n;
    }
    m->nin = SDI_EM_NIN;
    m->hidden = hidden;
    m->nout = nout;
    m->nparams = (long)hidden * m->nin + hidden + (long)nout * hidden + nout;
    m->theta = sdi_calloc((size_t)m->nparams, sizeof *m->theta);
    if (m->theta == NULL) {
        memset(m, 0, sizeof *m);
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for the MLP");
    }
    m->w1 = m->theta;
    m->b1 = m->w1 + (long)hidden * m->nin;
    m->w2 = m->b1 + hidden;
    m->b2 = m->w2 + (long)nout * hidden;
    return SD_OK;
}


void sdi_mlp_init(sdi_mlp *m, unsigned long long seed)
{
    sdi_rng s;
    sdi_rng_seed(&s, seed, 0x31f /* stream: MLP weights */, 0);
    double s1 = 1.0 / sqrt((double)m->nin), s2 = 0.1 / sqrt((double)m->hidden);
    for (long i = 0; i < (long)m->hidden * m->nin; i++)
        m->w1[i] = s1 * sdi_rng_normal(&s);
    for (int i = 0; i < m->hidden; i++)
        m->b1[i] = 0.1 * sdi_rng_normal(&s);
    for (long i = 0; i < (long)m->nout * m->hidden; i++)
        m->w2[i] = s2 * sdi_rng_normal(&s);
    for (int i = 0; i < m->nout; i++)
        m->b2[i] = 0;
}

static void hidden_of(const sdi_mlp *m, const double *x, double *h)
{
    for (int q = 0; q < m->hidden; q++) {
        const double *w = m->w1 + (long)q * m->nin;
        double z = m->b1[q];
        for (int j = 0; j < m->nin; j++)
            z += w[j] * x[j];
        h[q] = tanh(z);
    }
}

static double out_of(const sdi_mlp *m, const double *h, int t)
{
    const double *w = m->w2 + (long)t * m->hidden;
    double e = m->b2[t];
    for (int q = 0; q < m->hidden; q++)
        e += w[q] * h[q];
    return e;
}

#define MAX_HIDDEN 1024

void sdi_mlp_eval(const sdi_mlp *m, const double *x, int toff, int ntemp, double *E)
{
    double h[MAX_HIDDEN];
    hidden_of(m, x, h);
    for (int s = 0; s < ntemp; s++)
        E[s] = out_of(m, h, toff + s);
}

double sdi_mlp_task_loss(const sdi_mlp *m, const double *x, int toff, int ntemp, const double *us,
                         double baseline_us, double lambda, double temperature, double scale,
                         double *grad)
{
    double h[MAX_HIDDEN], gh[MAX_HIDDEN], E[SDI_RANK_MAX_TEMPLATES], gE[SDI_RANK_MAX_TEMPLATES];
    hidden_of(m, x, h);
    for (int s = 0; s < ntemp; s++)
        E[s] = out_of(m, h, toff + s);
    double loss = sdi_rank_loss(E, us, ntemp, baseline_us, lambda, temperature, gE);
    if (grad == NULL)
        return loss;
    int H = m->hidden;
    double *gw1 = grad, *gb1 = grad + (m->b1 - m->theta), *gw2 = grad + (m->w2 - m->theta);
    double *gb2 = grad + (m->b2 - m->theta);
    memset(gh, 0, sizeof(double) * (size_t)H);
    for (int s = 0; s < ntemp; s++) {
        if (gE[s] == 0)
            continue;
        int t = toff + s;
        gb2[t] += scale * gE[s];
        const double *w = m->w2 + (long)t * H;
        double *gw = gw2 + (long)t * H;
        for (int q = 0; q < H; q++) {
            gw[q] += scale * gE[s] * h[q];
            gh[q] += gE[s] * w[q];
        }
    }
    for (int q = 0; q < H; q++) {
        double gz = gh[q] * (1.0 - h[q] * h[q]);
        if (gz == 0)
            continue;
        double *gw = gw1 + (long)q * m->nin;
        for (int j = 0; j < m->nin; j++)
            gw[j] += scale * gz * x[j];
        gb1[q] += scale * gz;
    }
    return loss;
}

sd_status sdi_mlp_train(const sdi_corpus *c, const sdi_energy_model *scaler,
                        const sdi_mlp_opts *opts, sdi_mlp *m)
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
        sdi_mlp_free(m);                                                                   \
    } while (0)
    memset(m, 0, sizeof *m);
    sdi_mlp_opts o = opts != NULL ? *opts : sdi_mlp_opts_default();
    if (o.epochs < 0 || o.batch < 1 || !(o.lr > 0) || !(o.temperature > 0) ||
        !(o.weight_decay >= 0) || o.hidden < 1 || o.hidden > MAX_HIDDEN)
        return SDI_ERR(SD_ERR_INVALID_ARG, "mlp: epochs %d, batch %d, lr %g, T %g, hidden %d out "
                       "of range", o.epochs, o.batch, o.lr, o.temperature, o.hidden);
    if (c->ntasks == 0)
        return SDI_ERR(SD_ERR_INVALID_ARG, "mlp: the corpus has no tasks");
    SD_TRY(sdi_mlp_alloc(m, o.hidden));
    sdi_mlp_init(m, o.seed);
    long P = m->nparams;
    X = sdi_malloc_array((size_t)c->ntasks * SDI_EM_NIN, sizeof *X);
    SD_CHECK_ALLOC(X, "MLP inputs");
    grad = sdi_malloc_array((size_t)P, sizeof *grad);
    SD_CHECK_ALLOC(grad, "MLP gradient");
    mom = sdi_calloc((size_t)P, sizeof *mom);
    SD_CHECK_ALLOC(mom, "Adam moments");
    vel = sdi_calloc((size_t)P, sizeof *vel);
    SD_CHECK_ALLOC(vel, "Adam moments");
    order = sdi_malloc_array((size_t)c->ntasks, sizeof *order);
    SD_CHECK_ALLOC(order, "task order");
    for (int t = 0; t < c->ntasks; t++) {
        const sdi_corpus_task *task = &c->tasks[t];
        const sdi_corpus_record *r = &c->records[task->record];
        sdi_energy_inputs(scaler, r->features, r->shape, task->op, task->k, X + (long)t * SDI_EM_NIN);
        order[t] = t;
    }
    sdi_rng rs;
    sdi_rng_seed(&rs, o.seed, 0x31e /* stream: MLP example order */, 0);
    long step = 0, w1end = m->b1 - m->theta, w2beg = m->w2 - m->theta, w2end = m->b2 - m->theta;
    for (int ep = 0; ep < o.epochs; ep++) {
        sdi_rng_shuffle_int(&rs, order, c->ntasks);
        for (int b0 = 0; b0 < c->ntasks; b0 += o.batch) {
            int bn = c->ntasks - b0 < o.batch ? c->ntasks - b0 : o.batch;
            memset(grad, 0, sizeof(double) * (size_t)P);
            for (int i = 0; i < bn; i++) {
                int t = order[b0 + i];
                const sdi_corpus_task *task = &c->tasks[t];
                sdi_mlp_task_loss(m, X + (long)t * SDI_EM_NIN, scaler->toff[task->op],
                                  scaler->ntemp[task->op], task->us, task->baseline_us,
                                  o.lambda[task->op], o.temperature, 1.0 / bn, grad);
            }
            sdi_adamw_step(m->theta, grad, mom, vel, P, ++step, o.lr, o.weight_decay, 0, w1end,
                           w2beg, w2end);
        }
    }
    for (long i = 0; i < P; i++)
        if (!isfinite(m->theta[i])) {
            SD_FREE_ALL;
            return SDI_ERR(SD_ERR_INTERNAL, "mlp: parameter %ld diverged; lower the learning rate", i);
        }
    sdi_free(X);
    sdi_free(grad);
    sdi_free(mom);
    sdi_free(vel);
    sdi_free(order);
    return SD_OK;
#undef SD_FREE_ALL
}
