/* src/vendor/baseline_dense.c: the cuSPARSE SpMV and SpMM variants of the baseline:
 * SpMV CSR ALG1/ALG2, COO ALG1/ALG2, SELL-32; SpMM CSR ALG1-3, COO ALG1-4, Blocked-ELL
 * 16/32. Dense operands are row-major (the operator's contract), compute type FP32.
 * Each variant: build its format, size and allocate the workspace, preprocess, then
 * the measurement protocol with its first warm-up output validated. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../runtime/context.h"
#include "../runtime/device_memory.h"
#include "baseline_internal.h"
#include "../runtime/cs_format.h"

#define PAD_TO 32 /* dense operands are padded to the largest Blocked-ELL block */

static const float one = 1.0f, zero = 0.0f;

/* ------------------------------------------------------------------ one variant */

typedef struct {
    sdi_bl_state *bl;
    sdi_variant_result *v;
    sd_op op;
    int alg;
    cusparseSpMatDescr_t A;
    cusparseDnVecDescr_t x, y;
    cusparseDnMatDescr_t b, c;
    void *buf;
    const float *d_out;
    sdi_cs_error err;
} dense_arg;

static sd_status dense_exec(sd_context *ctx, void *p, cudaStream_t stream)
{
    (void)ctx;
    (void)stream; /* the handle is bound to ctx->stream, the protocol's stream */
    dense_arg *a = p;
    cusparseStatus_t st;
    if (a->op == SD_OP_SPMV) {
        st = cusparseSpMV(a->bl->h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, a->A, a->x, &zero,
                          a->y, CUDA_R_32F, (cusparseSpMVAlg_t)a->alg, a->buf);
        if (st != CUSPARSE_STATUS_SUCCESS)
            return sdi_cs_fail(&a->err, "cusparseSpMV", st);
    } else {
        st = cusparseSpMM(a->bl->h, CUSPARSE_OPERATION_NON_TRANSPOSE,
                          CUSPARSE_OPERATION_NON_TRANSPOSE, &one, a->A, a->b, &zero, a->c,
                          CUDA_R_32F, (cusparseSpMMAlg_t)a->alg, a->buf);
        if (st != CUSPARSE_STATUS_SUCCESS)
            return sdi_cs_fail(&a->err, "cusparseSpMM", st);
    }
    return SD_OK;
}

static sd_status dense_check(sd_context *ctx, void *p)
{
    dense_arg *a = p;
    return sdi_check_dense_output(ctx, a->bl->ref, a->d_out, &a->v->val);
}

/* After a cuSPARSE failure: a sticky CUDA error behind it ends the baseline. */
static sd_status after_cusparse_failure(sdi_bl_state *bl, sdi_variant_result *v)
{
    sd_status s = sdi_stream_sync(bl->ctx, "after a cuSPARSE failure in", v->name);
    if (s != SD_OK && bl->ctx->broken)
        return s;
    return SD_OK;
}

/* Runs one variant whose sparse descriptor A is ready (A is destroyed here): dense
 * descriptors over d_in (cols_eff × k) and d_out (rows_eff × k), workspace, optional
 * preprocessing, then the protocol (brief from sc's threshold; sc NULL: in full). Returns
 * SD_OK unless the baseline must stop. */
