/* src/runtime/vendor_exec.c: the cuSPARSE executor (vendor_exec.h): one baseline variant built
 * once for a matrix (format, descriptor, workspace, preprocessing) and run on the
 * caller's device pointers without allocating or synchronising. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cusparse.h>

#include "context.h"
#include "cs_format.h"
#include "device_memory.h"
#include "program.h"
#include "vendor_exec.h"

#define VENDOR_MAGIC 0x5344564eu /* "SDVN" */
#define SCRATCH_MIN 256 /* scratch operands are never empty (cuSPARSE rejects NULL) */

static const float one = 1.0f, zero = 0.0f;

struct sdi_vendor {
    uint32_t magic;
    sd_context *ctx;
    int device;
    const sdi_cs_variant *def; /* the baseline's variant (format.h) */
    sd_op op;
    int k; /* 1 for SpMV */
    int32_t rows, cols;
    int64_t nnz;
    bool preprocessed;
    cusparseHandle_t h; /* one per executor: no stream or descriptor races between kernels */
    cusparseSpMatDescr_t A;
    cusparseDnVecDescr_t x, y;
    cusparseDnMatDescr_t b, c;
    void *buf;
    sdi_cs_matrix m; /* A on the device in the variant's format */
    /* Blocked-ELL staging operands, present only when rows / cols are not multiples of
     * the block: padded B (zero pad rows) and padded C. */
    float *d_bpad, *d_cpad;
    size_t dev_bytes;
    pthread_mutex_t lock;
    bool lock_ready;
    /* Replay through a CUDA graph (see sdi_vendor_run): the graph of one run on
     * (graph_in, graph_out), captured on cap_stream; the last pointers seen (seen_in,
     * seen_out) so that only a pair used twice in a row is captured. */
    bool use_graph, graph_failed;
    cudaStream_t cap_stream;
    cudaGraphExec_t graph;
    const float *graph_in, *seen_in;
    float *graph_out, *seen_out;
    long graph_runs;
};

/* ------------------------------------------------------------------ helpers */

static const char *op_label(sd_op op) { return op == SD_OP_SPMV ? "SpMV" : "SpMM"; }

const char *sdi_vendor_variant(sd_op op, int i)
{
    int n = 0;
    const sdi_cs_variant *defs = sdi_cs_variants(op, &n);
    return i >= 0 && i < n ? defs[i].name : NULL;
}

/* A cuSPARSE failure as a status: refusals are SD_ERR_UNSUPPORTED (as the baseline
 * classifies them), resource failures SD_ERR_OUT_OF_MEMORY. */
static sd_status cs_status(const char *call, cusparseStatus_t st)
{
    sd_status s;
    switch (st) {
    case CUSPARSE_STATUS_NOT_SUPPORTED:
    case CUSPARSE_STATUS_ARCH_MISMATCH:
    case CUSPARSE_STATUS_INVALID_VALUE:
        s = SD_ERR_UNSUPPORTED;
        break;
    case CUSPARSE_STATUS_ALLOC_FAILED:
    case CUSPARSE_STATUS_INSUFFICIENT_RESOURCES:
        s = SD_ERR_OUT_OF_MEMORY;
        break;
    default:
        s = SD_ERR_CUDA;
        break;
    }
    return SDI_ERR(s, "%s: %s (%s)", call, cusparseGetErrorName(st), cusparseGetErrorString(st));
}

/* During setup: a sticky CUDA fault behind a cuSPARSE failure is reported instead. */
static sd_status setup_failed(sdi_vendor *v, const char *call, cusparseStatus_t st)
{
    sd_status s = sdi_stream_sync(v->ctx, "after a cuSPARSE failure in", call);
    if (s != SD_OK)
        return s;
    return cs_status(call, st);
}

static sd_status dev_alloc(sdi_vendor *v, void **p, size_t bytes, const char *what)
{
    sd_status s = sdi_device_malloc(v->ctx, p, bytes, what);
    if (s == SD_OK)
        v->dev_bytes += bytes;
    return s;
}

