/* src/runtime/spgemm_operands.c: a SpGEMM product's operands on the device: A, B or the
 * transpose Aᵀ built by the preparation kernels, and the u(i) / span analysis of C's rows
 * that scheduling reads; the compile requests of the preparation, the scan and the units. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memo.h"
#include "spgemm_internal.h"

const char *const sdi_sg_prep_names[PREP_N] = {
    "sd_spgemm_prep_rowinfo",   "sd_spgemm_prep_tcount",   "sd_spgemm_prep_tscatter",
    "sd_spgemm_prep_tsort_warp", "sd_spgemm_prep_tsort_cta", "sd_spgemm_prep_tsort_long",
    "sd_spgemm_prep_gather"};

void sdi_spgemm_prep_request(sdi_jit_request *req)
{
    memset(req, 0, sizeof *req);
    req->template_name = "spgemm_prep.cuh";
    req->kernel_name = "sd_spgemm_prep";
}

void sdi_spgemm_scan_request(sdi_jit_request *req)
{
    memset(req, 0, sizeof *req);
    req->template_name = "spgemm_scan.cuh";
    req->kernel_name = "sd_spgemm_scan";
}

void sdi_spgemm_unit_request(const sdi_sg_lowered *low, int u, sdi_jit_request *req)
{
    memset(req, 0, sizeof *req);
    const sdi_sg_unit *U = &low->units[u];
    req->source = U->source;
    req->kernel_name = U->name;
    req->fast = low->fast;
    if (U->link_source != NULL) {
        req->link = 1;
        req->link_source = U->link_source;
        req->parts = (const char *const *)U->parts;
        req->nparts = U->nparts;
        req->maxrreg = U->maxrreg;
    }
}

static sd_status prep_module(sd_context *ctx, sdi_module *out)
{
    sdi_jit_request req;
    sdi_spgemm_prep_request(&req);
    const sdi_cubin *cb = NULL;
    sd_status s = sdi_jit_get(ctx, &req, &cb, NULL);
    if (s != SD_OK)
        return s;
    return sdi_module_load(ctx, cb->cubin, cb->size, sdi_sg_prep_names, PREP_N, out);
}

/* Aᵀ on the device: column counts (atomics), the prefix on the host, the scatter into
 * row slots (atomics), then every row sorted (warp ranks, CTA bitonic, or chunks plus
 * merge passes for rows longer than SD_SG_TR_SMEM_SORT). */
