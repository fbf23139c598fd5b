/* tests/cpu/test_core.c: errors, allocation hooks, COO → CSR canonicalisation,
 * transpose, checks, JSON writer, pattern hashing and int32 sorting. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "gen/gen.h"
#include "sdt.h"

static void test_status_strings(void)
{
    SDT_CHECK(strcmp(sd_status_string(SD_OK), "success") == 0, "SD_OK");
    SDT_CHECK(strcmp(sd_status_string((sd_status)999), "unknown status") == 0, "out of range");
    SDT_CHECK(strcmp(sd_status_string((sd_status)-1), "unknown status") == 0, "negative");
    sdi_error_clear();
    SDT_CHECK(sd_last_error() != NULL && sd_last_error()[0] == '\0', "empty after clear");
    sd_status s = SDI_ERR(SD_ERR_PARSE, "line %d: bad", 7);
    SDT_CHECK(s == SD_ERR_PARSE, "returns its status");
    SDT_CHECK(strcmp(sd_last_error(), "line 7: bad") == 0, "message '%s'", sd_last_error());
    sdi_error_prefix("file.mtx");
    SDT_CHECK(strcmp(sd_last_error(), "file.mtx: line 7: bad") == 0, "prefix '%s'",
              sd_last_error());
}

static void test_free_accepts_null(void)
{
    sd_csr_free(NULL);
    sd_csr z;
    memset(&z, 0, sizeof z);
    sd_csr_free(&z);
    SDT_CHECK(z.rowptr == NULL && z.rows == 0, "zeroed stays zeroed");
}

/* Builds CSR from triplets with duplicates, unsorted columns and explicit zeros. */
static void test_coo_to_csr(void)
{
    sdi_coo c;
    SDT_OK(sdi_coo_init(&c, 3, 4, 0));
    int ri[] = {2, 0, 0, 2, 0, 1, 2};
    int ci[] = {3, 2, 0, 3, 2, 1, 0};
    float v[] = {1, 2, 3, 4, -2, 0, 5};
    for (int k = 0; k < 7; k++)
        SDT_OK(sdi_coo_push(&c, ri[k], ci[k], v[k]));
    sd_csr a;
    int64_t dups = -1;
    SDT_OK(sdi_coo_to_csr(&c, &a, &dups));
    SDT_CHECK(dups == 2, "duplicates %lld", (long long)dups);
    SDT_CHECK(a.nnz == 5, "nnz %lld", (long long)a.nnz);
    int64_t rp[] = {0, 2, 3, 5};
    int cc[] = {0, 2, 1, 0, 3};
    float vv[] = {3, 0, 0, 5, 5}; /* 2 + (-2) cancels but is kept; explicit 0 kept */
    for (int i = 0; i < 4; i++)
        SDT_CHECK(a.rowptr[i] == rp[i], "rowptr[%d] %lld", i, (long long)a.rowptr[i]);
    for (int k = 0; k < 5; k++) {
        SDT_CHECK(a.colind[k] == cc[k], "colind[%d] %d", k, a.colind[k]);
        SDT_CHECK(a.vals[k] == vv[k], "vals[%d] %g", k, a.vals[k]);
    }
    SDT_OK(sd_csr_check(&a));
    sd_csr t, tt;
    SDT_OK(sdi_csr_transpose(&a, &t));
    SDT_OK(sd_csr_check(&t));
    SDT_CHECK(t.rows == 4 && t.cols == 3 && t.nnz == 5, "transpose sizes");
    SDT_OK(sdi_csr_transpose(&t, &tt));
    SDT_CHECK(sdi_csr_same_pattern(&a, &tt), "double transpose pattern");
    SDT_CHECK(memcmp(a.vals, tt.vals, 5 * sizeof(float)) == 0, "double transpose values");
    sd_csr_free(&a);
    sd_csr_free(&t);
    sd_csr_free(&tt);
    sdi_coo_free(&c);
}

static void test_check_names_row(void)
{
    int64_t rp[] = {0, 1, 3};
    int32_t ci[] = {0, 2, 1};
    float v[] = {1, 2, 3};
    sd_csr a = {2, 3, 3, rp, ci, v};
    SDT_STATUS(sd_csr_check(&a), SD_ERR_INVALID_ARG);
    SDT_CHECK(strstr(sd_last_error(), "row 1") != NULL, "message '%s'", sd_last_error());
    ci[1] = 1;
    ci[2] = 2;
    v[2] = NAN;
    SDT_STATUS(sd_csr_check(&a), SD_ERR_INVALID_ARG);
    SDT_CHECK(strstr(sd_last_error(), "row 1") && strstr(sd_last_error(), "finite"),
              "message '%s'", sd_last_error());
    v[2] = 1;
    ci[2] = 3;
    SDT_STATUS(sd_csr_check(&a), SD_ERR_INVALID_ARG);
    SDT_CHECK(strstr(sd_last_error(), "out of range") != NULL, "message '%s'", sd_last_error());
}

