/* tests/gpu/test_validate_device.c: the device-side check of large outputs
 * (sdi_check_dense_output / sdi_check_spgemm_output with the reference's device mirror)
 * agrees with the host rule:
 * a correct output passes on the device (no copy back), a wrong entry, a NaN and an
 * inexact integer result are caught with the host's message naming the entry, an entry
 * within the bound passes, exact mode compares exactly, a failed mirror allocation falls
 * back to the host, a mirror uploaded in several chunks checks every one, a streamed
 * mirror (refilled chunk by chunk at each check) judges as the whole one, and nothing
 * leaks. Skipped (exit 77) without a device. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "gen/gen.h"
#include "runtime/runtime.h"
#include "runtime/spgemm_exec.h"
#include "sdt.h"

static sd_context *g_ctx;

typedef struct {
    sd_csr a;
    float *b;    /* cols × k */
    float *host; /* rows × k: the output uploaded for a check */
    float *d_out;
    int k;
    sdi_reference ref;
} task;

static void task_free(task *t)
{
    sdi_reference_free(&t->ref);
    sd_csr_free(&t->a);
    free(t->b);
    free(t->host);
    sdi_device_free(t->d_out);
    memset(t, 0, sizeof *t);
}

/* A = spec, B pseudo-random (or small integers when exact), the reference, and a host
 * output equal to the reference rounded to FP32 (a correct result). */
static sd_status task_make(task *t, const char *spec, int k, int exact)
{
    memset(t, 0, sizeof *t);
    t->k = k;
    sd_status s = sdi_gen(spec, 7, &t->a);
    if (s != SD_OK)
        return s;
    if (exact)
        for (int64_t e = 0; e < t->a.nnz; e++)
            t->a.vals[e] = (float)((int)(e % 5) - 2);
    size_t nb = (size_t)t->a.cols * (size_t)k, nc = (size_t)t->a.rows * (size_t)k;
    t->b = malloc(nb * sizeof *t->b);
    t->host = malloc(nc * sizeof *t->host);
    if (t->b == NULL || t->host == NULL)
        return SD_ERR_OUT_OF_MEMORY;
    sdi_rng rng;
    sdi_rng_seed(&rng, 11, 0, 0);
    for (size_t i = 0; i < nb; i++)
        t->b[i] = exact ? (float)((int)sdi_rng_below(&rng, 5) - 2)
                        : (float)(2.0 * sdi_rng_uniform(&rng) - 1.0);
    s = sdi_reference_dense(&t->a, SD_OP_SPMM, t->b, k, exact, &t->ref);
    if (s != SD_OK)
        return s;
    for (size_t i = 0; i < nc; i++)
        t->host[i] = (float)t->ref.want[i];
    return sdi_device_malloc(g_ctx, (void **)&t->d_out, nc * sizeof(float), "test output");
}

static sd_status check(task *t, sdi_validation *v)
{
    size_t nc = (size_t)t->a.rows * (size_t)t->k;
    sd_status s = sdi_copy_to_device(g_ctx, t->d_out, t->host, nc * sizeof(float), "test output");
    if (s != SD_OK)
        return s;
    return sdi_check_dense_output(g_ctx, &t->ref, t->d_out, v);
}

