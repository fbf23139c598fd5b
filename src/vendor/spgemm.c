/* src/vendor/spgemm.c: the cuSPARSE SpGEMM variants of the baseline (ALG1,
 * ALG2, ALG3 with its chunk fraction) for C = A·B with B = A or Aᵀ given explicitly
 * (cuSPARSE SpGEMM takes only non-transposed operands). One timed execution produces C
 * from the device inputs: work estimation, (memory estimation,) compute and copy, i.e.
 * symbolic + numeric + compaction. Only the buffers, allocated once in the first
 * warm-up run and reused, are excluded (docs/ARCHITECTURE.md "Measurement"). The call
 * sequence is the runtime's (runtime/vendor_spgemm.c), shared with the executor. */
#include <stdio.h>
#include <string.h>

#include "../runtime/context.h"
#include "../runtime/device_memory.h"
#include "baseline_internal.h"

/* The baseline's view of one product: cuSPARSE's call sequence (runtime/cs_format.h) and
 * the variant entry and reference its check reads. */
typedef struct {
    sdi_cs_spgemm g;
    sdi_bl_state *bl;
    sdi_variant_result *v;
} bl_spgemm;

static sd_status spgemm_check(sd_context *ctx, void *p)
{
    bl_spgemm *w = p;
    const sdi_cs_spgemm *g = &w->g;
    return sdi_check_spgemm_output(ctx, w->bl->ref, g->rows, g->cols_b, g->nnz_c, g->d_crow, 4,
                                   g->d_ccol, g->d_cval, &w->v->val);
}

/* Runs one algorithm into a new variant entry, or into `again` (an entry measured
 * briefly, now timed in full: sc NULL). */
static sd_status run_def(sdi_bl_state *bl, const sdi_cs_spgemm_def *def, cusparseSpMatDescr_t A,
                         cusparseSpMatDescr_t B, int32_t cols_b, const sdi_screen *sc,
                         sdi_variant_result *again)
{
    sdi_variant_result *v = again != NULL ? again : sdi_bl_begin(bl, def->name);
    if (v == NULL)
        return SD_OK;
    sd_context *ctx = bl->ctx;
    bl_spgemm w;
    memset(&w, 0, sizeof w);
    w.bl = bl;
    w.v = v;
    w.g.h = bl->h;
    w.g.alg = def->alg;
    w.g.chunk = def->chunk;
    w.g.A = A;
    w.g.B = B;
    w.g.rows = bl->a->rows;
    w.g.cols_b = cols_b;
    double t0 = sdi_now();
    sd_status fatal = SD_OK;
    sd_status s = sdi_device_malloc(ctx, (void **)&w.g.d_crow,
                                    ((size_t)w.g.rows + 1) * sizeof(int32_t), "C's row offsets");
    if (s == SD_OK) {
        v->setup_ms = (sdi_now() - t0) * 1e3;
        sdi_timing t;
        sdi_measured how = SDI_MEASURED_FULL;
        s = sdi_measure_screened(ctx, v->name, sdi_cs_spgemm_exec, &w.g, spgemm_check, &w, sc, &t,
                                 &how);
        if (s == SD_OK) {
            sdi_bl_measured(bl, v, &t);
            v->brief = how == SDI_MEASURED_BRIEF;
        }
    }
    if (s != SD_OK) {
        if (w.g.err.status != CUSPARSE_STATUS_SUCCESS) {
            sdi_bl_cusparse_failed(v, w.g.err.call, w.g.err.status);
            sd_status q = sdi_stream_sync(ctx, "after a cuSPARSE failure in", v->name);
            if (q != SD_OK && ctx->broken)
                fatal = q;
        } else {
            fatal = sdi_bl_failed(bl, v, s);
        }
    }
    sdi_cs_spgemm_free(&w.g);
    return fatal;
}

sd_status sdi_bl_spgemm(sdi_bl_state *bl, const sd_csr *b)
{
    const sd_csr *a = bl->a;
    int ndefs = 0;
    const sdi_cs_spgemm_def *defs = sdi_cs_spgemm_defs(&ndefs);
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
        for (int i = 0; i < ndefs; i++) {
            sdi_variant_result *v = sdi_bl_begin(bl, defs[i].name);
            if (v != NULL)
                sdi_bl_cusparse_failed(v, "cusparseCreateCsr(A or B)", st);
        }
        SD_FREE_ALL;
        return SD_OK;
    }
    const int NDEFS = ndefs;
    const sdi_screen sc = {.brief_us = bl->opt != NULL ? bl->opt->brief_us : 0};
    const int first = bl->out->nvariants;
    for (int i = 0; i < NDEFS; i++)
        SD_TRY(run_def(bl, &defs[i], A, B, b->cols, sc.brief_us > 0 ? &sc : NULL, NULL));
    /* The fastest variant is timed in full; if a brief one is then fastest, it too. */
    for (int round = 0; round < NDEFS; round++) {
        sdi_variant_result *best = sdi_bl_brief_fastest(bl, first);
        const sdi_cs_spgemm_def *best_def = NULL;
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