static sd_status build_transpose(sdi_spgemm_operands *op, const sd_csr *a, int64_t *b_row_max)
{
    sd_context *ctx = op->ctx;
    void *tcount = NULL, *tcursor = NULL, *tmp_col = NULL, *tmp_perm = NULL, *dlong = NULL;
    uint64_t *hcount = NULL;
    int64_t *trow = NULL;
    int32_t *hlong = NULL;
    int64_t scratch = 0;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_device_free(tcount);                                                           \
        sdi_device_free(tcursor);                                                          \
        sdi_device_free(tmp_col);                                                          \
        sdi_device_free(tmp_perm);                                                         \
        sdi_device_free(dlong);                                                            \
        sdi_free(hcount);                                                                  \
        sdi_free(trow);                                                                    \
        sdi_free(hlong);                                                                   \
    } while (0)
    const int32_t k = a->cols;
    const int64_t nnz = a->nnz;
    sd_spgemm_prep_args pa;
    memset(&pa, 0, sizeof pa);
    pa.arow = op->arow;
    pa.acol = op->acol;
    pa.nnz = nnz;
    pa.m = a->rows;
    pa.k = k;
    SD_TRY(sg_dalloc(ctx, &tcount, (size_t)k * 8, "transpose counts", &scratch));
    SD_TRY(sg_dzero(ctx, tcount, (size_t)k * 8, "transpose counts"));
    pa.tcount = tcount;
    SD_TRY(sg_launch1(ctx, &op->prep.functions[PREP_TCOUNT], sg_ceil_div(nnz, PREP_THREADS),
                   PREP_THREADS, 0, &pa, ctx->stream));
    hcount = sdi_malloc_array((size_t)k + 1, sizeof *hcount);
    trow = sdi_malloc_array((size_t)k + 1, sizeof *trow);
    SD_CHECK_ALLOC(hcount, "transpose counts");
    SD_CHECK_ALLOC(trow, "transpose row pointers");
    if (k > 0)
        SD_TRY(sdi_copy_to_host(ctx, hcount, tcount, (size_t)k * 8, "transpose counts"));
    trow[0] = 0;
    int64_t nlong = 0, maxlen = 0;
    for (int32_t c = 0; c < k; c++) {
        trow[c + 1] = trow[c] + (int64_t)hcount[c];
        if ((int64_t)hcount[c] > SD_SG_TR_SMEM_SORT)
            nlong++;
        if ((int64_t)hcount[c] > maxlen)
            maxlen = (int64_t)hcount[c];
    }
    *b_row_max = maxlen;
    if (trow[k] != nnz) {
        SD_FREE_ALL;
        return SDI_ERR(SD_ERR_INTERNAL, "transpose: counted %lld entries, A has %lld",
                       (long long)trow[k], (long long)nnz);
    }
    SD_TRY(sg_dalloc(ctx, (void **)&op->brow, ((size_t)k + 1) * 8, "Aᵀ row pointers", &op->bytes));
    SD_TRY(sdi_copy_to_device(ctx, op->brow, trow, ((size_t)k + 1) * 8, "Aᵀ row pointers"));
    SD_TRY(sg_dalloc(ctx, &tcursor, (size_t)k * 8, "transpose cursors", &scratch));
    if (k > 0)
        SD_TRY(sdi_cuda_status(ctx, cudaMemcpyAsync(tcursor, op->brow, (size_t)k * 8,
                                                    cudaMemcpyDeviceToDevice, ctx->stream),
                               "copying", "transpose cursors"));
    SD_TRY(sg_dalloc(ctx, (void **)&op->bcol, (size_t)nnz * 4, "Aᵀ columns", &op->bytes));
    SD_TRY(sg_dalloc(ctx, (void **)&op->bperm, (size_t)nnz * 8, "Aᵀ permutation", &op->bytes));
    pa.tcursor = tcursor;
    pa.trow = op->brow;
    pa.tcol = op->bcol;
    pa.tperm = op->bperm;
    SD_TRY(sg_launch1(ctx, &op->prep.functions[PREP_TSCATTER], sg_ceil_div((int64_t)a->rows * 32, PREP_THREADS),
                   PREP_THREADS, 0, &pa, ctx->stream));
    SD_TRY(sg_launch1(ctx, &op->prep.functions[PREP_TSORT_WARP], sg_ceil_div((int64_t)k * 32, PREP_THREADS),
                   PREP_THREADS, 0, &pa, ctx->stream));
    SD_TRY(sg_launch1(ctx, &op->prep.functions[PREP_TSORT_CTA], k < 65536 ? k : 65536, PREP_THREADS,
                   0, &pa, ctx->stream));
    if (nlong > 0) {
        hlong = sdi_malloc_array((size_t)nlong, sizeof *hlong);
        SD_CHECK_ALLOC(hlong, "long transpose rows");
        int64_t q = 0;
        for (int32_t c = 0; c < k; c++)
            if ((int64_t)hcount[c] > SD_SG_TR_SMEM_SORT)
                hlong[q++] = c;
        SD_TRY(sg_dalloc(ctx, &dlong, (size_t)nlong * 4, "long transpose rows", &scratch));
        SD_TRY(sdi_copy_to_device(ctx, dlong, hlong, (size_t)nlong * 4, "long transpose rows"));
        SD_TRY(sg_dalloc(ctx, &tmp_col, (size_t)nnz * 4, "transpose merge columns", &scratch));
        SD_TRY(sg_dalloc(ctx, &tmp_perm, (size_t)nnz * 8, "transpose merge permutation", &scratch));
        pa.long_rows = dlong;
        pa.nlong = (int)nlong;
        pa.tmp_col = tmp_col;
        pa.tmp_perm = tmp_perm;
        SD_TRY(sg_launch1(ctx, &op->prep.functions[PREP_TSORT_LONG], nlong, PREP_THREADS, 0, &pa,
                       ctx->stream));
    }
    SD_TRY(sdi_stream_sync(ctx, "building Aᵀ", "sd_spgemm_prep"));
    SD_FREE_ALL;
    return SD_OK;
#undef SD_FREE_ALL
}

