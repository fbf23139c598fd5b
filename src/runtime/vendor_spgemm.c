/* src/runtime/vendor_spgemm.c: cuSPARSE's SpGEMM: the one call sequence the baseline times
 * and the executor runs (work estimation, (memory estimation,) compute and copy: symbolic +
 * numeric + compaction, into buffers kept between calls), its algorithms, and the executor
 * of a variant that won (vendor_exec.h). */
#include <stdio.h>
#include <string.h>

#include "../core/core.h"
#include "context.h"
#include "cs_format.h"
#include "device_memory.h"
#include "vendor_exec.h"

static const float one = 1.0f, zero = 0.0f;

static const sdi_cs_spgemm_def defs[] = {
    {"spgemm_alg1", CUSPARSE_SPGEMM_ALG1, 0.0f},
    {"spgemm_alg2", CUSPARSE_SPGEMM_ALG2, 1.0f},
    {"spgemm_alg3_c0.2", CUSPARSE_SPGEMM_ALG3, 0.2f},
    {"spgemm_alg3_c1.0", CUSPARSE_SPGEMM_ALG3, 1.0f},
};
#define NDEFS ((int)(sizeof defs / sizeof defs[0]))

const sdi_cs_spgemm_def *sdi_cs_spgemm_defs(int *n)
{
    *n = NDEFS;
    return defs;
}

/* ------------------------------------------------------------------ the call sequence */
static sd_status ensure_buffer(sd_context *ctx, sdi_cs_spgemm *g, int i, size_t need)
{
    if (need < 256)
        need = 256;
    if (g->buf[i] != NULL && g->cap[i] >= need)
        return SD_OK;
    sdi_device_free(g->buf[i]);
    g->buf[i] = NULL;
    g->cap[i] = 0;
    char what[64];
    snprintf(what, sizeof what, "cuSPARSE SpGEMM buffer %d", i);
    sd_status s = sdi_device_malloc(ctx, &g->buf[i], need, what);
    if (s == SD_OK)
        g->cap[i] = need;
    return s;
}

static sd_status ensure_output(sd_context *ctx, sdi_cs_spgemm *g, int64_t nnz)
{
    int64_t need = nnz > 0 ? nnz : 1;
    if (g->c_cap >= need)
        return SD_OK;
    sdi_device_free(g->d_ccol);
    sdi_device_free(g->d_cval);
    g->d_ccol = NULL;
    g->d_cval = NULL;
    g->c_cap = 0;
    sd_status s = sdi_device_malloc(ctx, (void **)&g->d_ccol, (size_t)need * sizeof(int32_t),
                                    "C's column indices");
    if (s == SD_OK)
        s = sdi_device_malloc(ctx, (void **)&g->d_cval, (size_t)need * sizeof(float),
                              "C's values");
    if (s == SD_OK)
        g->c_cap = need;
    return s;
}

#define CS(call, expr)                                                                     \
    do {                                                                                   \
        cusparseStatus_t st_ = (expr);                                                     \
        if (st_ != CUSPARSE_STATUS_SUCCESS) {                                              \
            s = sdi_cs_fail(&g->err, call, st_);                                           \
            goto done;                                                                     \
        }                                                                                  \
    } while (0)
#define TRY(expr)                                                                          \
    do {                                                                                   \
        s = (expr);                                                                        \
        if (s != SD_OK)                                                                    \
            goto done;                                                                     \
    } while (0)

