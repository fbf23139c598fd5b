/* src/runtime/cs_format.c: A on the device in the cuSPARSE formats, their descriptors and the
 * SpMV / SpMM variant table (cs_format.h). */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "../core/core.h"
#include "../formats/cs_layout.h"
#include "context.h"
#include "cs_format.h"
#include "device_memory.h"

/* ------------------------------------------------------------------ the context's handle */
sd_status sdi_cusparse_handle(sd_context *ctx, cusparseHandle_t *out)
{
    *out = NULL;
    sd_status s = SD_OK;
    pthread_mutex_lock(&ctx->cusparse_lock);
    if (ctx->cusparse == NULL) {
        cusparseHandle_t h = NULL;
        cusparseStatus_t st = cusparseCreate(&h);
        if (st != CUSPARSE_STATUS_SUCCESS)
            s = SDI_ERR(st == CUSPARSE_STATUS_ALLOC_FAILED ? SD_ERR_OUT_OF_MEMORY : SD_ERR_CUDA,
                        "cusparseCreate: %s (%s)", cusparseGetErrorName(st),
                        cusparseGetErrorString(st));
        else
            ctx->cusparse = h;
    }
    if (s == SD_OK) {
        cusparseStatus_t st = cusparseSetStream((cusparseHandle_t)ctx->cusparse, ctx->stream);
        if (st != CUSPARSE_STATUS_SUCCESS)
            s = SDI_ERR(SD_ERR_CUDA, "cusparseSetStream: %s", cusparseGetErrorName(st));
        else
            *out = (cusparseHandle_t)ctx->cusparse;
    }
    pthread_mutex_unlock(&ctx->cusparse_lock);
    return s;
}

void sdi_cusparse_release(sd_context *ctx)
{
    if (ctx->cusparse != NULL) {
        (void)cusparseDestroy((cusparseHandle_t)ctx->cusparse);
        ctx->cusparse = NULL;
    }
}

/* ------------------------------------------------------------------ failures */
sd_status sdi_cs_fail(sdi_cs_error *e, const char *call, cusparseStatus_t st)
{
    e->status = st;
    snprintf(e->call, sizeof e->call, "%s", call);
    return SDI_ERR(SD_ERR_CUDA, "%s: %s (%s)", call, cusparseGetErrorName(st),
                   cusparseGetErrorString(st));
}

/* ------------------------------------------------------------------ variants */

static const sdi_cs_variant spmv_defs[] = {
    {"csr_alg1", SDI_CS_CSR, 0, CUSPARSE_SPMV_CSR_ALG1, true},
    {"csr_alg2", SDI_CS_CSR, 0, CUSPARSE_SPMV_CSR_ALG2, true},
    {"coo_alg1", SDI_CS_COO, 0, CUSPARSE_SPMV_COO_ALG1, true},
    {"coo_alg2", SDI_CS_COO, 0, CUSPARSE_SPMV_COO_ALG2, true},
    {"sell32", SDI_CS_SELL, 0, CUSPARSE_SPMV_SELL_ALG1, true},
};

/* cusparseSpMM_preprocess helps CSR ALG1 and ALG3 and does nothing for the others. */
static const sdi_cs_variant spmm_defs[] = {
    {"csr_alg1", SDI_CS_CSR, 0, CUSPARSE_SPMM_CSR_ALG1, true},
    {"csr_alg2", SDI_CS_CSR, 0, CUSPARSE_SPMM_CSR_ALG2, false},
    {"csr_alg3", SDI_CS_CSR, 0, CUSPARSE_SPMM_CSR_ALG3, true},
    {"coo_alg1", SDI_CS_COO, 0, CUSPARSE_SPMM_COO_ALG1, false},
    {"coo_alg2", SDI_CS_COO, 0, CUSPARSE_SPMM_COO_ALG2, false},
    {"coo_alg3", SDI_CS_COO, 0, CUSPARSE_SPMM_COO_ALG3, false},
    {"coo_alg4", SDI_CS_COO, 0, CUSPARSE_SPMM_COO_ALG4, false},
    {"bell16", SDI_CS_BELL, 16, CUSPARSE_SPMM_BLOCKED_ELL_ALG1, false},
    {"bell32", SDI_CS_BELL, 32, CUSPARSE_SPMM_BLOCKED_ELL_ALG1, false},
};