static void test_bound_mode(void)
{
    task t;
    SDT_OK(task_make(&t, "uniform:rows=40000,deg=8", 16, 0));
    size_t nc = (size_t)t.a.rows * 16;
    SDT_CHECK(nc >= SDI_DEVICE_CHECK_MIN, "output of %zu entries takes the device path", nc);
    sdi_validation v;
    long live = sdi_device_alloc_live();

    SDT_OK(check(&t, &v));
    SDT_CHECK(v.ok && v.n_checked == (int64_t)nc && v.row == -1,
              "correct output passes on the device (checked %lld, row %lld)",
              (long long)v.n_checked, (long long)v.row);
    SDT_CHECK(v.ratio >= 0 && v.ratio < 1, "worst ratio %g in [0, 1)", v.ratio);
    SDT_CHECK(sdi_device_alloc_live() == live + 3, "mirror holds 3 device buffers (%ld)",
              sdi_device_alloc_live() - live);

    /* The host path gives the same verdict. */
    setenv("SPARSEDITTO_HOST_VALIDATION", "1", 1);
    sdi_config_reload();
    SDT_OK(check(&t, &v));
    SDT_CHECK(v.ok && v.row >= 0, "host path used when forced (row %lld)", (long long)v.row);
    unsetenv("SPARSEDITTO_HOST_VALIDATION");
    sdi_config_reload();

    /* A wrong entry: the host's message names it. */
    const int64_t bad_row = 12345, bad_col = 3;
    size_t e = (size_t)(bad_row * 16 + bad_col);
    float keep = t.host[e];
    t.host[e] = keep + 1.0f;
    SDT_STATUS(check(&t, &v), SD_ERR_VALIDATION);
    SDT_CHECK(!v.ok && v.row == bad_row && v.col == bad_col && v.n_violations == 1,
              "wrong entry found at row %lld col %lld (%lld violations)", (long long)v.row,
              (long long)v.col, (long long)v.n_violations);

    /* NaN. */
    t.host[e] = NAN;
    SDT_STATUS(check(&t, &v), SD_ERR_VALIDATION);
    SDT_CHECK(v.n_nonfinite == 1, "NaN counted (%lld)", (long long)v.n_nonfinite);

    /* Within the bound (a quarter of it): passes, whichever side judges. */
    double bound = sdi_validation_bound(t.ref.want[e], t.ref.count[bad_row], t.ref.absum[e]);
    t.host[e] = (float)(t.ref.want[e] + 0.25 * bound);
    SDT_OK(check(&t, &v));
    SDT_CHECK(v.ok, "an entry within the bound passes");
    t.host[e] = keep;
    SDT_OK(check(&t, &v));

    task_free(&t);
    SDT_CHECK(sdi_device_alloc_live() == live - 1, "mirror and output freed (%ld live)",
              sdi_device_alloc_live() - live);
}

static void test_exact_mode(void)
{
    task t;
    SDT_OK(task_make(&t, "uniform:rows=20000,deg=6", 32, 1));
    sdi_validation v;
    SDT_OK(check(&t, &v));
    SDT_CHECK(v.ok && v.row == -1, "exact output passes on the device");
    size_t e = 777 * 32 + 5;
    t.host[e] = nextafterf(t.host[e], INFINITY);
    SDT_STATUS(check(&t, &v), SD_ERR_VALIDATION);
    SDT_CHECK(v.row == 777 && v.col == 5, "one ulp off is caught exactly (row %lld col %lld)",
              (long long)v.row, (long long)v.col);
    task_free(&t);
}

/* Out of device memory for the mirror: the check still runs, on the host. */
static void test_mirror_fallback(void)
{
    task t;
    SDT_OK(task_make(&t, "uniform:rows=40000,deg=4", 8, 0));
    long live = sdi_device_alloc_live();
    size_t nc = (size_t)t.a.rows * 8;
    SDT_OK(sdi_copy_to_device(g_ctx, t.d_out, t.host, nc * sizeof(float), "test output"));
    sdi_device_alloc_fail_after(0);
    sdi_validation v;
    sd_status s = sdi_check_dense_output(g_ctx, &t.ref, t.d_out, &v);
    sdi_device_alloc_fail_after(-1);
    SDT_OK(s);
    SDT_CHECK(v.ok && v.row >= 0, "host path after the mirror failed (row %lld)", (long long)v.row);
    SDT_CHECK(sdi_device_alloc_live() == live, "nothing left allocated (%ld)",
              sdi_device_alloc_live() - live);
    /* Later checks stay on the host; still correct. */
    t.host[100] += 3.0f;
    SDT_STATUS(check(&t, &v), SD_ERR_VALIDATION);
    SDT_CHECK(v.row == 100 / 8, "caught on the host (row %lld)", (long long)v.row);
    task_free(&t);
}

