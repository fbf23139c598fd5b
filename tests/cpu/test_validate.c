/* tests/cpu/test_validate.c: the validation rule (bound, exact variant, NaN/Inf, worst
 * entry reporting) and the SpGEMM comparison (sorting, coalescing, structure). Every
 * accepting check has a rejecting twin: the rule must be able to fail. */
#include <omp.h>

#include "ref/ref.h"
#include "sdt.h"

static unsigned long long rs;
static unsigned long long rnd(void)
{
    rs ^= rs >> 12;
    rs ^= rs << 25;
    rs ^= rs >> 27;
    return rs * 2685821657736338717ull;
}
static double rnd_unit(void) { return (double)(rnd() >> 11) * 0x1p-53; }
static int rnd_below(int n) { return (int)((rnd() >> 33) % (unsigned long long)n); }

/* rows x cols with about deg entries per row (sorted, distinct). ints: values in
 * {-2..2}, else uniform in [-1, 1). */
static void random_csr(int rows, int cols, int deg, int ints, sd_csr *a)
{
    int64_t cap = (int64_t)rows * (deg < cols ? deg : cols);
    sdi_csr_alloc(a, rows, cols, cap);
    int64_t k = 0;
    for (int i = 0; i < rows; i++) {
        for (int j = 0; j < cols; j++) {
            int left = cols - j;
            int want = deg < cols ? deg : cols;
            int64_t have = k - a->rowptr[i];
            if (have < want && rnd_below(left) < want - have) {
                a->colind[k] = j;
                a->vals[k] = ints ? (float)(rnd_below(5) - 2) : (float)(2 * rnd_unit() - 1);
                k++;
            }
        }
        a->rowptr[i + 1] = k;
    }
    a->nnz = k;
}

/* ------------------------------------------------------------------ bound basics */

static void test_gamma_and_bound(void)
{
    SDT_CHECK(sdi_gamma(0) == 0.0, "gamma(0)");
    double g1 = sdi_gamma(1), u = 0x1p-24;
    SDT_CHECK(g1 == u / (1 - u), "gamma(1) %g", g1);
    SDT_CHECK(sdi_gamma(1000) > 1000 * u && sdi_gamma(1000) < 1001 * u, "gamma(1000)");
    SDT_CHECK(isinf(sdi_gamma((int64_t)1 << 24)), "gamma(2^24) must be +inf");
    SDT_CHECK(isinf(sdi_gamma((int64_t)1 << 40)), "gamma(2^40) must be +inf");
    SDT_CHECK(isfinite(sdi_gamma(((int64_t)1 << 24) - 1)), "gamma(2^24-1) finite");
    double b = sdi_validation_bound(2.0, 3, 5.0);
    SDT_CHECK(b == 1e-5 + 1e-3 * 2.0 + sdi_gamma(4) * 5.0, "bound %g", b);
    /* ∞·0 must not produce NaN: no products, no third term. */
    double bz = sdi_validation_bound(0.0, (int64_t)1 << 30, 0.0);
    SDT_CHECK(bz == 1e-5, "bound with S = 0: %g", bz);
    SDT_CHECK(isinf(sdi_validation_bound(1.0, (int64_t)1 << 30, 1.0)), "infinite slack");
}

/* ------------------------------------------------------------------ SpMV */