const sdi_cs_variant *sdi_cs_variants(sd_op op, int *n)
{
    if (op == SD_OP_SPMV) {
        *n = (int)(sizeof spmv_defs / sizeof spmv_defs[0]);
        return spmv_defs;
    }
    if (op == SD_OP_SPMM) {
        *n = (int)(sizeof spmm_defs / sizeof spmm_defs[0]);
        return spmm_defs;
    }
    *n = 0;
    return NULL;
}

const sdi_cs_variant *sdi_cs_variant_find(sd_op op, const char *name)
{
    int n = 0;
    const sdi_cs_variant *defs = sdi_cs_variants(op, &n);
    for (int i = 0; i < n; i++)
        if (strcmp(defs[i].name, name) == 0)
            return &defs[i];
    return NULL;
}

/* ------------------------------------------------------------------ builders */

sd_status sdi_cs_check_input(sd_context *ctx, const sd_csr *a, const char *who)
{
    sd_status s = sdi_ctx_enter(ctx);
    if (s != SD_OK)
        return s;
    s = sdi_csr_check_structure(a);
    if (s != SD_OK)
        return s;
    if (a->nnz > INT32_MAX)
        return SDI_ERR(SD_ERR_UNSUPPORTED, "%s uses 32-bit indices; nnz = %lld exceeds them", who,
                       (long long)a->nnz);
    return SD_OK;
}

static sd_status upload(sd_context *ctx, sdi_cs_matrix *m, void **dst, const void *src,
                        size_t bytes, const char *what)
{
    sd_status s = sdi_device_upload(ctx, dst, src, bytes, what);
    if (s == SD_OK)
        m->bytes += bytes;
    return s;
}

static void init_shape(const sd_csr *a, sdi_cs_matrix *out)
{
    memset(out, 0, sizeof *out);
    out->rows = out->rows_eff = a->rows;
    out->cols = out->cols_eff = a->cols;
    out->nnz = a->nnz;
}

sd_status sdi_cs_build_csr(sd_context *ctx, const sd_csr *a, bool csr, bool coo,
                           const char *what, sdi_cs_matrix *out)
{
    init_shape(a, out);
    int32_t *idx = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(idx);                                                                     \
        sdi_cs_matrix_free(out);                                                           \
    } while (0)
    static const int32_t zero_i = 0;
    static const float zero_f = 0;
    const size_t n = a->nnz > 0 ? (size_t)a->nnz : 1;
    char name[64];
    if (csr) {
        idx = sdi_malloc_array((size_t)a->rows + 1, sizeof *idx);
        SD_CHECK_ALLOC(idx, "32-bit row offsets");
        for (int64_t i = 0; i <= a->rows; i++)
            idx[i] = (int32_t)a->rowptr[i];
        snprintf(name, sizeof name, "%s's row offsets", what);
        SD_TRY(upload(ctx, out, (void **)&out->d_rowptr, idx, ((size_t)a->rows + 1) * sizeof *idx,
                      name));
        sdi_free(idx);
        idx = NULL;
    }
    if (coo) {
        idx = sdi_calloc(n, sizeof *idx);
        SD_CHECK_ALLOC(idx, "COO row indices");
        for (int32_t i = 0; i < a->rows; i++)
            for (int64_t e = a->rowptr[i]; e < a->rowptr[i + 1]; e++)
                idx[e] = i;
        snprintf(name, sizeof name, "%s's COO row indices", what);
        SD_TRY(upload(ctx, out, (void **)&out->d_rowind, idx, n * sizeof *idx, name));
    }
    snprintf(name, sizeof name, "%s's column indices", what);
    SD_TRY(upload(ctx, out, (void **)&out->d_colind, a->nnz ? a->colind : &zero_i,
                  n * sizeof(int32_t), name));
    snprintf(name, sizeof name, "%s's values", what);
    SD_TRY(upload(ctx, out, (void **)&out->d_vals, a->nnz ? a->vals : &zero_f, n * sizeof(float),
                  name));
    out->nvals = (int64_t)n;
    sdi_free(idx);
    return SD_OK;