/* Below the threshold: the host path, as before. */
static void test_small_output(void)
{
    task t;
    SDT_OK(task_make(&t, "uniform:rows=1000,deg=5", 4, 0));
    long live = sdi_device_alloc_live();
    sdi_validation v;
    SDT_OK(check(&t, &v));
    SDT_CHECK(v.ok && v.row >= 0, "small output judged on the host");
    SDT_CHECK(sdi_device_alloc_live() == live, "no mirror for a small output");
    task_free(&t);
}

/* SpGEMM: C = A·A checked against the reference's mirror (structure exactly, values by
 * the bound). The reference itself, uploaded, passes on the device with row pointers of
 * 8 or 4 bytes; a wrong value, a wrong column and a dropped entry are caught with the
 * host's message; a row whose (correct) entries are out of order is flagged on the device
 * and passed by the host, which sorts it, while the executors' check (sdi_spgemm_check,
 * which also promises sorted rows, and skips its own host pass after a device pass)
 * rejects it. */
static void test_spgemm_mirror(void)
{
    sd_csr a;
    SDT_OK(sdi_gen("uniform:rows=40000,deg=4", 7, &a));
    sdi_reference ref;
    SDT_OK(sdi_reference_spgemm(&a, &a, &ref));
    const sdi_ref_csr *c = &ref.c;
    const size_t nnz = (size_t)c->nnz, nr = (size_t)c->rows + 1;
    SDT_CHECK(nnz >= SDI_DEVICE_CHECK_MIN, "C has %zu entries: the device path", nnz);
    int32_t *rp32 = malloc(nr * sizeof *rp32), *col = malloc(nnz * sizeof *col);
    float *val = malloc(nnz * sizeof *val);
    SDT_CHECK(rp32 && col && val, "host arrays");
    if (!rp32 || !col || !val)
        goto done;
    for (size_t i = 0; i < nr; i++)
        rp32[i] = (int32_t)c->rowptr[i];
    for (size_t e = 0; e < nnz; e++) {
        col[e] = c->colind[e];
        val[e] = (float)c->vals[e];
    }
    long live = sdi_device_alloc_live();
    void *d_rp = NULL, *d_rp32 = NULL, *d_col = NULL, *d_val = NULL;
    SDT_OK(sdi_device_upload(g_ctx, &d_rp, c->rowptr, nr * 8, "test rowptr"));
    SDT_OK(sdi_device_upload(g_ctx, &d_rp32, rp32, nr * 4, "test rowptr32"));
    SDT_OK(sdi_device_upload(g_ctx, &d_col, col, nnz * 4, "test col"));
    SDT_OK(sdi_device_upload(g_ctx, &d_val, val, nnz * 4, "test val"));
    sdi_validation v;
#define CHECK_C(rp, bytes) sdi_check_spgemm_output(g_ctx, &ref, c->rows, c->cols, c->nnz, rp, bytes, d_col, d_val, &v)
    SDT_OK(CHECK_C(d_rp, 8));
    SDT_CHECK(v.ok && v.row == -1 && v.n_checked == c->nnz && v.device,
              "correct C passes on the device (row %lld)", (long long)v.row);
    /* The executors' check: the device pass stands for the sortedness pass too. */
    sd_device_csr dc = {c->rows, c->cols, c->nnz, d_rp, d_col, d_val};
    SDT_OK(sdi_spgemm_check(g_ctx, &ref, &dc, &v));
    SDT_CHECK(v.ok && v.device, "sdi_spgemm_check: correct C passes on the device");
    SDT_CHECK(sdi_device_alloc_live() == live + 4 + 5, "mirror holds 5 device buffers (%ld)",
              sdi_device_alloc_live() - live - 4);
    SDT_OK(CHECK_C(d_rp32, 4));
    SDT_CHECK(v.ok && v.row == -1, "4-byte row pointers pass on the device");
    setenv("SPARSEDITTO_HOST_VALIDATION", "1", 1);
    sdi_config_reload();
    SDT_OK(CHECK_C(d_rp, 8));
    SDT_CHECK(v.ok && v.row >= 0 && !v.device, "host path when forced (row %lld)", (long long)v.row);
    SDT_OK(sdi_spgemm_check(g_ctx, &ref, &dc, &v));
    SDT_CHECK(v.ok && !v.device, "sdi_spgemm_check: correct C passes on the host when forced");
    unsetenv("SPARSEDITTO_HOST_VALIDATION");
    sdi_config_reload();

    /* A wrong value in row r. */
    const int32_t r = 23456;
    const int64_t e0 = c->rowptr[r], n_r = c->rowptr[r + 1] - e0;
    SDT_CHECK(n_r >= 2, "row %d has %lld entries", r, (long long)n_r);
    float keep = val[e0];
    val[e0] = keep + 1.0f;
    SDT_OK(sdi_copy_to_device(g_ctx, d_val, val, nnz * 4, "test val"));
    SDT_STATUS(CHECK_C(d_rp, 8), SD_ERR_VALIDATION);
    SDT_CHECK(!v.ok && v.row == r, "wrong value caught in row %lld", (long long)v.row);
    val[e0] = keep;
    SDT_OK(sdi_copy_to_device(g_ctx, d_val, val, nnz * 4, "test val"));

    /* The row's first two entries swapped (columns and values): correct, out of order. */
    int32_t c0 = col[e0];
    col[e0] = col[e0 + 1];
    col[e0 + 1] = c0;
    val[e0] = val[e0 + 1];
    val[e0 + 1] = keep;
    SDT_OK(sdi_copy_to_device(g_ctx, d_col, col, nnz * 4, "test col"));
    SDT_OK(sdi_copy_to_device(g_ctx, d_val, val, nnz * 4, "test val"));
    SDT_OK(CHECK_C(d_rp, 8));
    SDT_CHECK(v.ok && v.row >= 0, "an unsorted but correct row passes on the host (row %lld)", (long long)v.row);
    /* ... and the executors' check, which promises sorted rows, rejects it by name. */
    SDT_STATUS(sdi_spgemm_check(g_ctx, &ref, &dc, &v), SD_ERR_VALIDATION);
    SDT_CHECK(!v.ok && strstr(v.reason, "row 23456: columns not sorted") != NULL, "unsorted row rejected: %s",
              v.reason);
    sdi_error_clear();

    /* A column that is not in the reference's row. */
    col[e0] = (c->colind[e0 + n_r - 1] + 1) % c->cols;
    SDT_OK(sdi_copy_to_device(g_ctx, d_col, col, nnz * 4, "test col"));
    SDT_STATUS(CHECK_C(d_rp, 8), SD_ERR_VALIDATION);
    SDT_CHECK(!v.ok && strstr(sd_last_error(), "row 23456") != NULL, "wrong column caught: %s", sd_last_error());
    sdi_error_clear();

    /* One entry fewer (nnz differs from the reference's): the host names it. */
    SDT_STATUS(sdi_check_spgemm_output(g_ctx, &ref, c->rows, c->cols, c->nnz - 1, d_rp, 8, d_col, d_val, &v),
               SD_ERR_VALIDATION);
    SDT_CHECK(!v.ok, "a dropped entry is caught");
    sdi_error_clear();
#undef CHECK_C
    sdi_device_free(d_rp);
    sdi_device_free(d_rp32);
    sdi_device_free(d_col);
    sdi_device_free(d_val);
    sdi_reference_free(&ref);
    SDT_CHECK(sdi_device_alloc_live() == live, "mirror and test arrays freed (%ld live)",
              sdi_device_alloc_live() - live);
done:
    free(rp32);
    free(col);
    free(val);
    sd_csr_free(&a);
}