/* Device memory cleared on ctx->stream (waited for by the setup's final sync). */
static sd_status dev_zeros(sdi_vendor *v, void **p, size_t bytes, const char *what)
{
    sd_status s = dev_alloc(v, p, bytes, what);
    if (s != SD_OK)
        return s;
    return sdi_cuda_status(v->ctx, cudaMemsetAsync(*p, 0, bytes, v->ctx->stream), what, NULL);
}

/* ------------------------------------------------------------------ setup */

/* A in the variant's format (format.h, as the baseline builds it, without its padding-ratio
 * limit), each entry's slot kept for value updates, and its sparse descriptor. */
static sd_status create_sparse(sdi_vendor *v, const sd_csr *a)
{
    char skip[256] = "";
    sd_status s = sdi_cs_build(v->ctx, a, v->def, 0, true, &v->m, skip, sizeof skip);
    if (s != SD_OK)
        return s;
    if (skip[0] != '\0')
        return SDI_ERR(SD_ERR_UNSUPPORTED, "%s", skip);
    v->dev_bytes += v->m.bytes;
    const char *call = "";
    cusparseStatus_t st = sdi_cs_descr(&v->m, v->def->fmt, &v->A, &call);
    if (st != CUSPARSE_STATUS_SUCCESS)
        return setup_failed(v, call, st);
    return SD_OK;
}

/* Dense descriptors over representative operands of the right shape (the pointers
 * change on every run), the workspace, and preprocessing. The scratch operands live
 * only through setup; Blocked-ELL staging operands stand in for them where present. */
