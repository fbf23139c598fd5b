/* tests/cpu/test_api.c: the public API's argument checks and failure contract without a
 * GPU, the offline planner (everything up to measurement), and `sparseditto compile`
 * without a device. */
#include <stdlib.h>

#include "analysis/gpu.h"
#include "gen/gen.h"
#include "runtime/runtime.h"
#include "sdt.h"
#include "plan/plan.h"
#include "tune/tune.h"

static int have_gpu(void)
{
    sd_context *ctx = NULL;
    sd_status s = sd_context_create(NULL, &ctx);
    sd_context_destroy(ctx);
    return s == SD_OK;
}

static void test_contract_basics(void)
{
    SDT_CHECK(sd_last_error() != NULL, "never NULL");
    SDT_CHECK(strcmp(sd_status_string((sd_status)-7), "unknown status") == 0, "range");
    sd_compile_options o = sd_compile_options_default();
    SDT_CHECK(o.budget == 0 && o.use_cache == 1 && o.allow_vendor == 1 && o.deterministic == 0 &&
                  o.report_path == NULL,
              "defaults");
    sd_kernel_destroy(NULL);
    sd_context_destroy(NULL);
    sd_device_csr_free(NULL);
    sd_device_csr z;
    memset(&z, 0, sizeof z);
    sd_device_csr_free(&z);
    sd_context *ctx = (sd_context *)0x1;
    sd_context_options bad = {-1, NULL, 0};
    SDT_STATUS(sd_context_create(&bad, &ctx), SD_ERR_INVALID_ARG);
    SDT_CHECK(ctx == NULL, "handle NULL after failure");
}

static void test_compile_argument_checks(void)
{
    sd_csr a;
    SDT_OK(sdi_gen("stencil2d:n=8", 1, &a));
    sd_kernel *k = (sd_kernel *)0x1;
    SDT_STATUS(sd_compile(NULL, &a, SD_OP_SPMV, 0, NULL, &k), SD_ERR_INVALID_ARG);
    SDT_CHECK(k == NULL, "kernel NULL after failure");
    SDT_STATUS(sd_compile(NULL, &a, SD_OP_SPMV, 0, NULL, NULL), SD_ERR_INVALID_ARG);
    /* A fake context is rejected before anything touches it only for the checks that
     * come first: operator, K, matrix. */
    sd_context *fake = (sd_context *)&a;
    SDT_STATUS(sd_compile(fake, &a, (sd_op)9, 0, NULL, &k), SD_ERR_INVALID_ARG);
    SDT_STATUS(sd_compile(fake, &a, SD_OP_SPMM, 0, NULL, &k), SD_ERR_INVALID_ARG);
    SDT_CHECK(strstr(sd_last_error(), "K >= 1") != NULL, "message '%s'", sd_last_error());
    SDT_STATUS(sd_compile(fake, &a, SD_OP_SPMM, 65537, NULL, &k), SD_ERR_UNSUPPORTED);
    sd_compile_options o = sd_compile_options_default();
    o.budget = -1;
    SDT_STATUS(sd_compile(fake, &a, SD_OP_SPMV, 0, &o, &k), SD_ERR_INVALID_ARG);
    /* A matrix that breaks the invariants: the message names the first offending row. */
    int32_t c0 = a.colind[a.rowptr[3]];
    a.colind[a.rowptr[3]] = a.cols + 5;
    SDT_STATUS(sd_compile(fake, &a, SD_OP_SPMV, 0, NULL, &k), SD_ERR_INVALID_ARG);
    SDT_CHECK(strstr(sd_last_error(), "row 3") != NULL, "message '%s'", sd_last_error());
    a.colind[a.rowptr[3]] = c0;
    float v0 = a.vals[0];
    a.vals[0] = INFINITY;
    SDT_STATUS(sd_compile(fake, &a, SD_OP_SPMV, 0, NULL, &k), SD_ERR_INVALID_ARG);
    a.vals[0] = v0;
    /* Entry points on a NULL kernel. */
    float buf[4];
    SDT_STATUS(sd_spmv(NULL, buf, buf, NULL), SD_ERR_INVALID_ARG);
    SDT_STATUS(sd_spmm(NULL, buf, buf, NULL), SD_ERR_INVALID_ARG);
    SDT_STATUS(sd_kernel_update_values(NULL, buf), SD_ERR_INVALID_ARG);
    SDT_STATUS(sd_kernel_describe(NULL, (char *)buf, sizeof buf), SD_ERR_INVALID_ARG);
    sd_device_csr c;
    memset(&c, 0x55, sizeof c);
    SDT_STATUS(sd_spgemm(NULL, &c, NULL), SD_ERR_INVALID_ARG);
    SDT_CHECK(c.rowptr == NULL && c.nnz == 0, "c_out zeroed after failure");
    sd_csr b;
    SDT_OK(sdi_gen("uniform:rows=5,cols=7,nnz=10", 1, &b));
    SDT_STATUS(sd_compile_spgemm(fake, &a, &b, NULL, &k), SD_ERR_INVALID_ARG);
    SDT_CHECK(strstr(sd_last_error(), "inner sizes") != NULL, "message '%s'", sd_last_error());
    SDT_CHECK(k == NULL, "kernel NULL after failure");
    /* SpGEMM: NULL arguments, a B that breaks the invariants (named as B). */
    SDT_STATUS(sd_compile_spgemm(NULL, &a, NULL, NULL, &k), SD_ERR_INVALID_ARG);
    SDT_STATUS(sd_compile_spgemm(fake, NULL, NULL, NULL, &k), SD_ERR_INVALID_ARG);
    SDT_STATUS(sd_compile_spgemm(fake, &a, NULL, NULL, NULL), SD_ERR_INVALID_ARG);
    sd_csr b2;
    SDT_OK(sdi_gen("uniform:rows=64,cols=9,deg=3", 1, &b2));
    b2.colind[b2.rowptr[2]] = -1;
    SDT_STATUS(sd_compile_spgemm(fake, &a, &b2, NULL, &k), SD_ERR_INVALID_ARG);
    SDT_CHECK(strstr(sd_last_error(), "B") != NULL && strstr(sd_last_error(), "row 2") != NULL,
              "message '%s'", sd_last_error());
    sd_csr_free(&b2);
    sd_csr_free(&b);
    sd_csr_free(&a);
}

