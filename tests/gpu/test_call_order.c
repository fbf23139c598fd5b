/* tests/gpu/test_call_order.c: calls on one kernel run on the device in call order,
 * whatever their streams (sd_kernel's `done` event). A host function holds stream 1 for
 * HOLD_MS; a call queued behind it must hold back
 *   - a call on stream 2 (still not done HOLD_MS / 4 later, then both outputs valid), also
 *     when stream 1 was destroyed and stream 2 is new (it may get stream 1's handle),
 *   - sd_kernel_update_values (returns after the held call, which read the old values),
 * while a second call on stream 1 returns at once (the wait is the device's, not the
 * host's), and a capture on stream 2 after a call on stream 1 still records a graph that
 * replays correctly. SpMV and SpMM (K = 8), with and without cuSPARSE among the
 * candidates; SpGEMM calls alternating streams around an update are checked exactly (its
 * numeric stage may still run when sd_spgemm returns). The program runs itself again
 * with SPARSEDITTO_GRAPHS=0, where every call is a plain launch. Skipped (exit 77)
 * without a device. */
#include <stdlib.h>
#include <unistd.h>

#include "gen/gen.h"
#include "runtime/runtime.h"
#include "sdt.h"

#define HOLD_MS 200

static sd_context *g_ctx;
static cudaStream_t g_s1, g_s2;

static void CUDART_CB hold_stream(void *arg)
{
    (void)arg;
    usleep(HOLD_MS * 1000);
}

static sd_status call(sd_kernel *kern, sd_op op, const float *in, float *out, cudaStream_t s)
{
    return op == SD_OP_SPMV ? sd_spmv(kern, in, out, s) : sd_spmm(kern, in, out, s);
}

/* out against the reference of a (its current values) times h_in. */
static void check_output(const char *what, const sd_csr *a, sd_op op, int width, const float *h_in,
                         const float *d_out)
{
    sdi_reference ref;
    SDT_OK(sdi_reference_dense(a, op, h_in, width, 1, &ref));
    sdi_validation val;
    memset(&val, 0, sizeof val);
    SDT_CHECK(sdi_check_dense_output(g_ctx, &ref, d_out, &val) == SD_OK, "%s: %s", what,
              val.reason[0] ? val.reason : sd_last_error());
    sdi_reference_free(&ref);
}

