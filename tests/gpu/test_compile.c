/* tests/gpu/test_compile.c: the compiler through the public API on a GPU: sd_compile →
 * sd_spmv / sd_spmm validated against the CPU reference (exact small-integer values),
 * a second compile of the same pattern hits the cache, update_values, deterministic
 * mode, describe's buffer contract, graph capture of an execution, the search's brief
 * timing of candidates (its winner timed again in full). Skipped (exit 77) without a
 * device. */
#include <stdlib.h>
#include <unistd.h>

#include "core/json_parse.h"
#include "gen/gen.h"
#include "runtime/runtime.h"
#include "runtime/vendor_exec.h"
#include "sdt.h"
#include "tune/tune.h"

static sd_context *g_ctx;

/* Compiles, runs once on fresh buffers, validates exactly. Returns the kernel. */
static sd_kernel *compile_and_check(const char *what, const sd_csr *a, sd_op op, int k,
                                    const sd_compile_options *o, int expect_cache)
{
    sd_kernel *kern = NULL;
    double t0 = sdi_now();
    sd_status s = sd_compile(g_ctx, a, op, k, o, &kern);
    double secs = sdi_now() - t0;
    SDT_CHECK(s == SD_OK, "%s: sd_compile: %s", what, sd_last_error());
    if (s != SD_OK)
        return NULL;
    int width = op == SD_OP_SPMM ? k : 1;
    size_t nin = (size_t)a->cols * width, nout = (size_t)a->rows * width;
    float *h_in = malloc((nin + 1) * sizeof(float));
    sdi_gen_dense(h_in, (int64_t)nin, SDI_VALUES_SMALL_INT, sdt_seed + 7);
    sdi_reference ref;
    SDT_OK(sdi_reference_dense(a, op, h_in, width, 1, &ref));
    float *d_in = NULL, *d_out = NULL;
    SDT_OK(sdi_device_upload(g_ctx, (void **)&d_in, h_in, nin * sizeof(float), "in"));
    SDT_OK(sdi_device_malloc(g_ctx, (void **)&d_out, nout * sizeof(float), "out"));
    if (nout > 0)
        cudaMemset(d_out, 0xff, nout * sizeof(float));
    s = op == SD_OP_SPMV ? sd_spmv(kern, d_in, d_out, g_ctx->stream) : sd_spmm(kern, d_in, d_out, g_ctx->stream);
    SDT_CHECK(s == SD_OK, "%s: run: %s", what, sd_last_error());
    SDT_OK(sdi_stream_sync(g_ctx, what, NULL));
    sdi_validation val;
    memset(&val, 0, sizeof val);
    if (a->rows > 0)
        SDT_CHECK(sdi_check_dense_output(g_ctx, &ref, d_out, &val) == SD_OK, "%s: validation: %s", what,
                  val.reason[0] ? val.reason : sd_last_error());
    char *json = malloc(1 << 22);
    SDT_OK(sd_kernel_describe(kern, json, 1 << 22));
    int from_cache = strstr(json, "\"from_cache\":true") != NULL;
    if (expect_cache >= 0)
        SDT_CHECK(from_cache == expect_cache, "%s: from_cache %d, expected %d", what, from_cache, expect_cache);
    /* The search record names its winner (a fresh compile once recorded "none": the
     * winner had moved into the kernel before the record was written). */
    sdi_jvalue v;
    SDT_OK(sdi_json_parse(json, -1, &v));
    const char *wfam = sdi_jget_string(sdi_jget(sdi_jget(&v, "search"), "winner"), "family", "?");
    SDT_CHECK(strcmp(wfam, "none") != 0 && strcmp(wfam, "?") != 0, "%s: search winner family '%s'", what, wfam);
    /* A fresh search also times cuSPARSE's best captured into a graph (the report's second
     * baseline), validated first. */
    if (!from_cache && a->rows > 0 && sdi_config_get()->graphs) {
        double g = sdi_jget_number(sdi_jget(sdi_jget(sdi_jget(&v, "search"), "cusparse_best"), "graph_time"),
                                   "mean_us", 0);
        SDT_CHECK(g > 0, "%s: cuSPARSE's best in a graph was not measured", what);
    }
    sdi_jvalue_free(&v);
    const char *fam = strstr(json, "\"family\":\"");
    printf("  %-40s %s in %.2f s: %.60s\n", what, from_cache ? "cache hit " : "compiled  ", secs,
           fam ? fam + 10 : "?");
    free(json);
    free(h_in);
    sdi_reference_free(&ref);
    sdi_device_free(d_in);
    sdi_device_free(d_out);
    return kern;
}

