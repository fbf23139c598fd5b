/* tests/cpu/test_ref.c: the CPU reference operators (SpMV, SpMM, SpGEMM) against
 * brute-force dense products on small random matrices with small-integer values
 * (compared exactly), including rectangular shapes, empty rows, explicit zeros and
 * cancellation. */
#include <omp.h>

#include "ref/ref.h"
#include "runtime/runtime.h"
#include "sdt.h"

/* A small PRNG of the test's own (xorshift64*), independent of src/gen. */
static unsigned long long rs;
static unsigned long long rnd(void)
{
    rs ^= rs >> 12;
    rs ^= rs << 25;
    rs ^= rs >> 27;
    return rs * 2685821657736338717ull;
}
static int rnd_below(int n) { return (int)((rnd() >> 33) % (unsigned long long)n); }

/* Dense model: stored mask + value (small integers, explicit zeros included). */
typedef struct {
    int rows, cols;
    unsigned char *st;
    double *v;
} dense_t;

static void dense_free(dense_t *d)
{
    free(d->st);
    free(d->v);
}

/* Random matrix with the given density; rows with index % 5 == 3 are left empty when
 * empty_rows is set. Values in {-2..2}: zeros are stored (explicit zeros). */
static void random_pair(int rows, int cols, double density, int empty_rows, dense_t *d,
                        sd_csr *a)
{
    d->rows = rows;
    d->cols = cols;
    d->st = calloc((size_t)rows * cols + 1, 1);
    d->v = calloc((size_t)rows * cols + 1, sizeof(double));
    int64_t nnz = 0;
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++)
            if (!(empty_rows && i % 5 == 3) && (double)(rnd() >> 11) * 0x1p-53 < density) {
                d->st[(size_t)i * cols + j] = 1;
                d->v[(size_t)i * cols + j] = rnd_below(5) - 2;
                nnz++;
            }
    sdi_csr_alloc(a, rows, cols, nnz);
    int64_t k = 0;
    for (int i = 0; i < rows; i++) {
        for (int j = 0; j < cols; j++)
            if (d->st[(size_t)i * cols + j]) {
                a->colind[k] = j;
                a->vals[k] = (float)d->v[(size_t)i * cols + j];
                k++;
            }
        a->rowptr[i + 1] = k;
    }
}

static void check_spmv(int rows, int cols, double density)
{
    dense_t d;
    sd_csr a;
    random_pair(rows, cols, density, 1, &d, &a);
    float *x = malloc(sizeof(float) * (cols + 1));
    for (int j = 0; j < cols; j++)
        x[j] = (float)(rnd_below(7) - 3);
    double *y = malloc(sizeof(double) * (rows + 1)), *s = malloc(sizeof(double) * (rows + 1));
    int64_t *n = malloc(sizeof(int64_t) * (rows + 1));
    SDT_OK(sdi_ref_spmv(&a, x, y, n, s));
    for (int i = 0; i < rows; i++) {
        double want = 0, sabs = 0;
        int64_t cnt = 0;
        for (int j = 0; j < cols; j++)
            if (d.st[(size_t)i * cols + j]) {
                want += d.v[(size_t)i * cols + j] * x[j];
                sabs += fabs(d.v[(size_t)i * cols + j] * x[j]);
                cnt++;
            }
        SDT_CHECK(y[i] == want && s[i] == sabs && n[i] == cnt,
                  "spmv %dx%d row %d: y %g/%g S %g/%g n %lld/%lld", rows, cols, i, y[i], want,
                  s[i], sabs, (long long)n[i], (long long)cnt);
    }
    /* count and absum are optional */
    SDT_OK(sdi_ref_spmv(&a, x, y, NULL, NULL));
    free(x);
    free(y);
    free(s);
    free(n);
    sd_csr_free(&a);
    dense_free(&d);
}

static void test_spmv(void)
{
    const int shapes[][2] = {{0, 0}, {1, 1}, {3, 7}, {7, 3}, {40, 40}, {100, 1}, {1, 100}};
    for (size_t t = 0; t < sizeof shapes / sizeof shapes[0]; t++)
        for (int dd = 0; dd < 3; dd++)
            check_spmv(shapes[t][0], shapes[t][1], dd == 0 ? 0.05 : dd == 1 ? 0.3 : 1.0);
    sd_csr a;
    memset(&a, 0, sizeof a);
    double y;
    SDT_STATUS(sdi_ref_spmv(&a, NULL, &y, NULL, NULL), SD_ERR_INVALID_ARG);
    SDT_STATUS(sdi_ref_spmv(NULL, NULL, &y, NULL, NULL), SD_ERR_INVALID_ARG);
}

