/* src/ref/validate.c: the validation rule of docs/ARCHITECTURE.md "Validation"
 * (|ŷ − y| ≤ 1e-5 + 1e-3·|y| +
 * γ_{n+1}·S, no NaN/Inf), its exact variant for small-integer tests, and the SpGEMM
 * comparison (rows sorted and coalesced first, then structure exactly, values by bound). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref.h"

#define SDI_UNIT_ROUNDOFF 0x1p-24 /* u of FP32 (round to nearest) */

double sdi_gamma(int64_t m)
{
    if (m <= 0)
        return 0.0;
    double mu = (double)m * SDI_UNIT_ROUNDOFF;
    /* γ_m is only defined for m·u < 1; beyond, no finite bound holds: infinite slack. */
    if (mu >= 1.0)
        return INFINITY;
    return mu / (1.0 - mu);
}

double sdi_validation_bound(double want, int64_t count, double absum)
{
    double b = 1e-5 + 1e-3 * fabs(want);
    if (absum > 0.0) {
        double g = sdi_gamma(count + 1);
        b += isinf(g) ? INFINITY : g * absum; /* never ∞·0 = NaN */
    }
    return b;
}

/* ------------------------------------------------------------------ the judge
 * One running summary per thread, merged at the end. Ties of the worst ratio go to the
 * smallest (row, col), so the report does not depend on the thread count. */
typedef struct {
    int64_t n_checked, n_viol, n_nonfinite;
    bool have_worst;
    double ratio, got, want, bound;
    int64_t row, col;
    bool have_nf; /* the first non-finite output */
    int64_t nf_row, nf_col;
    double nf_got, nf_want, nf_bound;
} judge_t;

static void judge_init(judge_t *j)
{
    memset(j, 0, sizeof *j);
    j->row = j->col = j->nf_row = j->nf_col = -1;
}

static bool pos_before(int64_t r1, int64_t c1, int64_t r2, int64_t c2)
{
    return r1 < r2 || (r1 == r2 && c1 < c2);
}

static void judge_take_worst(judge_t *j, double ratio, int64_t row, int64_t col, double got,
                             double want, double bound)
{
    if (!j->have_worst || ratio > j->ratio ||
        (ratio == j->ratio && pos_before(row, col, j->row, j->col))) {
        j->have_worst = true;
        j->ratio = ratio;
        j->row = row;
        j->col = col;
        j->got = got;
        j->want = want;
        j->bound = bound;
    }
}

static void judge_take_nf(judge_t *j, int64_t row, int64_t col, double got, double want,
                          double bound)
{
    if (!j->have_nf || pos_before(row, col, j->nf_row, j->nf_col)) {
        j->have_nf = true;
        j->nf_row = row;
        j->nf_col = col;
        j->nf_got = got;
        j->nf_want = want;
        j->nf_bound = bound;
    }
}

/* exact: bound 0 and ratio = |diff|. */
static inline void judge_entry(judge_t *j, int64_t row, int64_t col, double got, double want,
                               double bound, bool exact)
{
    j->n_checked++;
    if (!isfinite(got)) {
        j->n_nonfinite++;
        j->n_viol++;
        judge_take_nf(j, row, col, got, want, bound);
        return;
    }
    double diff = fabs(got - want);
    double ratio;
    bool viol;
    if (!isfinite(want)) { /* the reference overflowed: nothing can match it */
        ratio = INFINITY;
        viol = true;
    } else if (exact) {
        ratio = diff;
        viol = diff != 0.0;
    } else {
        ratio = isinf(bound) ? 0.0 : diff / bound; /* bound ≥ 1e-5 > 0 */
        viol = diff > bound;
    }
    if (viol)
        j->n_viol++;
    judge_take_worst(j, ratio, row, col, got, want, bound);
}

static void judge_merge(judge_t *into, const judge_t *from)
{
    into->n_checked += from->n_checked;
    into->n_viol += from->n_viol;
    into->n_nonfinite += from->n_nonfinite;
    if (from->have_worst)
        judge_take_worst(into, from->ratio, from->row, from->col, from->got, from->want,
                         from->bound);
    if (from->have_nf)
        judge_take_nf(into, from->nf_row, from->nf_col, from->nf_got, from->nf_want,
                      from->nf_bound);
}