static void test_compile_run_cache(void)
{
    const char *specs[] = {"stencil2d:n=100", "powerlaw:rows=20000,deg=12,alpha=1.8,max=3000",
                           "uniform:rows=3000,cols=50000,deg=9", "bimodal:rows=8000,cols=8000,short=3,long=400,frac=0.02"};
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
        sd_csr a;
        SDT_OK(sdi_gen(specs[i], 11, &a));
        sdi_gen_values(&a, SDI_VALUES_SMALL_INT, 5);
        const struct { sd_op op; int k; } tasks[] = {{SD_OP_SPMV, 1}, {SD_OP_SPMM, 8}, {SD_OP_SPMM, 33}};
        for (size_t t = 0; t < sizeof tasks / sizeof *tasks; t++) {
            char what[160];
            snprintf(what, sizeof what, "%s %s K=%d", specs[i], tasks[t].op == SD_OP_SPMV ? "spmv" : "spmm",
                     tasks[t].k);
            sd_compile_options o = sd_compile_options_default();
            o.budget = 8; /* keep the lane short; the benchmark runs the default budget */
            sd_kernel *k1 = compile_and_check(what, &a, tasks[t].op, tasks[t].k, &o, 0);
            sd_kernel *k2 = compile_and_check(what, &a, tasks[t].op, tasks[t].k, &o, 1);
            sd_kernel_destroy(k1);
            sd_kernel_destroy(k2);
        }
        sd_csr_free(&a);
    }
}

static void test_update_values_and_describe(void)
{
    sd_csr a;
    SDT_OK(sdi_gen("powerlaw:rows=5000,deg=10,alpha=2.0,max=800", 3, &a));
    sdi_gen_values(&a, SDI_VALUES_SMALL_INT, 1);
    sd_compile_options o = sd_compile_options_default();
    o.budget = 6;
    o.use_cache = 0;
    sd_kernel *kern = compile_and_check("update: first values", &a, SD_OP_SPMV, 1, &o, 0);
    if (kern == NULL) {
        sd_csr_free(&a);
        return;
    }
    sdi_gen_values(&a, SDI_VALUES_SMALL_INT, 99);
    SDT_OK(sd_kernel_update_values(kern, a.vals));
    /* Validate the kernel with the new values against a fresh reference. */
    float *h_x = malloc(a.cols * sizeof(float));
    sdi_gen_dense(h_x, a.cols, SDI_VALUES_SMALL_INT, 4);
    sdi_reference ref;
    SDT_OK(sdi_reference_dense(&a, SD_OP_SPMV, h_x, 1, 1, &ref));
    float *d_x = NULL, *d_y = NULL;
    SDT_OK(sdi_device_upload(g_ctx, (void **)&d_x, h_x, a.cols * sizeof(float), "x"));
    SDT_OK(sdi_device_malloc(g_ctx, (void **)&d_y, a.rows * sizeof(float), "y"));
    SDT_OK(sd_spmv(kern, d_x, d_y, g_ctx->stream));
    SDT_OK(sdi_stream_sync(g_ctx, "update", NULL));
    sdi_validation val;
    SDT_CHECK(sdi_check_dense_output(g_ctx, &ref, d_y, &val) == SD_OK, "after update: %s", val.reason);
    /* NaN values are rejected; misaligned pointers are rejected. */
    a.vals[3] = NAN;
    SDT_STATUS(sd_kernel_update_values(kern, a.vals), SD_ERR_INVALID_ARG);
    SDT_STATUS(sd_spmv(kern, d_x + 1, d_y, g_ctx->stream), SD_ERR_INVALID_ARG);
    SDT_STATUS(sd_spmm(kern, d_x, d_y, g_ctx->stream), SD_ERR_INVALID_ARG);
    /* Graph capture: execution allocates and synchronises nothing. */
    cudaStream_t cs;
    cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking);
    cudaGraph_t g;
    cudaGraphExec_t ge;
    cudaMemset(d_y, 0xff, a.rows * sizeof(float));
    SDT_CHECK(cudaStreamBeginCapture(cs, cudaStreamCaptureModeGlobal) == cudaSuccess, "begin capture");
    sd_status s = sd_spmv(kern, d_x, d_y, cs);
    SDT_CHECK(cudaStreamEndCapture(cs, &g) == cudaSuccess, "end capture");
    SDT_CHECK(s == SD_OK, "spmv under capture: %s", sd_last_error());
    SDT_CHECK(cudaGraphInstantiate(&ge, g, 0) == cudaSuccess, "instantiate");
    SDT_CHECK(cudaGraphLaunch(ge, cs) == cudaSuccess && cudaStreamSynchronize(cs) == cudaSuccess, "launch");
    SDT_CHECK(sdi_check_dense_output(g_ctx, &ref, d_y, &val) == SD_OK, "graph replay: %s", val.reason);
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(g);
    cudaStreamDestroy(cs);
    /* describe: too small a buffer names the size needed. */
    char small[8];
    SDT_STATUS(sd_kernel_describe(kern, small, sizeof small), SD_ERR_INVALID_ARG);
    SDT_CHECK(strstr(sd_last_error(), "needs") != NULL, "message '%s'", sd_last_error());
    SDT_STATUS(sd_kernel_describe(kern, NULL, 0), SD_ERR_INVALID_ARG);
    sdi_reference_free(&ref);
    sdi_device_free(d_x);
    sdi_device_free(d_y);
    free(h_x);
    sd_kernel_destroy(kern);
    sd_csr_free(&a);
}