#undef SD_FREE_ALL
}

sd_status sdi_cs_build_sell(sd_context *ctx, const sd_csr *a, bool want_slot, sdi_cs_matrix *out,
                            char *skip, size_t cap)
{
    init_shape(a, out);
    skip[0] = '\0';
    sdi_cs_sell s;
    memset(&s, 0, sizeof s);
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_cs_sell_free(&s);                                                              \
        sdi_cs_matrix_free(out);                                                           \
    } while (0)
    const int slice = SDI_CS_SELL_SLICE;
    const int64_t total = sdi_cs_sell_slots(a, slice);
    const size_t dev_free = sdi_device_free_bytes();
    if (total > INT32_MAX || (double)total * 8 > 0.5 * (double)dev_free) {
        snprintf(skip, cap, "SELL-%d needs %lld slots (%.2f GiB): beyond 32-bit offsets or half "
                 "of the %.2f GiB of free device memory", slice, (long long)total,
                 (double)total * 8 / (1 << 30), (double)dev_free / (1 << 30));
        return SD_OK;
    }
    SD_TRY(sdi_cs_sell_build(a, slice, want_slot, &s));
    const size_t n = total > 0 ? (size_t)total : 1;
    SD_TRY(upload(ctx, out, (void **)&out->d_rowptr, s.off, ((size_t)s.nslices + 1) * sizeof *s.off,
                  "SELL slice offsets"));
    SD_TRY(upload(ctx, out, (void **)&out->d_colind, s.col, n * sizeof *s.col,
                  "SELL column indices"));
    SD_TRY(upload(ctx, out, (void **)&out->d_vals, s.val, n * sizeof *s.val, "SELL values"));
    out->nvals = total;
    out->slot = s.slot;
    s.slot = NULL;
    sdi_cs_sell_free(&s);
    return SD_OK;
#undef SD_FREE_ALL
}

sd_status sdi_cs_build_bell(sd_context *ctx, const sd_csr *a, int bs, int max_padding_ratio,
                            bool want_slot, sdi_cs_matrix *out, char *skip, size_t cap)
{
    init_shape(a, out);
    skip[0] = '\0';
    sdi_cs_bell b;
    memset(&b, 0, sizeof b);
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_cs_bell_free(&b);                                                              \
        sdi_cs_matrix_free(out);                                                           \
    } while (0)
    int64_t maxb = 0;
    SD_TRY(sdi_cs_bell_width(a, bs, &maxb));
    const int64_t nbr = ((int64_t)a->rows + bs - 1) / bs, nbc = ((int64_t)a->cols + bs - 1) / bs;
    out->bs = bs;
    out->rows_eff = nbr * bs;
    out->cols_eff = nbc * bs;
    out->ell_cols = maxb * bs;
    const double slots = (double)out->rows_eff * (double)out->ell_cols;
    const double bytes = slots * 4 + (double)nbr * (double)maxb * 4;
    const double nnz = (double)(a->nnz > 0 ? a->nnz : 1);
    const size_t dev_free = sdi_device_free_bytes();
    if (maxb == 0 || (max_padding_ratio > 0 && slots > (double)max_padding_ratio * nnz) ||
        bytes > 0.4 * (double)dev_free || slots > (double)INT32_MAX * 8) {
        char ratio[32] = "";
        if (max_padding_ratio > 0)
            snprintf(ratio, sizeof ratio, "%dx nnz and ", max_padding_ratio);
        snprintf(skip, cap, "Blocked-ELL-%d needs %.0f value slots (%.1fx nnz, %.2f GiB; "
                 "limits: %s40%% of %.2f GiB free)%s", bs, slots, slots / nnz,
                 bytes / (1 << 30), ratio, (double)dev_free / (1 << 30),
                 maxb == 0 ? "; A has no entries" : "");
        return SD_OK;
    }
    SD_TRY(sdi_cs_bell_build(a, bs, maxb, want_slot, &b));
    SD_TRY(upload(ctx, out, (void **)&out->d_colind, b.bcol, (size_t)(nbr * maxb) * sizeof *b.bcol,
                  "Blocked-ELL column indices"));
    SD_TRY(upload(ctx, out, (void **)&out->d_vals, b.val, (size_t)b.slots * sizeof *b.val,
                  "Blocked-ELL values"));
    out->nvals = b.slots;
    out->slot = b.slot;
    b.slot = NULL;
    sdi_cs_bell_free(&b);
    return SD_OK;