static void staged_spgemm(bool streamed);

/* A mirror larger than one staged chunk (SDI_MIRROR_CHUNK): a correct output passes on the
 * device, and a wrong entry in the first chunk, at the first entry of the second, and the
 * very last entry are each caught where they are (each chunk lands at its offset). */
static void test_staged_mirror(void)
{
    task t;
    const int k = 128;
    SDT_OK(task_make(&t, "uniform:rows=300000,deg=4", k, 0));
    const size_t nc = (size_t)t.a.rows * (size_t)k;
    SDT_CHECK(nc > 2 * (size_t)SDI_MIRROR_CHUNK, "%zu entries: three chunks", nc);
    sdi_validation v;
    SDT_OK(check(&t, &v));
    SDT_CHECK(v.ok && v.device && v.n_checked == (int64_t)nc, "correct output passes on the device");
    const size_t at[3] = {12345, (size_t)SDI_MIRROR_CHUNK, nc - 1};
    for (int i = 0; i < 3; i++) {
        const size_t e = at[i];
        const float keep = t.host[e];
        t.host[e] = keep + 1.0f + fabsf(keep);
        SDT_STATUS(check(&t, &v), SD_ERR_VALIDATION);
        SDT_CHECK(!v.ok && v.row == (int64_t)(e / (size_t)k) && v.col == (int64_t)(e % (size_t)k) &&
                      v.n_violations == 1,
                  "entry %zu (chunk %zu) caught at row %lld col %lld", e,
                  e / (size_t)SDI_MIRROR_CHUNK, (long long)v.row, (long long)v.col);
        sdi_error_clear();
        t.host[e] = keep;
    }
    SDT_OK(check(&t, &v));
    task_free(&t);

    staged_spgemm(false);
}