/* Fills out from the summary; returns SD_OK or SD_ERR_VALIDATION with the message. */
static sd_status judge_finish(const judge_t *j, const char *what, bool exact,
                              sdi_validation *out)
{
    sdi_validation v;
    memset(&v, 0, sizeof v);
    v.n_checked = j->n_checked;
    v.n_violations = j->n_viol;
    v.n_nonfinite = j->n_nonfinite;
    v.row = v.col = -1;
    if (j->have_nf) {
        v.row = j->nf_row;
        v.col = j->nf_col;
        v.got = j->nf_got;
        v.want = j->nf_want;
        v.bound = j->nf_bound;
        v.ratio = INFINITY;
    } else if (j->have_worst) {
        v.row = j->row;
        v.col = j->col;
        v.got = j->got;
        v.want = j->want;
        v.bound = j->bound;
        v.ratio = j->ratio;
    }
    v.ok = j->n_viol == 0;
    if (!v.ok) {
        if (j->have_nf)
            snprintf(v.reason, sizeof v.reason,
                     "%s: row %lld col %lld: got non-finite %g, want %.17g (%lld non-finite, "
                     "%lld of %lld entries fail)",
                     what, (long long)v.row, (long long)v.col, v.got, v.want,
                     (long long)v.n_nonfinite, (long long)v.n_violations,
                     (long long)v.n_checked);
        else if (exact)
            snprintf(v.reason, sizeof v.reason,
                     "%s: row %lld col %lld: got %.9g, want %.17g exactly (%lld of %lld "
                     "entries differ)",
                     what, (long long)v.row, (long long)v.col, v.got, v.want,
                     (long long)v.n_violations, (long long)v.n_checked);
        else
            snprintf(v.reason, sizeof v.reason,
                     "%s: row %lld col %lld: got %.9g, want %.17g, |diff| %.3g > bound %.3g "
                     "(%lld of %lld entries violate)",
                     what, (long long)v.row, (long long)v.col, v.got, v.want,
                     fabs(v.got - v.want), v.bound, (long long)v.n_violations,
                     (long long)v.n_checked);
    }
    if (out != NULL)
        *out = v;
    if (!v.ok)
        return SDI_ERR(SD_ERR_VALIDATION, "%s", v.reason);
    return SD_OK;
}

static void validation_failed_early(sdi_validation *out, const char *reason)
{
    if (out == NULL)
        return;
    memset(out, 0, sizeof *out);
    out->row = out->col = -1;
    snprintf(out->reason, sizeof out->reason, "%s", reason);
}

/* ------------------------------------------------------------------ dense outputs */

static sd_status validate_dense(const float *got, const double *want, const int64_t *count,
                                const double *absum, int64_t rows, int64_t width, bool exact,
                                sdi_validation *out)
{
    if (rows < 0 || width < 1 || (rows > 0 && (got == NULL || want == NULL)) ||
        (!exact && rows > 0 && (count == NULL || absum == NULL))) {
        validation_failed_early(out, "validate: NULL array or bad size");
        return SDI_ERR(SD_ERR_INVALID_ARG,
                       "validate: NULL array or bad size (rows %lld, width %lld)",
                       (long long)rows, (long long)width);
    }
    judge_t all;
    judge_init(&all);
#pragma omp parallel
    {
        judge_t mine;
        judge_init(&mine);
#pragma omp for schedule(static)
        for (int64_t i = 0; i < rows; i++) {
            for (int64_t c = 0; c < width; c++) {
                int64_t e = i * width + c;
                double bound = exact ? 0.0 : sdi_validation_bound(want[e], count[i], absum[e]);
                judge_entry(&mine, i, c, (double)got[e], want[e], bound, exact);
            }
        }
#pragma omp critical(sdi_validate_merge)
        judge_merge(&all, &mine);
    }
    return judge_finish(&all, exact ? "exact compare" : "validation", exact, out);
}

sd_status sdi_validate_dense(const float *got, const double *want, const int64_t *count,
                             const double *absum, int64_t rows, int64_t width,
                             sdi_validation *out)
{
    return validate_dense(got, want, count, absum, rows, width, false, out);
}

sd_status sdi_validate_dense_exact(const float *got, const double *want, int64_t rows,
                                   int64_t width, sdi_validation *out)
{
    return validate_dense(got, want, NULL, NULL, rows, width, true, out);
}

/* ------------------------------------------------------------------ SpGEMM */

typedef struct {
    int32_t col;
    float val;
} colval_t;

static int cmp_colval(const void *x, const void *y)
{
    const colval_t *a = x, *b = y;
    if (a->col != b->col)
        return (a->col > b->col) - (a->col < b->col);
    /* Duplicates in a fixed order so that their double sum does not depend on the
     * order the GPU wrote them in. */
    uint32_t ua, ub;
    memcpy(&ua, &a->val, sizeof ua);
    memcpy(&ub, &b->val, sizeof ub);
    return (ua > ub) - (ua < ub);
}

/* Sorts row i of got into scratch and coalesces duplicates: (cols, vals) of length
 * *len. */
