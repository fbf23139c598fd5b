/* tests/gpu/test_baseline.c: the cuSPARSE baseline on a device: every SpMV, SpMM and
 * SpGEMM variant runs (or is refused by name with cuSPARSE's status), is validated
 * against the CPU reference and timed, and the fastest valid one is chosen; on
 * small-integer inputs (exact sums) no variant may produce a wrong result, which
 * checks our SELL / Blocked-ELL builders and the SpGEMM pipeline. Also the variant
 * filter, the JSON form, an empty matrix, device-allocation fault injection without
 * leaks, the brief timing of SpGEMM, SpMV and SpMM variants (the best timed again in
 * full) and a reference borrowed from the caller (a search's). Skipped (exit 77) without
 * a device. */
#include <unistd.h>

#include "core/io.h"
#include "gen/gen.h"
#include "runtime/runtime.h"
#include "vendor/baseline.h"
#include "sdt.h"

static sd_context *g_ctx;

static void print_baseline(const char *label, const sdi_baseline *b)
{
    printf("  %s: %dx%d nnz %lld", label, b->rows, b->cols, (long long)b->nnz);
    if (b->op == SD_OP_SPMM)
        printf(" K=%d", b->k);
    if (b->op == SD_OP_SPGEMM)
        printf(" %s nnz(C)=%lld", b->aat ? "A*At" : "A*A", (long long)b->nnz_c);
    if (b->roofline_us > 0)
        printf(", roofline %.2f us", b->roofline_us);
    printf("\n");
    for (int i = 0; i < b->nvariants; i++) {
        const sdi_variant_result *v = &b->v[i];
        if (v->status == SDI_VARIANT_OK)
            printf("    %-18s ok      mean %9.2f min %9.2f med %9.2f pipe %9.2f us setup "
                   "%7.1f ms roofline %5.1f%% worst %.2g%s\n",
                   v->name, v->timing.mean_us, v->timing.min_us, v->timing.median_us,
                   v->timing.pipelined_us, v->setup_ms, 100 * v->roofline_frac, v->val.ratio,
                   i == b->best ? "  <- best" : "");
        else
            printf("    %-18s %-16s %s\n", v->name, sdi_variant_status_name(v->status),
                   v->detail);
    }
}

/* Runs the baseline and checks the invariants every run must satisfy. */
static void run(const char *label, const sd_csr *a, sd_op op, int k, int aat, int exact,
                const char *must_pass)
{
    float *xb = NULL;
    if (op != SD_OP_SPGEMM) {
        size_t n = (size_t)a->cols * (size_t)(op == SD_OP_SPMM ? k : 1);
        xb = malloc((n ? n : 1) * sizeof *xb);
        sdi_gen_dense(xb, (int64_t)n, exact ? SDI_VALUES_SMALL_INT : SDI_VALUES_UNIFORM,
                      sdt_seed);
    }
    sdi_baseline_options o = {.k = k, .aat = aat, .exact = exact};
    sdi_baseline b;
    long live0 = sdi_device_alloc_live();
    sd_status s = sdi_cusparse_baseline(g_ctx, a, op, xb, &o, &b);
    SDT_CHECK(s == SD_OK, "%s: %s", label, sd_last_error());
    SDT_CHECK(sdi_device_alloc_live() == live0, "%s: device memory released", label);
    if (s == SD_OK) {
        print_baseline(label, &b);
        SDT_CHECK(b.nvariants > 0, "%s: variants recorded", label);
        for (int i = 0; i < b.nvariants; i++) {
            const sdi_variant_result *v = &b.v[i];
            if (v->status != SDI_VARIANT_OK)
                SDT_CHECK(v->detail[0] != '\0', "%s/%s: a failure says why", label, v->name);
            else
                SDT_CHECK(v->val.ok && v->timing.mean_us > 0, "%s/%s: valid and timed", label,
                          v->name);
            SDT_CHECK(v->status != SDI_VARIANT_ERROR, "%s/%s: error: %s", label, v->name,
                      v->detail);
            if (exact)
                SDT_CHECK(v->status != SDI_VARIANT_INVALID,
                          "%s/%s: wrong result on exact inputs: %s", label, v->name, v->detail);
            if (must_pass != NULL && strcmp(v->name, must_pass) == 0)
                SDT_CHECK(v->status == SDI_VARIANT_OK, "%s/%s must pass: %s", label, v->name,
                          v->detail);
        }
        SDT_CHECK(b.best >= 0, "%s: a valid fastest variant", label);
        if (b.best >= 0)
            for (int i = 0; i < b.nvariants; i++)
                if (b.v[i].status == SDI_VARIANT_OK)
                    SDT_CHECK(b.v[b.best].timing.mean_us <= b.v[i].timing.mean_us,
                              "%s: best is the fastest", label);
        if (op != SD_OP_SPGEMM)
            SDT_CHECK(b.roofline_us > 0, "%s: roofline", label);
    }
    free(xb);
}