/* The same sum accumulated in float, backwards: a different order must pass. */
static void test_other_order_passes(void)
{
    sd_csr a;
    random_csr(500, 3000, 700, 0, &a);
    float *x = malloc(sizeof(float) * 3000);
    for (int j = 0; j < 3000; j++)
        x[j] = (float)(2 * rnd_unit() - 1) * 1000.0f;
    double *y = malloc(sizeof(double) * 500), *s = malloc(sizeof(double) * 500);
    int64_t *n = malloc(sizeof(int64_t) * 500);
    float *got = malloc(sizeof(float) * 500);
    SDT_OK(sdi_ref_spmv(&a, x, y, n, s));
    for (int i = 0; i < 500; i++) {
        float acc = 0;
        for (int64_t k = a.rowptr[i + 1] - 1; k >= a.rowptr[i]; k--)
            acc += a.vals[k] * x[a.colind[k]];
        got[i] = acc;
    }
    sdi_validation v;
    SDT_OK(sdi_validate_dense(got, y, n, s, 500, 1, &v));
    SDT_CHECK(v.ok && v.n_checked == 500 && v.n_violations == 0 && v.reason[0] == '\0',
              "ok %d checked %lld", v.ok, (long long)v.n_checked);
    SDT_CHECK(v.ratio <= 1.0 && v.row >= 0, "worst ratio %g at row %lld", v.ratio,
              (long long)v.row);
    /* A perturbation of 3 bounds at row 123 is rejected and named. */
    double bound = sdi_validation_bound(y[123], n[123], s[123]);
    got[123] = (float)(y[123] + 3 * bound);
    SDT_STATUS(sdi_validate_dense(got, y, n, s, 500, 1, &v), SD_ERR_VALIDATION);
    SDT_CHECK(!v.ok && v.row == 123 && v.col == 0 && v.n_violations == 1 && v.ratio > 2.5,
              "row %lld ratio %g viol %lld", (long long)v.row, v.ratio,
              (long long)v.n_violations);
    SDT_CHECK(strstr(sd_last_error(), "row 123") && strstr(sd_last_error(), "bound"),
              "message '%s'", sd_last_error());
    /* Half a bound passes, one and a half fails: the bound is tight. */
    got[123] = (float)(y[123] + 0.5 * bound);
    SDT_OK(sdi_validate_dense(got, y, n, s, 500, 1, &v));
    got[123] = (float)(y[123] - 1.5 * bound);
    SDT_STATUS(sdi_validate_dense(got, y, n, s, 500, 1, &v), SD_ERR_VALIDATION);
    SDT_CHECK(v.ratio > 1.4 && v.ratio < 1.6, "ratio %g", v.ratio);
    free(x);
    free(y);
    free(s);
    free(n);
    free(got);
    sd_csr_free(&a);
}

/* Small integers: dropping one product fails the exact compare and the bound. */
static void test_off_by_one_product(void)
{
    sd_csr a;
    random_csr(60, 50, 12, 1, &a);
    float x[50];
    for (int j = 0; j < 50; j++)
        x[j] = (float)(rnd_below(5) - 2);
    double y[60], s[60];
    int64_t n[60];
    float got[60];
    SDT_OK(sdi_ref_spmv(&a, x, y, n, s));
    for (int i = 0; i < 60; i++)
        got[i] = (float)y[i];
    sdi_validation v;
    SDT_OK(sdi_validate_dense_exact(got, y, 60, 1, &v));
    SDT_OK(sdi_validate_dense(got, y, n, s, 60, 1, &v));
    /* Find a row with a nonzero product and drop it. */
    int row = -1;
    double p = 0;
    for (int i = 0; i < 60 && row < 0; i++)
        for (int64_t k = a.rowptr[i]; k < a.rowptr[i + 1]; k++)
            if (a.vals[k] * x[a.colind[k]] != 0) {
                row = i;
                p = (double)a.vals[k] * x[a.colind[k]];
                break;
            }
    SDT_CHECK(row >= 0, "no nonzero product");
    if (row < 0)
        return;
    got[row] = (float)(y[row] - p);
    SDT_STATUS(sdi_validate_dense_exact(got, y, 60, 1, &v), SD_ERR_VALIDATION);
    SDT_CHECK(v.row == row && v.n_violations == 1 && v.ratio == fabs(p), "exact: row %lld",
              (long long)v.row);
    SDT_CHECK(strstr(v.reason, "exactly") != NULL, "reason '%s'", v.reason);
    SDT_STATUS(sdi_validate_dense(got, y, n, s, 60, 1, &v), SD_ERR_VALIDATION);
    SDT_CHECK(v.row == row, "bound: row %lld, want %d", (long long)v.row, row);
    /* Doubling a product is caught too. */
    got[row] = (float)(y[row] + p);
    SDT_STATUS(sdi_validate_dense_exact(got, y, 60, 1, &v), SD_ERR_VALIDATION);
    sd_csr_free(&a);
}

