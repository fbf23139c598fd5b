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
#include "layout.h"

#define SELL_SLICE 32
#define PAD_TO 32 /* dense operands are padded to the largest Blocked-ELL block */

static const float one = 1.0f, zero = 0.0f;

typedef enum { FMT_CSR, FMT_COO, FMT_SELL, FMT_BELL16, FMT_BELL32 } fmt_kind;

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

/* ------------------------------------------------------------------ formats */

typedef struct {
    int32_t *d_idx; /* SELL column indices / Blocked-ELL block column indices */
    int32_t *d_off; /* SELL slice offsets */
    float *d_val;
    int64_t values; /* SELL values size / Blocked-ELL slots */
    int64_t ell_cols, rows_pad, cols_pad;
} fmt_arrays;

static void fmt_arrays_free(fmt_arrays *f)
{
    sdi_device_free(f->d_idx);
    sdi_device_free(f->d_off);
    sdi_device_free(f->d_val);
    memset(f, 0, sizeof *f);
}

/* Sliced ELL with slices of SELL_SLICE rows (layout.h, the executor's layout too).
 * *skip receives a reason when the format cannot be built within limits. */
static sd_status build_sell(sdi_bl_state *bl, fmt_arrays *f, char *skip, size_t cap)
{
    const sd_csr *a = bl->a;
    sdi_cs_sell s;
    memset(&s, 0, sizeof s);
#define SD_FREE_ALL sdi_cs_sell_free(&s)
    const int64_t total = sdi_cs_sell_slots(a, SELL_SLICE);
    size_t dev_free = sdi_device_free_bytes();
    if (total > INT32_MAX || (double)total * 8 > 0.5 * (double)dev_free) {
        snprintf(skip, cap, "SELL-%d needs %lld slots (%.2f GiB): beyond 32-bit offsets or "
                 "half the free device memory", SELL_SLICE, (long long)total,
                 (double)total * 8 / (1 << 30));
        return SD_OK;
    }
    SD_TRY(sdi_cs_sell_build(a, SELL_SLICE, false, &s));
    const size_t n = total > 0 ? (size_t)total : 1;
    f->values = total;
    SD_TRY(sdi_device_upload(bl->ctx, (void **)&f->d_off, s.off, ((size_t)s.nslices + 1) * sizeof *s.off,
                             "SELL slice offsets"));
    SD_TRY(sdi_device_upload(bl->ctx, (void **)&f->d_idx, s.col, n * sizeof *s.col,
                             "SELL column indices"));
    SD_TRY(sdi_device_upload(bl->ctx, (void **)&f->d_val, s.val, n * sizeof *s.val, "SELL values"));
    SD_FREE_ALL;
    return SD_OK;
#undef SD_FREE_ALL
}

/* Blocked-ELL with bs×bs blocks (layout.h, the executor's layout too), within
 * the padding ratio and 40 % of the free device memory (else *skip says why). */
static sd_status build_bell(sdi_bl_state *bl, int bs, fmt_arrays *f, char *skip, size_t cap)
{
    const sd_csr *a = bl->a;
    sdi_cs_bell b;
    memset(&b, 0, sizeof b);
#define SD_FREE_ALL sdi_cs_bell_free(&b)
    int64_t maxb = 0;
    SD_TRY(sdi_cs_bell_width(a, bs, &maxb));
    const int64_t nbr = ((int64_t)a->rows + bs - 1) / bs, nbc = ((int64_t)a->cols + bs - 1) / bs;
    f->rows_pad = nbr * bs;
    f->cols_pad = nbc * bs;
    f->ell_cols = maxb * bs;
    double slots = (double)f->rows_pad * (double)f->ell_cols;
    double bytes = slots * 4 + (double)nbr * (double)maxb * 4;
    int ratio = bl->opt->max_padding_ratio > 0 ? bl->opt->max_padding_ratio : 64;
    double limit_slots = (double)ratio * (double)(a->nnz > 0 ? a->nnz : 1);
    size_t dev_free = sdi_device_free_bytes();
    if (maxb == 0 || slots > limit_slots || bytes > 0.4 * (double)dev_free ||
        slots > (double)INT32_MAX * 8) {
        snprintf(skip, cap, "Blocked-ELL-%d needs %.0f value slots (%.1fx nnz, %.2f GiB; "
                 "limits: %dx nnz and 40%% of %.2f GiB free)%s", bs, slots,
                 slots / (double)(a->nnz > 0 ? a->nnz : 1), bytes / (1 << 30), ratio,
                 (double)dev_free / (1 << 30), maxb == 0 ? "; A has no entries" : "");
        return SD_OK;
    }
    SD_TRY(sdi_cs_bell_build(a, bs, maxb, false, &b));
    f->values = b.slots;
    SD_TRY(sdi_device_upload(bl->ctx, (void **)&f->d_idx, b.bcol,
                             (size_t)(nbr * maxb) * sizeof *b.bcol, "Blocked-ELL column indices"));
    SD_TRY(sdi_device_upload(bl->ctx, (void **)&f->d_val, b.val, (size_t)b.slots * sizeof *b.val,
                             "Blocked-ELL values"));
    SD_FREE_ALL;
    return SD_OK;
#undef SD_FREE_ALL
}

/* ------------------------------------------------------------------ variants */

typedef struct {
    const char *name;
    fmt_kind fmt;
    int alg;
    bool preprocess;
} variant_def;

static const variant_def spmv_defs[] = {
    {"csr_alg1", FMT_CSR, CUSPARSE_SPMV_CSR_ALG1, true},
    {"csr_alg2", FMT_CSR, CUSPARSE_SPMV_CSR_ALG2, true},
    {"coo_alg1", FMT_COO, CUSPARSE_SPMV_COO_ALG1, true},
    {"coo_alg2", FMT_COO, CUSPARSE_SPMV_COO_ALG2, true},
    {"sell32", FMT_SELL, CUSPARSE_SPMV_SELL_ALG1, true},
};