static void test_deterministic(void)
{
    sd_csr a;
    SDT_OK(sdi_gen("powerlaw:rows=30000,deg=16,alpha=1.7,max=20000", 8, &a));
    sdi_gen_values(&a, SDI_VALUES_SMALL_INT, 8); /* compile_and_check compares exactly */
    sd_compile_options o = sd_compile_options_default();
    o.budget = 8;
    o.deterministic = 1;
    o.use_cache = 0;
    sd_kernel *kern = compile_and_check("deterministic spmm K=32", &a, SD_OP_SPMM, 32, &o, 0);
    if (kern != NULL) {
        char *json = malloc(1 << 22);
        SDT_OK(sd_kernel_describe(kern, json, 1 << 22));
        SDT_CHECK(strstr(json, "\"deterministic\":true") != NULL, "winner uses atomics");
        free(json);
    }
    sd_kernel_destroy(kern);
    sd_csr_free(&a);
}

/* The search's brief protocol (sdi_tune_options.brief_us, here below any execution so that
 * every candidate is brief): the winner's trial is measured again in full before it meets
 * cuSPARSE, whose fastest variant is timed in full too, while the other candidates keep
 * their brief (or screened) timing; the winner still validates. SpMV, SpMM and SpGEMM. */
static void test_search_brief(void)
{
    sd_csr a;
    SDT_OK(sdi_gen("powerlaw:rows=20000,deg=12,alpha=1.8,max=5000", 9, &a));
    const struct {
        sd_op op;
        int k;
    } tasks[] = {{SD_OP_SPMV, 1}, {SD_OP_SPMM, 32}, {SD_OP_SPGEMM, 1}};
    for (size_t q = 0; q < sizeof tasks / sizeof *tasks; q++) {
        sdi_tune_options to;
        memset(&to, 0, sizeof to);
        to.budget = 6;
        to.allow_vendor = 1;
        to.brief_us = 1e-3;
        sdi_tune_result *r = calloc(1, sizeof *r);
        if (r == NULL) {
            SDT_CHECK(0, "out of host memory");
            break;
        }
        const char *what = tasks[q].op == SD_OP_SPMV   ? "spmv"
                           : tasks[q].op == SD_OP_SPMM ? "spmm"
                                                       : "spgemm";
        sd_status s = sdi_tune(g_ctx, &a, tasks[q].op, tasks[q].k, &to, r);
        SDT_CHECK(s == SD_OK, "%s: sdi_tune: %s", what, sd_last_error());
        if (s == SD_OK) {
            int brief = 0, full = 0;
            for (int i = 0; i < r->ntrials; i++) {
                if (r->trials[i].status != SD_OK)
                    continue;
                brief += r->trials[i].measured == SDI_MEASURED_BRIEF;
                full += r->trials[i].measured == SDI_MEASURED_FULL;
            }
            SDT_CHECK(r->ours_trial >= 0 &&
                          r->trials[r->ours_trial].measured == SDI_MEASURED_FULL,
                      "%s: our winner timed in full", what);
            SDT_CHECK(full == 1 && brief >= 1, "%s: %d trials in full (the winner only), %d brief",
                      what, full, brief);
            SDT_CHECK(r->baseline != NULL && r->vendor_best >= 0 &&
                          !r->baseline->v[r->vendor_best].brief,
                      "%s: cuSPARSE's fastest timed in full", what);
            /* cuSPARSE's fallback timed through its executor, replaying its graph
             * (SpMV / SpMM with graphs on; this test's matrix has entries). */
            if (tasks[q].op != SD_OP_SPGEMM && sdi_config_get()->graphs)
                SDT_CHECK(r->vendor_graph_t.mean_us > 0,
                          "%s: cuSPARSE's best measured replayed as a graph", what);
            /* A cuSPARSE winner is timed as its executor runs: replayed as a graph where
             * the replay is no slower than the plain calls in either time, plainly
             * otherwise (and then its executor never replays). Whoever won is no slower
             * than cuSPARSE's own calls in either time. */
            if (r->baseline != NULL && r->vendor_best >= 0) {
                const sdi_timing *plain = &r->baseline->v[r->vendor_best].timing;
                SDT_CHECK(!sdi_tune_vendor_wins(&r->best_t, plain),
                          "%s: the winner (%.2f / %.2f us) no slower than cuSPARSE's calls "
                          "(%.2f / %.2f us)", what, r->best_t.mean_us, r->best_t.pipelined_us,
                          plain->mean_us, plain->pipelined_us);
            }
            if (r->winner_is_vendor && tasks[q].op != SD_OP_SPGEMM) {
                const bool g = sdi_tune_vendor_replays(&r->vendor_graph_t,
                                                       &r->baseline->v[r->vendor_best].timing);
                SDT_CHECK(r->winner_vendor_graph == g && r->best.vendor_plain == !g &&
                              r->best_t.mean_us == (g ? r->vendor_graph_t.mean_us
                                                      : r->baseline->v[r->vendor_best].timing.mean_us),
                          "%s: cuSPARSE's win timed as it runs (graph %d)", what, (int)g);
                /* Runs on the same pointers: from the second on, a replaying executor
                 * would replay. */
                const int kk = tasks[q].op == SD_OP_SPMM ? tasks[q].k : 1;
                float *d_in = NULL, *d_out = NULL;
                const bool mem = cudaMalloc((void **)&d_in, (size_t)a.cols * kk * sizeof(float)) == cudaSuccess &&
                                 cudaMalloc((void **)&d_out, (size_t)a.rows * kk * sizeof(float)) == cudaSuccess;
                SDT_CHECK(mem, "%s: device buffers for the fallback's runs", what);
                const long g0 = sdi_vendor_graph_runs(r->best.exe.vendor);
                sd_status rs = SD_OK;
                for (int i = 0; i < 3 && mem && rs == SD_OK; i++)
                    rs = sdi_exe_run(g_ctx, &r->best.exe, d_in, d_out, g_ctx->stream);
                SDT_CHECK(rs == SD_OK && cudaStreamSynchronize(g_ctx->stream) == cudaSuccess,
                          "%s: the fallback runs: %s", what, sd_last_error());
                const long replays = sdi_vendor_graph_runs(r->best.exe.vendor) - g0;
                SDT_CHECK(!mem || (g ? replays == 2 : replays == 0),
                          "%s: %ld of 3 runs replayed (graph %d)", what, replays, (int)g);
                cudaFree(d_in);
                cudaFree(d_out);
            }
            printf("  %-6s winner %s %.1f us (in full), %d candidates brief\n", what,
                   r->trials[r->ours_trial].config, r->trials[r->ours_trial].t.mean_us, brief);
        }
        sdi_tune_result_free(r);
        free(r);
    }
    sd_csr_free(&a);
}

int main(void)
{
    sdt_init("test_compile");
    char dir[128];
    snprintf(dir, sizeof dir, "/tmp/sd-test-compile-cache-%ld", (long)getpid());
    int rc = 0;
    if (!sdt_context_open(dir, &g_ctx, &rc))
        return rc;
    SDT_RUN(test_compile_run_cache);
    SDT_RUN(test_update_values_and_describe);
    SDT_RUN(test_deterministic);
    SDT_RUN(test_search_brief);
    sdt_context_close(g_ctx, dir);
    return sdt_finish();
}
