/* src/model/energy.c: the additive energy model (energy.h): inputs, inference and
 * ranking with per-feature reasons ("energy-v1"). The loss, its gradient and training
 * are a tool: tools/train/energy_loss.h, tools/train/energy_train.h. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../analysis/analysis.h"
#include "energy.h"

#define NIN SDI_EM_NIN

static const char *const extra_names[SDI_EM_NSHAPE + SDI_EM_NOP + 1] = {
    "shape_uniform", "shape_moderate", "shape_skewed", "shape_power_law", "shape_bimodal",
    "op_spmv",       "op_spmm",        "op_spgemm",    "log2_k"};

const char *sdi_energy_input_name(int j)
{
    if (j < 0 || j >= NIN)
        return NULL;
    if (j < SDI_EM_NFEAT)
        return sdi_feature_get(j)->name;
    return extra_names[j - SDI_EM_NFEAT];
}

int sdi_energy_is_size_feature(int i)
{
    switch (i) {
    case SDI_F_ROWS: case SDI_F_COLS: case SDI_F_NNZ: case SDI_F_ROW_MAX: case SDI_F_COL_MAX:
    case SDI_F_U_TOTAL: case SDI_F_U_MAX: case SDI_F_U_P95: case SDI_F_UT_TOTAL:
        return 1;
    default:
        return 0;
    }
}

void sdi_energy_model_free(sdi_energy_model *m)
{
    if (m == NULL)
        return;
    sdi_free(m->theta);
    memset(m, 0, sizeof *m);
}

sd_status sdi_energy_model_alloc(sdi_energy_model *m, int hidden)
{
    return sdi_energy_model_alloc_members(m, hidden, 1);
}

sd_status sdi_energy_model_alloc_members(sdi_energy_model *m, int hidden, int members)
{
    return sdi_energy_model_alloc_layout(m, hidden, members, 0);
}

sd_status sdi_energy_model_alloc_layout(sdi_energy_model *m, int hidden, int members, int k_heads)
{
    memset(m, 0, sizeof *m);
    if (k_heads != 0 && k_heads != 1)
        return SDI_ERR(SD_ERR_INVALID_ARG, "energy model: k_heads %d, not 0 or 1", k_heads);
    if (hidden < 1 || hidden > 64)
        return SDI_ERR(SD_ERR_INVALID_ARG, "energy model: hidden width %d not in 1..64", hidden);
    if (members < 1 || members > SDI_EM_MAX_MEMBERS)
        return SDI_ERR(SD_ERR_INVALID_ARG, "energy model: %d ensemble members, not in 1..%d",
                       members, SDI_EM_MAX_MEMBERS);
    m->hidden = hidden;
    m->members = members;
    int off = 0;
    for (int o = 0; o < SDI_EM_NOP; o++) {
        sdi_vocabulary((sd_op)o, &m->ntemp[o]);
        m->toff[o] = off;
        off += m->ntemp[o];
    }
    m->ntotal = off;
    /* Rows: the templates of each head in operator order, SpMM's K buckets one after
     * the other when it has K heads. */
    m->k_heads = k_heads;
    int r = 0;
    for (int o = 0; o < SDI_EM_NOP; o++)
        for (int b = 0; b < SDI_EM_NKB; b++) {
            int own = k_heads && o == SD_OP_SPMM; /* a head of its own per bucket */
            m->row0[o][b] = own || b == 0 ? r : m->row0[o][0];
            if (own || b == SDI_EM_NKB - 1)
                r += m->ntemp[o];
        }
    m->nrows = r;
    long nh = (long)NIN * hidden;
    m->nparams = 2 * nh + (long)m->nrows * nh + m->nrows;
    m->theta = sdi_calloc((size_t)m->nparams * (size_t)members, sizeof *m->theta);
    if (m->theta == NULL) {
        memset(m, 0, sizeof *m);
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for the energy model");
    }
    m->w1 = m->theta;
    m->b1 = m->w1 + nh;
    m->w2 = m->b1 + nh;
    m->beta = m->w2 + (long)m->nrows * nh;
    for (int i = 0; i < SDI_EM_NFEAT; i++) {
        m->mean[i] = 0;
        m->std[i] = 1;
    }
    m->log2k_mean = 0;
    m->log2k_std = 1;
    m->temperature = 0.25;
    for (int o = 0; o < SDI_EM_NOP; o++)
        m->lambda[o] = 0.1;
    m->trained_ops = (1u << SDI_EM_NOP) - 1;
    return SD_OK;
}

/* ------------------------------------------------------------------ parameters */

sdi_energy_member_view sdi_energy_member_of(const sdi_energy_model *m, int i)
{
    long nh = (long)NIN * m->hidden;
    const double *base = m->theta + (long)i * m->nparams;
    sdi_energy_member_view v = {base, base + nh, base + 2 * nh,
                                base + 2 * nh + (long)m->nrows * nh};
    return v;
}