static void check_spmm(int rows, int cols, int k, double density)
{
    dense_t d;
    sd_csr a;
    random_pair(rows, cols, density, 1, &d, &a);
    float *b = malloc(sizeof(float) * ((size_t)cols * k + 1));
    for (int j = 0; j < cols * k; j++)
        b[j] = (float)(rnd_below(7) - 3);
    double *c = malloc(sizeof(double) * ((size_t)rows * k + 1));
    double *s = malloc(sizeof(double) * ((size_t)rows * k + 1));
    int64_t *n = malloc(sizeof(int64_t) * (rows + 1));
    SDT_OK(sdi_ref_spmm(&a, b, k, c, n, s));
    int bad = 0;
    for (int i = 0; i < rows; i++) {
        int64_t cnt = 0;
        for (int j = 0; j < cols; j++)
            cnt += d.st[(size_t)i * cols + j];
        if (n[i] != cnt)
            bad++;
        for (int t = 0; t < k; t++) {
            double want = 0, sabs = 0;
            for (int j = 0; j < cols; j++)
                if (d.st[(size_t)i * cols + j]) {
                    double p = d.v[(size_t)i * cols + j] * b[(size_t)j * k + t];
                    want += p;
                    sabs += fabs(p);
                }
            if (c[(size_t)i * k + t] != want || s[(size_t)i * k + t] != sabs)
                bad++;
        }
    }
    SDT_CHECK(bad == 0, "spmm %dx%d k=%d: %d mismatches", rows, cols, k, bad);
    free(b);
    free(c);
    free(s);
    free(n);
    sd_csr_free(&a);
    dense_free(&d);
}

static void test_spmm(void)
{
    const int ks[] = {1, 2, 3, 8, 33};
    for (size_t t = 0; t < sizeof ks / sizeof ks[0]; t++) {
        check_spmm(0, 0, ks[t], 0.5);
        check_spmm(1, 1, ks[t], 1.0);
        check_spmm(17, 9, ks[t], 0.2);
        check_spmm(9, 23, ks[t], 0.6);
    }
    sd_csr a;
    dense_t d;
    random_pair(3, 3, 0.5, 0, &d, &a);
    float b[9] = {0};
    double c[9];
    SDT_STATUS(sdi_ref_spmm(&a, b, 0, c, NULL, NULL), SD_ERR_INVALID_ARG);
    sd_csr_free(&a);
    dense_free(&d);
}

/* Brute force: C(i, j) exists when some k has A(i, k) and B(k, j) stored. */
static void check_spgemm(int m, int kk, int n, double da, double db)
{
    dense_t A, B;
    sd_csr a, b;
    random_pair(m, kk, da, 1, &A, &a);
    random_pair(kk, n, db, 0, &B, &b);
    sdi_ref_csr c;
    SDT_OK(sdi_ref_spgemm(&a, &b, &c));
    SDT_CHECK(c.rows == m && c.cols == n, "dims %dx%d", c.rows, c.cols);
    int64_t e = 0;
    int bad = 0;
    for (int i = 0; i < m && !bad; i++) {
        if (c.rowptr[i] != e)
            bad = 1;
        for (int j = 0; j < n; j++) {
            double v = 0, sabs = 0;
            int64_t cnt = 0;
            for (int k = 0; k < kk; k++)
                if (A.st[(size_t)i * kk + k] && B.st[(size_t)k * n + j]) {
                    double p = A.v[(size_t)i * kk + k] * B.v[(size_t)k * n + j];
                    v += p;
                    sabs += fabs(p);
                    cnt++;
                }
            if (cnt == 0)
                continue;
            if (e >= c.nnz || c.colind[e] != j || c.vals[e] != v || c.count[e] != cnt ||
                c.absum[e] != sabs) {
                SDT_CHECK(0, "spgemm %dx%dx%d: row %d col %d entry %lld differs", m, kk, n, i,
                          j, (long long)e);
                bad = 1;
                break;
            }
            e++;
        }
    }
    SDT_CHECK(bad || (c.nnz == e && c.rowptr[m] == e), "spgemm nnz %lld, want %lld",
              (long long)c.nnz, (long long)e);
    sdi_ref_csr_free(&c);
    sd_csr_free(&a);
    sd_csr_free(&b);
    dense_free(&A);
    dense_free(&B);
}

