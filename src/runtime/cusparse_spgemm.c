/* src/runtime/cusparse_spgemm.c: the cuSPARSE SpGEMM variants of the baseline (ALG1,
 * ALG2, ALG3 with its chunk fraction) for C = A·B with B = A or Aᵀ given explicitly
 * (cuSPARSE SpGEMM takes only non-transposed operands). One timed execution produces C
 * from the device inputs: work estimation, (memory estimation,) compute and copy, i.e.
 * symbolic + numeric + compaction. Only the buffers, allocated once in the first
 * warm-up run and reused, are excluded (DESIGN.md). */
#include <stdio.h>
#include <string.h>

#include "cusparse_internal.h"

static const float one = 1.0f, zero = 0.0f;

typedef struct {
    sdi_bl_state *bl;
    sdi_variant_result *v;
    cusparseSpGEMMAlg_t alg;
    float chunk; /* ALG2 / ALG3: chunk_fraction of cusparseSpGEMM_estimateMemory */
    cusparseSpMatDescr_t A, B;
    int32_t rows, cols_b;
    int32_t *d_crow; /* rows + 1, allocated once */
    int32_t *d_ccol;
    float *d_cval;
    int64_t c_cap; /* entries allocated in d_ccol / d_cval */
    void *buf[4];  /* buffers 1..3 (index 0 unused) */
    size_t cap[4];
    int64_t nnz_c;
    sdi_cs_error err;
} spgemm_arg;

/* Grows buffer i to at least `need` bytes (never 0: a NULL buffer means "size query").
 * cuSPARSE is then given the size it asked for; the buffer may be larger. */
static sd_status ensure_buffer(sd_context *ctx, spgemm_arg *g, int i, size_t need)
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

