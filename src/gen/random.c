/* src/gen/random.c: random families with uniformly placed columns: uniform (exact nnz,
 * binomial-like row lengths), powerlaw (Zipf row lengths), bimodal (short and long
 * rows). All accept rows ≠ cols. */
#include <math.h>

#include "gen.h"

/* Every row's columns: a uniform sorted subset drawn from the row's own stream. */
static void uniform_columns(const sdi_rowgen *g, int32_t i, int32_t *cols, int64_t len)
{
    sdi_rng r;
    sdi_rng_seed(&r, g->seed, SDI_STREAM_COLUMNS, (uint64_t)i);
    sdi_gen_sample(&r, 0, g->cols, len, cols);
}

static sd_status get_shape(const sdi_gen_params *p, int64_t def_rows, int64_t *rows,
                           int64_t *cols)
{
    sd_status s = sdi_gen_int(p, "rows", def_rows, 1, INT32_MAX, rows);
    if (s == SD_OK)
        s = sdi_gen_int(p, "cols", *rows, 1, INT32_MAX, cols);
    return s;
}

/* ------------------------------------------------------------------ uniform */

sd_status sdi_gen_uniform(const sdi_gen_params *p, sd_csr *out)
{
    int64_t rows, cols, nnz;
    sd_status s = get_shape(p, 1024, &rows, &cols);
    if (s != SD_OK)
        return s;
    const int64_t cells = rows * cols; /* < 2^62 */
    if (sdi_gen_has(p, "nnz") && sdi_gen_has(p, "deg"))
        return SDI_ERR(SD_ERR_INVALID_ARG, "gen: uniform: give key 'nnz' or key 'deg', not both");
    if (sdi_gen_has(p, "deg")) {
        double deg;
        s = sdi_gen_real(p, "deg", 8, 0, (double)cols, &deg);
        if (s != SD_OK)
            return s;
        nnz = llround(deg * (double)rows);
        if (nnz > cells)
            nnz = cells;
    } else {
        s = sdi_gen_int(p, "nnz", cols < 8 ? cells : rows * 8, 0, cells, &nnz);
        if (s != SD_OK)
            return s;
    }
    if (p->check_only)
        return SD_OK;
    int64_t *lens = sdi_malloc_array((size_t)rows, sizeof *lens);
    if (lens == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "gen: out of host memory for %lld row lengths",
                       (long long)rows);
    sdi_gen_split(p->seed, (int32_t)rows, cols, nnz, lens);
    sdi_rowgen g = {(int32_t)rows, (int32_t)cols, NULL, uniform_columns, lens, NULL, p->seed};
    s = sdi_gen_build(&g, out);
    sdi_free(lens);
    return s;
}

/* ------------------------------------------------------------------ powerlaw
 * Row length L = min(max, ⌊X⌋) with X Pareto: P(X ≥ x) = (x_m / x)^(α−1) for x ≥ x_m,
 * so P(L = l) ∝ l^−α in the tail (Zipf). x_m is solved so that E[L] = deg. */
typedef struct {
    double xm, inv_beta;
    int64_t cap;
} powerlaw_ctx;

/* E[min(cap, ⌊X⌋)] = Σ_{l=1}^{cap} P(X ≥ l) = Σ min(1, (x_m / l)^β). */
static double powerlaw_mean(double xm, double beta, int64_t cap)
{
    int64_t full = xm >= (double)cap ? cap : (int64_t)floor(xm);
    double sum = (double)full;
    int64_t l = full + 1, direct_end = full + 4000 < cap ? full + 4000 : cap;
    for (; l <= direct_end; l++)
        sum += pow(xm / (double)l, beta);
    if (l <= cap) {
        /* Tail Σ_{l=a}^{b} f(l) by Euler–Maclaurin: ∫ + (f(a) + f(b))/2 − (f'(a) − f'(b))/12. */
        double a = (double)l, b = (double)cap, xb = pow(xm, beta);
        double integral = fabs(beta - 1.0) < 1e-12
                              ? xb * log(b / a)
                              : xb * (pow(b, 1.0 - beta) - pow(a, 1.0 - beta)) / (1.0 - beta);
        double fa = xb * pow(a, -beta), fb = xb * pow(b, -beta);
        double dfa = -beta * fa / a, dfb = -beta * fb / b;
        sum += integral + 0.5 * (fa + fb) + (dfb - dfa) / 12.0;
    }
    return sum;
}

