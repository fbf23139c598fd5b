/* src/api/execute.c: running a compiled kernel — sd_spmv, sd_spmm, sd_spgemm,
 * sd_kernel_update_values, sd_kernel_describe, sd_kernel_destroy — and the order of calls
 * on one kernel (api/kernel.h). The execution path reaches the runtime, the core and the
 * formats alone (tests/cpu/cli_exec_link.sh links it so): nothing here plans, compiles or
 * searches. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "api/kernel.h"
#include "core/core.h"
#include "runtime/executable.h"

void sdi_kernel_free(sd_kernel *kern)
{
    if (kern == NULL)
        return;
    if (kern->done != NULL) {
        /* The last call may still use the arrays released below. After a sticky error
         * the wait fails too; nothing more can be done. */
        if (kern->done_live)
            (void)cudaEventSynchronize(kern->done);
        (void)cudaEventDestroy(kern->done);
        (void)cudaGetLastError();
        kern->done = NULL;
    }
    sdi_exe_free(&kern->exe);
    sd_csr_free(&kern->a);
    sd_csr_free(&kern->b);
    sdi_free(kern->plan_json);
    sdi_free(kern->record_json);
    pthread_mutex_destroy(&kern->lock);
    kern->magic = 0;
    sdi_free(kern);
}

static sd_status check_kernel(const sd_kernel *kern, const char *fn)
{
    if (kern == NULL || kern->magic != SDI_KERNEL_MAGIC)
        return SDI_ERR(SD_ERR_INVALID_ARG, "%s: kern is NULL or not a kernel", fn);
    return SD_OK;
}

/* Before a call's work: the device current, and the stream after the kernel's previous
 * call when that ran on another stream. Streams are told apart by their ids, not their
 * handles: cudaStreamPerThread names another stream in each thread, and a destroyed
 * stream's handle may come back for a new one. A stream being captured neither waits nor
 * records (*capturing): a captured node cannot wait for an event recorded outside the
 * capture, and the user orders the graph's launches. */
static sd_status call_begin(sd_kernel *kern, cudaStream_t stream, bool *capturing,
                            unsigned long long *stream_id, const char *fn)
{
    *capturing = false;
    *stream_id = 0;
    sd_status s = sdi_ctx_enter_run(kern->ctx);
    if (s != SD_OK) {
        sdi_error_prefix("%s", fn);
        return s;
    }
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    cudaError_t e = cudaStreamIsCapturing(stream, &cs);
    if (e == cudaSuccess) {
        *capturing = cs != cudaStreamCaptureStatusNone;
        if (*capturing)
            return SD_OK;
        e = cudaStreamGetId(stream, stream_id);
        if (e == cudaSuccess && kern->done_live && *stream_id != kern->done_stream_id)
            e = cudaStreamWaitEvent(stream, kern->done, 0);
    }
    if (e != cudaSuccess) {
        s = sdi_cuda_status(kern->ctx, e, "ordering the call after the kernel's previous one", NULL);
        sdi_error_prefix("%s", fn);
    }
    return s;
}

/* After a call's work was enqueued (s: its status): the kernel's `done` on its stream. */
static sd_status call_end(sd_kernel *kern, cudaStream_t stream, bool capturing,
                          unsigned long long stream_id, sd_status s, const char *fn)
{
    if (capturing)
        return s;
    cudaError_t e = cudaEventRecord(kern->done, stream);
    if (e == cudaSuccess) {
        kern->done_stream_id = stream_id;
        kern->done_live = true;
        return s;
    }
    if (s != SD_OK)
        return s; /* the call's own error is the one to report */
    s = sdi_cuda_status(kern->ctx, e, "recording the end of the call", NULL);
    sdi_error_prefix("%s", fn);
    return s;
}

/* The host waits for the kernel's last call (under kern->lock). */
static sd_status wait_last_call(sd_kernel *kern, const char *fn)
{
    if (!kern->done_live)
        return SD_OK;
    sd_status s = sdi_cuda_status(kern->ctx, cudaEventSynchronize(kern->done),
                                  "waiting for the kernel's last call", NULL);
    if (s != SD_OK) {
        sdi_error_prefix("%s", fn);
        return s;
    }
    kern->done_live = false;
    return SD_OK;
}

sd_status sd_kernel_update_values(sd_kernel *kern, const float *vals_host)
{
    sd_status s = check_kernel(kern, "sd_kernel_update_values");
    if (s != SD_OK)
        return s;
    /* A SpGEMM kernel for A·B takes A's values followed by B's. */
    const int64_t total = kern->a.nnz + (kern->has_b ? kern->b.nnz : 0);
    if (vals_host == NULL && total > 0)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sd_kernel_update_values: vals is NULL");
    for (int64_t e = 0; e < total; e++)
        if (!isfinite(vals_host[e]))
            return SDI_ERR(SD_ERR_INVALID_ARG, "sd_kernel_update_values: value %lld is not finite",
                           (long long)e);
    pthread_mutex_lock(&kern->lock);
    /* The device arrays are rewritten on the context's stream: the calls queued on the
     * callers' streams read the old values first. */
    s = wait_last_call(kern, "sd_kernel_update_values");
    if (s != SD_OK) {
        pthread_mutex_unlock(&kern->lock);
        return s;
    }
    if (kern->a.nnz > 0)
        memcpy(kern->a.vals, vals_host, (size_t)kern->a.nnz * sizeof *vals_host);
    if (kern->has_b && kern->b.nnz > 0)
        memcpy(kern->b.vals, vals_host + kern->a.nnz, (size_t)kern->b.nnz * sizeof *vals_host);
    s = sdi_exe_update_values(kern->ctx, &kern->exe, &kern->a, kern->has_b ? &kern->b : NULL);
    pthread_mutex_unlock(&kern->lock);
    return s;
}