static void gen_or_fail(const char *spec, sd_csr *a)
{
    sd_status s = sdi_gen(spec, sdt_seed, a);
    SDT_CHECK(s == SD_OK, "%s: %s", spec, sd_last_error());
}

static void test_spmv(void)
{
    sd_csr a;
    gen_or_fail("uniform:rows=20000,deg=10,values=int", &a);
    run("SpMV uniform (exact)", &a, SD_OP_SPMV, 1, -1, 1, "csr_alg1");
    sd_csr_free(&a);
    gen_or_fail("powerlaw:rows=30000,deg=12", &a);
    run("SpMV powerlaw", &a, SD_OP_SPMV, 1, -1, 0, "csr_alg1");
    sd_csr_free(&a);
    gen_or_fail("bimodal:rows=4000,cols=7000,short=3,long=900,frac=0.02,values=int", &a);
    run("SpMV bimodal rectangular (exact)", &a, SD_OP_SPMV, 1, -1, 1, "csr_alg1");
    sd_csr_free(&a);
}

static void test_spmm(void)
{
    sd_csr a;
    gen_or_fail("stencil2d:n=100,values=int", &a);
    run("SpMM stencil K=8 (exact)", &a, SD_OP_SPMM, 8, -1, 1, NULL);
    run("SpMM stencil K=32 (exact)", &a, SD_OP_SPMM, 32, -1, 1, NULL);
    sd_csr_free(&a);
    gen_or_fail("blockdiag:n=2000,b=16,values=int", &a);
    run("SpMM blockdiag K=32 (exact)", &a, SD_OP_SPMM, 32, -1, 1, NULL);
    sd_csr_free(&a);
    gen_or_fail("rmat:scale=12,ef=8", &a);
    run("SpMM rmat K=128", &a, SD_OP_SPMM, 128, -1, 0, NULL);
    sd_csr_free(&a);
}

static void test_spgemm(void)
{
    sd_csr a;
    gen_or_fail("uniform:rows=5000,deg=6,values=int", &a);
    run("SpGEMM A*A uniform (exact)", &a, SD_OP_SPGEMM, 0, 0, 1, "spgemm_alg1");
    sd_csr_free(&a);
    gen_or_fail("uniform:rows=3000,cols=5000,deg=5,values=int", &a);
    run("SpGEMM A*At rectangular (exact)", &a, SD_OP_SPGEMM, 0, -1, 1, "spgemm_alg1");
    sd_csr_free(&a);
    gen_or_fail("powerlaw:rows=8000,deg=6", &a);
    run("SpGEMM A*A powerlaw", &a, SD_OP_SPGEMM, 0, 0, 0, NULL);
    sd_csr_free(&a);
}

/* brief_us: every variant is timed briefly (a threshold below any execution), then the
 * fastest again in full: the best is never brief, every other valid variant is, and each
 * still validated (exact values). SpGEMM, SpMV and SpMM (K = 33: not a multiple of 4). */