static int64_t powerlaw_len(const sdi_rowgen *g, int32_t i)
{
    const powerlaw_ctx *c = g->ctx;
    sdi_rng r;
    sdi_rng_seed(&r, g->seed, SDI_STREAM_LENGTHS, (uint64_t)i);
    double u = 1.0 - sdi_rng_uniform(&r); /* (0, 1] */
    double x = c->xm * pow(u, -c->inv_beta);
    return x >= (double)c->cap ? c->cap : (int64_t)floor(x);
}

sd_status sdi_gen_powerlaw(const sdi_gen_params *p, sd_csr *out)
{
    int64_t rows, cols, cap;
    double deg, alpha;
    sd_status s = get_shape(p, 4096, &rows, &cols);
    if (s == SD_OK)
        s = sdi_gen_int(p, "max", cols, 1, cols, &cap);
    if (s == SD_OK)
        s = sdi_gen_real(p, "deg", cap < 8 ? (double)cap : 8.0, 1e-6, (double)cap, &deg);
    if (s == SD_OK)
        s = sdi_gen_real(p, "alpha", 2.2, 1.05, 10.0, &alpha);
    if (s != SD_OK || p->check_only)
        return s;
    const double beta = alpha - 1.0;
    /* Bisection on log x_m: the mean grows with x_m, up to cap at x_m = cap. */
    double lo = log(1e-12), hi = log((double)cap);
    for (int it = 0; it < 100; it++) {
        double mid = 0.5 * (lo + hi);
        if (powerlaw_mean(exp(mid), beta, cap) < deg)
            lo = mid;
        else
            hi = mid;
    }
    powerlaw_ctx c = {exp(hi), 1.0 / beta, cap};
    sdi_rowgen g = {(int32_t)rows, (int32_t)cols, powerlaw_len, uniform_columns, NULL, &c,
                    p->seed};
    return sdi_gen_build(&g, out);
}

/* ------------------------------------------------------------------ bimodal */
typedef struct {
    int64_t shortlen, longlen;
    double frac;
} bimodal_ctx;

static int64_t bimodal_len(const sdi_rowgen *g, int32_t i)
{
    const bimodal_ctx *c = g->ctx;
    sdi_rng r;
    sdi_rng_seed(&r, g->seed, SDI_STREAM_LENGTHS, (uint64_t)i);
    return sdi_rng_uniform(&r) < c->frac ? c->longlen : c->shortlen;
}

sd_status sdi_gen_bimodal(const sdi_gen_params *p, sd_csr *out)
{
    int64_t rows, cols, shortlen, longlen;
    double frac;
    sd_status s = get_shape(p, 4096, &rows, &cols);
    if (s == SD_OK)
        s = sdi_gen_int(p, "short", cols < 4 ? cols : 4, 0, cols, &shortlen);
    if (s == SD_OK)
        s = sdi_gen_int(p, "long", cols < 256 ? cols : 256, 0, cols, &longlen);
    if (s == SD_OK)
        s = sdi_gen_real(p, "frac", 0.05, 0.0, 1.0, &frac);
    if (s != SD_OK || p->check_only)
        return s;
    bimodal_ctx c = {shortlen, longlen, frac};
    sdi_rowgen g = {(int32_t)rows, (int32_t)cols, bimodal_len, uniform_columns, NULL, &c,
                    p->seed};
    return sdi_gen_build(&g, out);
}