double sdi_energy_prior(const sdi_energy_model *m, int r)
{
    double b = 0;
    for (int i = 0; i < m->members; i++)
        b += sdi_energy_member_of(m, i).beta[r];
    return b / m->members;
}

/* ------------------------------------------------------------------ K heads */
static const int k_bucket_value[SDI_EM_NKB] = {8, 32, 128, 256};

/* Bucket of log2 K: the midpoints of log2 8, 32, 128, 256 are 4, 6 and 7.5; the slack
 * makes K = 16 and K = 64 (exact ties) go up even when log2 K is recovered from a
 * standardised input with rounding error (no other integer K lies within 1e-6). */
static int bucket_of_log2(double l)
{
    const double eps = 1e-6;
    return l < 4.0 - eps ? 0 : l < 6.0 - eps ? 1 : l < 7.5 - eps ? 2 : 3;
}

int sdi_energy_k_bucket(int k)
{
    return bucket_of_log2(k > 1 ? log2((double)k) : 0.0);
}

int sdi_energy_k_bucket_value(int b)
{
    return b >= 0 && b < SDI_EM_NKB ? k_bucket_value[b] : 0;
}

int sdi_energy_row0(const sdi_energy_model *m, sd_op op, const double *x)
{
    if (!m->k_heads || op != SD_OP_SPMM)
        return m->row0[op][0];
    return m->row0[op][bucket_of_log2(x[NIN - 1] * m->log2k_std + m->log2k_mean)];
}

/* ------------------------------------------------------------------ inputs */
static double feature_in(int i, double v)
{
    return sdi_energy_is_size_feature(i) ? log1p(v > 0 ? v : 0) : v;
}

static double log2k_of(sd_op op, int k)
{
    return op == SD_OP_SPMM && k > 1 ? log2((double)k) : 0.0;
}

/* Feature i of a task as the model sees it: operator-induced features only exist for
 * spgemm (sd_analyze gives 0 for spmv and spmm, whatever a corpus line holds). */
static double task_feature(int i, const double *features, sd_op op)
{
    if (i >= SDI_F_U_TOTAL && op != SD_OP_SPGEMM)
        return 0.0;
    return feature_in(i, features[i]);
}

void sdi_energy_inputs(const sdi_energy_model *m, const double *features, sd_shape_class shape,
                       sd_op op, int k, double *x)
{
    for (int i = 0; i < SDI_EM_NFEAT; i++)
        x[i] = (task_feature(i, features, op) - m->mean[i]) / m->std[i];
    for (int c = 0; c < SDI_EM_NSHAPE; c++)
        x[SDI_EM_NFEAT + c] = (int)shape == c ? 1.0 : 0.0;
    for (int o = 0; o < SDI_EM_NOP; o++)
        x[SDI_EM_NFEAT + SDI_EM_NSHAPE + o] = (int)op == o ? 1.0 : 0.0;
    x[NIN - 1] = (log2k_of(op, k) - m->log2k_mean) / m->log2k_std;
}

/* ------------------------------------------------------------------ inference */
/* tanh through one exp: half the time of libm's tanh (the hidden layer's 45·H tanh per
 * member dominate a ranking), absolute error within 2.3e-16. */
static inline double fast_tanh(double z)
{
    double e = exp(-2.0 * fabs(z)), r = (1.0 - e) / (1.0 + e);
    return z < 0 ? -r : r;
}

void sdi_energy_hidden(const sdi_energy_model *m, sdi_energy_member_view v, const double *x,
                       double *h)
{
    int H = m->hidden;
    for (int j = 0; j < NIN; j++)
        for (int q = 0; q < H; q++)
            h[j * H + q] = fast_tanh(x[j] * v.w1[j * H + q] + v.b1[j * H + q]);
}

/* E of row t (a head's template) from h (β included); contrib (NIN) may be NULL, else
 * it is incremented by scale × the per-input contributions. */
double sdi_energy_row_energy(const sdi_energy_model *m, sdi_energy_member_view v, const double *h,
                             int t, double *contrib, double scale)
{
    int H = m->hidden;
    const double *w = v.w2 + (long)t * NIN * H;
    double e = v.beta[t];
    for (int j = 0; j < NIN; j++) {
        double c = 0;
        for (int q = 0; q < H; q++)
            c += h[j * H + q] * w[j * H + q];
        if (contrib != NULL)
            contrib[j] += scale * c;
        e += c;
    }
    return e;
}

void sdi_energy_eval(const sdi_energy_model *m, const double *x, sd_op op, double *out,
                     double *contrib)
{
    double h[NIN * 64], inv = 1.0 / m->members;
    int nt = m->ntemp[op], r0 = sdi_energy_row0(m, op, x);
    if (contrib != NULL)
        memset(contrib, 0, sizeof(double) * (size_t)nt * NIN);
    for (int i = 0; i < m->members; i++) {
        sdi_energy_member_view v = sdi_energy_member_of(m, i);
        sdi_energy_hidden(m, v, x, h);
        for (int s = 0; s < nt; s++) {
            double e = sdi_energy_row_energy(
                m, v, h, r0 + s, contrib != NULL ? contrib + (long)s * NIN : NULL, inv);
            out[s] = i == 0 ? e : out[s] + e;
        }
    }
    if (m->members > 1)
        for (int s = 0; s < nt; s++)
            out[s] *= inv;
}