static void dense_order(const char *spec, sd_op op, int k, int allow_vendor)
{
    char what[200];
    snprintf(what, sizeof what, "%s %s K=%d%s", spec, op == SD_OP_SPMV ? "spmv" : "spmm", k,
             allow_vendor ? "" : " (no vendor)");
    sd_csr a;
    SDT_OK(sdi_gen(spec, 21, &a));
    sdi_gen_values(&a, SDI_VALUES_SMALL_INT, 1);
    sd_compile_options o = sd_compile_options_default();
    o.budget = 4;
    o.use_cache = 0;
    o.allow_vendor = allow_vendor;
    sd_kernel *kern = NULL;
    SDT_OK(sd_compile(g_ctx, &a, op, k, &o, &kern));
    if (kern == NULL) {
        sd_csr_free(&a);
        return;
    }
    const int width = op == SD_OP_SPMM ? k : 1;
    const size_t nin = (size_t)a.cols * width, nout = (size_t)a.rows * width;
    float *h_in = malloc(nin * sizeof(float));
    sdi_gen_dense(h_in, (int64_t)nin, SDI_VALUES_SMALL_INT, 5);
    float *d_in = NULL, *d_out1 = NULL, *d_out2 = NULL;
    SDT_OK(sdi_device_upload(g_ctx, (void **)&d_in, h_in, nin * sizeof(float), "in"));
    SDT_OK(sdi_device_malloc(g_ctx, (void **)&d_out1, nout * sizeof(float), "out 1"));
    SDT_OK(sdi_device_malloc(g_ctx, (void **)&d_out2, nout * sizeof(float), "out 2"));

    /* 1. A call on stream 2 waits for the held call on stream 1. */
    cudaMemset(d_out1, 0xff, nout * sizeof(float));
    cudaMemset(d_out2, 0xff, nout * sizeof(float));
    cudaDeviceSynchronize();
    SDT_CHECK(cudaLaunchHostFunc(g_s1, hold_stream, NULL) == cudaSuccess, "%s: host function", what);
    SDT_OK(call(kern, op, d_in, d_out1, g_s1));
    double t0 = sdi_now();
    SDT_OK(call(kern, op, d_in, d_out2, g_s2));
    double issue = sdi_now() - t0;
    SDT_CHECK(issue < HOLD_MS * 1e-3 / 4, "%s: the call on stream 2 took %.3f s on the host", what, issue);
    usleep(HOLD_MS * 1000 / 4);
    cudaError_t q = cudaStreamQuery(g_s2);
    SDT_CHECK(q == cudaErrorNotReady, "%s: stream 2 is %s %.0f ms into stream 1's hold: its call "
              "did not wait for the held one", what, cudaGetErrorName(q), (sdi_now() - t0) * 1e3);
    SDT_CHECK(cudaDeviceSynchronize() == cudaSuccess, "%s: sync", what);
    check_output(what, &a, op, width, h_in, d_out1);
    check_output(what, &a, op, width, h_in, d_out2);

    /* 1b. The same through a stream destroyed behind its held call and a new one (whose
     * handle may be the old one's). */
    cudaStream_t s3 = NULL, s4 = NULL;
    SDT_CHECK(cudaStreamCreateWithFlags(&s3, cudaStreamNonBlocking) == cudaSuccess, "%s: stream", what);
    SDT_CHECK(cudaLaunchHostFunc(s3, hold_stream, NULL) == cudaSuccess, "%s: host function", what);
    SDT_OK(call(kern, op, d_in, d_out1, s3));
    cudaStreamDestroy(s3);
    SDT_CHECK(cudaStreamCreateWithFlags(&s4, cudaStreamNonBlocking) == cudaSuccess, "%s: stream", what);
    t0 = sdi_now();
    SDT_OK(call(kern, op, d_in, d_out2, s4));
    usleep(HOLD_MS * 1000 / 4);
    q = cudaStreamQuery(s4);
    SDT_CHECK(q == cudaErrorNotReady, "%s: a new stream%s is %s %.0f ms into the destroyed one's hold",
              what, s4 == s3 ? " (the destroyed one's handle)" : "", cudaGetErrorName(q),
              (sdi_now() - t0) * 1e3);
    SDT_CHECK(cudaDeviceSynchronize() == cudaSuccess, "%s: sync", what);
    cudaStreamDestroy(s4);

    /* 2. A second call on stream 1 is queued behind the hold without the host waiting. */
    SDT_CHECK(cudaLaunchHostFunc(g_s1, hold_stream, NULL) == cudaSuccess, "%s: host function", what);
    t0 = sdi_now();
    SDT_OK(call(kern, op, d_in, d_out1, g_s1));
    SDT_OK(call(kern, op, d_in, d_out1, g_s1));
    issue = sdi_now() - t0;
    SDT_CHECK(issue < HOLD_MS * 1e-3 / 4, "%s: two calls on the held stream took %.3f s on the host",
              what, issue);

    /* 3. An update waits for the held calls, which read the old values. */
    cudaMemset(d_out2, 0xff, nout * sizeof(float)); /* legacy stream: waits for nothing held */
    float *v2 = malloc(((size_t)a.nnz + 1) * sizeof(float));
    memcpy(v2, a.vals, (size_t)a.nnz * sizeof(float));
    for (int64_t e = 0; e < a.nnz; e++)
        v2[e] = v2[e] + 1.0f;
    t0 = sdi_now();
    SDT_OK(sd_kernel_update_values(kern, v2));
    double waited = sdi_now() - t0;
    SDT_CHECK(waited >= HOLD_MS * 1e-3 / 2, "%s: the update returned after %.3f s, before the held "
              "call ran", what, waited);
    SDT_CHECK(cudaStreamSynchronize(g_s1) == cudaSuccess, "%s: sync", what);
    check_output(what, &a, op, width, h_in, d_out1); /* the old values */
    memcpy(a.vals, v2, (size_t)a.nnz * sizeof(float));
    SDT_OK(call(kern, op, d_in, d_out2, g_s2));
    SDT_CHECK(cudaStreamSynchronize(g_s2) == cudaSuccess, "%s: sync", what);
    check_output(what, &a, op, width, h_in, d_out2); /* the new ones */

    /* 4. A capture on stream 2 after a call on stream 1: no wait is recorded into it. */
    SDT_OK(call(kern, op, d_in, d_out1, g_s1));
    SDT_CHECK(cudaStreamSynchronize(g_s1) == cudaSuccess, "%s: sync", what);
    cudaMemset(d_out2, 0xff, nout * sizeof(float));
    cudaDeviceSynchronize();
    cudaGraph_t g = NULL;
    cudaGraphExec_t ge = NULL;
    SDT_CHECK(cudaStreamBeginCapture(g_s2, cudaStreamCaptureModeGlobal) == cudaSuccess, "%s: capture", what);
    SDT_OK(call(kern, op, d_in, d_out2, g_s2));
    SDT_CHECK(cudaStreamEndCapture(g_s2, &g) == cudaSuccess, "%s: end capture: %s", what,
              cudaGetErrorString(cudaGetLastError()));
    if (g != NULL && cudaGraphInstantiate(&ge, g, 0) == cudaSuccess) {
        SDT_CHECK(cudaGraphLaunch(ge, g_s2) == cudaSuccess, "%s: graph launch", what);
        SDT_CHECK(cudaStreamSynchronize(g_s2) == cudaSuccess, "%s: sync", what);
        check_output(what, &a, op, width, h_in, d_out2);
        cudaGraphExecDestroy(ge);
    } else {
        SDT_CHECK(0, "%s: the captured call did not instantiate", what);
    }
    if (g != NULL)
        cudaGraphDestroy(g);
    (void)cudaGetLastError();

    /* 5. Destroy right after a held call: it waits, the output is still written. */
    cudaMemset(d_out1, 0xff, nout * sizeof(float));
    cudaDeviceSynchronize();
    SDT_CHECK(cudaLaunchHostFunc(g_s1, hold_stream, NULL) == cudaSuccess, "%s: host function", what);
    SDT_OK(call(kern, op, d_in, d_out1, g_s1));
    sd_kernel_destroy(kern);
    SDT_CHECK(cudaStreamSynchronize(g_s1) == cudaSuccess, "%s: sync after destroy", what);
    check_output(what, &a, op, width, h_in, d_out1);
    printf("  %-60s ordered\n", what);
    free(v2);
    free(h_in);
    sdi_device_free(d_in);
    sdi_device_free(d_out1);
    sdi_device_free(d_out2);
    sd_csr_free(&a);
}

