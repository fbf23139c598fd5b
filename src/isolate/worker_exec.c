/* src/isolate/worker_exec.c: the worker's side of a candidate: nvcc into a shared object
 * (loaded through the runtime's harness, runtime/harness.h) and the shared
 * validate-then-time routine that writes the reply record. Runs inside the worker
 * process only: a candidate's fault here ends the worker, not the tuner. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../gen/gen.h"
#include "worker.h"

/* The tuner's operand seed (src/tune/op_dense.c): a candidate is measured on the same operand in the
 * worker as in the tuner's process, so times and validation compare. */
#define CANDIDATE_SEED 0x5d1770

sd_status sdi_nvcc_shared(const char *src, const char *so, const char *arch, const char *log_path,
                          double timeout_s, double *compile_ms)
{
    char archopt[32];
    /* sm_90 → -arch=sm_90 (SASS for the device, no PTX JIT at load). */
    snprintf(archopt, sizeof archopt, "-arch=%s", arch && arch[0] ? arch : SD_NVRTC_ARCH_DEFAULT);
    char *argv[] = {(char *)sdi_config_get()->nvcc, (char *)"-shared", (char *)"-Xcompiler", (char *)"-fPIC",
                    (char *)"-O3", (char *)"-std=c++17", archopt, (char *)src, (char *)"-o", (char *)so, NULL};
    int code = -1;
    double t0 = sdi_now();
    sd_status s = sdi_subprocess_run(argv, log_path, timeout_s, &code);
    if (compile_ms)
        *compile_ms = (sdi_now() - t0) * 1e3;
    if (s != SD_OK)
        return SDI_ERR(SD_ERR_COMPILE, "nvcc: %s", sd_last_error());
    if (code != 0) {
        char tail[600];
        sdi_file_tail(log_path, 500, tail, sizeof tail);
        if (code < 0)
            return SDI_ERR(SD_ERR_COMPILE, "nvcc did not finish within %.0f s", timeout_s);
        return SDI_ERR(SD_ERR_COMPILE, "nvcc failed (exit %d): %s", code, tail);
    }
    return SD_OK;
}

/* ------------------------------------------------------------------ measurement */

typedef struct {
    const sdi_candidate_exec *ex;
    float *d_in, *d_out;
    const sdi_reference *ref;
    sdi_validation val;
    int64_t rows;
} measure_arg;

static sd_status exec_fn(sd_context *ctx, void *arg, cudaStream_t stream)
{
    (void)ctx;
    measure_arg *m = arg;
    return m->ex->run(m->ex->arg, m->d_in, m->d_out, stream);
}

static sd_status check_fn(sd_context *ctx, void *arg)
{
    measure_arg *m = arg;
    if (m->rows == 0)
        return SD_OK;
    return sdi_check_dense_output(ctx, m->ref, m->d_out, &m->val);
}

sd_status sdi_candidate_measure(sd_context *ctx, const sd_csr *a, sd_op op, int k, const char *name,
                                const sdi_candidate_exec *ex, sdi_json *reply, bool *fatal)
{
    float *host_in = NULL;
    measure_arg m;
    memset(&m, 0, sizeof m);
    sdi_reference ref;
    memset(&ref, 0, sizeof ref);
    *fatal = false;
    int kk = op == SD_OP_SPMM ? k : 1;
    size_t in_n = (size_t)a->cols * (size_t)kk, out_n = (size_t)a->rows * (size_t)kk;
    sdi_timing t;
    memset(&t, 0, sizeof t);
    sd_status s = SD_OK;
    host_in = sdi_malloc_array(in_n ? in_n : 1, sizeof *host_in);
    if (host_in == NULL)
        s = SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for the dense operand");
    if (s == SD_OK) {
        sdi_gen_dense(host_in, (int64_t)in_n, SDI_VALUES_UNIFORM, CANDIDATE_SEED);
        s = sdi_reference_dense(a, op, host_in, kk, 0, &ref);
    }
    if (s == SD_OK)
        s = sdi_device_upload(ctx, (void **)&m.d_in, host_in, in_n * sizeof(float), "the dense operand");
    if (s == SD_OK)
        s = sdi_device_malloc(ctx, (void **)&m.d_out, out_n * sizeof(float), "the dense output");
    /* Poison: an output entry the candidate never writes fails validation. */
    if (s == SD_OK && out_n > 0)
        s = sdi_cuda_status(ctx, cudaMemsetAsync(m.d_out, 0xff, out_n * sizeof(float), ctx->stream),
                            "poisoning the output", NULL);
    m.ex = ex;
    m.ref = &ref;
    m.rows = a->rows;
    if (s == SD_OK)
        s = sdi_measure(ctx, name, exec_fn, &m, check_fn, &m, &t);
    *fatal = ctx->broken != 0;
    sdi_json_key(reply, "status");
    sdi_json_string(reply, s == SD_OK                  ? "ok"
                           : *fatal                    ? "fault"
                           : s == SD_ERR_VALIDATION ? "invalid"
                                                       : "error");
    if (s != SD_OK) {
        sdi_json_key(reply, "detail");
        sdi_json_string(reply, s == SD_ERR_VALIDATION && m.val.reason[0] ? m.val.reason : sd_last_error());
    }
    sdi_json_key(reply, "validation");
    sdi_json_begin_object(reply);
    sdi_json_key(reply, "ok");
    sdi_json_bool(reply, s == SD_OK);
    sdi_json_key(reply, "checked");
    sdi_json_int(reply, m.val.n_checked);
    sdi_json_key(reply, "violations");
    sdi_json_int(reply, m.val.n_violations);
    sdi_json_key(reply, "worst_ratio");
    sdi_json_number(reply, m.val.ratio);
    sdi_json_end_object(reply);
    if (s == SD_OK) {
        sdi_json_key(reply, "timing");
        sdi_timing_json(reply, &t);
        if (ctx->copy_bw > 0) {
            double lim = sdi_roofline_bytes(op, a->rows, a->cols, a->nnz, kk) / ctx->copy_bw * 1e6;
            sdi_json_key(reply, "roofline_frac");
            sdi_json_number(reply, t.mean_us > 0 ? lim / t.mean_us : 0);
        }
    }
    sdi_device_free(m.d_in);
    sdi_device_free(m.d_out);
    sdi_reference_free(&ref);
    sdi_free(host_in);
    return s;
}