static sd_status create_dense_and_buffer(sdi_vendor *v, bool preprocess)
{
    void *scratch_in = NULL, *scratch_out = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_device_free(scratch_in);                                                       \
        sdi_device_free(scratch_out);                                                      \
    } while (0)
    const cusparseOperation_t nt = CUSPARSE_OPERATION_NON_TRANSPOSE;
    size_t k = (size_t)v->k;
    size_t in_bytes = (size_t)v->m.cols_eff * k * sizeof(float);
    size_t out_bytes = (size_t)v->m.rows_eff * k * sizeof(float);
    void *in = NULL, *out = NULL;
    if (v->def->fmt == SDI_CS_BELL && v->m.cols_eff != v->cols) {
        SD_TRY(dev_zeros(v, (void **)&v->d_bpad, in_bytes, "the padded Blocked-ELL input"));
        in = v->d_bpad;
    } else {
        /* scratch is not the executor's: counted by the hooks, not in dev_bytes */
        SD_TRY(sdi_device_malloc(v->ctx, &scratch_in, in_bytes > SCRATCH_MIN ? in_bytes
                                                                              : SCRATCH_MIN,
                                 "a representative dense input"));
        SD_TRY(sdi_cuda_status(v->ctx, cudaMemsetAsync(scratch_in, 0, in_bytes, v->ctx->stream),
                               "clearing the representative dense input", NULL));
        in = scratch_in;
    }
    if (v->def->fmt == SDI_CS_BELL && v->m.rows_eff != v->rows) {
        SD_TRY(dev_zeros(v, (void **)&v->d_cpad, out_bytes, "the padded Blocked-ELL output"));
        out = v->d_cpad;
    } else {
        SD_TRY(sdi_device_malloc(v->ctx, &scratch_out, out_bytes > SCRATCH_MIN ? out_bytes
                                                                                : SCRATCH_MIN,
                                 "a representative dense output"));
        out = scratch_out;
    }
    cusparseStatus_t st;
    const char *call;
    size_t bytes = 0;
    if (v->op == SD_OP_SPMV) {
        call = "cusparseCreateDnVec";
        st = cusparseCreateDnVec(&v->x, v->m.cols_eff, in, CUDA_R_32F);
        if (st != CUSPARSE_STATUS_SUCCESS)
            v->x = NULL;
        if (st == CUSPARSE_STATUS_SUCCESS) {
            st = cusparseCreateDnVec(&v->y, v->m.rows_eff, out, CUDA_R_32F);
            if (st != CUSPARSE_STATUS_SUCCESS)
                v->y = NULL;
        }
        if (st == CUSPARSE_STATUS_SUCCESS) {
            call = "cusparseSpMV_bufferSize";
            st = cusparseSpMV_bufferSize(v->h, nt, &one, v->A, v->x, &zero, v->y, CUDA_R_32F,
                                         (cusparseSpMVAlg_t)v->def->alg, &bytes);
        }
    } else {
        call = "cusparseCreateDnMat";
        st = cusparseCreateDnMat(&v->b, v->m.cols_eff, v->k, v->k, in, CUDA_R_32F,
                                 CUSPARSE_ORDER_ROW);
        if (st != CUSPARSE_STATUS_SUCCESS)
            v->b = NULL;
        if (st == CUSPARSE_STATUS_SUCCESS) {
            st = cusparseCreateDnMat(&v->c, v->m.rows_eff, v->k, v->k, out, CUDA_R_32F,
                                     CUSPARSE_ORDER_ROW);
            if (st != CUSPARSE_STATUS_SUCCESS)
                v->c = NULL;
        }
        if (st == CUSPARSE_STATUS_SUCCESS) {
            call = "cusparseSpMM_bufferSize";
            st = cusparseSpMM_bufferSize(v->h, nt, nt, &one, v->A, v->b, &zero, v->c, CUDA_R_32F,
                                         (cusparseSpMMAlg_t)v->def->alg, &bytes);
        }
    }
    if (st != CUSPARSE_STATUS_SUCCESS) {
        sd_status s = setup_failed(v, call, st);
        SD_FREE_ALL;
        return s;
    }
    SD_TRY(dev_alloc(v, &v->buf, bytes, "the cuSPARSE workspace"));
    if (preprocess) {
        /* Once, here: the preprocessed workspace stays valid when a later call changes
         * only alpha, beta, the dense operands and A's values (cuSPARSE's rule for an
         * "active" buffer), which is all that sdi_vendor_run / _update_values change.
         * Redoing it per run is not an option: preprocessing may allocate or
         * synchronise, which graph capture forbids. */
        if (v->op == SD_OP_SPMV) {
            call = "cusparseSpMV_preprocess";
            st = cusparseSpMV_preprocess(v->h, nt, &one, v->A, v->x, &zero, v->y, CUDA_R_32F,
                                         (cusparseSpMVAlg_t)v->def->alg, v->buf);
        } else {
            call = "cusparseSpMM_preprocess";
            st = cusparseSpMM_preprocess(v->h, nt, nt, &one, v->A, v->b, &zero, v->c,
                                         CUDA_R_32F, (cusparseSpMMAlg_t)v->def->alg, v->buf);
        }
        if (st == CUSPARSE_STATUS_SUCCESS) {
            v->preprocessed = true;
        } else {
            /* Optional, as in the baseline: run without unless a CUDA fault is behind. */
            SD_TRY(sdi_stream_sync(v->ctx, "after a cuSPARSE failure in", call));
            sdi_log(1, "cuSPARSE executor %s %s: %s: %s (runs without)", op_label(v->op),
                    v->def->name, call, cusparseGetErrorName(st));
        }
    }
    /* The scratch operands go now: wait for everything that may read them. */
    SD_TRY(sdi_stream_sync(v->ctx, "cuSPARSE setup of", v->def->name));
    SD_FREE_ALL;
    return SD_OK;
#undef SD_FREE_ALL
}

