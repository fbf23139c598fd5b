/* src/vendor/spgemm.c: the cuSPARSE SpGEMM variants of the baseline (ALG1,
 * ALG2, ALG3 with its chunk fraction) for C = A·B with B = A or Aᵀ given explicitly
 * (cuSPARSE SpGEMM takes only non-transposed operands). One timed execution produces C
 * from the device inputs: work estimation, (memory estimation,) compute and copy, i.e.
 * symbolic + numeric + compaction. Only the buffers, allocated once in the first
 * warm-up run and reused, are excluded (docs/ARCHITECTURE.md "Measurement"). */
#include <stdio.h>
#include <string.h>

#include "../runtime/context.h"
#include "../runtime/device_memory.h"
#include "baseline_internal.h"
#include "vendor.h"

static const float one = 1.0f, zero = 0.0f;

typedef struct {
    sdi_bl_state *bl; /* NULL for the executor (vendor.h) */
    cusparseHandle_t h;
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

static sd_status spgemm_check(sd_context *ctx, void *p)
{
    spgemm_arg *g = p;
    return sdi_check_spgemm_output(ctx, g->bl->ref, g->rows, g->cols_b, g->nnz_c, g->d_crow, 4,
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

/* Runs one algorithm into a new variant entry, or into `again` (an entry measured
 * briefly, now timed in full: sc NULL). */
static sd_status run_def(sdi_bl_state *bl, const spgemm_def *def, cusparseSpMatDescr_t A,
                         cusparseSpMatDescr_t B, int32_t cols_b, const sdi_screen *sc,
                         sdi_variant_result *again)
{
    sdi_variant_result *v = again != NULL ? again : sdi_bl_begin(bl, def->name);
    if (v == NULL)
        return SD_OK;
    sd_context *ctx = bl->ctx;
    spgemm_arg g;
    memset(&g, 0, sizeof g);
    g.bl = bl;
    g.h = bl->h;
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
        sdi_measured how = SDI_MEASURED_FULL;
        s = sdi_measure_screened(ctx, v->name, spgemm_exec, &g, spgemm_check, &g, sc, &t, &how);
        if (s == SD_OK) {
            sdi_bl_measured(bl, v, &t);
            v->brief = how == SDI_MEASURED_BRIEF;
        }
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
    sdi_cs_matrix bdev;
    memset(&bdev, 0, sizeof bdev);
    cusparseSpMatDescr_t A = NULL, B = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        if (A != NULL)                                                                     \
            cusparseDestroySpMat(A);                                                       \
        if (B != NULL)                                                                     \
            cusparseDestroySpMat(B);                                                       \
        sdi_cs_matrix_free(&bdev);                                                         \
    } while (0)
    if (b->nnz > INT32_MAX) {
        SD_FREE_ALL;
        return SDI_ERR(SD_ERR_UNSUPPORTED, "B has %lld entries, beyond 32-bit indices",
                       (long long)b->nnz);
    }
    /* B = A shares A's device arrays; B = Aᵀ is uploaded (an input of the product). */
    const sdi_cs_matrix *bm = &bl->dev;
    if (b != a) {
        SD_TRY(sdi_cs_build_csr(bl->ctx, b, true, false, "B", &bdev));
        bm = &bdev;
    }
    const char *call = "";
    cusparseStatus_t st = sdi_cs_descr(&bl->dev, SDI_CS_CSR, &A, &call);
    if (st == CUSPARSE_STATUS_SUCCESS)
        st = sdi_cs_descr(bm, SDI_CS_CSR, &B, &call);
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
    enum { NDEFS = (int)(sizeof defs / sizeof defs[0]) };
    const sdi_screen sc = {.brief_us = bl->opt != NULL ? bl->opt->brief_us : 0};
    const int first = bl->out->nvariants;
    for (int i = 0; i < NDEFS; i++)
        SD_TRY(run_def(bl, &defs[i], A, B, b->cols, sc.brief_us > 0 ? &sc : NULL, NULL));
    /* The fastest variant is timed in full; if a brief one is then fastest, it too. */
    for (int round = 0; round < NDEFS; round++) {
        sdi_variant_result *best = sdi_bl_brief_fastest(bl, first);
        const spgemm_def *best_def = NULL;
        for (int d = 0; best != NULL && d < NDEFS; d++)
            if (strcmp(defs[d].name, best->name) == 0)
                best_def = &defs[d];
        if (best_def == NULL)
            break;
        SD_TRY(run_def(bl, best_def, A, B, b->cols, NULL, best));
    }
    SD_FREE_ALL;
    return SD_OK;
#undef SD_FREE_ALL
}

/* ------------------------------------------------------------------ executor (vendor.h) */

struct sdi_vendor_spgemm {
    sd_context *ctx;
    const spgemm_def *def;
    int device;
    int mode;           /* 0: B = A, 1: B = Aᵀ (uploaded), 2: a general B */
    int32_t rows, cols_b;
    int64_t annz, bnnz;
    int64_t *tperm;     /* B = Aᵀ: entry of A behind each entry of B (host) */
    float *tvals;       /* B = Aᵀ: staging of the gathered values (host) */
    sdi_cs_matrix am, bm; /* bm: B = Aᵀ or a general B (B = A uses am) */
    cusparseSpMatDescr_t A, B;
    spgemm_arg g;
};

const char *sdi_vendor_spgemm_variant(int i)
{
    return i >= 0 && i < (int)(sizeof defs / sizeof defs[0]) ? defs[i].name : NULL;
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
    spgemm_arg_free(&v->g);
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
    const spgemm_def *def = NULL;
    for (int i = 0; i < (int)(sizeof defs / sizeof defs[0]); i++)
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
        sd_status s = spgemm_exec(ctx, &v->g, stream);
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