#undef SD_FREE_ALL
}

sd_status sdi_cs_build(sd_context *ctx, const sd_csr *a, const sdi_cs_variant *def,
                       int max_padding_ratio, bool want_slot, sdi_cs_matrix *out, char *skip,
                       size_t cap)
{
    skip[0] = '\0';
    switch (def->fmt) {
    case SDI_CS_CSR: return sdi_cs_build_csr(ctx, a, true, false, "A", out);
    case SDI_CS_COO: return sdi_cs_build_csr(ctx, a, false, true, "A", out);
    case SDI_CS_SELL: return sdi_cs_build_sell(ctx, a, want_slot, out, skip, cap);
    case SDI_CS_BELL:
        return sdi_cs_build_bell(ctx, a, def->bs, max_padding_ratio, want_slot, out, skip, cap);
    }
    return SDI_ERR(SD_ERR_INVALID_ARG, "cuSPARSE variant '%s': unknown format %d", def->name,
                   (int)def->fmt);
}

/* ------------------------------------------------------------------ descriptors */

cusparseStatus_t sdi_cs_descr(const sdi_cs_matrix *m, sdi_cs_format fmt,
                              cusparseSpMatDescr_t *A, const char **call)
{
    cusparseStatus_t st = CUSPARSE_STATUS_INVALID_VALUE;
    *call = "";
    switch (fmt) {
    case SDI_CS_CSR:
        *call = "cusparseCreateCsr";
        st = cusparseCreateCsr(A, m->rows, m->cols, m->nnz, m->d_rowptr, m->d_colind, m->d_vals,
                               CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                               CUDA_R_32F);
        break;
    case SDI_CS_COO:
        *call = "cusparseCreateCoo";
        st = cusparseCreateCoo(A, m->rows, m->cols, m->nnz, m->d_rowind, m->d_colind, m->d_vals,
                               CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F);
        break;
    case SDI_CS_SELL:
        *call = "cusparseCreateSlicedEll";
        st = cusparseCreateSlicedEll(A, m->rows, m->cols, m->nnz, m->nvals, SDI_CS_SELL_SLICE,
                                     m->d_rowptr, m->d_colind, m->d_vals, CUSPARSE_INDEX_32I,
                                     CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F);
        break;
    case SDI_CS_BELL:
        *call = "cusparseCreateBlockedEll";
        st = cusparseCreateBlockedEll(A, m->rows_eff, m->cols_eff, m->bs, m->ell_cols,
                                      m->d_colind, m->d_vals, CUSPARSE_INDEX_32I,
                                      CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F);
        break;
    }
    if (st != CUSPARSE_STATUS_SUCCESS)
        *A = NULL;
    return st;
}

void sdi_cs_matrix_free(sdi_cs_matrix *m)
{
    sdi_device_free(m->d_rowptr);
    sdi_device_free(m->d_rowind);
    sdi_device_free(m->d_colind);
    sdi_device_free(m->d_vals);
    sdi_free(m->slot);
    memset(m, 0, sizeof *m);
}