static void test_spmv_spmm_order(void)
{
    const char *specs[] = {"powerlaw:rows=30000,deg=10,alpha=1.9,max=2000", "stencil2d:n=150"};
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i++)
        for (int vendor = 0; vendor <= 1; vendor++) {
            dense_order(specs[i], SD_OP_SPMV, 1, vendor);
            dense_order(specs[i], SD_OP_SPMM, 8, vendor);
        }
}

/* C against the reference of A·A, exactly (small-integer values). */
static void check_product(const char *what, const sd_csr *a, sd_device_csr *c)
{
    sdi_ref_csr want;
    memset(&want, 0, sizeof want);
    SDT_OK(sdi_ref_spgemm(a, a, &want));
    sd_csr got;
    memset(&got, 0, sizeof got);
    int ok = sdi_csr_alloc(&got, c->rows, c->cols, c->nnz) == SD_OK &&
             sdi_copy_to_host(g_ctx, got.rowptr, c->rowptr, ((size_t)c->rows + 1) * 8, "C rows") == SD_OK &&
             (c->nnz == 0 ||
              (sdi_copy_to_host(g_ctx, got.colind, c->colind, (size_t)c->nnz * 4, "C cols") == SD_OK &&
               sdi_copy_to_host(g_ctx, got.vals, c->vals, (size_t)c->nnz * 4, "C vals") == SD_OK));
    SDT_CHECK(ok, "%s: C back to the host: %s", what, sd_last_error());
    SDT_CHECK(got.nnz == want.nnz, "%s: nnz(C) %lld, want %lld", what, (long long)got.nnz,
              (long long)want.nnz);
    int bad = 0;
    for (int64_t e = 0; ok && got.nnz == want.nnz && e < got.nnz && bad < 3; e++)
        if (got.colind[e] != want.colind[e] || (double)got.vals[e] != want.vals[e]) {
            SDT_CHECK(0, "%s: entry %lld: (%d, %g), want (%d, %g)", what, (long long)e, got.colind[e],
                      got.vals[e], want.colind[e], want.vals[e]);
            bad++;
        }
    sd_csr_free(&got);
    sdi_ref_csr_free(&want);
}