static sd_status ensure_output(sd_context *ctx, spgemm_arg *g, int64_t nnz)
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
static sd_status spgemm_exec(sd_context *ctx, void *p, cudaStream_t stream)
{
    (void)stream; /* the handle is bound to ctx->stream */
    spgemm_arg *g = p;
    cusparseHandle_t h = g->bl->h;
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

static sd_status spgemm_check(sd_context *ctx, void *p)
{
    spgemm_arg *g = p;
    return sdi_check_spgemm_output(ctx, &g->bl->ref, g->rows, g->cols_b, g->nnz_c, g->d_crow, 4,
                                   g->d_ccol, g->d_cval, &g->v->val);
}

static void spgemm_arg_free(spgemm_arg *g)
{
    sdi_device_free(g->d_crow);
    sdi_device_free(g->d_ccol);
    sdi_device_free(g->d_cval);
    for (int i = 0; i < 4; i++)
        sdi_device_free(g->buf[i]);
}

typedef struct {
    const char *name;
    cusparseSpGEMMAlg_t alg;
    float chunk;
} spgemm_def;

static const spgemm_def defs[] = {
    {"spgemm_alg1", CUSPARSE_SPGEMM_ALG1, 0.0f},
    {"spgemm_alg2", CUSPARSE_SPGEMM_ALG2, 1.0f},
    {"spgemm_alg3_c0.2", CUSPARSE_SPGEMM_ALG3, 0.2f},
    {"spgemm_alg3_c1.0", CUSPARSE_SPGEMM_ALG3, 1.0f},
};

static sd_status run_def(sdi_bl_state *bl, const spgemm_def *def, cusparseSpMatDescr_t A,
                         cusparseSpMatDescr_t B, int32_t cols_b)
{
    sdi_variant_result *v = sdi_bl_begin(bl, def->name);
    if (v == NULL)
        return SD_OK;
    sd_context *ctx = bl->ctx;
    spgemm_arg g;
    memset(&g, 0, sizeof g);
    g.bl = bl;
    g.v = v;
    g.alg = def->alg;
    g.chunk = def->chunk;
    g.A = A;
    g.B = B;
    g.rows = bl->a->rows;
    g.cols_b = cols_b;
    double t0 = sdi_now();
    sd_status fatal = SD_OK;
    sd_status s = sdi_device_malloc(ctx, (void **)&g.d_crow,
                                    ((size_t)g.rows + 1) * sizeof(int32_t), "C's row offsets");
    if (s == SD_OK) {
        v->setup_ms = (sdi_now() - t0) * 1e3;
        sdi_timing t;
        s = sdi_measure(ctx, v->name, spgemm_exec, &g, spgemm_check, &g, &t);
        if (s == SD_OK)
            sdi_bl_measured(bl, v, &t);
    }
    if (s != SD_OK) {
        if (g.err.status != CUSPARSE_STATUS_SUCCESS) {
            sdi_bl_cusparse_failed(v, g.err.call, g.err.status);
            sd_status q = sdi_stream_sync(ctx, "after a cuSPARSE failure in", v->name);
            if (q != SD_OK && ctx->broken)
                fatal = q;
        } else {
            fatal = sdi_bl_failed(bl, v, s);
        }
    }
    spgemm_arg_free(&g);
    return fatal;
}

sd_status sdi_bl_spgemm(sdi_bl_state *bl, const sd_csr *b)
{
    const sd_csr *a = bl->a;
    sd_context *ctx = bl->ctx;
    int32_t *brow = NULL, *d_brow = NULL, *d_bcol = NULL;
    float *d_bval = NULL;
    cusparseSpMatDescr_t A = NULL, B = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(brow);                                                                    \
        if (A != NULL)                                                                     \
            cusparseDestroySpMat(A);                                                       \
        if (B != NULL)                                                                     \
            cusparseDestroySpMat(B);                                                       \
        sdi_device_free(d_brow);                                                           \
        sdi_device_free(d_bcol);                                                           \
        sdi_device_free(d_bval);                                                           \
    } while (0)
    if (b->nnz > INT32_MAX) {
        SD_FREE_ALL;
        return SDI_ERR(SD_ERR_UNSUPPORTED, "B has %lld entries, beyond 32-bit indices",
                       (long long)b->nnz);
    }
    /* B = A shares A's device arrays; B = Aᵀ is uploaded (an input of the product). */
    int32_t *rp = bl->d_rowptr, *ci = bl->d_colind;
    float *vv = bl->d_vals;
    if (b != a) {
        brow = sdi_malloc_array((size_t)b->rows + 1, sizeof *brow);
        SD_CHECK_ALLOC(brow, "B's 32-bit row offsets");
        for (int64_t i = 0; i <= b->rows; i++)
            brow[i] = (int32_t)b->rowptr[i];
        static const int32_t zero_i = 0;
        static const float zero_f = 0;
        size_t n = b->nnz > 0 ? (size_t)b->nnz : 1;
        SD_TRY(sdi_device_upload(ctx, (void **)&d_brow, brow, ((size_t)b->rows + 1) * 4,
                                 "B's row offsets"));
        SD_TRY(sdi_device_upload(ctx, (void **)&d_bcol, b->nnz ? b->colind : &zero_i, n * 4,
                                 "B's column indices"));
        SD_TRY(sdi_device_upload(ctx, (void **)&d_bval, b->nnz ? b->vals : &zero_f, n * 4,
                                 "B's values"));
        rp = d_brow;
        ci = d_bcol;
        vv = d_bval;
    }
    cusparseStatus_t st = cusparseCreateCsr(&A, a->rows, a->cols, a->nnz, bl->d_rowptr,
                                            bl->d_colind, bl->d_vals, CUSPARSE_INDEX_32I,
                                            CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                                            CUDA_R_32F);
    if (st == CUSPARSE_STATUS_SUCCESS)
        st = cusparseCreateCsr(&B, b->rows, b->cols, b->nnz, rp, ci, vv, CUSPARSE_INDEX_32I,
                               CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F);
    if (st != CUSPARSE_STATUS_SUCCESS) {
        /* Without descriptors no variant can run: record the cause on each. */
        for (int i = 0; i < (int)(sizeof defs / sizeof defs[0]); i++) {
            sdi_variant_result *v = sdi_bl_begin(bl, defs[i].name);
            if (v != NULL)
                sdi_bl_cusparse_failed(v, "cusparseCreateCsr(A or B)", st);
        }
        SD_FREE_ALL;
        return SD_OK;
    }
    for (int i = 0; i < (int)(sizeof defs / sizeof defs[0]); i++)
        SD_TRY(run_def(bl, &defs[i], A, B, b->cols));
    SD_FREE_ALL;
    return SD_OK;
#undef SD_FREE_ALL
}