static void test_spgemm_random(void)
{
    const int shapes[][3] = {{0, 0, 0}, {1, 1, 1}, {4, 0, 5}, {5, 3, 0}, {7, 5, 9},
                             {13, 1, 9}, {30, 40, 20}, {60, 30, 90}, {200, 150, 250}};
    const double dens[] = {0.02, 0.1, 0.5};
    for (size_t t = 0; t < sizeof shapes / sizeof shapes[0]; t++)
        for (int x = 0; x < 3; x++)
            for (int y = 0; y < 3; y++)
                check_spgemm(shapes[t][0], shapes[t][1], shapes[t][2], dens[x], dens[y]);
}

/* A cancelling product and explicit zeros keep their entries. */
static void test_spgemm_cancel_and_zeros(void)
{
    int64_t arp[] = {0, 2, 3};
    int32_t aci[] = {0, 1, 1};
    float av[] = {1, 1, 0}; /* row 1 holds an explicit zero */
    sd_csr a = {2, 2, 3, arp, aci, av};
    int64_t brp[] = {0, 1, 2};
    int32_t bci[] = {0, 0};
    float bv[] = {2, -2};
    sd_csr b = {2, 1, 2, brp, bci, bv};
    sdi_ref_csr c;
    SDT_OK(sdi_ref_spgemm(&a, &b, &c));
    SDT_CHECK(c.nnz == 2, "nnz %lld (want 2: cancelled and zero entries kept)", (long long)c.nnz);
    if (c.nnz == 2) {
        SDT_CHECK(c.vals[0] == 0 && c.count[0] == 2 && c.absum[0] == 4, "cancel: %g %lld %g",
                  c.vals[0], (long long)c.count[0], c.absum[0]);
        SDT_CHECK(c.vals[1] == 0 && c.count[1] == 1 && c.absum[1] == 0, "zero: %g %lld %g",
                  c.vals[1], (long long)c.count[1], c.absum[1]);
    }
    sdi_ref_csr_free(&c);
    SDT_STATUS(sdi_ref_spgemm(&b, &b, &c), SD_ERR_INVALID_ARG); /* 2x1 · 2x1 */
    SDT_CHECK(strstr(sd_last_error(), "A.cols") != NULL, "message '%s'", sd_last_error());
    SDT_CHECK(c.rowptr == NULL && c.nnz == 0, "zeroed after failure");
    sdi_ref_csr_free(&c);
    sdi_ref_csr_free(NULL);
}

/* Results must not depend on the thread count. */
static void test_spgemm_threads(void)
{
    dense_t A;
    sd_csr a;
    random_pair(300, 300, 0.03, 1, &A, &a);
    sdi_ref_csr c1, c3;
    int saved = omp_get_max_threads();
    omp_set_num_threads(1);
    SDT_OK(sdi_ref_spgemm(&a, &a, &c1));
    omp_set_num_threads(3);
    SDT_OK(sdi_ref_spgemm(&a, &a, &c3));
    omp_set_num_threads(saved);
    SDT_CHECK(c1.nnz == c3.nnz && memcmp(c1.rowptr, c3.rowptr, sizeof(int64_t) * 301) == 0 &&
                  memcmp(c1.colind, c3.colind, sizeof(int32_t) * (size_t)c1.nnz) == 0 &&
                  memcmp(c1.vals, c3.vals, sizeof(double) * (size_t)c1.nnz) == 0,
              "1 vs 3 threads differ");
    sdi_ref_csr_free(&c1);
    sdi_ref_csr_free(&c3);
    sd_csr_free(&a);
    dense_free(&A);
}

/* Wide outputs: rows of 0 to ~9,000 entries spread over 200,000 columns (the comparison
 * sort, past its insertion-sort cutoff) and rows packed into a narrow band (the scan of the
 * marker over the row's span), each against a dense accumulation in the same order:
 * columns strictly increasing, values, counts and sums equal. */