static void test_spgemm_order(void)
{
    const char *spec = "powerlaw:rows=20000,deg=8,alpha=2.0,max=600";
    sd_csr a;
    SDT_OK(sdi_gen(spec, 31, &a));
    sdi_gen_values(&a, SDI_VALUES_SMALL_INT, 2);
    sd_compile_options o = sd_compile_options_default();
    o.budget = 3;
    o.use_cache = 0;
    for (int vendor = 0; vendor <= 1; vendor++) {
        o.allow_vendor = vendor;
        sd_kernel *kern = NULL;
        SDT_OK(sd_compile(g_ctx, &a, SD_OP_SPGEMM, 1, &o, &kern));
        if (kern == NULL)
            continue;
        sd_csr a1;
        SDT_OK(sdi_csr_copy(&a, &a1));
        sd_device_csr c[4];
        memset(c, 0, sizeof c);
        SDT_OK(sd_spgemm(kern, &c[0], g_s1));
        for (int64_t e = 0; e < a.nnz; e++)
            a.vals[e] = a.vals[e] == -1.0f ? 2.0f : a.vals[e] + 1.0f; /* no explicit zeros */
        SDT_OK(sd_kernel_update_values(kern, a.vals));
        SDT_OK(sd_spgemm(kern, &c[1], g_s2));
        SDT_OK(sd_spgemm(kern, &c[2], g_s1));
        SDT_OK(sd_spgemm(kern, &c[3], cudaStreamPerThread));
        SDT_CHECK(cudaDeviceSynchronize() == cudaSuccess, "spgemm: sync");
        char what[120];
        for (int i = 0; i < 4; i++) {
            snprintf(what, sizeof what, "%s spgemm%s call %d", spec, vendor ? "" : " (no vendor)", i + 1);
            check_product(what, i == 0 ? &a1 : &a, &c[i]);
            sd_device_csr_free(&c[i]);
        }
        printf("  %-60s ordered\n", what);
        sd_kernel_destroy(kern);
        sd_csr_free(&a1);
    }
    sd_csr_free(&a);
}

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    const char *plain = getenv("SPARSEDITTO_GRAPHS");
    sdt_init(plain != NULL && strcmp(plain, "0") == 0 ? "test_call_order (plain launches)"
                                                      : "test_call_order");
    int rc = 0;
    if (!sdt_context_open(NULL, &g_ctx, &rc))
        return rc;
    if (cudaStreamCreateWithFlags(&g_s1, cudaStreamNonBlocking) != cudaSuccess ||
        cudaStreamCreateWithFlags(&g_s2, cudaStreamNonBlocking) != cudaSuccess) {
        printf("streams: %s\n", cudaGetErrorString(cudaGetLastError()));
        return 1;
    }
    SDT_RUN(test_spmv_spmm_order);
    SDT_RUN(test_spgemm_order);
    cudaStreamDestroy(g_s1);
    cudaStreamDestroy(g_s2);
    sdt_context_close(g_ctx, NULL);
    rc = sdt_finish();
    if (plain == NULL) {
        /* Again with every call a plain launch (graphs order their own replays). */
        char exe[4096];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n <= 0) {
            printf("FAIL: cannot find this program to run it with SPARSEDITTO_GRAPHS=0\n");
            return 1;
        }
        exe[n] = '\0';
        char cmd[4200];
        snprintf(cmd, sizeof cmd, "SPARSEDITTO_GRAPHS=0 '%s'", exe);
        fflush(stdout);
        int crc = system(cmd);
        if (crc != 0) {
            printf("FAIL: the run with SPARSEDITTO_GRAPHS=0 (status %d)\n", crc);
            rc = 1;
        }
    }
    return rc;
}