static sd_status run_variant(sdi_bl_state *bl, sdi_variant_result *v, cusparseSpMatDescr_t A,
                             int64_t rows_eff, int64_t cols_eff, int k, float *d_in,
                             float *d_out, int alg, bool preprocess, double t_setup0,
                             const sdi_screen *sc)
{
    sd_context *ctx = bl->ctx;
    dense_arg a;
    memset(&a, 0, sizeof a);
    a.bl = bl;
    a.v = v;
    a.op = bl->out->op;
    a.alg = alg;
    a.A = A;
    a.d_out = d_out;
    sd_status fatal = SD_OK, s;
    cusparseStatus_t st;
    const char *call;
    size_t bytes = 0;
    char note[128] = "";
    const cusparseOperation_t nt = CUSPARSE_OPERATION_NON_TRANSPOSE;
    if (a.op == SD_OP_SPMV) {
        call = "cusparseCreateDnVec";
        st = cusparseCreateDnVec(&a.x, cols_eff, d_in, CUDA_R_32F);
        if (st == CUSPARSE_STATUS_SUCCESS)
            st = cusparseCreateDnVec(&a.y, rows_eff, d_out, CUDA_R_32F);
        if (st == CUSPARSE_STATUS_SUCCESS) {
            call = "cusparseSpMV_bufferSize";
            st = cusparseSpMV_bufferSize(bl->h, nt, &one, A, a.x, &zero, a.y, CUDA_R_32F,
                                         (cusparseSpMVAlg_t)alg, &bytes);
        }
    } else {
        call = "cusparseCreateDnMat";
        st = cusparseCreateDnMat(&a.b, cols_eff, k, k, d_in, CUDA_R_32F, CUSPARSE_ORDER_ROW);
        if (st == CUSPARSE_STATUS_SUCCESS)
            st = cusparseCreateDnMat(&a.c, rows_eff, k, k, d_out, CUDA_R_32F,
                                     CUSPARSE_ORDER_ROW);
        if (st == CUSPARSE_STATUS_SUCCESS) {
            call = "cusparseSpMM_bufferSize";
            st = cusparseSpMM_bufferSize(bl->h, nt, nt, &one, A, a.b, &zero, a.c, CUDA_R_32F,
                                         (cusparseSpMMAlg_t)alg, &bytes);
        }
    }
    if (st != CUSPARSE_STATUS_SUCCESS) {
        sdi_bl_cusparse_failed(v, call, st);
        fatal = after_cusparse_failure(bl, v);
        goto done;
    }
    s = sdi_device_malloc(ctx, &a.buf, bytes, "the cuSPARSE workspace");
    if (s != SD_OK) {
        fatal = sdi_bl_failed(bl, v, s);
        goto done;
    }
    if (preprocess) {
        if (a.op == SD_OP_SPMV) {
            call = "cusparseSpMV_preprocess";
            st = cusparseSpMV_preprocess(bl->h, nt, &one, A, a.x, &zero, a.y, CUDA_R_32F,
                                         (cusparseSpMVAlg_t)alg, a.buf);
        } else {
            call = "cusparseSpMM_preprocess";
            st = cusparseSpMM_preprocess(bl->h, nt, nt, &one, A, a.b, &zero, a.c, CUDA_R_32F,
                                         (cusparseSpMMAlg_t)alg, a.buf);
        }
        /* Preprocessing is optional: where cuSPARSE refuses it, the variant runs
         * without (noted in its detail); a CUDA fault behind the refusal still stops. */
        if (st != CUSPARSE_STATUS_SUCCESS) {
            snprintf(note, sizeof note, "%s: %s (ran without)", call, cusparseGetErrorName(st));
            fatal = after_cusparse_failure(bl, v);
            if (fatal != SD_OK) {
                sdi_bl_cusparse_failed(v, call, st);
                goto done;
            }
        }
    }
    s = sdi_stream_sync(ctx, "cuSPARSE preprocessing of", v->name);
    if (s != SD_OK) {
        fatal = sdi_bl_failed(bl, v, s);
        goto done;
    }
    v->setup_ms = (sdi_now() - t_setup0) * 1e3;
    s = sdi_bl_poison(bl, d_out, (size_t)rows_eff * (size_t)k * sizeof(float));
    if (s != SD_OK) {
        fatal = sdi_bl_failed(bl, v, s);
        goto done;
    }
    sdi_timing t;
    sdi_measured how = SDI_MEASURED_FULL;
    s = sdi_measure_screened(ctx, v->name, dense_exec, &a, dense_check, &a, sc, &t, &how);
    if (s == SD_OK) {
        sdi_bl_measured(bl, v, &t);
        v->brief = how == SDI_MEASURED_BRIEF;
        snprintf(v->detail, sizeof v->detail, "%s", note);
    } else if (a.err.status != CUSPARSE_STATUS_SUCCESS) {
        sdi_bl_cusparse_failed(v, a.err.call, a.err.status);
        fatal = after_cusparse_failure(bl, v);
    } else {
        fatal = sdi_bl_failed(bl, v, s);
    }
done:
    if (a.x != NULL)
        cusparseDestroyDnVec(a.x);
    if (a.y != NULL)
        cusparseDestroyDnVec(a.y);
    if (a.b != NULL)
        cusparseDestroyDnMat(a.b);
    if (a.c != NULL)
        cusparseDestroyDnMat(a.c);
    if (A != NULL)
        cusparseDestroySpMat(A);
    sdi_device_free(a.buf);
    return fatal;
}

/* ------------------------------------------------------------------ variants */

/* Builds the format of def, creates A's descriptor and runs the variant into a new entry,
 * or into `again` (an entry measured briefly, now timed in full: sc NULL). */
