/* src/gen/twin.c: "twins" of the paper-60 matrices: a synthetic matrix with the rows,
 * cols and nnz of one row of paper60.tsv, its longest row exactly, and the coefficient
 * of variation of its row lengths approximately.
 *
 * Row lengths. The lengths are a deterministic multiset, then randomly permuted (seed):
 * one row of exactly max_row, and rows-1 "body" rows at the quantiles (i + ½)/(rows-1)
 * of a rounded lognormal s·exp(σZ), clamped to [lo, max_row] (lo = 1 unless the mean is
 * below 1). For a given σ, s is found by bisection so that the total is as close to nnz
 * as the steps allow; σ is found by a scan and bisection so that the CV meets the
 * target (σ = 0 gives the least spread; large σ tends to the two-point extreme {lo, max}
 * with the largest CV the constraints allow). The last few units of nnz are added to (or
 * taken from) single rows, so nnz is exact. Counting rows per length value through the
 * normal CDF makes one evaluation O(max_row), not O(rows).
 *
 * Columns. Each row draws its columns from a window of about 4× its length around the
 * diagonal position ⌊(i + ½)·cols/rows⌋ with probability `local` (default 0.7) and
 * uniformly otherwise: banded locality plus scattered entries, as in many real
 * matrices. Rows longer than cols/4 are uniform subsets. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"

/* ------------------------------------------------------------------ the table */

static sd_status parse_fields(char *line, const char *path, long lineno, sdi_twin_target *t)
{
    char *fields[10];
    int nf = 0;
    char *save = NULL;
    for (char *tok = strtok_r(line, "\t", &save); tok != NULL && nf < 10;
         tok = strtok_r(NULL, "\t", &save))
        fields[nf++] = tok;
    if (nf != 9)
        return SDI_ERR(SD_ERR_PARSE, "%s: line %ld: %d tab-separated fields, want 9", path,
                       lineno, nf);
    if (strlen(fields[0]) >= sizeof t->name)
        return SDI_ERR(SD_ERR_PARSE, "%s: line %ld: name too long", path, lineno);
    memset(t, 0, sizeof *t);
    strcpy(t->name, fields[0]);
    char *end;
    long long v[4];
    const int idx[4] = {1, 2, 3, 6};
    const char *what[4] = {"rows", "cols", "nnz", "max_row"};
    for (int k = 0; k < 4; k++) {
        errno = 0;
        v[k] = strtoll(fields[idx[k]], &end, 10);
        if (errno != 0 || end == fields[idx[k]] || *end != '\0' || v[k] < 0 ||
            (k < 2 && v[k] > INT32_MAX))
            return SDI_ERR(SD_ERR_PARSE, "%s: line %ld: %s '%s' is not a valid count", path,
                           lineno, what[k], fields[idx[k]]);
    }
    errno = 0;
    double cv = strtod(fields[7], &end);
    if (errno != 0 || end == fields[7] || *end != '\0' || !(cv >= 0) || !isfinite(cv))
        return SDI_ERR(SD_ERR_PARSE, "%s: line %ld: cv_row '%s' is not a number >= 0", path,
                       lineno, fields[7]);
    t->rows = (int32_t)v[0];
    t->cols = (int32_t)v[1];
    t->nnz = v[2];
    t->max_row = v[3];
    t->cv_row = cv;
    if (t->rows < 1 || t->cols < 1 || t->max_row > t->cols || t->nnz > (int64_t)t->rows * t->cols ||
        t->max_row * (int64_t)t->rows < t->nnz || (t->nnz > 0 && t->max_row < 1) ||
        t->max_row > t->nnz)
        return SDI_ERR(SD_ERR_PARSE, "%s: line %ld: inconsistent sizes for '%s'", path, lineno,
                       t->name);
    return SD_OK;
}