static void check_brief(const char *label, const sd_csr *a, sd_op op, int k)
{
    float *xb = NULL;
    if (op != SD_OP_SPGEMM) {
        size_t n = (size_t)a->cols * (size_t)(op == SD_OP_SPMM ? k : 1);
        xb = malloc((n ? n : 1) * sizeof *xb);
        if (xb == NULL) {
            SDT_CHECK(0, "%s: out of host memory", label);
            return;
        }
        sdi_gen_dense(xb, (int64_t)n, SDI_VALUES_SMALL_INT, sdt_seed);
    }
    sdi_baseline_options o = {.k = k, .aat = 0, .exact = 1, .brief_us = 1e-3};
    sdi_baseline b;
    long live0 = sdi_device_alloc_live();
    sd_status s = sdi_cusparse_baseline(g_ctx, a, op, xb, &o, &b);
    SDT_CHECK(s == SD_OK, "%s: %s", label, sd_last_error());
    SDT_CHECK(sdi_device_alloc_live() == live0, "%s: device memory released", label);
    if (s == SD_OK) {
        print_baseline(label, &b);
        SDT_CHECK(b.best >= 0 && !b.v[b.best].brief, "%s: the best variant was timed in full",
                  label);
        int nbrief = 0, nok = 0;
        for (int i = 0; i < b.nvariants; i++) {
            const sdi_variant_result *v = &b.v[i];
            if (v->status != SDI_VARIANT_OK)
                continue;
            nok++;
            SDT_CHECK(v->val.ok, "%s: %s: validated", label, v->name);
            if (i != b.best) {
                SDT_CHECK(v->brief, "%s: %s: not the best, timed briefly", label, v->name);
                SDT_CHECK(v->timing.pipelined_us == v->timing.mean_us,
                          "%s: %s: brief pipelined = mean", label, v->name);
            }
            nbrief += v->brief;
        }
        SDT_CHECK(nok >= 2, "%s: %d valid variants (need two to compare)", label, nok);
        printf("  brief variants: %d of %d\n", nbrief, b.nvariants);
    }
    free(xb);
}

static void test_brief(void)
{
    sd_csr a;
    gen_or_fail("uniform:rows=4000,deg=6,values=int", &a);
    check_brief("SpGEMM A*A, brief variants", &a, SD_OP_SPGEMM, 1);
    check_brief("SpMV, brief variants", &a, SD_OP_SPMV, 1);
    check_brief("SpMM K=33, brief variants", &a, SD_OP_SPMM, 33);
    sd_csr_free(&a);
}

/* A caller's reference (a search's) is borrowed, not computed again: the variants validate
 * against it as against their own; one for another task is refused by name, and a wrong
 * reference makes every variant fail validation (so it really is the one checked). */