static sd_status run_dense(sd_kernel *kern, sd_op op, const float *in, float *out, void *stream,
                           const char *fn)
{
    sd_status s = check_kernel(kern, fn);
    if (s != SD_OK)
        return s;
    if (kern->op != op)
        return SDI_ERR(SD_ERR_INVALID_ARG, "%s: the kernel was compiled for %s", fn,
                       kern->op == SD_OP_SPMV ? "SpMV" : kern->op == SD_OP_SPMM ? "SpMM" : "SpGEMM");
    if ((in == NULL && kern->a.cols > 0) || (out == NULL && kern->a.rows > 0))
        return SDI_ERR(SD_ERR_INVALID_ARG, "%s: input or output pointer is NULL", fn);
    /* 16-byte loads of x / B in some templates need aligned operands. */
    if (((uintptr_t)in & 15) != 0 || ((uintptr_t)out & 15) != 0)
        return SDI_ERR(SD_ERR_INVALID_ARG, "%s: operands must be 16-byte aligned (cudaMalloc is)", fn);
    if (kern->ctx->broken)
        return SDI_ERR(SD_ERR_CUDA, "%s: %s", fn, kern->ctx->broken_reason);
    pthread_mutex_lock(&kern->lock);
    bool capturing = false;
    unsigned long long sid = 0;
    s = call_begin(kern, (cudaStream_t)stream, &capturing, &sid, fn);
    if (s == SD_OK) {
        s = sdi_exe_run(kern->ctx, &kern->exe, in, out, (cudaStream_t)stream);
        s = call_end(kern, (cudaStream_t)stream, capturing, sid, s, fn);
    }
    pthread_mutex_unlock(&kern->lock);
    return s;
}

sd_status sd_spmv(sd_kernel *kern, const float *x, float *y, void *stream)
{
    return run_dense(kern, SD_OP_SPMV, x, y, stream, "sd_spmv");
}

sd_status sd_spmm(sd_kernel *kern, const float *b, float *c, void *stream)
{
    return run_dense(kern, SD_OP_SPMM, b, c, stream, "sd_spmm");
}

sd_status sd_spgemm(sd_kernel *kern, sd_device_csr *c_out, void *stream)
{
    if (c_out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sd_spgemm: c_out is NULL");
    memset(c_out, 0, sizeof *c_out);
    sd_status s = check_kernel(kern, "sd_spgemm");
    if (s != SD_OK)
        return s;
    if (kern->op != SD_OP_SPGEMM)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sd_spgemm: the kernel was compiled for %s",
                       kern->op == SD_OP_SPMV ? "SpMV" : "SpMM");
    if (kern->ctx->broken)
        return SDI_ERR(SD_ERR_CUDA, "sd_spgemm: %s", kern->ctx->broken_reason);
    pthread_mutex_lock(&kern->lock);
    bool capturing = false;
    unsigned long long sid = 0;
    s = call_begin(kern, (cudaStream_t)stream, &capturing, &sid, "sd_spgemm");
    if (s == SD_OK) {
        s = sdi_exe_run_spgemm(kern->ctx, &kern->exe, (cudaStream_t)stream, c_out);
        s = call_end(kern, (cudaStream_t)stream, capturing, sid, s, "sd_spgemm");
    }
    pthread_mutex_unlock(&kern->lock);
    return s;
}

sd_status sd_kernel_describe(const sd_kernel *kern, char *json, size_t cap)
{
    sd_status s = check_kernel(kern, "sd_kernel_describe");
    if (s != SD_OK)
        return s;
    char head[160];
    int hn = snprintf(head, sizeof head,
                      "{\"rows\":%d,\"cols\":%d,\"nnz\":%lld,\"from_cache\":%s,\"ready_ms\":%.3f,",
                      kern->a.rows, kern->a.cols, (long long)kern->a.nnz,
                      kern->from_cache ? "true" : "false", kern->ready_ms);
    const char *plan = kern->plan_json ? kern->plan_json : "null";
    const char *rec = kern->record_json ? kern->record_json : "null";
    size_t need = (size_t)hn + strlen("\"plan\":,\"search\":}") + strlen(plan) + strlen(rec) + 1;
    if (json == NULL || cap < need)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sd_kernel_describe: the buffer needs %zu bytes", need);
    snprintf(json, cap, "%s\"plan\":%s,\"search\":%s}", head, plan, rec);
    return SD_OK;
}

void sd_kernel_destroy(sd_kernel *kern)
{
    if (kern == NULL || kern->magic != SDI_KERNEL_MAGIC)
        return;
    sdi_kernel_free(kern);
}