static sd_status create_body(sdi_vendor *v, const sd_csr *a, bool preprocess)
{
    cusparseStatus_t st = cusparseCreate(&v->h);
    if (st != CUSPARSE_STATUS_SUCCESS) {
        v->h = NULL;
        return setup_failed(v, "cusparseCreate", st);
    }
    /* Setup work (uploads, preprocessing) goes on the context's stream. */
    st = cusparseSetStream(v->h, v->ctx->stream);
    if (st != CUSPARSE_STATUS_SUCCESS)
        return cs_status("cusparseSetStream", st);
    sd_status s = create_sparse(v, a);
    if (s != SD_OK)
        return s;
    return create_dense_and_buffer(v, preprocess);
}

sd_status sdi_vendor_create_ex(sd_context *ctx, const sd_csr *a, sd_op op, int k,
                               const char *variant, const sdi_vendor_options *opt,
                               sdi_vendor **out)
{
    if (out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sdi_vendor_create: out is NULL");
    *out = NULL;
    if (a == NULL || variant == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sdi_vendor_create: %s is NULL",
                       a == NULL ? "A" : "the variant name");
    if (op != SD_OP_SPMV && op != SD_OP_SPMM)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sdi_vendor_create: operator %d is not SpMV or SpMM",
                       (int)op);
    if (op == SD_OP_SPMM && (k < 1 || k > 65536))
        return SDI_ERR(SD_ERR_INVALID_ARG, "sdi_vendor_create: SpMM needs 1 <= K <= 65536 (got "
                       "%d)", k);
    const sdi_cs_variant *def = sdi_cs_variant_find(op, variant);
    if (def == NULL) {
        char known[256] = "";
        size_t used = 0;
        for (int i = 0; sdi_vendor_variant(op, i) != NULL; i++) {
            int n = snprintf(known + used, sizeof known - used, "%s%s", i ? ", " : "",
                             sdi_vendor_variant(op, i));
            if (n < 0 || (size_t)n >= sizeof known - used)
                break;
            used += (size_t)n;
        }
        return SDI_ERR(SD_ERR_UNSUPPORTED, "no cuSPARSE %s variant named '%s' (known: %s)",
                       op_label(op), variant, known);
    }
    char who[96];
    snprintf(who, sizeof who, "cuSPARSE %s variant '%s'", op_label(op), def->name);
    sd_status s = sdi_cs_check_input(ctx, a, who);
    if (s != SD_OK)
        return s;
    sdi_vendor *v = sdi_calloc(1, sizeof *v);
    if (v == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory allocating the cuSPARSE "
                       "executor");
    if (pthread_mutex_init(&v->lock, NULL) != 0) {
        sdi_free(v);
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "pthread_mutex_init failed for the cuSPARSE "
                       "executor");
    }
    v->lock_ready = true;
    v->ctx = ctx;
    v->device = ctx->device;
    v->def = def;
    v->op = op;
    v->k = op == SD_OP_SPMM ? k : 1;
    v->rows = a->rows;
    v->cols = a->cols;
    v->nnz = a->nnz;
    v->use_graph = sdi_config_get()->graphs && !(opt != NULL && opt->no_graph);
    double t0 = sdi_now();
    s = create_body(v, a, def->preprocess && !(opt != NULL && opt->no_preprocess));
    if (s != SD_OK) {
        sdi_error_prefix("cuSPARSE %s variant '%s'", op_label(op), def->name);
        sdi_vendor_destroy(v);
        return s;
    }
    v->magic = VENDOR_MAGIC;
    sdi_log(2, "cuSPARSE executor %s %s: %d x %d, nnz %lld, k %d: %zu device bytes, setup "
            "%.1f ms%s", op_label(op), def->name, a->rows, a->cols, (long long)a->nnz, v->k,
            v->dev_bytes, (sdi_now() - t0) * 1e3, v->preprocessed ? ", preprocessed" : "");
    *out = v;
    return SD_OK;
}

sd_status sdi_vendor_create(sd_context *ctx, const sd_csr *a, sd_op op, int k,
                            const char *variant, sdi_vendor **out)
{
    return sdi_vendor_create_ex(ctx, a, op, k, variant, NULL, out);
}

/* ------------------------------------------------------------------ run */