/* ------------------------------------------------------------------ ranking */
typedef struct {
    const char *name;
    double value, contribution, xstd;
} reason_item;

sd_status sdi_rank_energy(const sdi_energy_model *m, const sd_features *f, sd_op op, int k,
                          sdi_ranking *out)
{
    memset(out, 0, sizeof *out);
    int nv = 0;
    const char *const *vocab = sdi_vocabulary(op, &nv);
    if (m == NULL || m->theta == NULL || f == NULL || vocab == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "rank: no model, no features or unknown operator %d",
                       (int)op);
    if ((unsigned)f->shape_class >= SDI_EM_NSHAPE)
        return SDI_ERR(SD_ERR_INVALID_ARG, "rank: shape class %d out of range", (int)f->shape_class);
    if (op == SD_OP_SPMM && k < 1)
        return SDI_ERR(SD_ERR_INVALID_ARG, "rank: K = %d for spmm", k);
    int kk = op == SD_OP_SPMM ? k : 1;
    double x[NIN], E[SDI_RANK_MAX_TEMPLATES], contrib[SDI_RANK_MAX_TEMPLATES * NIN];
    sdi_energy_inputs(m, f->values, f->shape_class, op, kk, x);
    sdi_energy_eval(m, x, op, E, contrib);
    out->op = op;
    out->k = kk;
    snprintf(out->model, sizeof out->model, "energy-v1");
    for (int s = 0; s < nv && s < SDI_RANK_MAX_TEMPLATES; s++) {
        sdi_rank_entry *e = &out->e[out->n++];
        snprintf(e->label, sizeof e->label, "%s", vocab[s]);
        e->energy = E[s];
        const double *cs = contrib + (long)s * NIN;
        reason_item it[SDI_EM_NFEAT + 3];
        int ni = 0;
        for (int j = 0; j < SDI_EM_NFEAT; j++)
            it[ni++] = (reason_item){sdi_feature_get(j)->name, f->values[j], cs[j], x[j]};
        double shape = 0, prior = sdi_energy_prior(m, sdi_energy_row0(m, op, x) + s);
        for (int c = 0; c < SDI_EM_NSHAPE; c++)
            shape += cs[SDI_EM_NFEAT + c];
        for (int o = 0; o < SDI_EM_NOP; o++)
            prior += cs[SDI_EM_NFEAT + SDI_EM_NSHAPE + o];
        it[ni++] = (reason_item){"shape_class", (double)f->shape_class, shape, 1.0};
        it[ni++] = (reason_item){"log2_k", log2((double)kk), cs[NIN - 1], x[NIN - 1]};
        it[ni++] = (reason_item){"prior", 0.0, prior, 0.0};
        /* Top contributions by magnitude (selection; ties keep input order). */
        for (int r = 0; r < SDI_RANK_MAX_REASONS && r < ni; r++) {
            int bi = r;
            for (int i = r + 1; i < ni; i++)
                if (fabs(it[i].contribution) > fabs(it[bi].contribution))
                    bi = i;
            reason_item tmp = it[r];
            it[r] = it[bi];
            it[bi] = tmp;
            sdi_rank_reason *rr = &e->reasons[e->nreasons++];
            snprintf(rr->feature, sizeof rr->feature, "%s", it[r].name);
            rr->value = it[r].value;
            rr->contribution = it[r].contribution;
            if (strcmp(it[r].name, "prior") == 0 && m->k_heads && op == SD_OP_SPMM)
                snprintf(rr->why, sizeof rr->why, "learned template bias for spmm at K bucket %d",
                         sdi_energy_k_bucket_value(sdi_energy_k_bucket(kk)));
            else if (strcmp(it[r].name, "prior") == 0)
                snprintf(rr->why, sizeof rr->why, "learned template bias for %s",
                         sdi_op_name(op));
            else if (strcmp(it[r].name, "shape_class") == 0)
                snprintf(rr->why, sizeof rr->why, "learned term of shape class %s (%s)",
                         sd_shape_class_name(f->shape_class),
                         it[r].contribution < 0 ? "favours" : "penalises");
            else
                snprintf(rr->why, sizeof rr->why, "learned h_j(x_j)·w2 at standardised x = %.3g (%s)",
                         it[r].xstd, it[r].contribution < 0 ? "favours" : "penalises");
        }
    }
    /* Stable insertion sort by energy, as sdi_rank. */
    for (int i = 1; i < out->n; i++) {
        sdi_rank_entry t = out->e[i];
        int j = i - 1;
        while (j >= 0 && out->e[j].energy > t.energy) {
            out->e[j + 1] = out->e[j];
            j--;
        }
        out->e[j + 1] = t;
    }
    return SD_OK;
}