static void test_borrowed_reference(void)
{
    sd_csr a, other;
    gen_or_fail("uniform:rows=4000,deg=6,values=int", &a);
    gen_or_fail("uniform:rows=4000,deg=7,values=int", &other);
    sdi_reference ref, wrong, dense;
    SDT_OK(sdi_reference_spgemm(&a, &a, &ref));
    SDT_OK(sdi_reference_spgemm(&other, &other, &wrong));
    float *x = malloc((size_t)a.cols * sizeof *x);
    SDT_CHECK(x != NULL, "host memory");
    for (int32_t i = 0; x != NULL && i < a.cols; i++)
        x[i] = (float)(i % 7) - 3.0f;
    SDT_OK(sdi_reference_dense(&a, SD_OP_SPMV, x, 1, 1, &dense));
    long live0 = sdi_device_alloc_live();
    sdi_baseline b;
    sdi_baseline_options o = {.aat = 0, .exact = 1, .ref = &ref};
    sd_status s = sdi_cusparse_baseline(g_ctx, &a, SD_OP_SPGEMM, NULL, &o, &b);
    SDT_CHECK(s == SD_OK && b.best >= 0, "borrowed reference: %s", sd_last_error());
    if (s == SD_OK) {
        SDT_CHECK(b.nnz_c == ref.c.nnz, "nnz(C) from the borrowed reference");
        for (int i = 0; i < b.nvariants; i++)
            if (b.v[i].status == SDI_VARIANT_OK)
                SDT_CHECK(b.v[i].val.ok, "%s: validated against the borrowed reference", b.v[i].name);
    }
    o.ref = &wrong;
    s = sdi_cusparse_baseline(g_ctx, &a, SD_OP_SPGEMM, NULL, &o, &b);
    SDT_CHECK(s == SD_OK && b.best < 0, "another product's reference: no variant validates");
    o.ref = &dense;
    s = sdi_cusparse_baseline(g_ctx, &a, SD_OP_SPGEMM, NULL, &o, &b);
    SDT_CHECK(s == SD_ERR_INVALID_ARG && strstr(sd_last_error(), "reference") != NULL,
              "an SpMV reference for SpGEMM refused: %s", sd_last_error());
    sdi_baseline_options d = {.exact = 1, .ref = &dense};
    s = sdi_cusparse_baseline(g_ctx, &a, SD_OP_SPMV, x, &d, &b);
    SDT_CHECK(s == SD_OK && b.best >= 0, "SpMV with a borrowed reference: %s", sd_last_error());
    d.exact = 0;
    s = sdi_cusparse_baseline(g_ctx, &a, SD_OP_SPMV, x, &d, &b);
    SDT_CHECK(s == SD_ERR_INVALID_ARG, "an exact reference for an inexact task refused");
    sdi_reference_free(&ref); /* with the device mirrors the checks built */
    sdi_reference_free(&wrong);
    sdi_reference_free(&dense);
    SDT_CHECK(sdi_device_alloc_live() == live0, "borrowed reference: device memory released");
    free(x);
    sd_csr_free(&a);
    sd_csr_free(&other);
}

static void test_real_matrix(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/suitesparse/bcsstk13.mtx.gz", SD_MATRICES_DIR);
    if (access(path, R_OK) != 0) {
        printf("  (%s not found: skipped)\n", path);
        return;
    }
    sd_csr a;
    sdi_mtx_info info;
    SDT_OK(sdi_csr_read_info(path, &a, &info));
    if (info.field == SDI_MTX_PATTERN)
        sdi_gen_values(&a, SDI_VALUES_UNIFORM, sdt_seed);
    run("bcsstk13 SpMV", &a, SD_OP_SPMV, 1, -1, 0, "csr_alg1");
    run("bcsstk13 SpMM K=32", &a, SD_OP_SPMM, 32, -1, 0, NULL);
    run("bcsstk13 SpGEMM", &a, SD_OP_SPGEMM, 0, -1, 0, "spgemm_alg1");
    sd_csr_free(&a);
}

static void test_filter_and_json(void)
{
    sd_csr a;
    gen_or_fail("stencil2d:n=64,values=int", &a);
    float *x = malloc((size_t)a.cols * sizeof *x);
    sdi_gen_dense(x, a.cols, SDI_VALUES_SMALL_INT, sdt_seed);
    sdi_baseline_options o = {.exact = 1, .only = "coo_alg2,csr_alg2"};
    sdi_baseline b;
    SDT_OK(sdi_cusparse_baseline(g_ctx, &a, SD_OP_SPMV, x, &o, &b));
    SDT_CHECK(b.nvariants == 2, "filter kept %d variants", b.nvariants);
    sdi_json j;
    sdi_json_init(&j, 0);
    sdi_baseline_json(&b, &j);
    SDT_OK(sdi_json_finish(&j));
    SDT_CHECK(j.buf != NULL && strstr(j.buf, "\"variants\"") && strstr(j.buf, "\"best\"") &&
                  strstr(j.buf, "coo_alg2"),
              "JSON: %s", j.buf ? j.buf : "(null)");
    sdi_json_free(&j);
    /* Bad arguments. */
    SDT_STATUS(sdi_cusparse_baseline(g_ctx, &a, SD_OP_SPMV, NULL, &o, &b), SD_ERR_INVALID_ARG);
    sdi_baseline_options bad_k = {.k = 0};
    SDT_STATUS(sdi_cusparse_baseline(g_ctx, &a, SD_OP_SPMM, x, &bad_k, &b),
               SD_ERR_INVALID_ARG);
    sd_csr r;
    gen_or_fail("uniform:rows=30,cols=40,deg=3", &r);
    sdi_baseline_options aa = {.aat = 0};
    SDT_STATUS(sdi_cusparse_baseline(g_ctx, &r, SD_OP_SPGEMM, NULL, &aa, &b),
               SD_ERR_INVALID_ARG);
    sd_csr_free(&r);
    free(x);
    sd_csr_free(&a);
}