static void test_spgemm_wide_rows(void)
{
    const int32_t m = 48, kk = 3000, n = 200000;
    sd_csr a, b;
    uint64_t x = 0x9e3779b97f4a7c15ull;
#define NEXT() (x ^= x << 13, x ^= x >> 7, x ^= x << 17, x)
    SDT_OK(sdi_csr_alloc(&b, kk, n, (int64_t)kk * 12));
    for (int32_t k = 0; k < kk; k++) {
        b.rowptr[k + 1] = b.rowptr[k] + 12;
        /* even rows of B: random columns; odd rows: 12 of the 100 columns from (k / 2)·8 */
        for (int q = 0; q < 12; q++) {
            int32_t j = (k & 1) ? (int32_t)(((int64_t)(k / 2) * 8 + (int64_t)(NEXT() % 100)) % n)
                                : (int32_t)(NEXT() % (uint64_t)n);
            b.colind[b.rowptr[k] + q] = j;
            b.vals[b.rowptr[k] + q] = (float)((int)(NEXT() % 9) - 4);
        }
        /* distinct, sorted columns within each row of B */
        int32_t *c = b.colind + b.rowptr[k];
        for (int q = 1; q < 12; q++)
            for (int r = q; r > 0 && c[r - 1] > c[r]; r--) {
                int32_t t = c[r];
                c[r] = c[r - 1];
                c[r - 1] = t;
            }
        for (int q = 1; q < 12; q++)
            if (c[q] <= c[q - 1])
                c[q] = c[q - 1] + 1 < n ? c[q - 1] + 1 : c[q - 1];
    }
    int64_t annz = 0;
    for (int32_t i = 0; i < m; i++)
        annz += (i % 16) * 50;
    SDT_OK(sdi_csr_alloc(&a, m, kk, annz));
    for (int32_t i = 0; i < m; i++) {
        const int len = (i % 16) * 50;
        a.rowptr[i + 1] = a.rowptr[i] + len;
        /* rows i < 16 take the random rows of B, the others the banded ones */
        for (int q = 0; q < len; q++) {
            int32_t k = i < 16 ? 2 * ((i * 37 + q * 7) % (kk / 2)) : 2 * ((i * 3 + q) % (kk / 2)) + 1;
            a.colind[a.rowptr[i] + q] = k;
            a.vals[a.rowptr[i] + q] = (float)(1 + q % 3);
        }
    }
#undef NEXT
    sdi_ref_csr c;
    SDT_OK(sdi_ref_spgemm(&a, &b, &c));
    double *acc = calloc((size_t)n, sizeof *acc), *sab = calloc((size_t)n, sizeof *sab);
    int64_t *cnt = calloc((size_t)n, sizeof *cnt);
    SDT_CHECK(acc && sab && cnt, "host memory");
    int bad = 0;
    for (int32_t i = 0; i < m && acc && sab && cnt && !bad; i++) {
        memset(cnt, 0, (size_t)n * sizeof *cnt);
        for (int64_t ka = a.rowptr[i]; ka < a.rowptr[i + 1]; ka++)
            for (int64_t kb = b.rowptr[a.colind[ka]]; kb < b.rowptr[a.colind[ka] + 1]; kb++) {
                const int32_t j = b.colind[kb];
                const double p = (double)a.vals[ka] * (double)b.vals[kb];
                acc[j] = cnt[j] ? acc[j] + p : p;
                sab[j] = cnt[j] ? sab[j] + fabs(p) : fabs(p);
                cnt[j]++;
            }
        int64_t e = c.rowptr[i];
        for (int32_t j = 0; j < n && !bad; j++) {
            if (cnt[j] == 0)
                continue;
            if (e >= c.rowptr[i + 1] || c.colind[e] != j || c.vals[e] != acc[j] ||
                c.count[e] != cnt[j] || c.absum[e] != sab[j]) {
                SDT_CHECK(0, "row %d: entry %lld should be column %d", i, (long long)e, j);
                bad = 1;
            }
            e++;
        }
        SDT_CHECK(bad || e == c.rowptr[i + 1], "row %d: %lld entries, want %lld", i,
                  (long long)(c.rowptr[i + 1] - c.rowptr[i]), (long long)(e - c.rowptr[i]));
    }
    free(acc);
    free(sab);
    free(cnt);
    sdi_ref_csr_free(&c);
    sd_csr_free(&a);
    sd_csr_free(&b);
}

/* Allocation failures at every point: a status, no leak. */
static void test_spgemm_alloc_failures(void)
{
    dense_t A;
    sd_csr a;
    random_pair(40, 40, 0.1, 0, &A, &a);
    long long base = sdi_alloc_live_bytes();
    int failures = 0;
    for (long n = 0; n < 64; n++) {
        sdi_ref_csr c;
        sdi_alloc_fail_after(n);
        sd_status s = sdi_ref_spgemm(&a, &a, &c);
        sdi_alloc_fail_after(-1);
        if (s == SD_OK) {
            sdi_ref_csr_free(&c);
            break;
        }
        failures++;
        SDT_CHECK(s == SD_ERR_OUT_OF_MEMORY, "fail at %ld: %s", n, sd_status_string(s));
        SDT_CHECK(sdi_alloc_live_bytes() == base, "leak after failure at %ld", n);
    }
    SDT_CHECK(failures > 0, "no allocation was ever failed");
    sd_csr_free(&a);
    dense_free(&A);
}