/* cusparseSpMM_preprocess helps CSR ALG1 and ALG3 and does nothing for the others. */
static const variant_def spmm_defs[] = {
    {"csr_alg1", FMT_CSR, CUSPARSE_SPMM_CSR_ALG1, true},
    {"csr_alg2", FMT_CSR, CUSPARSE_SPMM_CSR_ALG2, false},
    {"csr_alg3", FMT_CSR, CUSPARSE_SPMM_CSR_ALG3, true},
    {"coo_alg1", FMT_COO, CUSPARSE_SPMM_COO_ALG1, false},
    {"coo_alg2", FMT_COO, CUSPARSE_SPMM_COO_ALG2, false},
    {"coo_alg3", FMT_COO, CUSPARSE_SPMM_COO_ALG3, false},
    {"coo_alg4", FMT_COO, CUSPARSE_SPMM_COO_ALG4, false},
    {"bell16", FMT_BELL16, CUSPARSE_SPMM_BLOCKED_ELL_ALG1, false},
    {"bell32", FMT_BELL32, CUSPARSE_SPMM_BLOCKED_ELL_ALG1, false},
};

/* Builds the format of def, creates A's descriptor and runs the variant into a new entry,
 * or into `again` (an entry measured briefly, now timed in full: sc NULL). */
static sd_status run_def(sdi_bl_state *bl, const variant_def *def, int k, float *d_in,
                         float *d_out, const sdi_screen *sc, sdi_variant_result *again)
{
    sdi_variant_result *v = again != NULL ? again : sdi_bl_begin(bl, def->name);
    if (v == NULL)
        return SD_OK;
    const sd_csr *a = bl->a;
    double t0 = sdi_now();
    fmt_arrays f;
    memset(&f, 0, sizeof f);
    char skip[256] = "";
    sd_status s = SD_OK;
    cusparseSpMatDescr_t A = NULL;
    cusparseStatus_t st = CUSPARSE_STATUS_SUCCESS;
    const char *call = "";
    int64_t rows_eff = a->rows, cols_eff = a->cols;
    switch (def->fmt) {
    case FMT_CSR:
        call = "cusparseCreateCsr";
        st = cusparseCreateCsr(&A, a->rows, a->cols, a->nnz, bl->d_rowptr, bl->d_colind,
                               bl->d_vals, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                               CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F);
        break;
    case FMT_COO:
        call = "cusparseCreateCoo";
        st = cusparseCreateCoo(&A, a->rows, a->cols, a->nnz, bl->d_rowind, bl->d_colind,
                               bl->d_vals, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                               CUDA_R_32F);
        break;
    case FMT_SELL:
        s = build_sell(bl, &f, skip, sizeof skip);
        if (s == SD_OK && skip[0] == '\0') {
            call = "cusparseCreateSlicedEll";
            st = cusparseCreateSlicedEll(&A, a->rows, a->cols, a->nnz, f.values, SELL_SLICE,
                                         f.d_off, f.d_idx, f.d_val, CUSPARSE_INDEX_32I,
                                         CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                                         CUDA_R_32F);
        }
        break;
    case FMT_BELL16:
    case FMT_BELL32: {
        int bs = def->fmt == FMT_BELL16 ? 16 : 32;
        s = build_bell(bl, bs, &f, skip, sizeof skip);
        if (s == SD_OK && skip[0] == '\0') {
            call = "cusparseCreateBlockedEll";
            rows_eff = f.rows_pad;
            cols_eff = f.cols_pad;
            st = cusparseCreateBlockedEll(&A, f.rows_pad, f.cols_pad, bs, f.ell_cols, f.d_idx,
                                          f.d_val, CUSPARSE_INDEX_32I,
                                          CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F);
        }
        break;
    }
    }
    sd_status fatal = SD_OK;
    if (s != SD_OK) {
        fatal = sdi_bl_failed(bl, v, s);
    } else if (skip[0] != '\0') {
        v->status = SDI_VARIANT_SKIPPED;
        snprintf(v->detail, sizeof v->detail, "%s", skip);
    } else if (st != CUSPARSE_STATUS_SUCCESS) {
        sdi_bl_cusparse_failed(v, call, st);
        A = NULL;
    } else {
        fatal = run_variant(bl, v, A, rows_eff, cols_eff, k, d_in, d_out, def->alg,
                            def->preprocess, t0, sc);
    }
    fmt_arrays_free(&f);
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
static sd_status run_all(sdi_bl_state *bl, const variant_def *defs, int ndefs,
                         const float *host_in, int k)
{
    float *d_in = NULL, *d_out = NULL;
    sd_status s = dense_buffers(bl, host_in, k, &d_in, &d_out);
    const sdi_screen sc = {.brief_us = bl->opt != NULL ? bl->opt->brief_us : 0};
    const int first = bl->out->nvariants;
    for (int i = 0; s == SD_OK && i < ndefs; i++)
        s = run_def(bl, &defs[i], k, d_in, d_out, sc.brief_us > 0 ? &sc : NULL, NULL);
    for (int round = 0; s == SD_OK && round < ndefs; round++) {
        sdi_variant_result *best = sdi_bl_brief_fastest(bl, first);
        const variant_def *best_def = NULL;
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
    return run_all(bl, spmv_defs, (int)(sizeof spmv_defs / sizeof spmv_defs[0]), x, 1);
}

sd_status sdi_bl_spmm(sdi_bl_state *bl, const float *b, int k)
{
    return run_all(bl, spmm_defs, (int)(sizeof spmm_defs / sizeof spmm_defs[0]), b, k);
}