/* An empty matrix: whatever cuSPARSE makes of it is recorded, nothing crashes. */
static void test_empty(void)
{
    sd_csr a;
    SDT_OK(sdi_csr_alloc(&a, 64, 64, 0));
    float x[64];
    for (int i = 0; i < 64; i++)
        x[i] = 1;
    sdi_baseline b;
    sdi_baseline_options o = {.exact = 1};
    sd_status s = sdi_cusparse_baseline(g_ctx, &a, SD_OP_SPMV, x, &o, &b);
    SDT_CHECK(s == SD_OK, "empty SpMV: %s", sd_last_error());
    if (s == SD_OK)
        print_baseline("SpMV empty 64x64", &b);
    sd_csr_free(&a);
}

/* Device allocations failing one after another: each is recorded or reported, and
 * no device memory stays allocated. */
static void test_device_fault_injection(void)
{
    sd_csr a;
    gen_or_fail("stencil2d:n=40,values=int", &a);
    float *x = malloc((size_t)a.cols * sizeof *x);
    sdi_gen_dense(x, a.cols, SDI_VALUES_SMALL_INT, sdt_seed);
    long live0 = sdi_device_alloc_live();
    sdi_baseline_options o = {.exact = 1, .only = "csr_alg1,sell32"};
    for (long n = 0; n < 12; n++) {
        sdi_baseline b;
        sdi_device_alloc_fail_after(n);
        sd_status s = sdi_cusparse_baseline(g_ctx, &a, SD_OP_SPMV, x, &o, &b);
        sdi_device_alloc_fail_after(-1);
        SDT_CHECK(s == SD_OK || s == SD_ERR_OUT_OF_MEMORY, "failure at %ld: %s (%s)", n,
                  sd_status_string(s), sd_last_error());
        if (s == SD_OK)
            for (int i = 0; i < b.nvariants; i++)
                SDT_CHECK(b.v[i].status == SDI_VARIANT_OK ||
                              b.v[i].status == SDI_VARIANT_OUT_OF_RESOURCES,
                          "failure at %ld: %s is %s (%s)", n, b.v[i].name,
                          sdi_variant_status_name(b.v[i].status), b.v[i].detail);
        SDT_CHECK(sdi_device_alloc_live() == live0, "no device leak after failure at %ld", n);
    }
    free(x);
    sd_csr_free(&a);
}

int main(void)
{
    sdt_init("test_baseline");
    sd_status s = sd_context_create(NULL, &g_ctx);
    if (s == SD_ERR_NO_DEVICE)
        return sdt_skip(sd_last_error());
    if (s != SD_OK) {
        printf("FAIL: sd_context_create: %s: %s\n", sd_status_string(s), sd_last_error());
        return 1;
    }
    SDT_RUN(test_filter_and_json);
    SDT_RUN(test_spmv);
    SDT_RUN(test_spmm);
    SDT_RUN(test_spgemm);
    SDT_RUN(test_brief);
    SDT_RUN(test_borrowed_reference);
    SDT_RUN(test_real_matrix);
    SDT_RUN(test_empty);
    SDT_RUN(test_device_fault_injection);
    sd_context_destroy(g_ctx);
    return sdt_finish();
}