/* A product larger than the host's available memory is refused with a status naming the
 * sizes, before its arrays are allocated (Linux would grant them and kill the process when
 * they are touched). SPARSEDITTO_HOST_MEM_LIMIT stands in for a small machine. */
static void test_spgemm_host_memory_guard(void)
{
    dense_t A;
    sd_csr a;
    random_pair(200, 200, 0.05, 0, &A, &a);
    sdi_ref_csr c;
    SDT_OK(sdi_ref_spgemm(&a, &a, &c));
    const long long need = c.nnz * 24; /* colind, value, count, bound */
    sdi_ref_csr_free(&c);
    char cap[32];
    snprintf(cap, sizeof cap, "%lld", need / 2);
    setenv("SPARSEDITTO_HOST_MEM_LIMIT", cap, 1);
    sdi_config_reload();
    long long base = sdi_alloc_live_bytes();
    sd_status s = sdi_ref_spgemm(&a, &a, &c);
    SDT_STATUS(s, SD_ERR_OUT_OF_MEMORY);
    SDT_CHECK(strstr(sd_last_error(), "GiB are available") != NULL, "message: %s", sd_last_error());
    SDT_CHECK(c.rowptr == NULL && c.nnz == 0 && sdi_alloc_live_bytes() == base, "state after the refusal");
    snprintf(cap, sizeof cap, "%lld", need * 4);
    setenv("SPARSEDITTO_HOST_MEM_LIMIT", cap, 1);
    sdi_config_reload();
    SDT_OK(sdi_ref_spgemm(&a, &a, &c));
    sdi_ref_csr_free(&c);
    unsetenv("SPARSEDITTO_HOST_MEM_LIMIT");
    sdi_config_reload();
    SDT_CHECK(sdi_host_mem_available() != 0, "available host memory reads as 0");
    sd_csr_free(&a);
    dense_free(&A);
}

/* The same guard for SpMV/SpMM references (sdi_reference_dense, what a search and the
 * cuSPARSE baseline validate against): refused with a status naming the sizes, nothing
 * allocated; allowed again under a larger cap. */
static void test_dense_host_memory_guard(void)
{
    dense_t A;
    sd_csr a;
    random_pair(300, 200, 0.05, 0, &A, &a);
    const int k = 64;
    float *b = malloc((size_t)a.cols * k * sizeof *b);
    SDT_CHECK(b != NULL, "malloc");
    if (b != NULL) {
        for (int i = 0; i < a.cols * k; i++)
            b[i] = (float)(i % 7) - 3.0f;
        const long long need = (long long)a.rows * k * 16 + a.rows * 8;
        char cap[32];
        snprintf(cap, sizeof cap, "%lld", need / 2);
        setenv("SPARSEDITTO_HOST_MEM_LIMIT", cap, 1);
        sdi_config_reload();
        long long base = sdi_alloc_live_bytes();
        sdi_reference r;
        SDT_STATUS(sdi_reference_dense(&a, SD_OP_SPMM, b, k, 0, &r), SD_ERR_OUT_OF_MEMORY);
        SDT_CHECK(strstr(sd_last_error(), "GiB are available") != NULL &&
                      strstr(sd_last_error(), "SpMM") != NULL,
                  "message: %s", sd_last_error());
        SDT_CHECK(r.want == NULL && sdi_alloc_live_bytes() == base, "state after the refusal");
        snprintf(cap, sizeof cap, "%lld", need * 4);
        setenv("SPARSEDITTO_HOST_MEM_LIMIT", cap, 1);
        sdi_config_reload();
        SDT_OK(sdi_reference_dense(&a, SD_OP_SPMM, b, k, 0, &r));
        sdi_reference_free(&r);
        unsetenv("SPARSEDITTO_HOST_MEM_LIMIT");
        sdi_config_reload();
    }
    free(b);
    sd_csr_free(&a);
    dense_free(&A);
}

int main(void)
{
    sdt_init("test_ref");
    rs = sdt_seed * 0x9e3779b97f4a7c15ull + 1;
    SDT_RUN(test_spmv);
    SDT_RUN(test_spmm);
    SDT_RUN(test_spgemm_random);
    SDT_RUN(test_spgemm_cancel_and_zeros);
    SDT_RUN(test_spgemm_wide_rows);
    SDT_RUN(test_spgemm_threads);
    SDT_RUN(test_spgemm_alloc_failures);
    SDT_RUN(test_spgemm_host_memory_guard);
    SDT_RUN(test_dense_host_memory_guard);
    return sdt_finish();
}