/* SpGEMM mirrors over two chunks: staged whole, or streamed (SPARSEDITTO_STREAMED_MIRROR:
 * the row pointers on the device and two chunk slots refilled at each check, as for a
 * product whose mirror exceeds a quarter of the free device memory). A correct C passes on
 * the device; a wrong value in the first chunk, a wrong column in the second and a wrong
 * row pointer are caught and named; nothing leaks. */
static void staged_spgemm(bool streamed)
{
    const char *mode = streamed ? "streamed" : "staged";
    if (streamed)
        setenv("SPARSEDITTO_STREAMED_MIRROR", "1", 1);
    sdi_config_reload();
    sd_csr a;
    SDT_OK(sdi_gen("uniform:rows=1200000,deg=4", 7, &a));
    sdi_reference ref;
    SDT_OK(sdi_reference_spgemm(&a, &a, &ref));
    const sdi_ref_csr *c = &ref.c;
    const size_t nnz = (size_t)c->nnz;
    SDT_CHECK(nnz > (size_t)SDI_MIRROR_CHUNK, "C has %zu entries: two chunks", nnz);
    int32_t *col = malloc(nnz * sizeof *col);
    float *val = malloc(nnz * sizeof *val);
    void *d_rp = NULL, *d_col = NULL, *d_val = NULL;
    sdi_validation v;
    long live = sdi_device_alloc_live();
    SDT_CHECK(col && val, "host arrays");
    if (col && val) {
        for (size_t e = 0; e < nnz; e++) {
            col[e] = c->colind[e];
            val[e] = (float)c->vals[e];
        }
        SDT_OK(sdi_device_upload(g_ctx, &d_rp, c->rowptr, ((size_t)c->rows + 1) * 8, "test rowptr"));
        SDT_OK(sdi_device_upload(g_ctx, &d_col, col, nnz * 4, "test col"));
        SDT_OK(sdi_device_upload(g_ctx, &d_val, val, nnz * 4, "test val"));
#define CHECK_C() sdi_check_spgemm_output(g_ctx, &ref, c->rows, c->cols, c->nnz, d_rp, 8, d_col, d_val, &v)
        SDT_OK(CHECK_C());
        SDT_CHECK(v.ok && v.device && v.row == -1 && v.n_checked == c->nnz,
                  "%s: correct C passes on the device", mode);
        SDT_CHECK(sdi_device_alloc_live() == live + 3 + 5, "%s: the mirror holds 5 device buffers (%ld)",
                  mode, sdi_device_alloc_live() - live - 3);
        SDT_OK(CHECK_C()); /* again: the streamed slots are reused */
        SDT_CHECK(v.ok && v.device, "%s: a second check passes too", mode);
        /* A wrong value in row 1000 (first chunk). */
        const int64_t e1 = c->rowptr[1000];
        const float keep = val[e1];
        val[e1] = keep + 1.0f + fabsf(keep);
        SDT_OK(sdi_copy_to_device(g_ctx, (char *)d_val + e1 * 4, &val[e1], 4, "test val"));
        SDT_STATUS(CHECK_C(), SD_ERR_VALIDATION);
        SDT_CHECK(!v.ok && v.row == 1000, "%s: wrong value caught in row %lld", mode, (long long)v.row);
        sdi_error_clear();
        val[e1] = keep;
        SDT_OK(sdi_copy_to_device(g_ctx, (char *)d_val + e1 * 4, &val[e1], 4, "test val"));
        /* The last row's last column moved one further (or wrapped): second chunk. */
        const size_t e = nnz - 1;
        const int32_t r = c->rows - 1;
        col[e] = (c->colind[e] + 1) % c->cols;
        SDT_OK(sdi_copy_to_device(g_ctx, (char *)d_col + e * 4, &col[e], 4, "test col"));
        SDT_STATUS(CHECK_C(), SD_ERR_VALIDATION);
        char want[32];
        snprintf(want, sizeof want, "row %d", (int)r);
        SDT_CHECK(!v.ok && strstr(sd_last_error(), want) != NULL, "%s: wrong column in chunk 2 caught: %s",
                  mode, sd_last_error());
        sdi_error_clear();
        col[e] = c->colind[e];
        SDT_OK(sdi_copy_to_device(g_ctx, (char *)d_col + e * 4, &col[e], 4, "test col"));
        /* A row pointer off by one in the middle (row 600000): the structure differs. */
        int64_t rp = c->rowptr[600000] + 1;
        SDT_OK(sdi_copy_to_device(g_ctx, (char *)d_rp + 600000 * 8, &rp, 8, "test rowptr"));
        SDT_STATUS(CHECK_C(), SD_ERR_VALIDATION);
        SDT_CHECK(!v.ok, "%s: a wrong row pointer is caught", mode);
        sdi_error_clear();
        rp = c->rowptr[600000];
        SDT_OK(sdi_copy_to_device(g_ctx, (char *)d_rp + 600000 * 8, &rp, 8, "test rowptr"));
        SDT_OK(CHECK_C());
        SDT_CHECK(v.ok && v.device, "%s: restored C passes", mode);
#undef CHECK_C
    }
    sdi_device_free(d_rp);
    sdi_device_free(d_col);
    sdi_device_free(d_val);
    free(col);
    free(val);
    sdi_reference_free(&ref);
    SDT_CHECK(sdi_device_alloc_live() == live, "%s: mirror and test arrays freed (%ld live)", mode,
              sdi_device_alloc_live() - live);
    sd_csr_free(&a);
    if (streamed)
        unsetenv("SPARSEDITTO_STREAMED_MIRROR");
    sdi_config_reload();
}

static void test_streamed_mirror(void) { staged_spgemm(true); }

int main(void)
{
    sdt_init("test_validate_device");
    sd_status s = sd_context_create(NULL, &g_ctx);
    if (s == SD_ERR_NO_DEVICE)
        return sdt_skip(sd_last_error());
    if (s != SD_OK) {
        printf("FAIL: sd_context_create: %s: %s\n", sd_status_string(s), sd_last_error());
        return 1;
    }
    SDT_RUN(test_bound_mode);
    SDT_RUN(test_exact_mode);
    SDT_RUN(test_mirror_fallback);
    SDT_RUN(test_small_output);
    SDT_RUN(test_spgemm_mirror);
    SDT_RUN(test_staged_mirror);
    SDT_RUN(test_streamed_mirror);
    sd_context_destroy(g_ctx);
    return sdt_finish();
}