static void test_no_device(void)
{
    if (have_gpu()) {
        printf("  (a GPU is present: the no-device path is not exercised here)\n");
        return;
    }
    sd_context *ctx = (sd_context *)0x1;
    SDT_STATUS(sd_context_create(NULL, &ctx), SD_ERR_NO_DEVICE);
    SDT_CHECK(ctx == NULL, "handle NULL");
    SDT_CHECK(sd_last_error()[0] != '\0', "a cause is named");
}

/* Everything up to measurement on the CPU: ranking, branches, lowering, NVRTC. */
static void test_offline_pipeline(void)
{
    const char *specs[] = {"stencil2d:n=64", "powerlaw:rows=3000,deg=8,alpha=1.9", "blockdiag:n=512,b=8"};
    sdi_gpu_props gpu;
    SDT_OK(sdi_gpu_profile("H200", &gpu));
    for (int op = 0; op < 2; op++) {
        for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
            sd_csr a;
            SDT_OK(sdi_gen(specs[i], 3, &a));
            sdi_tune_result *r = calloc(1, sizeof *r);
            sdi_json j;
            sdi_json_init(&j, 0);
            SDT_OK(sdi_tune_offline(&a, (sd_op)op, 8, &gpu, 3, 1, r, &j));
            SDT_OK(sdi_json_finish(&j));
            SDT_CHECK(r->ranking.n > 0 && r->ntrials >= 1, "%s: %d trials", specs[i], r->ntrials);
            int lowered = 0;
            for (int t = 0; t < r->ntrials; t++) {
                lowered += r->trials[t].status == SD_ERR_NO_DEVICE;
                SDT_CHECK(r->trials[t].status == SD_ERR_NO_DEVICE ||
                              r->trials[t].status == SD_ERR_UNSUPPORTED,
                          "%s op %d: %s: %s", specs[i], op, r->trials[t].config, r->trials[t].detail);
            }
            SDT_CHECK(lowered >= 1, "%s op %d: nothing lowered", specs[i], op);
            SDT_CHECK(r->ms_compile > 0, "%s op %d: NVRTC did not run", specs[i], op);
            SDT_CHECK(j.buf != NULL && strstr(j.buf, "\"M_rep\"") != NULL, "bounds in plans JSON");
            for (int q = 1; q < r->ranking.n; q++)
                SDT_CHECK(r->ranking.e[q - 1].energy <= r->ranking.e[q].energy, "ranking sorted");
            sdi_json_free(&j);
            free(r);
            sd_csr_free(&a);
        }
    }
}

/* Static bounds on a hand-checked example: 10x20, 30 nonzeros, SpMM K = 4. */
static void test_plan_bounds(void)
{
    sdi_gpu_props gpu;
    SDT_OK(sdi_gpu_profile("H200", &gpu));
    sdi_plan_bounds b;
    sdi_plan_bounds_compute(120, 128, 16, SD_OP_SPMM, 4, 10, 20, 30, &gpu, &b);
    SDT_CHECK(b.m_rep == 248 && b.d_read == 320 && b.d_write == 160, "rep %lld read %lld write %lld",
              (long long)b.m_rep, (long long)b.d_read, (long long)b.d_write);
    SDT_CHECK(b.m_r == 248 + 16 + 320 && b.m_t == b.m_r + 160, "M_R %lld M_T %lld", (long long)b.m_r,
              (long long)b.m_t);
    SDT_CHECK(fabs(b.q_r - (double)b.m_r / gpu.l2_bytes) < 1e-15, "q_R");
    SDT_CHECK(fabs(b.work_per_sm - 30.0 / gpu.sm_count) < 1e-12, "work per SM");
}

static void test_cli_compile_without_gpu(void)
{
    if (have_gpu())
        return;
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s compile --op spmv %s/../../examples/data/poisson2d_32.mtx >/dev/null 2>/tmp/sd-compile-err.$$; echo $? ; cat /tmp/sd-compile-err.$$; rm -f /tmp/sd-compile-err.$$",
             SD_CLI_PATH, SD_TEST_DATA_DIR);
    FILE *p = popen(cmd, "r");
    SDT_CHECK(p != NULL, "popen");
    if (p == NULL)
        return;
    char out[4096] = {0};
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    pclose(p);
    SDT_CHECK(atoi(out) == 3, "exit code %d (want 3): %s", atoi(out), out);
    SDT_CHECK(strstr(out, "stopped after lowering and NVRTC compilation") != NULL, "says so: %s", out);
}

int main(void)
{
    sdt_init("test_api");
    /* These checks time NVRTC itself: the on-disk JIT cache (on by default) would serve
     * the kernels a previous run compiled. */
    setenv("SPARSEDITTO_JIT_CACHE", "0", 1);
    sdi_config_reload();
    SDT_RUN(test_contract_basics);
    SDT_RUN(test_compile_argument_checks);
    SDT_RUN(test_no_device);
    SDT_RUN(test_offline_pipeline);
    SDT_RUN(test_plan_bounds);
    SDT_RUN(test_cli_compile_without_gpu);
    return sdt_finish();
}