sd_status sdi_spgemm_operands_create(sd_context *ctx, const sd_csr *a, const sd_csr *b, int aat,
                                     sdi_spgemm_operands **out)
{
    sdi_spgemm_operands *op = NULL;
    void *du = NULL, *dhi = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_device_free(du);                                                               \
        sdi_device_free(dhi);                                                              \
        sdi_spgemm_operands_destroy(op);                                                   \
    } while (0)
    if (out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spgemm operands: out is NULL");
    *out = NULL;
    if (a == NULL || a->rowptr == NULL || (a->nnz > 0 && (a->colind == NULL || a->vals == NULL)))
        return SDI_ERR(SD_ERR_INVALID_ARG, "spgemm operands: A or its arrays are NULL");
    SD_TRY(sdi_ctx_enter(ctx));
    if (b != NULL) {
        if (b->rowptr == NULL || (b->nnz > 0 && (b->colind == NULL || b->vals == NULL)))
            return SDI_ERR(SD_ERR_INVALID_ARG, "spgemm operands: B's arrays are NULL");
        if (a->cols != b->rows)
            return SDI_ERR(SD_ERR_INVALID_ARG, "spgemm: A is %dx%d and B is %dx%d: inner sizes "
                           "differ", a->rows, a->cols, b->rows, b->cols);
        aat = 0;
    } else {
        if (aat < 0)
            aat = a->rows != a->cols;
        if (!aat && a->rows != a->cols)
            return SDI_ERR(SD_ERR_INVALID_ARG, "spgemm: A·A needs a square A (A is %dx%d)",
                           a->rows, a->cols);
    }
    const double t0 = sdi_now();
    op = sdi_calloc(1, sizeof *op);
    SD_CHECK_ALLOC(op, "spgemm operands");
    op->ctx = ctx;
    op->m = a->rows;
    op->k = a->cols;
    op->n = b != NULL ? b->cols : (aat ? a->rows : a->cols);
    op->annz = a->nnz;
    op->aat = aat;
    SD_TRY(prep_module(ctx, &op->prep));
    SD_TRY(sdi_device_upload(ctx, (void **)&op->arow, a->rowptr, ((size_t)a->rows + 1) * 8,
                             "A's row pointers"));
    SD_TRY(sdi_device_upload(ctx, (void **)&op->acol, a->colind, (size_t)a->nnz * 4, "A's columns"));
    SD_TRY(sdi_device_upload(ctx, (void **)&op->aval, a->vals, (size_t)a->nnz * 4, "A's values"));
    op->bytes += ((int64_t)a->rows + 1) * 8 + a->nnz * 8;
    int64_t b_row_max = 0;
    if (b != NULL) {
        op->bnnz = b->nnz;
        SD_TRY(sdi_device_upload(ctx, (void **)&op->brow, b->rowptr, ((size_t)b->rows + 1) * 8,
                                 "B's row pointers"));
        SD_TRY(sdi_device_upload(ctx, (void **)&op->bcol, b->colind, (size_t)b->nnz * 4,
                                 "B's columns"));
        SD_TRY(sdi_device_upload(ctx, (void **)&op->bval, b->vals, (size_t)b->nnz * 4,
                                 "B's values"));
        op->bytes += ((int64_t)b->rows + 1) * 8 + b->nnz * 8;
        for (int32_t r = 0; r < b->rows; r++)
            if (b->rowptr[r + 1] - b->rowptr[r] > b_row_max)
                b_row_max = b->rowptr[r + 1] - b->rowptr[r];
    } else if (!aat) {
        op->same = 1;
        op->bnnz = a->nnz;
        op->brow = op->arow;
        op->bcol = op->acol;
        for (int32_t r = 0; r < a->rows; r++)
            if (a->rowptr[r + 1] - a->rowptr[r] > b_row_max)
                b_row_max = a->rowptr[r + 1] - a->rowptr[r];
    } else {
        op->bnnz = a->nnz;
        SD_TRY(build_transpose(op, a, &b_row_max));
        SD_TRY(sg_dalloc(ctx, (void **)&op->bgather, (size_t)a->nnz * 4, "Aᵀ values", &op->bytes));
    }
    /* The upper-bound analysis on the device. */
    const int32_t m = op->m;
    SD_TRY(sg_dalloc(ctx, &du, (size_t)m * 8, "u(i)", &op->bytes));
    SD_TRY(sg_dalloc(ctx, (void **)&op->rowlo, (size_t)m * 4, "row origins", &op->bytes));
    SD_TRY(sg_dalloc(ctx, &dhi, (size_t)m * 4, "row ends", &op->bytes));
    op->bytes -= (int64_t)m * 12; /* counted below: only rowlo stays */
    op->bytes += (int64_t)m * 4;
    sd_spgemm_prep_args pa;
    memset(&pa, 0, sizeof pa);
    pa.arow = op->arow;
    pa.acol = op->acol;
    pa.brow = op->brow;
    pa.bcol = op->bcol;
    pa.u = du;
    pa.lo = op->rowlo;
    pa.hi = dhi;
    pa.m = m;
    pa.k = op->k;
    SD_TRY(sg_launch1(ctx, &op->prep.functions[PREP_ROWINFO], sg_ceil_div((int64_t)m * 32, PREP_THREADS),
                   PREP_THREADS, 0, &pa, ctx->stream));
    op->u = sdi_malloc_array((size_t)(m > 0 ? m : 1), sizeof *op->u);
    op->lo = sdi_malloc_array((size_t)(m > 0 ? m : 1), sizeof *op->lo);
    op->hi = sdi_malloc_array((size_t)(m > 0 ? m : 1), sizeof *op->hi);
    SD_CHECK_ALLOC(op->u, "u(i)");
    SD_CHECK_ALLOC(op->lo, "row origins");
    SD_CHECK_ALLOC(op->hi, "row ends");
    if (m > 0) {
        SD_TRY(sdi_copy_to_host(ctx, op->u, du, (size_t)m * 8, "u(i)"));
        SD_TRY(sdi_copy_to_host(ctx, op->lo, op->rowlo, (size_t)m * 4, "row origins"));
        SD_TRY(sdi_copy_to_host(ctx, op->hi, dhi, (size_t)m * 4, "row ends"));
    }
    sdi_device_free(du);
    sdi_device_free(dhi);
    du = dhi = NULL;
    op->ri.m = m;
    op->ri.n = op->n;
    op->ri.u = op->u;
    op->ri.lo = op->lo;
    op->ri.hi = op->hi;
    op->ri.b_row_max = b_row_max;
    op->setup_ms = (sdi_now() - t0) * 1e3;
    *out = op;
    return SD_OK;
#undef SD_FREE_ALL
}