static void canonical_row(const sd_csr *got, int32_t i, colval_t *scratch, int32_t *cols,
                          double *vals, int64_t *len)
{
    int64_t b = got->rowptr[i], n = got->rowptr[i + 1] - b;
    for (int64_t k = 0; k < n; k++) {
        scratch[k].col = got->colind[b + k];
        scratch[k].val = got->vals[b + k];
    }
    if (n <= 32) {
        for (int64_t k = 1; k < n; k++) {
            colval_t t = scratch[k];
            int64_t m = k;
            for (; m > 0 && cmp_colval(&scratch[m - 1], &t) > 0; m--)
                scratch[m] = scratch[m - 1];
            scratch[m] = t;
        }
    } else {
        qsort(scratch, (size_t)n, sizeof *scratch, cmp_colval);
    }
    int64_t w = 0;
    for (int64_t k = 0; k < n; k++) {
        if (w > 0 && cols[w - 1] == scratch[k].col) {
            vals[w - 1] += (double)scratch[k].val;
        } else {
            cols[w] = scratch[k].col;
            vals[w] = (double)scratch[k].val;
            w++;
        }
    }
    *len = w;
}

static bool row_strictly_sorted(const sd_csr *got, int32_t i)
{
    for (int64_t k = got->rowptr[i] + 1; k < got->rowptr[i + 1]; k++)
        if (got->colind[k] <= got->colind[k - 1])
            return false;
    return true;
}

/* Message for a structural difference in row i: the first column present in one and
 * not in the other. */
static void describe_row_difference(const int32_t *gc, int64_t gn, const int32_t *wc,
                                    int64_t wn, int32_t i, int64_t *col, char *buf,
                                    size_t cap)
{
    int64_t p = 0, q = 0;
    while (p < gn && q < wn && gc[p] == wc[q]) {
        p++;
        q++;
    }
    if (p < gn && (q >= wn || gc[p] < wc[q])) {
        *col = gc[p];
        snprintf(buf, cap,
                 "spgemm structure: row %d: got %lld entries, want %lld; extra column %d",
                 i, (long long)gn, (long long)wn, gc[p]);
    } else if (q < wn) {
        *col = wc[q];
        snprintf(buf, cap,
                 "spgemm structure: row %d: got %lld entries, want %lld; missing column %d",
                 i, (long long)gn, (long long)wn, wc[q]);
    } else {
        *col = -1;
        snprintf(buf, cap, "spgemm structure: row %d differs", i);
    }
}