static void test_nonfinite(void)
{
    double want[6] = {1, 2, 3, 4, 5, 6}, s[6] = {1, 1, 1, 1, 1, 1};
    int64_t n[3] = {1, 1, 1};
    float got[6] = {1, 2, 3, 4, 5, 6};
    sdi_validation v;
    SDT_OK(sdi_validate_dense(got, want, n, s, 3, 2, &v));
    got[3] = NAN;
    SDT_STATUS(sdi_validate_dense(got, want, n, s, 3, 2, &v), SD_ERR_VALIDATION);
    SDT_CHECK(v.row == 1 && v.col == 1 && v.n_nonfinite == 1 && isinf(v.ratio),
              "NaN at (%lld, %lld)", (long long)v.row, (long long)v.col);
    SDT_CHECK(strstr(sd_last_error(), "non-finite") != NULL, "message '%s'", sd_last_error());
    SDT_STATUS(sdi_validate_dense_exact(got, want, 3, 2, &v), SD_ERR_VALIDATION);
    /* The first non-finite is reported even when a larger finite error exists. */
    got[3] = 4;
    got[4] = INFINITY;
    got[0] = 1000;
    SDT_STATUS(sdi_validate_dense(got, want, n, s, 3, 2, &v), SD_ERR_VALIDATION);
    SDT_CHECK(v.row == 2 && v.col == 0 && v.n_violations == 2, "Inf at (%lld, %lld), %lld",
              (long long)v.row, (long long)v.col, (long long)v.n_violations);
    /* Infinite slack (2^30 products) accepts any finite value but never NaN. */
    int64_t big[3] = {(int64_t)1 << 30, (int64_t)1 << 30, (int64_t)1 << 30};
    got[4] = 5;
    SDT_OK(sdi_validate_dense(got, want, big, s, 3, 2, &v));
    SDT_CHECK(v.ratio == 0.0, "ratio under infinite slack %g", v.ratio);
    got[5] = NAN;
    SDT_STATUS(sdi_validate_dense(got, want, big, s, 3, 2, &v), SD_ERR_VALIDATION);
    SDT_STATUS(sdi_validate_dense(NULL, want, n, s, 3, 2, &v), SD_ERR_INVALID_ARG);
    SDT_OK(sdi_validate_dense(NULL, NULL, NULL, NULL, 0, 1, &v));
}

/* Equal violations far apart (other threads): the first position is reported. */
static void test_ties_report_first(void)
{
    const int64_t rows = 200000;
    double *want = calloc((size_t)rows, sizeof *want);
    float *got = calloc((size_t)rows, sizeof *got);
    int saved = omp_get_max_threads();
    omp_set_num_threads(4);
    for (int rep = 0; rep < 20; rep++) {
        got[190000 - rep] = 3.0f;
        got[10 + rep] = 3.0f;
        sdi_validation v;
        SDT_STATUS(sdi_validate_dense_exact(got, want, rows, 1, &v), SD_ERR_VALIDATION);
        SDT_CHECK(v.row == 10 + rep && v.n_violations == 2, "tie: row %lld",
                  (long long)v.row);
        got[190000 - rep] = 0.0f;
        got[10 + rep] = 0.0f;
    }
    omp_set_num_threads(saved);
    free(want);
    free(got);
}

/* SpMM: the violating (row, col) is found among rows × K. */
static void test_spmm_position(void)
{
    sd_csr a;
    random_csr(40, 30, 8, 0, &a);
    const int k = 7;
    float b[30 * 7];
    for (int j = 0; j < 30 * k; j++)
        b[j] = (float)(2 * rnd_unit() - 1);
    double c[40 * 7], s[40 * 7];
    int64_t n[40];
    float got[40 * 7];
    SDT_OK(sdi_ref_spmm(&a, b, k, c, n, s));
    for (int e = 0; e < 40 * k; e++)
        got[e] = (float)c[e];
    sdi_validation v;
    SDT_OK(sdi_validate_dense(got, c, n, s, 40, k, &v));
    /* 10 bounds at (17, 5), 2 bounds at (3, 2): the first is the worst */
    got[17 * k + 5] = (float)(c[17 * k + 5] + 10 * sdi_validation_bound(c[17 * k + 5], n[17],
                                                                         s[17 * k + 5]));
    got[3 * k + 2] = (float)(c[3 * k + 2] + 2 * sdi_validation_bound(c[3 * k + 2], n[3],
                                                                      s[3 * k + 2]));
    SDT_STATUS(sdi_validate_dense(got, c, n, s, 40, k, &v), SD_ERR_VALIDATION);
    SDT_CHECK(v.row == 17 && v.col == 5 && v.n_violations == 2, "worst (%lld, %lld) of %lld",
              (long long)v.row, (long long)v.col, (long long)v.n_violations);
    SDT_CHECK(strstr(sd_last_error(), "row 17 col 5") != NULL, "message '%s'", sd_last_error());
    sd_csr_free(&a);
}