/* One SpGEMM from scratch: C's structure and values from A and B on the device. */
sd_status sdi_cs_spgemm_exec(sd_context *ctx, void *p, cudaStream_t stream)
{
    (void)stream; /* the handle is bound to ctx->stream */
    sdi_cs_spgemm *g = p;
    cusparseHandle_t h = g->h;
    const cusparseOperation_t nt = CUSPARSE_OPERATION_NON_TRANSPOSE;
    cusparseSpMatDescr_t C = NULL;
    cusparseSpGEMMDescr_t d = NULL;
    sd_status s = SD_OK;
    CS("cusparseCreateCsr(C)",
       cusparseCreateCsr(&C, g->rows, g->cols_b, 0, g->d_crow, NULL, NULL, CUSPARSE_INDEX_32I,
                         CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
    CS("cusparseSpGEMM_createDescr", cusparseSpGEMM_createDescr(&d));
    size_t s1 = 0;
    CS("cusparseSpGEMM_workEstimation",
       cusparseSpGEMM_workEstimation(h, nt, nt, &one, g->A, g->B, &zero, C, CUDA_R_32F, g->alg,
                                     d, &s1, NULL));
    TRY(ensure_buffer(ctx, g, 1, s1));
    CS("cusparseSpGEMM_workEstimation",
       cusparseSpGEMM_workEstimation(h, nt, nt, &one, g->A, g->B, &zero, C, CUDA_R_32F, g->alg,
                                     d, &s1, g->buf[1]));
    size_t s2 = 0;
    if (g->alg == CUSPARSE_SPGEMM_ALG1) {
        CS("cusparseSpGEMM_compute",
           cusparseSpGEMM_compute(h, nt, nt, &one, g->A, g->B, &zero, C, CUDA_R_32F, g->alg, d,
                                  &s2, NULL));
    } else {
        int64_t products = 0;
        CS("cusparseSpGEMM_getNumProducts", cusparseSpGEMM_getNumProducts(d, &products));
        size_t s3 = 0;
        CS("cusparseSpGEMM_estimateMemory",
           cusparseSpGEMM_estimateMemory(h, nt, nt, &one, g->A, g->B, &zero, C, CUDA_R_32F,
                                         g->alg, d, g->chunk, &s3, NULL, NULL));
        TRY(ensure_buffer(ctx, g, 3, s3));
        CS("cusparseSpGEMM_estimateMemory",
           cusparseSpGEMM_estimateMemory(h, nt, nt, &one, g->A, g->B, &zero, C, CUDA_R_32F,
                                         g->alg, d, g->chunk, &s3, g->buf[3], &s2));
    }
    TRY(ensure_buffer(ctx, g, 2, s2));
    CS("cusparseSpGEMM_compute",
       cusparseSpGEMM_compute(h, nt, nt, &one, g->A, g->B, &zero, C, CUDA_R_32F, g->alg, d, &s2,
                              g->buf[2]));
    int64_t r = 0, c = 0, nnz = 0;
    CS("cusparseSpMatGetSize", cusparseSpMatGetSize(C, &r, &c, &nnz));
    TRY(ensure_output(ctx, g, nnz));
    CS("cusparseCsrSetPointers", cusparseCsrSetPointers(C, g->d_crow, g->d_ccol, g->d_cval));
    CS("cusparseSpGEMM_copy",
       cusparseSpGEMM_copy(h, nt, nt, &one, g->A, g->B, &zero, C, CUDA_R_32F, g->alg, d));
    g->nnz_c = nnz;
done:
    if (d != NULL)
        cusparseSpGEMM_destroyDescr(d);
    if (C != NULL)
        cusparseDestroySpMat(C);
    return s;
}

#undef CS
#undef TRY

void sdi_cs_spgemm_free(sdi_cs_spgemm *g)
{
    sdi_device_free(g->d_crow);
    sdi_device_free(g->d_ccol);
    sdi_device_free(g->d_cval);
    for (int i = 0; i < 4; i++)
        sdi_device_free(g->buf[i]);
}

/* ------------------------------------------------------------------ the executor */
struct sdi_vendor_spgemm {
    sd_context *ctx;
    const sdi_cs_spgemm_def *def;
    int device;
    int mode;           /* 0: B = A, 1: B = Aᵀ (uploaded), 2: a general B */
    int32_t rows, cols_b;
    int64_t annz, bnnz;
    int64_t *tperm;     /* B = Aᵀ: entry of A behind each entry of B (host) */
    float *tvals;       /* B = Aᵀ: staging of the gathered values (host) */
    sdi_cs_matrix am, bm; /* bm: B = Aᵀ or a general B (B = A uses am) */
    cusparseSpMatDescr_t A, B;
    sdi_cs_spgemm g;
};

const char *sdi_vendor_spgemm_variant(int i)
{
    return i >= 0 && i < NDEFS ? defs[i].name : NULL;
}

const char *sdi_vendor_spgemm_name(const sdi_vendor_spgemm *v) { return v ? v->def->name : ""; }
int64_t sdi_vendor_spgemm_bytes(const sdi_vendor_spgemm *v)
{
    if (v == NULL)
        return 0;
    int64_t b = (int64_t)(v->am.bytes + v->bm.bytes) + ((int64_t)v->rows + 1) * 4 + v->g.c_cap * 8;
    for (int i = 0; i < 4; i++)
        b += (int64_t)v->g.cap[i];
    return b;
}

void sdi_vendor_spgemm_destroy(sdi_vendor_spgemm *v)
{
    if (v == NULL)
        return;
    if (v->A != NULL)
        cusparseDestroySpMat(v->A);
    if (v->B != NULL)
        cusparseDestroySpMat(v->B);
    if (v->g.h != NULL)
        cusparseDestroy(v->g.h);
    sdi_cs_spgemm_free(&v->g);
    sdi_cs_matrix_free(&v->am);
    sdi_cs_matrix_free(&v->bm);
    sdi_free(v->tperm);
    sdi_free(v->tvals);
    sdi_free(v);
}

sd_status sdi_vendor_spgemm_create(sd_context *ctx, const sd_csr *a, const sd_csr *b, int aat,
                                   const char *variant, sdi_vendor_spgemm **out)
{
    sdi_vendor_spgemm *v = NULL;
    sd_csr bt;
    memset(&bt, 0, sizeof bt);
    int32_t *tcol = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_vendor_spgemm_destroy(v);                                                      \
        sdi_free(tcol);                                                                    \
        sd_csr_free(&bt);                                                                  \
    } while (0)
    if (out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sdi_vendor_spgemm_create: out is NULL");
    *out = NULL;
    if (a == NULL || variant == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sdi_vendor_spgemm_create: A or the variant is NULL");
    const sdi_cs_spgemm_def *def = NULL;
    for (int i = 0; i < NDEFS; i++)
        if (strcmp(defs[i].name, variant) == 0)
            def = &defs[i];
    if (def == NULL)
        return SDI_ERR(SD_ERR_UNSUPPORTED, "no cuSPARSE SpGEMM variant named '%s'", variant);
    if (b != NULL && b->rows != a->cols)
        return SDI_ERR(SD_ERR_INVALID_ARG, "cuSPARSE %s: A is %dx%d and B is %dx%d", variant,
                       a->rows, a->cols, b->rows, b->cols);
    if (b == NULL && aat < 0)
        aat = a->rows != a->cols;
    if (b == NULL && !aat && a->rows != a->cols)
        return SDI_ERR(SD_ERR_INVALID_ARG, "cuSPARSE %s: A·A needs a square A", variant);
    if (a->nnz > INT32_MAX || (b != NULL && b->nnz > INT32_MAX))
        return SDI_ERR(SD_ERR_UNSUPPORTED, "cuSPARSE %s uses 32-bit indices", variant);
    SD_TRY(sdi_ctx_enter(ctx));
    v = sdi_calloc(1, sizeof *v);
    SD_CHECK_ALLOC(v, "the cuSPARSE SpGEMM executor");
    v->ctx = ctx;
    v->def = def;
    v->device = ctx->device;
    v->mode = b != NULL ? 2 : aat ? 1 : 0;
    v->rows = a->rows;
    v->annz = a->nnz;
    SD_TRY(sdi_cs_build_csr(ctx, a, true, false, "A", &v->am));
    const sd_csr *bb = b != NULL ? b : a;
    if (v->mode == 1) {
        /* Aᵀ by a counting sort over A's columns, remembering each entry's origin so
         * that new values of A can be gathered into it. */
        SD_TRY(sdi_csr_alloc(&bt, a->cols, a->rows, a->nnz));
        v->tperm = sdi_malloc_array((size_t)(a->nnz > 0 ? a->nnz : 1), sizeof *v->tperm);
        v->tvals = sdi_malloc_array((size_t)(a->nnz > 0 ? a->nnz : 1), sizeof *v->tvals);
        SD_CHECK_ALLOC(v->tperm, "the transpose permutation");
        SD_CHECK_ALLOC(v->tvals, "the transposed values");
        memset(bt.rowptr, 0, ((size_t)a->cols + 1) * sizeof *bt.rowptr);
        for (int64_t e = 0; e < a->nnz; e++)
            bt.rowptr[a->colind[e] + 1]++;
        for (int32_t c = 0; c < a->cols; c++)
            bt.rowptr[c + 1] += bt.rowptr[c];
        int64_t *cur = sdi_malloc_array((size_t)a->cols + 1, sizeof *cur);
        SD_CHECK_ALLOC(cur, "transpose cursors");
        memcpy(cur, bt.rowptr, ((size_t)a->cols + 1) * sizeof *cur);
        for (int32_t i = 0; i < a->rows; i++)
            for (int64_t e = a->rowptr[i]; e < a->rowptr[i + 1]; e++) {
                int64_t q = cur[a->colind[e]]++;
                bt.colind[q] = i;
                bt.vals[q] = a->vals[e];
                v->tperm[q] = e;
            }
        sdi_free(cur);
        bb = &bt;
    }
    v->cols_b = bb->cols;
    v->bnnz = bb->nnz;
    if (v->mode != 0)
        SD_TRY(sdi_cs_build_csr(ctx, bb, true, false, "B", &v->bm));
    const char *call = "";
    cusparseStatus_t st = cusparseCreate(&v->g.h);
    if (st == CUSPARSE_STATUS_SUCCESS)
        st = sdi_cs_descr(&v->am, SDI_CS_CSR, &v->A, &call);
    if (st == CUSPARSE_STATUS_SUCCESS)
        st = sdi_cs_descr(v->mode != 0 ? &v->bm : &v->am, SDI_CS_CSR, &v->B, &call);
    if (st != CUSPARSE_STATUS_SUCCESS) {
        SD_FREE_ALL;
        return SDI_ERR(st == CUSPARSE_STATUS_ALLOC_FAILED ? SD_ERR_OUT_OF_MEMORY : SD_ERR_CUDA,
                       "cuSPARSE %s: creating the handle or descriptors: %s", variant,
                       cusparseGetErrorString(st));
    }
    v->g.alg = def->alg;
    v->g.chunk = def->chunk;
    v->g.A = v->A;
    v->g.B = v->B;
    v->g.rows = a->rows;
    v->g.cols_b = bb->cols;
    SD_TRY(sdi_device_malloc(ctx, (void **)&v->g.d_crow, ((size_t)a->rows + 1) * 4,
                             "C's 32-bit row offsets"));
    sd_csr_free(&bt);
    *out = v;
    return SD_OK;
#undef SD_FREE_ALL
}

sd_status sdi_vendor_spgemm_update_values(sdi_vendor_spgemm *v, const float *a_vals,
                                          const float *b_vals)
{
    if (v == NULL || (a_vals == NULL && v->annz > 0) ||
        (v->mode == 2 && b_vals == NULL && v->bnnz > 0))
        return SDI_ERR(SD_ERR_INVALID_ARG, "sdi_vendor_spgemm_update_values: NULL argument");
    sd_status s = sdi_copy_to_device(v->ctx, v->am.d_vals, a_vals, (size_t)v->annz * 4, "A's values");
    if (s != SD_OK || v->mode == 0)
        return s;
    const float *src = b_vals;
    if (v->mode == 1) {
        for (int64_t q = 0; q < v->bnnz; q++)
            v->tvals[q] = a_vals[v->tperm[q]];
        src = v->tvals;
    }
    return sdi_copy_to_device(v->ctx, v->bm.d_vals, src, (size_t)v->bnnz * 4, "B's values");
}

sd_status sdi_vendor_spgemm_run(sdi_vendor_spgemm *v, cudaStream_t stream, sd_device_csr *c)
{
    void *crow = NULL, *ccol = NULL, *cval = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_device_free_async(crow, stream);                                               \
        sdi_device_free_async(ccol, stream);                                               \
        sdi_device_free_async(cval, stream);                                               \
    } while (0)
    if (c == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sdi_vendor_spgemm_run: c is NULL");
    memset(c, 0, sizeof *c);
    if (v == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sdi_vendor_spgemm_run: the executor is NULL");
    sd_context *ctx = v->ctx;
    SD_TRY(sdi_ctx_enter(ctx));
    const int32_t m = v->rows;
    int64_t nnz = 0;
    if (v->annz > 0 && v->bnnz > 0) {
        cusparseStatus_t st = cusparseSetStream(v->g.h, stream);
        if (st != CUSPARSE_STATUS_SUCCESS)
            return SDI_ERR(SD_ERR_CUDA, "cusparseSetStream: %s", cusparseGetErrorString(st));
        sd_status s = sdi_cs_spgemm_exec(ctx, &v->g, stream);
        if (s != SD_OK) {
            if (v->g.err.status == CUSPARSE_STATUS_ALLOC_FAILED ||
                v->g.err.status == CUSPARSE_STATUS_INSUFFICIENT_RESOURCES)
                return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "cuSPARSE %s: %s", v->def->name,
                               sd_last_error());
            return s;
        }
        nnz = v->g.nnz_c;
    }
    SD_TRY(sdi_device_malloc_async(ctx, &crow, ((size_t)m + 1) * 8, stream, "C's row pointers"));
    SD_TRY(sdi_device_malloc_async(ctx, &ccol, (size_t)nnz * 4, stream, "C's columns"));
    SD_TRY(sdi_device_malloc_async(ctx, &cval, (size_t)nnz * 4, stream, "C's values"));
    /* 32-bit offsets into the low words of zeroed 64-bit ones (little-endian, ≥ 0). */
    SD_TRY(sdi_cuda_status(ctx, cudaMemsetAsync(crow, 0, ((size_t)m + 1) * 8, stream),
                           "clearing", "C's row pointers"));
    if (nnz > 0) {
        SD_TRY(sdi_cuda_status(ctx, cudaMemcpy2DAsync(crow, 8, v->g.d_crow, 4, 4, (size_t)m + 1,
                                                      cudaMemcpyDeviceToDevice, stream),
                               "widening", "C's row pointers"));
        SD_TRY(sdi_cuda_status(ctx, cudaMemcpyAsync(ccol, v->g.d_ccol, (size_t)nnz * 4,
                                                    cudaMemcpyDeviceToDevice, stream),
                               "copying", "C's columns"));
        SD_TRY(sdi_cuda_status(ctx, cudaMemcpyAsync(cval, v->g.d_cval, (size_t)nnz * 4,
                                                    cudaMemcpyDeviceToDevice, stream),
                               "copying", "C's values"));
    }
    c->rows = m;
    c->cols = v->cols_b;
    c->nnz = nnz;
    c->rowptr = crow;
    c->colind = ccol;
    c->vals = cval;
    return SD_OK;
#undef SD_FREE_ALL
}
