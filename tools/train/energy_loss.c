/* tools/train/energy_loss.c: the training side of the energy model (energy_loss.h):
 * random initial weights, the listwise + margin ranking loss and its analytic gradient,
 * and saving the weights. */
#include <math.h>
#include <string.h>

#include "core/rng.h"
#include "energy_loss.h"

#define NIN SDI_EM_NIN

void sdi_energy_model_init(sdi_energy_model *m, unsigned long long seed)
{
    long nh = (long)NIN * m->hidden;
    for (int i = 0; i < m->members; i++) {
        double *w1 = m->theta + (long)i * m->nparams, *b1 = w1 + nh, *w2 = b1 + nh;
        double *beta = w2 + (long)m->nrows * nh;
        sdi_rng s;
        sdi_rng_seed(&s, seed, 0x1417 /* stream: initial weights */, (uint64_t)i);
        /* h_j spans the standardised range: slopes ~ N(0,1), thresholds ~ N(0,1). */
        for (long k = 0; k < nh; k++)
            w1[k] = sdi_rng_normal(&s);
        for (long k = 0; k < nh; k++)
            b1[k] = sdi_rng_normal(&s);
        for (long k = 0; k < (long)m->nrows * nh; k++)
            w2[k] = 0.05 * sdi_rng_normal(&s);
        for (int t = 0; t < m->nrows; t++)
            beta[t] = 0;
    }
    m->seed = seed;
}

static double softplus(double z)
{
    return (z > 0 ? z : 0) + log1p(exp(-fabs(z)));
}

static double sigmoid(double z)
{
    if (z >= 0)
        return 1.0 / (1.0 + exp(-z));
    double e = exp(z);
    return e / (1.0 + e);
}

double sdi_rank_loss(const double *E, const double *us, int n, double baseline_us, double lambda,
                     double temperature, double *gE)
{
    int nm = 0;
    int idx[SDI_RANK_MAX_TEMPLATES];
    double t[SDI_RANK_MAX_TEMPLATES], p[SDI_RANK_MAX_TEMPLATES], q[SDI_RANK_MAX_TEMPLATES];
    for (int s = 0; s < n; s++) {
        if (gE != NULL)
            gE[s] = 0;
        if (us[s] > 0 && isfinite(us[s])) {
            idx[nm] = s;
            t[nm] = log2(baseline_us / us[s]);
            nm++;
        }
    }
    if (nm == 0)
        return 0.0;
    double emin = INFINITY, tmax = -INFINITY;
    for (int a = 0; a < nm; a++) {
        emin = E[idx[a]] < emin ? E[idx[a]] : emin;
        tmax = t[a] > tmax ? t[a] : tmax;
    }
    /* p = softmax(−E), q = softmax(t/T), both shifted for stability. */
    double zp = 0, zq = 0;
    for (int a = 0; a < nm; a++) {
        p[a] = exp(-(E[idx[a]] - emin));
        q[a] = exp((t[a] - tmax) / temperature);
        zp += p[a];
        zq += q[a];
    }
    double logz = -emin + log(zp), loss = 0;
    for (int a = 0; a < nm; a++) {
        p[a] /= zp;
        q[a] /= zq;
        loss += q[a] * (E[idx[a]] + logz); /* −q log p */
        if (gE != NULL)
            gE[idx[a]] = q[a] - p[a];
    }
    for (int a = 0; a < nm; a++)
        for (int b = 0; b < nm; b++)
            if (t[a] > t[b]) {
                double d = t[a] - t[b], z = E[idx[a]] - E[idx[b]];
                loss += lambda * d * softplus(z);
                if (gE != NULL) {
                    double g = lambda * d * sigmoid(z);
                    gE[idx[a]] += g;
                    gE[idx[b]] -= g;
                }
            }
    return loss;
}

double sdi_energy_task_loss(const sdi_energy_model *m, const double *x, sd_op op, const double *us,
                            double baseline_us, double lambda, double temperature, double scale,
                            double *grad)
{
    int H = m->hidden, nt = m->ntemp[op], r0 = sdi_energy_row0(m, op, x);
    double E[SDI_RANK_MAX_TEMPLATES], gE[SDI_RANK_MAX_TEMPLATES];
    if (grad != NULL && m->members != 1)
        return NAN; /* the gradient of one member's parameters only: train members alone */
    int any = 0;
    for (int s = 0; s < nt; s++)
        any |= us[s] > 0 && isfinite(us[s]);
    if (!any)
        return 0.0;
    if (grad == NULL) {
        sdi_energy_eval(m, x, op, E, NULL);
        return sdi_rank_loss(E, us, nt, baseline_us, lambda, temperature, NULL);
    }
    double h[NIN * 64];
    sdi_energy_member_view v = sdi_energy_member_of(m, 0);
    sdi_energy_hidden(m, v, x, h);
    for (int s = 0; s < nt; s++)
        E[s] = sdi_energy_row_energy(m, v, h, r0 + s, NULL, 0);
    double loss = sdi_rank_loss(E, us, nt, baseline_us, lambda, temperature, gE);
    long nh = (long)NIN * H;
    double *gw1 = grad, *gb1 = grad + nh, *gw2 = grad + 2 * nh;
    double *gbeta = gw2 + (long)m->nrows * nh;
    double gh[NIN * 64];
    memset(gh, 0, sizeof(double) * (size_t)nh);
    for (int a = 0; a < nt; a++) {
        if (!(us[a] > 0 && isfinite(us[a])))
            continue;
        int tg = r0 + a;
        double g = gE[a];
        gbeta[tg] += scale * g;
        const double *w = m->w2 + (long)tg * nh;
        double *gw = gw2 + (long)tg * nh;
        for (long i = 0; i < nh; i++) {
            gw[i] += scale * g * h[i];
            gh[i] += g * w[i];
        }
    }
    for (int j = 0; j < NIN; j++)
        for (int q2 = 0; q2 < H; q2++) {
            long i = (long)j * H + q2;
            double ga = gh[i] * (1.0 - h[i] * h[i]);
            gw1[i] += scale * ga * x[j];
            gb1[i] += scale * ga;
        }
    return loss;
}

sd_status sdi_energy_save(const sdi_energy_model *m, const char *path)
{
    sdi_json j;
    sdi_json_init(&j, 0);
    sd_status s = sdi_energy_to_json(m, &j);
    if (s == SD_OK)
        s = sdi_json_finish(&j);
    if (s == SD_OK)
        s = sdi_model_write_file(path, j.buf, strlen(j.buf));
    sdi_json_free(&j);
    return s;
}