/* ------------------------------------------------------------------ SpGEMM */

typedef struct {
    sd_csr a;
    sdi_ref_csr want;
} gemm_case;

static void gemm_setup(gemm_case *g)
{
    random_csr(50, 40, 6, 1, &g->a);
    sd_csr b;
    random_csr(40, 45, 5, 1, &b);
    sdi_ref_spgemm(&g->a, &b, &g->want);
    sd_csr_free(&b);
}

/* got = want as FP32 CSR, with room for extra entries. */
static void got_from_want(const sdi_ref_csr *w, sd_csr *got, int64_t extra)
{
    sdi_csr_alloc(got, w->rows, w->cols, w->nnz + extra);
    got->nnz = w->nnz;
    memcpy(got->rowptr, w->rowptr, sizeof(int64_t) * ((size_t)w->rows + 1));
    memcpy(got->colind, w->colind, sizeof(int32_t) * (size_t)w->nnz);
    for (int64_t k = 0; k < w->nnz; k++)
        got->vals[k] = (float)w->vals[k];
}

/* A row with at least two entries that is not the last row. */
static int pick_row(const sdi_ref_csr *w)
{
    for (int i = 5; i < w->rows - 1; i++)
        if (w->rowptr[i + 1] - w->rowptr[i] >= 2)
            return i;
    return -1;
}

/* A column that row i of w does not hold. */
static int32_t absent_column(const sdi_ref_csr *w, int i)
{
    for (int32_t j = 0; j < w->cols; j++) {
        int present = 0;
        for (int64_t k = w->rowptr[i]; k < w->rowptr[i + 1]; k++)
            present |= w->colind[k] == j;
        if (!present)
            return j;
    }
    return -1;
}

static void test_spgemm_exact_and_unsorted(void)
{
    gemm_case g;
    gemm_setup(&g);
    sd_csr got;
    got_from_want(&g.want, &got, 0);
    sdi_validation v;
    SDT_OK(sdi_validate_spgemm(&got, &g.want, &v));
    SDT_CHECK(v.ok && v.n_checked == g.want.nnz, "checked %lld", (long long)v.n_checked);
    /* Every row reversed: still correct. */
    for (int i = 0; i < got.rows; i++)
        for (int64_t p = got.rowptr[i], q = got.rowptr[i + 1] - 1; p < q; p++, q--) {
            int32_t tc = got.colind[p];
            got.colind[p] = got.colind[q];
            got.colind[q] = tc;
            float tv = got.vals[p];
            got.vals[p] = got.vals[q];
            got.vals[q] = tv;
        }
    SDT_OK(sdi_validate_spgemm(&got, &g.want, &v));
    /* ...but a wrong value in an unsorted row is still caught at its column. */
    int row = pick_row(&g.want);
    int64_t e = got.rowptr[row];
    got.vals[e] += 1.0f;
    SDT_STATUS(sdi_validate_spgemm(&got, &g.want, &v), SD_ERR_VALIDATION);
    SDT_CHECK(v.row == row && v.col == got.colind[e], "value at (%lld, %lld), want (%d, %d)",
              (long long)v.row, (long long)v.col, row, got.colind[e]);
    sd_csr_free(&got);
    sd_csr_free(&g.a);
    sdi_ref_csr_free(&g.want);
}

static void test_spgemm_duplicates_coalesce(void)
{
    gemm_case g;
    gemm_setup(&g);
    sd_csr got;
    int row = pick_row(&g.want);
    got_from_want(&g.want, &got, 1);
    /* Split entry e of row into (v − 1) and 1, the second appended at the row's end. */
    int64_t e = g.want.rowptr[row], end = g.want.rowptr[row + 1];
    memmove(got.colind + end + 1, got.colind + end, sizeof(int32_t) * (size_t)(got.nnz - end));
    memmove(got.vals + end + 1, got.vals + end, sizeof(float) * (size_t)(got.nnz - end));
    got.colind[end] = got.colind[e];
    got.vals[end] = 1.0f;
    got.vals[e] -= 1.0f;
    for (int i = row + 1; i <= got.rows; i++)
        got.rowptr[i]++;
    got.nnz++;
    sdi_validation v;
    SDT_OK(sdi_validate_spgemm(&got, &g.want, &v));
    /* A duplicate that does not sum to the value fails. */
    got.vals[end] = 2.0f;
    SDT_STATUS(sdi_validate_spgemm(&got, &g.want, &v), SD_ERR_VALIDATION);
    SDT_CHECK(v.row == row, "row %lld", (long long)v.row);
    sd_csr_free(&got);
    sd_csr_free(&g.a);
    sdi_ref_csr_free(&g.want);
}