static sd_status check_live(const sdi_vendor *v, const char *fn)
{
    if (v == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "%s: the executor is NULL", fn);
    if (v->magic != VENDOR_MAGIC)
        return SDI_ERR(SD_ERR_INVALID_ARG, "%s: not a live cuSPARSE executor (destroyed or "
                       "corrupt)", fn);
    return SD_OK;
}

/* The context check for an execution (sdi_ctx_enter_run: legal during graph capture),
 * with this executor's name in the message of a context destroyed before it. */
static sd_status run_enter(sdi_vendor *v)
{
    sd_context *ctx = v->ctx;
    if (ctx == NULL || ctx->magic != SDI_CONTEXT_MAGIC)
        return SDI_ERR(SD_ERR_INVALID_ARG, "cuSPARSE executor %s: its context is not live "
                       "(destroyed before the executor?)", v->def->name);
    return sdi_ctx_enter_run(ctx);
}

/* The enqueueing proper; called with v->lock held. */
static sd_status run_locked(sdi_vendor *v, const float *in, float *out, cudaStream_t stream)
{
    const cusparseOperation_t nt = CUSPARSE_OPERATION_NON_TRANSPOSE;
    const char *name = v->def->name;
    cusparseStatus_t st = cusparseSetStream(v->h, stream);
    if (st != CUSPARSE_STATUS_SUCCESS)
        return cs_status("cusparseSetStream", st);
    if (v->op == SD_OP_SPMV) {
        /* cuSPARSE only reads x: the descriptor type is not const-qualified. */
        st = cusparseDnVecSetValues(v->x, (void *)in);
        if (st == CUSPARSE_STATUS_SUCCESS)
            st = cusparseDnVecSetValues(v->y, out);
        if (st != CUSPARSE_STATUS_SUCCESS)
            return cs_status("cusparseDnVecSetValues", st);
        st = cusparseSpMV(v->h, nt, &one, v->A, v->x, &zero, v->y, CUDA_R_32F,
                          (cusparseSpMVAlg_t)v->def->alg, v->buf);
        if (st != CUSPARSE_STATUS_SUCCESS)
            return cs_status("cusparseSpMV", st);
        return SD_OK;
    }
    size_t k = (size_t)v->k;
    const void *b = in;
    void *c = out;
    if (v->d_bpad != NULL) {
        /* A's padding columns meet the zero rows past cols (cleared once, never written). */
        cudaError_t e = cudaMemcpyAsync(v->d_bpad, in, (size_t)v->cols * k * sizeof(float),
                                        cudaMemcpyDeviceToDevice, stream);
        if (e != cudaSuccess)
            return sdi_cuda_status(v->ctx, e, "staging B into the padded Blocked-ELL input of",
                                   name);
        b = v->d_bpad;
    }
    if (v->d_cpad != NULL)
        c = v->d_cpad;
    st = cusparseDnMatSetValues(v->b, (void *)b);
    if (st == CUSPARSE_STATUS_SUCCESS)
        st = cusparseDnMatSetValues(v->c, c);
    if (st != CUSPARSE_STATUS_SUCCESS)
        return cs_status("cusparseDnMatSetValues", st);
    st = cusparseSpMM(v->h, nt, nt, &one, v->A, v->b, &zero, v->c, CUDA_R_32F,
                      (cusparseSpMMAlg_t)v->def->alg, v->buf);
    if (st != CUSPARSE_STATUS_SUCCESS)
        return cs_status("cusparseSpMM", st);
    if (v->d_cpad != NULL) {
        /* The padded rows of C stay behind; the first rows × k floats are contiguous. */
        cudaError_t e = cudaMemcpyAsync(out, v->d_cpad, (size_t)v->rows * k * sizeof(float),
                                        cudaMemcpyDeviceToDevice, stream);
        if (e != cudaSuccess)
            return sdi_cuda_status(v->ctx, e, "copying C out of the padded Blocked-ELL output of",
                                   name);
    }
    return SD_OK;
}