sd_status sdi_validate_spgemm(const sd_csr *got, const sdi_ref_csr *want, sdi_validation *out)
{
    char msg[256];
    if (got == NULL || want == NULL || want->rowptr == NULL ||
        (want->nnz > 0 && (want->colind == NULL || want->vals == NULL ||
                           want->count == NULL || want->absum == NULL))) {
        validation_failed_early(out, "validate spgemm: NULL matrix or array");
        return SDI_ERR(SD_ERR_INVALID_ARG, "validate spgemm: NULL matrix or array");
    }
    if (got->rows != want->rows || got->cols != want->cols) {
        snprintf(msg, sizeof msg, "spgemm: got a %d x %d matrix, want %d x %d", got->rows,
                 got->cols, want->rows, want->cols);
        validation_failed_early(out, msg);
        return SDI_ERR(SD_ERR_VALIDATION, "%s", msg);
    }
    const int32_t rows = got->rows, cols = got->cols;
    /* got may come straight from a device: check its row pointers and indices before
     * trusting them as addresses. */
    if (got->rowptr == NULL || got->nnz < 0 || (got->nnz > 0 &&
                                                (got->colind == NULL || got->vals == NULL))) {
        validation_failed_early(out, "spgemm: got has NULL arrays");
        return SDI_ERR(SD_ERR_INVALID_ARG, "validate spgemm: got has NULL arrays");
    }
    int64_t maxlen = 0;
    for (int32_t i = 0; i < rows; i++) {
        int64_t b = got->rowptr[i], e = got->rowptr[i + 1];
        if ((i == 0 && b != 0) || e < b || e > got->nnz) {
            snprintf(msg, sizeof msg,
                     "spgemm: got row %d: row pointers [%lld, %lld) invalid (nnz %lld)", i,
                     (long long)b, (long long)e, (long long)got->nnz);
            validation_failed_early(out, msg);
            if (out != NULL)
                out->row = i;
            return SDI_ERR(SD_ERR_VALIDATION, "%s", msg);
        }
        if (e - b > maxlen)
            maxlen = e - b;
    }
    if (got->rowptr[rows] != got->nnz) {
        snprintf(msg, sizeof msg, "spgemm: got rowptr[%d] = %lld but nnz %lld", rows,
                 (long long)got->rowptr[rows], (long long)got->nnz);
        validation_failed_early(out, msg);
        return SDI_ERR(SD_ERR_VALIDATION, "%s", msg);
    }
    int32_t bad_index_row = rows;
#pragma omp parallel for schedule(static) reduction(min : bad_index_row)
    for (int32_t i = 0; i < rows; i++)
        for (int64_t k = got->rowptr[i]; k < got->rowptr[i + 1]; k++)
            if (got->colind[k] < 0 || got->colind[k] >= cols) {
                if (i < bad_index_row)
                    bad_index_row = i;
                break;
            }
    if (bad_index_row < rows) {
        snprintf(msg, sizeof msg, "spgemm: got row %d: a column index is out of [0, %d)",
                 bad_index_row, cols);
        validation_failed_early(out, msg);
        if (out != NULL)
            out->row = bad_index_row;
        return SDI_ERR(SD_ERR_VALIDATION, "%s", msg);
    }

    /* One pass: canonical form of each row, structure compared with the reference,
     * values judged where the structure matches. */
    int32_t first_bad = rows;
    int oom = 0;
    judge_t all;
    judge_init(&all);
#pragma omp parallel
    {
        judge_t mine;
        judge_init(&mine);
        size_t cap = (size_t)(maxlen > 0 ? maxlen : 1);
        colval_t *scratch = sdi_malloc_array(cap, sizeof *scratch);
        int32_t *ccol = sdi_malloc_array(cap, sizeof *ccol);
        double *cval = sdi_malloc_array(cap, sizeof *cval);
        int32_t my_bad = rows;
        if (scratch == NULL || ccol == NULL || cval == NULL) {
#pragma omp atomic write
            oom = 1;
        }
#pragma omp barrier
        int failed;
#pragma omp atomic read
        failed = oom;
        if (!failed) {
#pragma omp for schedule(dynamic, 256)
            for (int32_t i = 0; i < rows; i++) {
                const int64_t wb = want->rowptr[i], wn = want->rowptr[i + 1] - wb;
                int64_t gn;
                bool direct = row_strictly_sorted(got, i);
                if (direct)
                    gn = got->rowptr[i + 1] - got->rowptr[i];
                else
                    canonical_row(got, i, scratch, ccol, cval, &gn);
                const int32_t *gc = direct ? got->colind + got->rowptr[i] : ccol;
                if (gn != wn || memcmp(gc, want->colind + wb, (size_t)gn * sizeof *gc) != 0) {
                    if (i < my_bad)
                        my_bad = i;
                    continue;
                }
                for (int64_t e = 0; e < gn; e++) {
                    double g = direct ? (double)got->vals[got->rowptr[i] + e] : cval[e];
                    double w = want->vals[wb + e];
                    double bound =
                        sdi_validation_bound(w, want->count[wb + e], want->absum[wb + e]);
                    judge_entry(&mine, i, gc[e], g, w, bound, false);
                }
            }
        }
        sdi_free(scratch);
        sdi_free(ccol);
        sdi_free(cval);
#pragma omp critical(sdi_validate_spgemm_merge)
        {
            judge_merge(&all, &mine);
            if (my_bad < first_bad)
                first_bad = my_bad;
        }
    }
    if (oom) {
        validation_failed_early(out, "validate spgemm: out of host memory");
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY,
                       "validate spgemm: out of host memory for rows of %lld entries",
                       (long long)maxlen);
    }
    if (first_bad < rows) {
        /* Redo the first bad row alone to name its difference. */
        int64_t gn = 0, col = -1;
        const int32_t i = first_bad;
        const int64_t wb = want->rowptr[i], wn = want->rowptr[i + 1] - wb;
        size_t cap = (size_t)(maxlen > 0 ? maxlen : 1);
        colval_t *scratch = sdi_malloc_array(cap, sizeof *scratch);
        int32_t *ccol = sdi_malloc_array(cap, sizeof *ccol);
        double *cval = sdi_malloc_array(cap, sizeof *cval);
        if (scratch == NULL || ccol == NULL || cval == NULL) {
            snprintf(msg, sizeof msg, "spgemm structure: row %d differs", i);
        } else {
            canonical_row(got, i, scratch, ccol, cval, &gn);
            describe_row_difference(ccol, gn, want->colind + wb, wn, i, &col, msg, sizeof msg);
        }
        sdi_free(scratch);
        sdi_free(ccol);
        sdi_free(cval);
        if (out != NULL) {
            memset(out, 0, sizeof *out);
            out->n_checked = all.n_checked;
            out->n_violations = 1;
            out->row = i;
            out->col = col;
            snprintf(out->reason, sizeof out->reason, "%s", msg);
        }
        return SDI_ERR(SD_ERR_VALIDATION, "%s", msg);
    }
    return judge_finish(&all, "spgemm values", false, out);
}