static void test_spgemm_structure(void)
{
    gemm_case g;
    gemm_setup(&g);
    sd_csr got;
    sdi_validation v;
    int row = pick_row(&g.want);
    int64_t e = g.want.rowptr[row];

    /* missing entry: drop the first entry of row (and another in a later row) */
    got_from_want(&g.want, &got, 0);
    memmove(got.colind + e, got.colind + e + 1, sizeof(int32_t) * (size_t)(got.nnz - e - 1));
    memmove(got.vals + e, got.vals + e + 1, sizeof(float) * (size_t)(got.nnz - e - 1));
    for (int i = row + 1; i <= got.rows; i++)
        got.rowptr[i]--;
    got.nnz--;
    SDT_STATUS(sdi_validate_spgemm(&got, &g.want, &v), SD_ERR_VALIDATION);
    SDT_CHECK(v.row == row && v.col == g.want.colind[e], "missing: row %lld col %lld",
              (long long)v.row, (long long)v.col);
    SDT_CHECK(strstr(sd_last_error(), "missing column") != NULL, "message '%s'",
              sd_last_error());
    sd_csr_free(&got);

    /* extra entry: a column not in the reference, appended unsorted */
    got_from_want(&g.want, &got, 1);
    int64_t end = g.want.rowptr[row + 1];
    int32_t extra = absent_column(&g.want, row);
    memmove(got.colind + end + 1, got.colind + end, sizeof(int32_t) * (size_t)(got.nnz - end));
    memmove(got.vals + end + 1, got.vals + end, sizeof(float) * (size_t)(got.nnz - end));
    got.colind[end] = extra;
    got.vals[end] = 0.0f;
    for (int i = row + 1; i <= got.rows; i++)
        got.rowptr[i]++;
    got.nnz++;
    SDT_STATUS(sdi_validate_spgemm(&got, &g.want, &v), SD_ERR_VALIDATION);
    SDT_CHECK(v.row == row && v.col == extra, "extra: row %lld col %lld, want %d",
              (long long)v.row, (long long)v.col, extra);
    SDT_CHECK(strstr(sd_last_error(), "extra column") != NULL, "message '%s'", sd_last_error());
    sd_csr_free(&got);

    /* wrong column: same count, one index moved to an absent column; a later row too,
     * and the first differing row is the one named */
    got_from_want(&g.want, &got, 0);
    got.colind[e] = extra;
    int later = -1;
    for (int i = g.want.rows - 1; i > row && later < 0; i--)
        if (g.want.rowptr[i + 1] > g.want.rowptr[i])
            later = i;
    SDT_CHECK(later > row, "no later non-empty row");
    if (later > row)
        got.colind[g.want.rowptr[later]] = absent_column(&g.want, later);
    SDT_STATUS(sdi_validate_spgemm(&got, &g.want, &v), SD_ERR_VALIDATION);
    SDT_CHECK(v.row == row, "wrong column: row %lld, want %d", (long long)v.row, row);
    SDT_CHECK(strstr(sd_last_error(), "structure") != NULL, "message '%s'", sd_last_error());
    sd_csr_free(&got);
    /* a wrong column holding the right value, row kept sorted: only the structure
     * can tell (the last entry of the row moved to a free column past it) */
    got_from_want(&g.want, &got, 0);
    {
        /* the neighbour of an absent column a takes a: the row stays sorted */
        int32_t a = absent_column(&g.want, row);
        int64_t q = g.want.rowptr[row];
        while (q < g.want.rowptr[row + 1] && g.want.colind[q] < a)
            q++;
        got.colind[q > g.want.rowptr[row] ? q - 1 : q] = a;
    }
    SDT_STATUS(sdi_validate_spgemm(&got, &g.want, &v), SD_ERR_VALIDATION);
    SDT_CHECK(v.row == row && strstr(sd_last_error(), "structure") != NULL,
              "moved column: row %lld, message '%s'", (long long)v.row, sd_last_error());
    sd_csr_free(&got);

    /* column out of range, broken row pointers, wrong dimensions */
    got_from_want(&g.want, &got, 0);
    got.colind[e] = got.cols;
    SDT_STATUS(sdi_validate_spgemm(&got, &g.want, &v), SD_ERR_VALIDATION);
    SDT_CHECK(v.row == row, "out of range: row %lld", (long long)v.row);
    got.colind[e] = g.want.colind[e];
    got.rowptr[row + 1] = got.rowptr[row] - 1;
    SDT_STATUS(sdi_validate_spgemm(&got, &g.want, &v), SD_ERR_VALIDATION);
    SDT_CHECK(v.row == row, "rowptr: row %lld", (long long)v.row);
    sd_csr_free(&got);
    got_from_want(&g.want, &got, 0);
    got.cols--;
    SDT_STATUS(sdi_validate_spgemm(&got, &g.want, &v), SD_ERR_VALIDATION);
    SDT_CHECK(strstr(sd_last_error(), "matrix") != NULL, "message '%s'", sd_last_error());
    got.cols++;
    SDT_OK(sdi_validate_spgemm(&got, &g.want, &v));
    /* NaN in a value */
    got.vals[e] = NAN;
    SDT_STATUS(sdi_validate_spgemm(&got, &g.want, &v), SD_ERR_VALIDATION);
    SDT_CHECK(v.row == row && v.n_nonfinite == 1, "NaN: row %lld", (long long)v.row);
    sd_csr_free(&got);
    sd_csr_free(&g.a);
    sdi_ref_csr_free(&g.want);
}