/* Captures one run on (in, out) into v->graph (replacing the previous pointers' graph
 * in place when cudaGraphExecUpdate accepts it). Called with v->lock held. On failure the
 * executor stops trying for good (plain runs) unless the context broke. */
static sd_status capture_graph(sdi_vendor *v, const float *in, float *out)
{
    sd_context *ctx = v->ctx;
    cudaGraph_t g = NULL;
    sd_status s = SD_OK;
    if (v->cap_stream == NULL)
        s = sdi_cuda_status(ctx, cudaStreamCreateWithFlags(&v->cap_stream, cudaStreamNonBlocking),
                            "creating the capture stream of", v->def->name);
    if (s == SD_OK)
        s = sdi_cuda_status(ctx, cudaStreamBeginCapture(v->cap_stream, cudaStreamCaptureModeThreadLocal),
                            "capturing", v->def->name);
    if (s == SD_OK) {
        sd_status run = run_locked(v, in, out, v->cap_stream);
        s = sdi_cuda_status(ctx, cudaStreamEndCapture(v->cap_stream, &g), "capturing", v->def->name);
        if (run != SD_OK)
            s = run;
    }
    if (s == SD_OK && v->graph != NULL) {
        cudaGraphExecUpdateResultInfo info;
        if (cudaGraphExecUpdate(v->graph, g, &info) != cudaSuccess) {
            (void)cudaGetLastError();
            (void)cudaGraphExecDestroy(v->graph);
            v->graph = NULL;
        }
    }
    if (s == SD_OK && v->graph == NULL)
        s = sdi_cuda_status(ctx, cudaGraphInstantiate(&v->graph, g, 0), "instantiating the graph of",
                            v->def->name);
    if (g != NULL)
        (void)cudaGraphDestroy(g);
    if (s == SD_OK) {
        v->graph_in = in;
        v->graph_out = out;
        return SD_OK;
    }
    if (v->graph != NULL)
        (void)cudaGraphExecDestroy(v->graph);
    v->graph = NULL;
    if (atomic_load(&ctx->broken))
        return s;
    sdi_log(2, "cuSPARSE %s: plain runs from now on (%s)", v->def->name, sd_last_error());
    sdi_error_clear();
    (void)cudaGetLastError();
    v->graph_failed = true;
    return SD_OK;
}

/* The graph path of a run, with v->lock held: *done = false leaves the run to
 * run_locked. */
static sd_status run_graph(sdi_vendor *v, const float *in, float *out, cudaStream_t stream,
                           bool *done)
{
    *done = false;
    if (!(v->graph != NULL && in == v->graph_in && out == v->graph_out)) {
        const bool again = in == v->seen_in && out == v->seen_out;
        v->seen_in = in;
        v->seen_out = out;
        if (!again)
            return SD_OK;
        sd_status s = capture_graph(v, in, out);
        if (s != SD_OK || v->graph_failed)
            return s;
    }
    *done = true;
    v->graph_runs++;
    return sdi_cuda_status(v->ctx, cudaGraphLaunch(v->graph, stream), "launching the graph of",
                           v->def->name);
}