/* Fault injection: every allocation of the conversion fails in turn; no leak, status OOM. */
static void test_alloc_failures_no_leak(void)
{
    sdi_coo c;
    SDT_OK(sdi_coo_init(&c, 50, 50, 0));
    for (int k = 0; k < 500; k++)
        SDT_OK(sdi_coo_push(&c, (k * 7) % 50, (k * 13) % 50, (float)k));
    long long base = sdi_alloc_live_bytes();
    int succeeded = 0;
    for (long n = 0; n < 50 && !succeeded; n++) {
        sd_csr a;
        sdi_alloc_fail_after(n);
        sd_status s = sdi_coo_to_csr(&c, &a, NULL);
        sdi_alloc_fail_after(-1);
        if (s == SD_OK) {
            succeeded = 1;
            sd_csr_free(&a);
        } else {
            SDT_CHECK(s == SD_ERR_OUT_OF_MEMORY, "status %s", sd_status_string(s));
            SDT_CHECK(a.rowptr == NULL && a.nnz == 0, "output zeroed on failure");
        }
        SDT_CHECK(sdi_alloc_live_bytes() == base, "leak after failure at %ld: %lld bytes", n,
                  sdi_alloc_live_bytes() - base);
    }
    SDT_CHECK(succeeded, "never succeeded");
    sdi_coo_free(&c);
}

static void test_json(void)
{
    sdi_json j;
    sdi_json_init(&j, 0);
    sdi_json_begin_object(&j);
    sdi_json_key(&j, "a");
    sdi_json_int(&j, 3);
    sdi_json_key(&j, "b \"q\"");
    sdi_json_begin_array(&j);
    sdi_json_number(&j, 0.5);
    sdi_json_number(&j, NAN);
    sdi_json_string(&j, "x\ny");
    sdi_json_bool(&j, true);
    sdi_json_end_array(&j);
    sdi_json_key(&j, "e");
    sdi_json_begin_object(&j);
    sdi_json_end_object(&j);
    sdi_json_end_object(&j);
    SDT_OK(sdi_json_finish(&j));
    const char *want = "{\"a\":3,\"b \\\"q\\\"\":[0.5,null,\"x\\ny\",true],\"e\":{}}";
    SDT_CHECK(strcmp(j.buf, want) == 0, "got %s", j.buf);
    sdi_json_free(&j);
}

static void test_pattern_hash(void)
{
    int64_t rp[] = {0, 1, 2};
    int32_t ci[] = {0, 1};
    float v1[] = {1, 2}, v2[] = {5, 6};
    sd_csr a = {2, 2, 2, rp, ci, v1}, b = {2, 2, 2, rp, ci, v2};
    sdi_hash128 ha = sdi_pattern_hash(&a), hb = sdi_pattern_hash(&b);
    SDT_CHECK(ha.lo == hb.lo && ha.hi == hb.hi, "values must not change the hash");
    int32_t ci2[] = {1, 1};
    sd_csr c = {2, 2, 2, rp, ci2, v1};
    sdi_hash128 hc = sdi_pattern_hash(&c);
    SDT_CHECK(ha.lo != hc.lo || ha.hi != hc.hi, "pattern change must change the hash");
    sd_csr d = {2, 3, 2, rp, ci, v1};
    sdi_hash128 hd = sdi_pattern_hash(&d);
    SDT_CHECK(ha.lo != hd.lo || ha.hi != hd.hi, "cols must change the hash");
    char hex[33];
    sdi_hash_hex(ha, hex);
    SDT_CHECK(strlen(hex) == 32, "hex length");
}

static int cmp_i32_ref(const void *x, const void *y)
{
    int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
    return (a > b) - (a < b);
}

/* sdi_sort_i32 against qsort on inputs that stress each part of an introsort: tiny (the
 * insertion sort), random with and without duplicates, sorted, reversed, all equal, organ
 * pipe, and a median-of-three killer (past the depth limit: the heap sort). */
static void test_sort_i32(void)
{
    const int64_t sizes[] = {0, 1, 2, 3, 24, 25, 100, 1000, 65537};
    uint64_t x = 0x243f6a8885a308d3ull;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        const int64_t n = sizes[si];
        int32_t *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
        int32_t *w = malloc((size_t)(n > 0 ? n : 1) * sizeof *w);
        SDT_CHECK(v && w, "host memory");
        for (int kind = 0; v && w && kind < 8; kind++) {
            for (int64_t i = 0; i < n; i++) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                switch (kind) {
                case 0: v[i] = (int32_t)(x >> 33) - (1 << 30); break; /* random, signed */
                case 1: v[i] = (int32_t)(x % 7); break;               /* many duplicates */
                case 2: v[i] = (int32_t)i; break;                     /* sorted */
                case 3: v[i] = (int32_t)(n - i); break;               /* reversed */
                case 4: v[i] = 5; break;                              /* all equal */
                case 5: v[i] = (int32_t)(i < n / 2 ? i : n - i); break; /* organ pipe */
                case 6: v[i] = (int32_t)((i & 1) ? n / 2 + i : i); break; /* median-of-3 killer */
                default: v[i] = i % 2 ? INT32_MAX - (int32_t)(x % 3) : INT32_MIN + (int32_t)(x % 3); break;
                }
            }
            memcpy(w, v, (size_t)n * sizeof *v);
            if (n > 0)
                qsort(w, (size_t)n, sizeof *w, cmp_i32_ref);
            sdi_sort_i32(v, n);
            SDT_CHECK(n == 0 || memcmp(v, w, (size_t)n * sizeof *v) == 0, "n = %lld, input kind %d",
                      (long long)n, kind);
        }
        free(v);
        free(w);
    }
    sdi_sort_i32(NULL, 5); /* nothing to sort: no crash */
}