static sd_status run_def(sdi_bl_state *bl, const sdi_cs_variant *def, int k, float *d_in,
                         float *d_out, const sdi_screen *sc, sdi_variant_result *again)
{
    sdi_variant_result *v = again != NULL ? again : sdi_bl_begin(bl, def->name);
    if (v == NULL)
        return SD_OK;
    double t0 = sdi_now();
    /* CSR and COO run on the arrays uploaded once for every variant; SELL and Blocked-ELL
     * are built here, within the baseline's limits. */
    sdi_cs_matrix own;
    memset(&own, 0, sizeof own);
    const sdi_cs_matrix *m = &bl->dev;
    char skip[256] = "";
    sd_status s = SD_OK;
    if (def->fmt == SDI_CS_SELL || def->fmt == SDI_CS_BELL) {
        const int ratio = bl->opt->max_padding_ratio > 0 ? bl->opt->max_padding_ratio : 64;
        s = sdi_cs_build(bl->ctx, bl->a, def, ratio, false, &own, skip, sizeof skip);
        m = &own;
    }
    cusparseSpMatDescr_t A = NULL;
    cusparseStatus_t st = CUSPARSE_STATUS_SUCCESS;
    const char *call = "";
    if (s == SD_OK && skip[0] == '\0')
        st = sdi_cs_descr(m, def->fmt, &A, &call);
    sd_status fatal = SD_OK;
    if (s != SD_OK) {
        fatal = sdi_bl_failed(bl, v, s);
    } else if (skip[0] != '\0') {
        v->status = SDI_VARIANT_SKIPPED;
        snprintf(v->detail, sizeof v->detail, "%s", skip);
    } else if (st != CUSPARSE_STATUS_SUCCESS) {
        sdi_bl_cusparse_failed(v, call, st);
    } else {
        fatal = run_variant(bl, v, A, m->rows_eff, m->cols_eff, k, d_in, d_out, def->alg,
                            def->preprocess, t0, sc);
    }
    sdi_cs_matrix_free(&own);
    return fatal;
}

/* The dense operands: input rows padded to PAD_TO (zero rows), output rows too. */
static sd_status dense_buffers(sdi_bl_state *bl, const float *host_in, int k, float **d_in,
                               float **d_out)
{
    const sd_csr *a = bl->a;
    size_t in_rows = ((size_t)a->cols + PAD_TO - 1) / PAD_TO * PAD_TO;
    size_t out_rows = ((size_t)a->rows + PAD_TO - 1) / PAD_TO * PAD_TO;
    if (in_rows == 0)
        in_rows = PAD_TO;
    if (out_rows == 0)
        out_rows = PAD_TO;
    size_t in_bytes = in_rows * (size_t)k * sizeof(float);
    sd_status s = sdi_device_malloc(bl->ctx, (void **)d_in, in_bytes, "the dense input");
    if (s == SD_OK)
        s = sdi_cuda_status(bl->ctx, cudaMemsetAsync(*d_in, 0, in_bytes, bl->ctx->stream),
                            "clearing the dense input", NULL);
    if (s == SD_OK)
        s = sdi_copy_to_device(bl->ctx, *d_in, host_in, (size_t)a->cols * k * sizeof(float),
                               "the dense input");
    if (s == SD_OK)
        s = sdi_device_malloc(bl->ctx, (void **)d_out, out_rows * (size_t)k * sizeof(float),
                              "the dense output");
    return s;
}

/* Every variant (briefly where the options ask, sdi_baseline_options.brief_us); then the
 * fastest, if brief, timed again in full, and again while a brief one is the fastest, so
 * the baseline's best is always timed in full. */
static sd_status run_all(sdi_bl_state *bl, sd_op op, const float *host_in, int k)
{
    int ndefs = 0;
    const sdi_cs_variant *defs = sdi_cs_variants(op, &ndefs);
    float *d_in = NULL, *d_out = NULL;
    sd_status s = dense_buffers(bl, host_in, k, &d_in, &d_out);
    const sdi_screen sc = {.brief_us = bl->opt != NULL ? bl->opt->brief_us : 0};
    const int first = bl->out->nvariants;
    for (int i = 0; s == SD_OK && i < ndefs; i++)
        s = run_def(bl, &defs[i], k, d_in, d_out, sc.brief_us > 0 ? &sc : NULL, NULL);
    for (int round = 0; s == SD_OK && round < ndefs; round++) {
        sdi_variant_result *best = sdi_bl_brief_fastest(bl, first);
        const sdi_cs_variant *best_def = NULL;
        for (int d = 0; best != NULL && d < ndefs; d++)
            if (strcmp(defs[d].name, best->name) == 0)
                best_def = &defs[d];
        if (best_def == NULL)
            break;
        s = run_def(bl, best_def, k, d_in, d_out, NULL, best);
    }
    sdi_device_free(d_in);
    sdi_device_free(d_out);
    return s;
}

sd_status sdi_bl_spmv(sdi_bl_state *bl, const float *x)
{
    return run_all(bl, SD_OP_SPMV, x, 1);
}

sd_status sdi_bl_spmm(sdi_bl_state *bl, const float *b, int k)
{
    return run_all(bl, SD_OP_SPMM, b, k);
}