sd_status sdi_vendor_run(sdi_vendor *v, const float *in, float *out, cudaStream_t stream)
{
    sd_status s = check_live(v, "sdi_vendor_run");
    if (s != SD_OK)
        return s;
    if (in == NULL || out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sdi_vendor_run (%s): %s is NULL", v->def->name,
                       in == NULL ? "the input" : "the output");
    if (((uintptr_t)in | (uintptr_t)out) % 16 != 0)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sdi_vendor_run (%s): cuSPARSE needs 16-byte aligned "
                       "dense operands (input %p, output %p)", v->def->name, (const void *)in,
                       (void *)out);
    s = run_enter(v);
    if (s != SD_OK)
        return s;
    if (v->nnz == 0) {
        /* Nothing for cuSPARSE to do: y = 0 (some algorithms may not write it). */
        size_t bytes = (size_t)v->rows * (size_t)v->k * sizeof(float);
        return sdi_cuda_status(v->ctx, cudaMemsetAsync(out, 0, bytes, stream),
                               "clearing the output of", v->def->name);
    }
    /* A stream the caller captures gets the calls themselves (they land in its graph). */
    const bool capturing = v->use_graph && sdi_stream_capturing(stream);
    bool done = false;
    pthread_mutex_lock(&v->lock);
    if (v->use_graph && !v->graph_failed && !capturing)
        s = run_graph(v, in, out, stream, &done);
    if (s == SD_OK && !done)
        s = run_locked(v, in, out, stream);
    pthread_mutex_unlock(&v->lock);
    if (s != SD_OK)
        sdi_error_prefix("cuSPARSE %s variant '%s'", op_label(v->op), v->def->name);
    return s;
}

long sdi_vendor_graph_runs(const sdi_vendor *v) { return v != NULL ? v->graph_runs : 0; }

/* ------------------------------------------------------------------ values */

sd_status sdi_vendor_update_values(sdi_vendor *v, const float *vals_host)
{
    sd_status s = check_live(v, "sdi_vendor_update_values");
    if (s != SD_OK)
        return s;
    if (vals_host == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sdi_vendor_update_values (%s): the values are NULL",
                       v->def->name);
    s = sdi_ctx_enter(v->ctx);
    if (s != SD_OK || v->nnz == 0)
        return s;
    if (v->m.slot == NULL)
        return sdi_copy_to_device(v->ctx, v->m.d_vals, vals_host, (size_t)v->nnz * sizeof(float),
                                  "A's new values");
    /* Gathered into the format's slots; padding slots stay zero. */
    float *tmp = sdi_calloc((size_t)v->m.nvals, sizeof *tmp);
    if (tmp == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory laying out A's new values for "
                       "%s (%lld floats)", v->def->name, (long long)v->m.nvals);
    for (int64_t e = 0; e < v->nnz; e++)
        tmp[v->m.slot[e]] = vals_host[e];
    s = sdi_copy_to_device(v->ctx, v->m.d_vals, tmp, (size_t)v->m.nvals * sizeof *tmp,
                           "A's new values");
    sdi_free(tmp);
    return s;
}

/* ------------------------------------------------------------------ queries, destroy */

const char *sdi_vendor_name(const sdi_vendor *v) { return v != NULL ? v->def->name : ""; }

bool sdi_vendor_preprocessed(const sdi_vendor *v) { return v != NULL && v->preprocessed; }

size_t sdi_vendor_device_bytes(const sdi_vendor *v) { return v != NULL ? v->dev_bytes : 0; }

void sdi_vendor_destroy(sdi_vendor *v)
{
    if (v == NULL)
        return;
    /* The handle and the memory belong to the executor's device. */
    if (cudaSetDevice(v->device) != cudaSuccess)
        (void)cudaGetLastError();
    if (v->A != NULL)
        (void)cusparseDestroySpMat(v->A);
    if (v->x != NULL)
        (void)cusparseDestroyDnVec(v->x);
    if (v->y != NULL)
        (void)cusparseDestroyDnVec(v->y);
    if (v->b != NULL)
        (void)cusparseDestroyDnMat(v->b);
    if (v->c != NULL)
        (void)cusparseDestroyDnMat(v->c);
    if (v->h != NULL)
        (void)cusparseDestroy(v->h);
    if (v->graph != NULL)
        (void)cudaGraphExecDestroy(v->graph);
    if (v->cap_stream != NULL)
        (void)cudaStreamDestroy(v->cap_stream);
    sdi_device_free(v->buf);
    sdi_cs_matrix_free(&v->m);
    sdi_device_free(v->d_bpad);
    sdi_device_free(v->d_cpad);
    if (v->lock_ready)
        pthread_mutex_destroy(&v->lock);
    v->magic = 0;
    sdi_free(v);
}