/* Float products summed in another order pass the SpGEMM bound. */
static void test_spgemm_float_order(void)
{
    sd_csr a;
    random_csr(80, 80, 30, 0, &a);
    sdi_ref_csr w;
    SDT_OK(sdi_ref_spgemm(&a, &a, &w));
    sd_csr got;
    got_from_want(&w, &got, 0);
    /* Recompute each entry in float by scanning A's row backwards. */
    for (int i = 0; i < 80; i++) {
        for (int64_t e = w.rowptr[i]; e < w.rowptr[i + 1]; e++) {
            int32_t j = w.colind[e];
            float acc = 0;
            for (int64_t ka = a.rowptr[i + 1] - 1; ka >= a.rowptr[i]; ka--) {
                int32_t k = a.colind[ka];
                for (int64_t kb = a.rowptr[k]; kb < a.rowptr[k + 1]; kb++)
                    if (a.colind[kb] == j)
                        acc += a.vals[ka] * a.vals[kb];
            }
            got.vals[e] = acc;
        }
    }
    sdi_validation v;
    SDT_OK(sdi_validate_spgemm(&got, &w, &v));
    int row = 10;
    while (row < 79 && w.rowptr[row + 1] == w.rowptr[row])
        row++;
    int64_t e = w.rowptr[row];
    got.vals[e] = (float)(w.vals[e] + 3 * sdi_validation_bound(w.vals[e], w.count[e], w.absum[e]));
    SDT_STATUS(sdi_validate_spgemm(&got, &w, &v), SD_ERR_VALIDATION);
    SDT_CHECK(v.row == row && v.col == w.colind[e], "(%lld, %lld), want (%d, %d)",
              (long long)v.row, (long long)v.col, row, w.colind[e]);
    sd_csr_free(&got);
    sdi_ref_csr_free(&w);
    sd_csr_free(&a);
}

int main(void)
{
    sdt_init("test_validate");
    rs = sdt_seed * 0x9e3779b97f4a7c15ull + 7;
    SDT_RUN(test_gamma_and_bound);
    SDT_RUN(test_other_order_passes);
    SDT_RUN(test_off_by_one_product);
    SDT_RUN(test_nonfinite);
    SDT_RUN(test_ties_report_first);
    SDT_RUN(test_spmm_position);
    SDT_RUN(test_spgemm_exact_and_unsorted);
    SDT_RUN(test_spgemm_duplicates_coalesce);
    SDT_RUN(test_spgemm_structure);
    SDT_RUN(test_spgemm_float_order);
    return sdt_finish();
}