sd_status sdi_twin_read_table(const char *path, sdi_twin_target **out, int *count)
{
    FILE *f = NULL;
    char *line = NULL;
    sdi_twin_target *tab = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        if (f != NULL)                                                                     \
            fclose(f);                                                                     \
        free(line); /* from getline */                                                     \
        sdi_free(tab);                                                                     \
    } while (0)
    *out = NULL;
    *count = 0;
    f = fopen(path, "r");
    if (f == NULL)
        return SDI_ERR(SD_ERR_IO, "cannot open twin table %s: %s", path, strerror(errno));
    size_t cap = 0;
    int n = 0, ncap = 0;
    long lineno = 0;
    ssize_t got;
    bool header = false;
    while ((got = getline(&line, &cap, f)) >= 0) {
        lineno++;
        while (got > 0 && (line[got - 1] == '\n' || line[got - 1] == '\r'))
            line[--got] = '\0';
        if (got == 0)
            continue;
        if (!header) {
            if (strncmp(line, "name\t", 5) != 0) {
                SD_FREE_ALL;
                return SDI_ERR(SD_ERR_PARSE, "%s: line %ld: header 'name\\trows\\t...' expected",
                               path, lineno);
            }
            header = true;
            continue;
        }
        if (n == ncap) {
            ncap = ncap ? 2 * ncap : 64;
            sdi_twin_target *grown = sdi_realloc_array(tab, (size_t)ncap, sizeof *tab);
            SD_CHECK_ALLOC(grown, "the twin table");
            tab = grown;
        }
        SD_TRY(parse_fields(line, path, lineno, &tab[n]));
        n++;
    }
    if (ferror(f)) {
        SD_FREE_ALL;
        return SDI_ERR(SD_ERR_IO, "%s: read error", path);
    }
    if (!header) {
        SD_FREE_ALL;
        return SDI_ERR(SD_ERR_PARSE, "%s: empty twin table", path);
    }
    fclose(f);
    free(line);
    *out = tab;
    *count = n;
    return SD_OK;
#undef SD_FREE_ALL
}

sd_status sdi_twin_scale(const sdi_twin_target *t, double scale, sdi_twin_target *out)
{
    if (!(scale > 0.0 && scale <= 1.0))
        return SDI_ERR(SD_ERR_INVALID_ARG, "gen: twin: scale %g is not in (0, 1]", scale);
    *out = *t;
    if (scale == 1.0)
        return SD_OK;
    int64_t rows = llround((double)t->rows * scale);
    int64_t cols = t->rows == t->cols ? rows : llround((double)t->cols * scale);
    rows = rows < 1 ? 1 : rows;
    cols = cols < 1 ? 1 : cols;
    /* The mean row length is kept, but a row may fill at most a quarter of the scaled
     * columns on average (a dense-ish matrix shrinks its rows too). */
    double mean = (double)t->nnz / (double)t->rows;
    if (mean > (double)cols / 4.0 && mean > 1.0)
        mean = (double)cols / 4.0 > 1.0 ? (double)cols / 4.0 : 1.0;
    int64_t nnz = llround(mean * (double)rows);
    if (nnz > rows * cols)
        nnz = rows * cols;
    int64_t lo = nnz >= rows ? 1 : 0;
    int64_t mx = t->max_row < cols ? t->max_row : cols;
    /* A hub row keeps its length only as far as the CV allows: alone it may carry at
     * most half the target variance ((max − mean)² / rows ≤ ½ (cv·mean)²); otherwise
     * a shrunken twin of a hub-heavy matrix could only overshoot the CV. */
    double hub = mean + t->cv_row * mean * sqrt((double)rows / 2.0);
    if ((double)mx > hub)
        mx = (int64_t)floor(hub);
    if (mx > nnz - (rows - 1) * lo)
        mx = nnz - (rows - 1) * lo;
    int64_t need = (nnz + rows - 1) / rows; /* the longest row is at least the mean */
    if (mx < need)
        mx = need;
    out->rows = (int32_t)rows;
    out->cols = (int32_t)cols;
    out->nnz = nnz;
    out->max_row = mx;
    return SD_OK;
}

/* ------------------------------------------------------------------ row lengths */

typedef struct {
    int64_t body; /* rows - 1 */
    int64_t lo, max;
} twin_shape;

/* Body rows whose rounded value is ≤ l: #{i : (i + ½)/B < Φ((ln(l + ½) − ln s)/σ)}. */
static int64_t count_at_most(const twin_shape *sh, double sigma, double log_s, int64_t l)
{
    if (l >= sh->max)
        return sh->body;
    double t = (log((double)l + 0.5) - log_s) / sigma;
    double phi = 0.5 * erfc(-t * M_SQRT1_2);
    double c = ceil((double)sh->body * phi - 0.5);
    if (c < 0)
        return 0;
    if (c > (double)sh->body)
        return sh->body;
    return (int64_t)c;
}