static int cmp_i64_ref(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

/* The block census against a brute force per 16-row block row: distinct (row / b, column
 * / b) pairs for b = 2, 4, 8, 16 by sorting, and the 16×16 tiles' entry counts. */
static void test_block_census(void)
{
    const char *specs[] = {"powerlaw:rows=997,cols=1500,deg=9,alpha=1.8,max=700",
                           "banded:n=600,bw=20",
                           "blockdiag:n=1000,b=16",
                           "blockdiag:n=203,b=5",
                           "uniform:rows=300,cols=70001,deg=7",
                           "uniform:rows=2000,cols=300,nnz=700", /* most rows empty */
                           "uniform:rows=3,cols=100000,deg=40000", /* long rows, partial block row */
                           "uniform:rows=40,cols=40,nnz=0"};
    for (size_t m = 0; m < sizeof specs / sizeof specs[0]; m++) {
        sd_csr a;
        SDT_OK(sdi_gen(specs[m], 5, &a));
        int64_t *keys = malloc((size_t)(a.nnz > 0 ? a.nnz : 1) * sizeof *keys);
        SDT_CHECK(keys != NULL, "host memory");
        int bad = 0;
        for (int64_t br = 0; keys != NULL && br * 16 < a.rows && !bad; br++) {
            const int64_t r1 = br * 16 + 16 < a.rows ? br * 16 + 16 : a.rows;
            const int64_t k0 = a.rowptr[br * 16], n = a.rowptr[r1] - k0;
            const int64_t dense_min = 1 + br % 40; /* thresholds from 1 to 40 */
            sdi_block_census c;
            memset(&c, 0x55, sizeof c);
            sdi_csr_block_census(&a, br, dense_min, &c);
            int64_t want[5] = {n, 0, 0, 0, 0}, tiles_dense = 0, nnz_dense = 0;
            for (int lb = 1; lb <= 4; lb++) {
                for (int64_t r = br * 16; r < r1; r++)
                    for (int64_t k = a.rowptr[r]; k < a.rowptr[r + 1]; k++)
                        keys[k - k0] = (r >> lb) << 32 | (int64_t)(a.colind[k] >> lb);
                qsort(keys, (size_t)n, sizeof *keys, cmp_i64_ref);
                for (int64_t i = 0; i < n;) {
                    int64_t e = i;
                    while (e < n && keys[e] == keys[i])
                        e++;
                    want[lb]++;
                    if (lb == 4 && e - i >= dense_min) {
                        tiles_dense++;
                        nnz_dense += e - i;
                    }
                    i = e;
                }
            }
            for (int lb = 0; lb <= 4; lb++)
                bad |= c.occ[lb] != want[lb];
            bad |= c.dense_tiles != tiles_dense || c.dense_nnz != nnz_dense;
            SDT_CHECK(!bad, "%s block row %lld: occupied 2/4/8/16 blocks %lld %lld %lld %lld (want %lld "
                      "%lld %lld %lld), entries %lld (want %lld), dense tiles %lld / %lld entries (want "
                      "%lld / %lld)", specs[m], (long long)br, (long long)c.occ[1], (long long)c.occ[2],
                      (long long)c.occ[3], (long long)c.occ[4], (long long)want[1], (long long)want[2],
                      (long long)want[3], (long long)want[4], (long long)c.occ[0], (long long)want[0],
                      (long long)c.dense_tiles, (long long)c.dense_nnz, (long long)tiles_dense,
                      (long long)nnz_dense);
        }
        free(keys);
        sd_csr_free(&a);
    }
}

int main(void)
{
    sdt_init("test_core");
    SDT_RUN(test_status_strings);
    SDT_RUN(test_free_accepts_null);
    SDT_RUN(test_coo_to_csr);
    SDT_RUN(test_check_names_row);
    SDT_RUN(test_alloc_failures_no_leak);
    SDT_RUN(test_json);
    SDT_RUN(test_pattern_hash);
    SDT_RUN(test_sort_i32);
    SDT_RUN(test_block_census);
    return sdt_finish();
}
