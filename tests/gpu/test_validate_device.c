/* tests/gpu/test_validate_device.c: the device-side check of large dense outputs
 * (sdi_check_dense_output with the reference's device mirror) agrees with the host rule:
 * a correct output passes on the device (no copy back), a wrong entry, a NaN and an
 * inexact integer result are caught with the host's message naming the entry, an entry
 * within the bound passes, exact mode compares exactly, a failed mirror allocation falls
 * back to the host, and nothing leaks. Skipped (exit 77) without a device. */
#include <math.h>
#include <stdlib.h>

#include "core/rng.h"
#include "gen/gen.h"
#include "runtime/runtime.h"
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
    SDT_OK(check(&t, &v));
    SDT_CHECK(v.ok && v.row >= 0, "host path used when forced (row %lld)", (long long)v.row);
    unsetenv("SPARSEDITTO_HOST_VALIDATION");

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
    sd_context_destroy(g_ctx);
    return sdt_finish();
}