/* Sum and sum of squares of the body (and the sorted body itself into fill). */
static void body_moments(const twin_shape *sh, double sigma, double log_s, double *sum,
                         double *sumsq, int64_t *fill)
{
    *sum = *sumsq = 0.0;
    if (sh->body == 0)
        return;
    if (sigma <= 0.0) {
        double v = floor(exp(log_s) + 0.5);
        int64_t l = v < (double)sh->lo ? sh->lo : (v > (double)sh->max ? sh->max : (int64_t)v);
        *sum = (double)sh->body * (double)l;
        *sumsq = (double)sh->body * (double)l * (double)l;
        if (fill != NULL)
            for (int64_t i = 0; i < sh->body; i++)
                fill[i] = l;
        return;
    }
    int64_t prev = 0;
    for (int64_t l = sh->lo; prev < sh->body; l++) {
        int64_t c = count_at_most(sh, sigma, log_s, l);
        if (c <= prev)
            continue;
        double n = (double)(c - prev);
        *sum += n * (double)l;
        *sumsq += n * (double)l * (double)l;
        if (fill != NULL)
            for (int64_t i = prev; i < c; i++)
                fill[i] = l;
        prev = c;
    }
}

/* The log s whose body total is closest to target (ties: the smaller). */
static double solve_log_s(const twin_shape *sh, double sigma, double target)
{
    double ulo = log(0.25) - 8.0 * sigma - 1.0, uhi = log(2.0 * (double)sh->max + 1.0) + 8.0 * sigma + 1.0;
    double sum, sq;
    for (int it = 0; it < 56; it++) {
        double mid = 0.5 * (ulo + uhi);
        body_moments(sh, sigma, mid, &sum, &sq, NULL);
        if (sum <= target)
            ulo = mid;
        else
            uhi = mid;
    }
    double slo, shi;
    body_moments(sh, sigma, ulo, &slo, &sq, NULL);
    body_moments(sh, sigma, uhi, &shi, &sq, NULL);
    return fabs(shi - target) < fabs(slo - target) ? uhi : ulo;
}

/* CV of the whole multiset (body + the max row) for σ, with s solved. */
static double cv_for(const twin_shape *sh, double sigma, int64_t nnz, double *log_s)
{
    double target = (double)(nnz - sh->max);
    *log_s = solve_log_s(sh, sigma, target);
    double sum, sq;
    body_moments(sh, sigma, *log_s, &sum, &sq, NULL);
    double r = (double)(sh->body + 1);
    sum += (double)sh->max;
    sq += (double)sh->max * (double)sh->max;
    double mean = sum / r, var = sq / r - mean * mean;
    return mean > 0 ? sqrt(var > 0 ? var : 0) / mean : 0.0;
}

/* Sorted lengths (ascending, the last one = max) meeting the target; lens has rows
 * entries. */
static void twin_lengths(const sdi_twin_target *t, int64_t *lens)
{
    const int64_t rows = t->rows, nnz = t->nnz;
    if (rows == 1) {
        lens[0] = nnz;
        return;
    }
    twin_shape sh = {rows - 1, nnz >= rows ? 1 : 0, t->max_row};
    double best_sigma = 0.0, log_s;
    double cv0 = cv_for(&sh, 0.0, nnz, &log_s);
    if (t->cv_row > cv0) {
        /* Scan σ upwards for the first CV above the target, then bisect. */
        double lo = 0.0, hi = -1.0, sigma = 0.01;
        for (; sigma <= 12.0; sigma *= 1.3) {
            if (cv_for(&sh, sigma, nnz, &log_s) >= t->cv_row) {
                hi = sigma;
                break;
            }
            lo = sigma;
        }
        if (hi < 0) {
            best_sigma = lo; /* the target is beyond reach: the largest spread found */
        } else {
            for (int it = 0; it < 40; it++) {
                double mid = 0.5 * (lo + hi);
                if (cv_for(&sh, mid, nnz, &log_s) < t->cv_row)
                    lo = mid;
                else
                    hi = mid;
            }
            double s_lo, s_hi;
            double c_lo = cv_for(&sh, lo, nnz, &s_lo), c_hi = cv_for(&sh, hi, nnz, &s_hi);
            best_sigma = fabs(c_lo - t->cv_row) <= fabs(c_hi - t->cv_row) ? lo : hi;
        }
    }
    cv_for(&sh, best_sigma, nnz, &log_s);
    double sum, sq;
    body_moments(&sh, best_sigma, log_s, &sum, &sq, lens);
    lens[rows - 1] = sh.max;
    /* The last units of nnz: +1 on the longest body rows, −1 on the shortest, so the
     * sorted order and the bounds [lo, max] hold. */
    int64_t d = nnz - (int64_t)sum - sh.max;
    while (d > 0) {
        int64_t before = d;
        for (int64_t i = sh.body - 1; i >= 0 && d > 0; i--)
            if (lens[i] < sh.max) {
                lens[i]++;
                d--;
            }
        if (d == before)
            break; /* cannot happen for a consistent target */
    }
    while (d < 0) {
        int64_t before = d;
        for (int64_t i = 0; i < sh.body && d < 0; i++)
            if (lens[i] > sh.lo) {
                lens[i]--;
                d++;
            }
        if (d == before)
            break;
    }
}

/* ------------------------------------------------------------------ columns */

typedef struct {
    double p_local;
} twin_ctx;

static void twin_fill(const sdi_rowgen *g, int32_t i, int32_t *cols, int64_t len)
{
    const twin_ctx *c = g->ctx;
    sdi_rng r;
    sdi_rng_seed(&r, g->seed, SDI_STREAM_COLUMNS, (uint64_t)i);
    const int64_t ncols = g->cols;
    int64_t center = (int64_t)(((double)i + 0.5) * (double)ncols / (double)g->rows);
    int64_t wlen = 4 * len > 64 ? 4 * len : 64;
    if (wlen > ncols)
        wlen = ncols;
    int64_t wlo = center - wlen / 2;
    if (wlo < 0)
        wlo = 0;
    if (wlo > ncols - wlen)
        wlo = ncols - wlen;
    sdi_gen_sample_mixed(&r, ncols, wlo, wlen, c->p_local, len, cols);
}

sd_status sdi_gen_twin(const sdi_gen_params *p, sd_csr *out)
{
    const char *name = sdi_gen_str(p, "name", NULL);
    const char *file = sdi_gen_str(p, "file", NULL);
    double scale, local;
    if (name == NULL || name[0] == '\0')
        return SDI_ERR(SD_ERR_INVALID_ARG, "gen: twin: key 'name' is required (a row of "
                                           "paper60.tsv)");
    if (file == NULL || file[0] == '\0')
        return SDI_ERR(SD_ERR_INVALID_ARG, "gen: twin: key 'file' is required (the path of "
                                           "paper60.tsv)");
    sd_status s = sdi_gen_real(p, "scale", 1.0, 1e-9, 1.0, &scale);
    if (s == SD_OK)
        s = sdi_gen_real(p, "local", 0.7, 0.0, 1.0, &local);
    if (s != SD_OK)
        return s;
    sdi_twin_target *tab = NULL, target;
    int n = 0;
    s = sdi_twin_read_table(file, &tab, &n);
    if (s != SD_OK)
        return s;
    int found = -1;
    for (int k = 0; k < n && found < 0; k++)
        if (strcmp(tab[k].name, name) == 0)
            found = k;
    if (found < 0) {
        sdi_free(tab);
        return SDI_ERR(SD_ERR_INVALID_ARG, "gen: twin: no row named '%s' in %s", name, file);
    }
    s = sdi_twin_scale(&tab[found], scale, &target);
    sdi_free(tab);
    if (s != SD_OK || p->check_only)
        return s;
    int64_t *lens = sdi_malloc_array((size_t)target.rows, sizeof *lens);
    if (lens == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "gen: twin: out of host memory for %d rows",
                       target.rows);
    twin_lengths(&target, lens);
    /* Rows in random order (Fisher–Yates from one stream). */
    sdi_rng r;
    sdi_rng_seed(&r, p->seed, SDI_STREAM_PERMUTE, 0);
    for (int64_t i = target.rows - 1; i > 0; i--) {
        int64_t j = (int64_t)sdi_rng_below(&r, (uint64_t)i + 1);
        int64_t tmp = lens[i];
        lens[i] = lens[j];
        lens[j] = tmp;
    }
    twin_ctx c = {local};
    sdi_rowgen g = {target.rows, target.cols, NULL, twin_fill, lens, &c, p->seed};
    s = sdi_gen_build(&g, out);
    sdi_free(lens);
    return s;
}
