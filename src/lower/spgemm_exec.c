/* src/lower/spgemm_exec.c: the SpGEMM device driver: operands on the device (A, B or
 * the transpose Aᵀ built by the plan-time kernels, the u(i)/span analysis), executors
 * (schedule → launch units → one module per unit plus the scan's, workspaces allocated
 * once) and one call: stage-1 launches (SYM for two-phase bins, ONE for one-phase bins)
 * → look-back scan (+ the compaction when C was allocated at the upper bound) → one wait
 * for nnz(C) → C's arrays → stage-2 launches (NUM for two-phase bins, compaction of
 * one-phase rows); the launches of a call replayed as two CUDA graphs (see "graphs"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../analysis/analysis.h"
#include "spgemm_exec.h"

/* ------------------------------------------------------------------ helpers */
static sd_status launch1(sd_context *ctx, const sdi_function *f, int64_t grid, int threads,
                         size_t smem, void *args, cudaStream_t st)
{
    if (grid <= 0)
        return SD_OK;
    if (grid > 0x7fffffffll)
        return SDI_ERR(SD_ERR_UNSUPPORTED, "kernel '%s': %lld blocks exceed the grid limit",
                       f->name, (long long)grid);
    dim3 g = {(unsigned)grid, 1, 1}, b = {(unsigned)threads, 1, 1};
    void *params[1] = {args};
    return sdi_cuda_status(ctx, cudaLaunchKernel((const void *)f->kernel, g, b, params, smem, st),
                           "launching", f->name);
}

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Device allocation through the hooks, counted in *bytes. */
static sd_status dalloc(sd_context *ctx, void **p, size_t bytes, const char *what, int64_t *total)
{
    sd_status s = sdi_device_malloc(ctx, p, bytes, what);
    if (s == SD_OK)
        *total += (int64_t)bytes;
    return s;
}

static sd_status dzero(sd_context *ctx, void *p, size_t bytes, const char *what)
{
    if (p == NULL || bytes == 0)
        return SD_OK;
    return sdi_cuda_status(ctx, cudaMemsetAsync(p, 0, bytes, ctx->stream), "clearing", what);
}

/* ------------------------------------------------------------------ operands */
enum {
    PREP_ROWINFO = 0,
    PREP_TCOUNT,
    PREP_TSCATTER,
    PREP_TSORT_WARP,
    PREP_TSORT_CTA,
    PREP_TSORT_LONG,
    PREP_GATHER,
    PREP_N
};
static const char *const prep_names[PREP_N] = {
    "sd_spgemm_prep_rowinfo",   "sd_spgemm_prep_tcount",   "sd_spgemm_prep_tscatter",
    "sd_spgemm_prep_tsort_warp", "sd_spgemm_prep_tsort_cta", "sd_spgemm_prep_tsort_long",
    "sd_spgemm_prep_gather"};
#define PREP_THREADS 256

struct sdi_spgemm_operands {
    sd_context *ctx;
    int32_t m, k, n;
    int64_t annz, bnnz;
    int aat, same;
    sd_offset *arow;
    sd_index *acol;
    sd_value *aval;
    sd_offset *brow; /* owned unless same */
    sd_index *bcol;
    sd_value *bval;    /* a separate B's values */
    sd_offset *bperm;  /* B = Aᵀ: entry of A behind each entry of B */
    sd_value *bgather; /* B = Aᵀ: values gathered per call */
    sd_index *rowlo;   /* device lo(i) */
    int64_t *u;        /* host */
    int32_t *lo, *hi;
    sdi_sg_rowinfo ri;
    sdi_module prep;
    int64_t bytes;
    double setup_ms;
};

void sdi_spgemm_operands_destroy(sdi_spgemm_operands *op)
{
    if (op == NULL)
        return;
    sdi_device_free(op->arow);
    sdi_device_free(op->acol);
    sdi_device_free(op->aval);
    if (!op->same) {
        sdi_device_free(op->brow);
        sdi_device_free(op->bcol);
    }
    sdi_device_free(op->bval);
    sdi_device_free(op->bperm);
    sdi_device_free(op->bgather);
    sdi_device_free(op->rowlo);
    sdi_module_unload(&op->prep);
    sdi_free(op->u);
    sdi_free(op->lo);
    sdi_free(op->hi);
    sdi_free(op);
}

const sdi_sg_rowinfo *sdi_spgemm_operands_rowinfo(const sdi_spgemm_operands *op)
{
    return op != NULL ? &op->ri : NULL;
}
int sdi_spgemm_operands_aat(const sdi_spgemm_operands *op) { return op != NULL && op->aat; }
int64_t sdi_spgemm_operands_bytes(const sdi_spgemm_operands *op) { return op ? op->bytes : 0; }
double sdi_spgemm_operands_setup_ms(const sdi_spgemm_operands *op) { return op ? op->setup_ms : 0; }

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

sd_status sdi_spgemm_config_request(const sd_context *ctx, const sdi_spgemm_operands *op,
                                    const sdi_spgemm_config *cfg, sdi_sg_lowered *low,
                                    sdi_sg_schedule *keep)
{
    sdi_sg_schedule s;
    memset(low, 0, sizeof *low);
    if (keep != NULL)
        memset(keep, 0, sizeof *keep);
    sdi_sg_limits lim;
    sdi_sg_limits_from_props(&ctx->props, &lim);
    sd_status st = sdi_sg_schedule_build(cfg, &lim, &op->ri, &s);
    if (st != SD_OK)
        return st;
    st = sdi_spgemm_lower(&s, low);
    if (st == SD_OK && keep != NULL)
        *keep = s; /* moved to the caller */
    else
        sdi_sg_schedule_free(&s);
    return st;
}

static sd_status prep_module(sd_context *ctx, sdi_module *out)
{
    sdi_jit_request req;
    sdi_spgemm_prep_request(&req);
    const sdi_cubin *cb = NULL;
    sd_status s = sdi_jit_get(ctx, &req, &cb, NULL);
    if (s != SD_OK)
        return s;
    return sdi_module_load(ctx, cb->cubin, cb->size, prep_names, PREP_N, out);
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
    SD_TRY(dalloc(ctx, &tcount, (size_t)k * 8, "transpose counts", &scratch));
    SD_TRY(dzero(ctx, tcount, (size_t)k * 8, "transpose counts"));
    pa.tcount = tcount;
    SD_TRY(launch1(ctx, &op->prep.functions[PREP_TCOUNT], ceil_div(nnz, PREP_THREADS),
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
    SD_TRY(dalloc(ctx, (void **)&op->brow, ((size_t)k + 1) * 8, "Aᵀ row pointers", &op->bytes));
    SD_TRY(sdi_copy_to_device(ctx, op->brow, trow, ((size_t)k + 1) * 8, "Aᵀ row pointers"));
    SD_TRY(dalloc(ctx, &tcursor, (size_t)k * 8, "transpose cursors", &scratch));
    if (k > 0)
        SD_TRY(sdi_cuda_status(ctx, cudaMemcpyAsync(tcursor, op->brow, (size_t)k * 8,
                                                    cudaMemcpyDeviceToDevice, ctx->stream),
                               "copying", "transpose cursors"));
    SD_TRY(dalloc(ctx, (void **)&op->bcol, (size_t)nnz * 4, "Aᵀ columns", &op->bytes));
    SD_TRY(dalloc(ctx, (void **)&op->bperm, (size_t)nnz * 8, "Aᵀ permutation", &op->bytes));
    pa.tcursor = tcursor;
    pa.trow = op->brow;
    pa.tcol = op->bcol;
    pa.tperm = op->bperm;
    SD_TRY(launch1(ctx, &op->prep.functions[PREP_TSCATTER], ceil_div((int64_t)a->rows * 32, PREP_THREADS),
                   PREP_THREADS, 0, &pa, ctx->stream));
    SD_TRY(launch1(ctx, &op->prep.functions[PREP_TSORT_WARP], ceil_div((int64_t)k * 32, PREP_THREADS),
                   PREP_THREADS, 0, &pa, ctx->stream));
    SD_TRY(launch1(ctx, &op->prep.functions[PREP_TSORT_CTA], k < 65536 ? k : 65536, PREP_THREADS,
                   0, &pa, ctx->stream));
    if (nlong > 0) {
        hlong = sdi_malloc_array((size_t)nlong, sizeof *hlong);
        SD_CHECK_ALLOC(hlong, "long transpose rows");
        int64_t q = 0;
        for (int32_t c = 0; c < k; c++)
            if ((int64_t)hcount[c] > SD_SG_TR_SMEM_SORT)
                hlong[q++] = c;
        SD_TRY(dalloc(ctx, &dlong, (size_t)nlong * 4, "long transpose rows", &scratch));
        SD_TRY(sdi_copy_to_device(ctx, dlong, hlong, (size_t)nlong * 4, "long transpose rows"));
        SD_TRY(dalloc(ctx, &tmp_col, (size_t)nnz * 4, "transpose merge columns", &scratch));
        SD_TRY(dalloc(ctx, &tmp_perm, (size_t)nnz * 8, "transpose merge permutation", &scratch));
        pa.long_rows = dlong;
        pa.nlong = (int)nlong;
        pa.tmp_col = tmp_col;
        pa.tmp_perm = tmp_perm;
        SD_TRY(launch1(ctx, &op->prep.functions[PREP_TSORT_LONG], nlong, PREP_THREADS, 0, &pa,
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
        SD_TRY(dalloc(ctx, (void **)&op->bgather, (size_t)a->nnz * 4, "Aᵀ values", &op->bytes));
    }
    /* The upper-bound analysis on the device. */
    const int32_t m = op->m;
    SD_TRY(dalloc(ctx, &du, (size_t)m * 8, "u(i)", &op->bytes));
    SD_TRY(dalloc(ctx, (void **)&op->rowlo, (size_t)m * 4, "row origins", &op->bytes));
    SD_TRY(dalloc(ctx, &dhi, (size_t)m * 4, "row ends", &op->bytes));
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
    SD_TRY(launch1(ctx, &op->prep.functions[PREP_ROWINFO], ceil_div((int64_t)m * 32, PREP_THREADS),
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

sd_status sdi_spgemm_operands_set_values(sdi_spgemm_operands *op, const float *a_vals,
                                         const float *b_vals)
{
    if (op == NULL || a_vals == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spgemm values: NULL argument");
    sd_status s = sdi_copy_to_device(op->ctx, op->aval, a_vals, (size_t)op->annz * 4, "A's values");
    if (s != SD_OK || op->bval == NULL)
        return s;
    if (b_vals == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spgemm values: B's values are NULL");
    return sdi_copy_to_device(op->ctx, op->bval, b_vals, (size_t)op->bnnz * 4, "B's values");
}

/* ------------------------------------------------------------------ executors */
/* Launches of one stage that may run side by side, at most: each bin's rows are its own
 * (disjoint writes), except the global bin's stripes (shared workspace, in waves). */
#define SG_SIDE_STREAMS 3

/* A kernel node of an executor's graph, with the argument values it holds (one argument
 * struct, and the scan's flag), so that a call updates only the nodes whose values moved:
 * C's arrays when the pool hands back other addresses, the scan's epoch every call. */
#define SG_ARG_MAX sizeof(sd_spgemm_args)
_Static_assert(sizeof(sd_spgemm_prep_args) <= SG_ARG_MAX, "the gather's arguments fit a node's copy");
typedef struct {
    cudaGraphNode_t node;
    const sdi_function *fn;
    int64_t blocks;
    int threads;
    size_t smem;
    const void *args; /* the executor's live values (largs[l], scan_args, gather_args) */
    size_t args_size;
    const int *flag;  /* the scan's second parameter, else NULL */
    unsigned char held[SG_ARG_MAX];
    int held_flag;
} sg_gnode;

typedef struct {
    cudaGraph_t g;
    cudaGraphExec_t x;
    sg_gnode *nodes; /* room for every launch, the gather and the scan (graph_build) */
    int n;
} sg_graph;
#define SG_GRAPHS 3

struct sdi_spgemm_exec {
    sd_context *ctx;
    sdi_spgemm_operands *op;
    sdi_spgemm_config cfg;
    sdi_sg_schedule sched;
    sdi_module *mods;   /* per unit of the lowering: one kernel each */
    int nmods;
    sdi_module scan_mod;
    sdi_function **fns; /* per launch: the kernel of its unit */
    sdi_function *scan;
    sd_spgemm_args *largs; /* per launch */
    sd_spgemm_args scan_args;
    void *binrows, *ub, *cnt, *tcol, *tval, *flags, *gval, *gbits, *gdone;
    int64_t *h_nnz; /* pinned and mapped: the scan writes nnz(C) there (scan_args.nnz_host),
                     * else a copy reads it back without a staging buffer */
    /* Side streams for the independent launches of a stage (see run_stage); nside = 0
     * runs every launch on the caller's stream. */
    int nside;
    int ind[2][SDI_SG_MAX_LAUNCHES], nind[2]; /* stage 1, 2: independent launches, smallest grid first */
    cudaStream_t side[SG_SIDE_STREAMS];
    cudaEvent_t fork, join[SG_SIDE_STREAMS];
    /* The call's kernels as CUDA graphs (see graph_run): [0] the gather, stage 1 and the
     * scan, [1] stage 2, [2] both in one (eager schedules only). state 0 until the first
     * call, 1 built, -1 plain launches. */
    sg_graph graph[SG_GRAPHS];
    int graph_state;
    sd_spgemm_prep_args gather_args;
    int scan_copy;
    unsigned epoch;
    int64_t calls;
    sdi_spgemm_exec_info info;
};

static void graph_drop(sg_graph *g)
{
    if (g->x != NULL && cudaGraphExecDestroy(g->x) != cudaSuccess)
        (void)cudaGetLastError();
    if (g->g != NULL && cudaGraphDestroy(g->g) != cudaSuccess)
        (void)cudaGetLastError();
    sdi_free(g->nodes);
    memset(g, 0, sizeof *g);
}

void sdi_spgemm_exec_destroy(sdi_spgemm_exec *e)
{
    if (e == NULL)
        return;
    sdi_device_free(e->binrows);
    sdi_device_free(e->ub);
    sdi_device_free(e->cnt);
    sdi_device_free(e->tcol);
    sdi_device_free(e->tval);
    sdi_device_free(e->flags);
    sdi_device_free(e->gval);
    sdi_device_free(e->gbits);
    sdi_device_free(e->gdone);
    if (e->h_nnz != NULL && cudaFreeHost(e->h_nnz) != cudaSuccess)
        (void)cudaGetLastError();
    for (int i = 0; i < e->nside; i++) {
        if (e->side[i] != NULL && cudaStreamDestroy(e->side[i]) != cudaSuccess)
            (void)cudaGetLastError();
        if (e->join[i] != NULL && cudaEventDestroy(e->join[i]) != cudaSuccess)
            (void)cudaGetLastError();
    }
    if (e->fork != NULL && cudaEventDestroy(e->fork) != cudaSuccess)
        (void)cudaGetLastError();
    for (int i = 0; i < SG_GRAPHS; i++)
        graph_drop(&e->graph[i]);
    for (int u = 0; u < e->nmods; u++)
        sdi_module_unload(&e->mods[u]);
    sdi_free(e->mods);
    sdi_module_unload(&e->scan_mod);
    sdi_sg_schedule_free(&e->sched);
    sdi_free(e->fns);
    sdi_free(e->largs);
    sdi_free(e);
}

const sdi_spgemm_exec_info *sdi_spgemm_exec_get_info(const sdi_spgemm_exec *e)
{
    return e != NULL ? &e->info : NULL;
}
const sdi_sg_schedule *sdi_spgemm_exec_schedule(const sdi_spgemm_exec *e)
{
    return e != NULL ? &e->sched : NULL;
}

/* Whether launch L may run beside the other launches of its stage: its segments touch only
 * their own rows (not the global bin's shared stripes and counters). */
static bool launch_independent(const sdi_sg_launch *L)
{
    for (int q = 0; q < L->nsegs; q++)
        if (L->segs[q].kind == SDI_SG_GLOBAL)
            return false;
    return true;
}

/* Each stage's independent launches in ascending grid size (once, for every call): the
 * smallest grids (the heaviest rows, few CTAs running long) go to the side streams first. */
static void stage_order(sdi_spgemm_exec *e)
{
    const sdi_sg_schedule *s = &e->sched;
    for (int stage = 1; stage <= 2; stage++) {
        int *ind = e->ind[stage - 1], n = 0;
        for (int l = 0; l < s->nlaunches; l++)
            if (s->launches[l].stage == stage && launch_independent(&s->launches[l]))
                ind[n++] = l;
        for (int i = 1; i < n; i++) {
            int x = ind[i], j = i - 1;
            while (j >= 0 && s->launches[ind[j]].blocks > s->launches[x].blocks) {
                ind[j + 1] = ind[j];
                j--;
            }
            ind[j + 1] = x;
        }
        e->nind[stage - 1] = n;
    }
}

/* Side streams (non-blocking) and fork / join events for a schedule whose stages have
 * independent launches; none otherwise. */
static sd_status side_streams_create(sdi_spgemm_exec *e)
{
    stage_order(e);
    int want = (e->nind[0] > e->nind[1] ? e->nind[0] : e->nind[1]) - 1;
    if (want > SG_SIDE_STREAMS)
        want = SG_SIDE_STREAMS;
    if (want < 1 || !sdi_config_get()->sg_streams) /* SPARSEDITTO_SG_STREAMS=0: the caller's stream only */
        return SD_OK;
#define SD_FREE_ALL /* the executor's destroy releases what was created */
    SD_TRY(sdi_cuda_status(e->ctx, cudaEventCreateWithFlags(&e->fork, cudaEventDisableTiming),
                           "cudaEventCreate for", "the SpGEMM fork"));
    for (int i = 0; i < want; i++) {
        SD_TRY(sdi_cuda_status(e->ctx, cudaStreamCreateWithFlags(&e->side[i], cudaStreamNonBlocking),
                               "cudaStreamCreate for", "a SpGEMM side stream"));
        e->nside = i + 1; /* destroy sees the stream even if its event fails */
        SD_TRY(sdi_cuda_status(e->ctx, cudaEventCreateWithFlags(&e->join[i], cudaEventDisableTiming),
                               "cudaEventCreate for", "a SpGEMM join"));
    }
    return SD_OK;
#undef SD_FREE_ALL
}

/* Keeps freed stream-ordered memory in the default pool: without it every call would
 * map and unmap its output. */
static void keep_pool_memory(int device)
{
    cudaMemPool_t pool;
    if (cudaDeviceGetDefaultMemPool(&pool, device) == cudaSuccess) {
        uint64_t threshold = UINT64_MAX;
        (void)cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold);
    }
    (void)cudaGetLastError();
}

sd_status sdi_spgemm_exec_create(sd_context *ctx, sdi_spgemm_operands *op,
                                 const sdi_spgemm_config *cfg, sdi_spgemm_exec **out)
{
    return sdi_spgemm_exec_adopt(ctx, op, cfg, NULL, NULL, out);
}

sd_status sdi_spgemm_exec_adopt(sd_context *ctx, sdi_spgemm_operands *op,
                                const sdi_spgemm_config *cfg, sdi_sg_schedule *sched,
                                const sdi_sg_lowered *lowered, sdi_spgemm_exec **out)
{
    sdi_spgemm_exec *e = NULL;
    sdi_sg_lowered own;
    memset(&own, 0, sizeof own);
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_sg_lowered_free(&own);                                                         \
        sdi_spgemm_exec_destroy(e);                                                        \
    } while (0)
    if (out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spgemm exec: out is NULL");
    *out = NULL;
    if (op == NULL || cfg == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spgemm exec: operands or config is NULL");
    if ((sched == NULL) != (lowered == NULL))
        return SDI_ERR(SD_ERR_INVALID_ARG, "spgemm exec: a schedule comes with its lowering");
    SD_TRY(sdi_ctx_enter(ctx));
    SD_TRY(sdi_spgemm_config_check(cfg));
    const double t0 = sdi_now();
    e = sdi_calloc(1, sizeof *e);
    SD_CHECK_ALLOC(e, "spgemm executor");
    e->ctx = ctx;
    e->op = op;
    e->cfg = *cfg;
    if (sched != NULL) {
        if (sched->m != op->ri.m || sched->n != op->ri.n || lowered->nkernels != sched->nlaunches) {
            SD_FREE_ALL;
            return SDI_ERR(SD_ERR_INVALID_ARG,
                           "spgemm exec: the schedule (%d x %d, %d launches) is not this "
                           "product's (%d x %d) or its lowering's (%d kernels)",
                           sched->m, sched->n, sched->nlaunches, op->ri.m, op->ri.n,
                           lowered->nkernels);
        }
        e->sched = *sched; /* moved: the caller's copy is emptied */
        memset(sched, 0, sizeof *sched);
    } else {
        sdi_sg_limits lim;
        sdi_sg_limits_from_props(&ctx->props, &lim);
        SD_TRY(sdi_sg_schedule_build(cfg, &lim, &op->ri, &e->sched));
    }
    const sdi_sg_schedule *s = &e->sched;
    e->info.schedule_ms = (sdi_now() - t0) * 1e3;

    /* Units → modules: one per distinct launch shape (shared with every other schedule
     * that has the shape, through the memo), plus the scan. */
    if (lowered == NULL) {
        SD_TRY(sdi_spgemm_lower(s, &own));
        lowered = &own;
    }
    const sdi_sg_lowered *low = lowered; /* read only (own, if used, freed below) */
    const size_t nu1 = (size_t)(low->nunits > 0 ? low->nunits : 1);
    const size_t nl1 = (size_t)(s->nlaunches > 0 ? s->nlaunches : 1);
    e->mods = sdi_calloc(nu1, sizeof *e->mods);
    e->fns = sdi_malloc_array(nl1, sizeof *e->fns);
    e->largs = sdi_calloc(nl1, sizeof *e->largs);
    SD_CHECK_ALLOC(e->mods, "launch modules");
    SD_CHECK_ALLOC(e->fns, "launch functions");
    SD_CHECK_ALLOC(e->largs, "launch arguments");
    for (int u = 0; u <= low->nunits; u++) {
        sdi_jit_request req;
        const char *name;
        sdi_module *mod;
        if (u < low->nunits) {
            sdi_spgemm_unit_request(low, u, &req);
            name = low->units[u].name;
            mod = &e->mods[u];
        } else {
            sdi_spgemm_scan_request(&req);
            name = "sd_spgemm_scan";
            mod = &e->scan_mod;
        }
        const sdi_cubin *cb = NULL;
        bool hit = false;
        SD_TRY(sdi_jit_get(ctx, &req, &cb, &hit));
        if (!hit)
            e->info.compile_ms += cb->compile_ms;
        SD_TRY(sdi_module_load(ctx, cb->cubin, cb->size, &name, 1, mod));
        if (u < low->nunits)
            e->nmods = u + 1;
    }
    e->scan = &e->scan_mod.functions[0];
    /* A unit's kernel serves every launch of its shape: reserve the largest dynamic
     * shared memory among them once, then check each launch. */
    for (int u = 0; u < low->nunits; u++) {
        int64_t smem = 0;
        for (int l = 0; l < s->nlaunches; l++)
            if (low->unit_of[l] == u && s->launches[l].smem > smem)
                smem = s->launches[l].smem;
        if (smem > 48 * 1024)
            SD_TRY(sdi_function_reserve_smem(ctx, &e->mods[u].functions[0], (int)smem));
    }
    for (int l = 0; l < s->nlaunches; l++) {
        const sdi_sg_launch *L = &s->launches[l];
        e->fns[l] = &e->mods[low->unit_of[l]].functions[0];
        SD_TRY(sdi_function_check_legal(ctx, e->fns[l], L->threads, (size_t)L->smem));
        if (e->fns[l]->num_regs > e->info.max_regs)
            e->info.max_regs = e->fns[l]->num_regs;
        e->info.spill_bytes += (int64_t)e->fns[l]->local_bytes;
    }

    /* Workspaces, allocated once. */
    int64_t bytes = 0;
    const int32_t m = s->m;
    SD_TRY(dalloc(ctx, &e->binrows, (size_t)s->nbinrows * 4, "bin rows", &bytes));
    if (s->nbinrows > 0)
        SD_TRY(sdi_copy_to_device(ctx, e->binrows, s->binrows, (size_t)s->nbinrows * 4, "bin rows"));
    if (s->ub != NULL) {
        SD_TRY(dalloc(ctx, &e->ub, ((size_t)m + 1) * 8, "staging offsets", &bytes));
        SD_TRY(sdi_copy_to_device(ctx, e->ub, s->ub, ((size_t)m + 1) * 8, "staging offsets"));
        SD_TRY(dalloc(ctx, &e->tcol, (size_t)s->ub_total * 4, "staging columns", &bytes));
        SD_TRY(dalloc(ctx, &e->tval, (size_t)s->ub_total * 4, "staging values", &bytes));
    }
    SD_TRY(dalloc(ctx, &e->cnt, (size_t)m * 4, "row counts", &bytes));
    SD_TRY(dzero(ctx, e->cnt, (size_t)m * 4, "row counts"));
    SD_TRY(dalloc(ctx, &e->flags, (size_t)s->ntiles * 8, "scan tiles", &bytes));
    SD_TRY(dzero(ctx, e->flags, (size_t)s->ntiles * 8, "scan tiles"));
    if (s->gslots > 0) {
        const size_t nv = (size_t)s->gslots * (size_t)s->gwidth;
        SD_TRY(dalloc(ctx, &e->gval, nv * 4, "global stripes", &bytes));
        SD_TRY(dalloc(ctx, &e->gbits, nv / 8, "global stripe bitmaps", &bytes));
        SD_TRY(dzero(ctx, e->gval, nv * 4, "global stripes"));
        SD_TRY(dzero(ctx, e->gbits, nv / 8, "global stripe bitmaps"));
        if (s->gparts > 0) {
            SD_TRY(dalloc(ctx, &e->gdone, (size_t)s->grows * 4, "global row counters", &bytes));
            SD_TRY(dzero(ctx, e->gdone, (size_t)s->grows * 4, "global row counters"));
        }
    }
    SD_TRY(sdi_cuda_status(ctx, cudaHostAlloc((void **)&e->h_nnz, sizeof(int64_t),
                                              cudaHostAllocMapped),
                           "cudaHostAlloc for", "nnz(C)"));
    SD_TRY(side_streams_create(e));
    e->info.side_streams = e->nside;
    SD_TRY(sdi_stream_sync(ctx, "preparing the SpGEMM workspaces", NULL));

    /* Argument blocks: shared pointers, then each launch's segment table. */
    sd_spgemm_args base;
    memset(&base, 0, sizeof base);
    base.arow = op->arow;
    base.acol = op->acol;
    base.aval = op->aval;
    base.brow = op->brow;
    base.bcol = op->bcol;
    base.bval = op->same ? op->aval : op->bval;
    base.binrows = e->binrows;
    base.rowlo = op->rowlo;
    base.ub = e->ub;
    base.cnt = e->cnt;
    base.tcol = e->tcol;
    base.tval = e->tval;
    base.flags = e->flags;
    base.gval = e->gval;
    base.gbits = e->gbits;
    base.gwidth = s->gwidth;
    base.gdone = e->gdone;
    base.gparts = s->gparts;
    base.m = m;
    base.n = s->n;
    for (int l = 0; l < s->nlaunches; l++) {
        const sdi_sg_launch *L = &s->launches[l];
        sd_spgemm_args *la = &e->largs[l];
        *la = base;
        la->nsegs = L->nsegs;
        int end = 0;
        for (int q = 0; q < L->nsegs; q++) {
            end += L->segs[q].blocks;
            la->seg_end[q] = end;
            la->seg_first[q] = L->segs[q].first;
            la->seg_rows[q] = L->segs[q].nrows;
        }
    }
    e->scan_args = base;
    e->scan_copy = s->out_ub;
    if (op->aat && cfg->bt_gather) { /* B's values gathered from A's at every call */
        e->gather_args.gsrc = op->aval;
        e->gather_args.gdst = op->bgather;
        e->gather_args.gperm = op->bperm;
        e->gather_args.nnz = op->bnnz;
    }
    /* The scan writes nnz(C) into the mapped word itself: a call then waits for its kernels
     * only, without a device-to-host copy queued behind them (one operation less for the
     * host to issue, and the copy's latency off the end of the call). Where the device
     * cannot map it, the copy stays. */
    void *mapped = NULL;
    if (cudaHostGetDevicePointer(&mapped, e->h_nnz, 0) == cudaSuccess) {
        e->scan_args.nnz_host = (long long *)mapped;
        e->info.nnz_mapped = 1;
    } else
        (void)cudaGetLastError();
    keep_pool_memory(ctx->device);

    e->info.plan_bytes = op->bytes + bytes;
    e->info.peak_bytes = e->info.plan_bytes;
    e->info.launches_per_call = s->nlaunches + (m > 0 ? 1 : 0) +
                                (op->aat && cfg->bt_gather && op->annz > 0 ? 1 : 0);
    sdi_sg_schedule_describe(s, e->info.bins, sizeof e->info.bins);
    sdi_spgemm_config_describe(cfg, e->info.config, sizeof e->info.config);
    e->info.setup_ms = (sdi_now() - t0) * 1e3;
    sdi_sg_lowered_free(&own);
    *out = e;
    return SD_OK;
#undef SD_FREE_ALL
}

sd_status sdi_spgemm_precompile(sd_context *ctx, const sdi_spgemm_operands *op,
                                const sdi_spgemm_config *cfgs, int n)
{
    sdi_sg_lowered *lows = NULL;
    sdi_jit_request *reqs = NULL;
    uint64_t *keys = NULL;
    int nlows = n > 0 ? n : 0;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        for (int q_ = 0; lows != NULL && q_ < nlows; q_++)                                 \
            sdi_sg_lowered_free(&lows[q_]);                                                \
        sdi_free(lows);                                                                    \
        sdi_free(reqs);                                                                    \
        sdi_free(keys);                                                                    \
    } while (0)
    if (ctx == NULL || op == NULL || (n > 0 && cfgs == NULL))
        return SDI_ERR(SD_ERR_INVALID_ARG, "spgemm precompile: NULL argument");
    sdi_sg_limits lim;
    sdi_sg_limits_from_props(&ctx->props, &lim);
    lows = sdi_calloc((size_t)(nlows > 0 ? nlows : 1), sizeof *lows);
    SD_CHECK_ALLOC(lows, "lowered configurations");
    /* 1. Schedule and lower every configuration (host work, in parallel). */
    sd_status first = SD_OK;
#pragma omp parallel for schedule(dynamic, 1)
    for (int q = 0; q < n; q++) {
        sdi_sg_schedule s;
        if (sdi_sg_schedule_build(&cfgs[q], &lim, &op->ri, &s) != SD_OK)
            continue;
        sd_status st = sdi_spgemm_lower(&s, &lows[q]);
        sdi_sg_schedule_free(&s);
        if (st != SD_OK) {
#pragma omp critical(sdi_spgemm_precompile)
            if (first == SD_OK)
                first = st;
        }
    }
    /* 2. The distinct units of all of them (equal shapes give equal sources), and the
     * scan: NVRTC runs once per distinct source, not once per configuration. */
    int total = 1;
    for (int q = 0; q < n; q++)
        for (int u = 0; u < lows[q].nunits; u++)
            total += 1 + lows[q].units[u].nparts;
    reqs = sdi_calloc((size_t)total, sizeof *reqs);
    keys = sdi_calloc((size_t)total, sizeof *keys);
    SD_CHECK_ALLOC(reqs, "precompile requests");
    SD_CHECK_ALLOC(keys, "precompile requests");
    int nreq = 0;
    sdi_spgemm_scan_request(&reqs[nreq++]);
    /* Linked units: their distinct relocatable parts first (compiled in parallel below, the
     * units then only link them), deduplicated across units and configurations. */
    for (int q = 0; q < n; q++)
        for (int u = 0; u < lows[q].nunits; u++) {
            sdi_jit_request unit;
            sdi_spgemm_unit_request(&lows[q], u, &unit);
            for (int p = 0; p < unit.nparts; p++) {
                const char *src = unit.parts[p];
                const uint64_t k = sdi_hash_bytes(src, strlen(src), 0).lo;
                bool seen = false;
                for (int r = 1; r < nreq && !seen; r++)
                    seen = keys[r] == k && strcmp(reqs[r].source, src) == 0;
                if (!seen) {
                    keys[nreq] = k;
                    sdi_jit_part_request(&unit, p, &reqs[nreq++]);
                }
            }
        }
    const int nparts_req = nreq;
    for (int q = 0; q < n; q++)
        for (int u = 0; u < lows[q].nunits; u++) {
            const char *src = lows[q].units[u].source;
            const uint64_t k = sdi_hash_bytes(src, strlen(src), 0).lo;
            bool seen = false;
            for (int r = nparts_req; r < nreq && !seen; r++)
                seen = keys[r] == k && strcmp(reqs[r].source, src) == 0;
            if (!seen) {
                keys[nreq] = k;
                sdi_spgemm_unit_request(&lows[q], u, &reqs[nreq++]);
            }
        }
    /* 3. Compile them in parallel (NVRTC is thread-safe; the memo keeps the results), the
     * longest sources first: a fused unit of many segments compiles for seconds (dblp-2010:
     * 1.3 s against 0.1–0.3 s for the others on the VM), and started last it would run
     * alone at the end of the batch. */
    for (int r = 1; r < nreq; r++)
        keys[r] = strlen(reqs[r].source); /* the hashes are done with: now the lengths */
    for (int r = 2; r < nreq; r++) {
        const sdi_jit_request x = reqs[r];
        const uint64_t lx = keys[r];
        int j = r - 1;
        /* within its group: the parts, then the units (a linked unit needs its parts) */
        const int lo = r < nparts_req ? 1 : nparts_req;
        for (; j >= lo && keys[j] < lx; j--) {
            reqs[j + 1] = reqs[j];
            keys[j + 1] = keys[j];
        }
        reqs[j + 1] = x;
        keys[j + 1] = lx;
    }
    for (int pass = 0; pass < 2; pass++) { /* parts (and the scan), then the units */
        const int r0 = pass == 0 ? 0 : nparts_req, r1 = pass == 0 ? nparts_req : nreq;
#pragma omp parallel for schedule(dynamic, 1)
        for (int r = r0; r < r1; r++) {
            const sdi_cubin *cb = NULL;
            sd_status st = sdi_jit_get(ctx, &reqs[r], &cb, NULL);
            if (st != SD_OK) {
#pragma omp critical(sdi_spgemm_precompile)
                if (first == SD_OK)
                    first = st;
            }
        }
    }
    SD_FREE_ALL;
    return first;
#undef SD_FREE_ALL
}

static sd_status out_alloc(sdi_spgemm_exec *e, sdi_sg_alloc alloc, void **p, size_t bytes,
                           cudaStream_t st, const char *what)
{
    *p = NULL;
    if (bytes == 0)
        return SD_OK;
    if (alloc == SDI_SG_ALLOC_HOOKS)
        return sdi_device_malloc(e->ctx, p, bytes, what);
    return sdi_device_malloc_async(e->ctx, p, bytes, st, what);
}

static void out_release(sdi_sg_alloc alloc, void *p, cudaStream_t st)
{
    if (p == NULL)
        return;
    if (alloc == SDI_SG_ALLOC_HOOKS)
        sdi_device_free(p);
    else
        sdi_device_free_async(p, st);
}

void sdi_spgemm_output_free(sd_device_csr *c, cudaStream_t stream)
{
    if (c == NULL)
        return;
    out_release(SDI_SG_ALLOC_ASYNC, c->rowptr, stream);
    out_release(SDI_SG_ALLOC_ASYNC, c->colind, stream);
    out_release(SDI_SG_ALLOC_ASYNC, c->vals, stream);
    memset(c, 0, sizeof *c);
}

/* The launches of one stage. Independent launches run side by side: the smallest grids
 * (the heaviest rows, few CTAs running long; ordered once by stage_order) start first on
 * the side streams, the largest on st, so the long rows overlap the many short ones
 * instead of trailing them; launches of the global bin stay on st in order. st waits for
 * the side streams before it goes on, so the caller's events still time the whole stage. */
static sd_status run_stage(sdi_spgemm_exec *e, int stage, cudaStream_t st)
{
#define SD_FREE_ALL /* nothing of its own */
    const sdi_sg_schedule *s = &e->sched;
    const int *ind = e->ind[stage - 1], nind = e->nind[stage - 1];
    int nfork = nind - 1 < e->nside ? nind - 1 : e->nside;
    if (nfork > 0) {
        /* ind[0 .. nfork) go to the side streams, the rest to st. */
        SD_TRY(sdi_cuda_status(e->ctx, cudaEventRecord(e->fork, st), "cudaEventRecord", "the SpGEMM fork"));
        for (int i = 0; i < nind; i++) {
            const int l = ind[i];
            const sdi_sg_launch *L = &s->launches[l];
            const int k = i < nfork ? i : -1; /* side stream k, or st for the rest */
            cudaStream_t on = k >= 0 ? e->side[k] : st;
            if (k >= 0)
                SD_TRY(sdi_cuda_status(e->ctx, cudaStreamWaitEvent(on, e->fork, 0), "cudaStreamWaitEvent",
                                       "a SpGEMM side stream"));
            SD_TRY(launch1(e->ctx, e->fns[l], L->blocks, L->threads, (size_t)L->smem, &e->largs[l], on));
        }
    }
    for (int l = 0; l < s->nlaunches; l++) {
        const sdi_sg_launch *L = &s->launches[l];
        if (L->stage != stage || (nfork > 0 && launch_independent(L)))
            continue;
        SD_TRY(launch1(e->ctx, e->fns[l], L->blocks, L->threads, (size_t)L->smem, &e->largs[l], st));
    }
    for (int k = 0; k < nfork; k++) {
        SD_TRY(sdi_cuda_status(e->ctx, cudaEventRecord(e->join[k], e->side[k]), "cudaEventRecord",
                               "a SpGEMM join"));
        SD_TRY(sdi_cuda_status(e->ctx, cudaStreamWaitEvent(st, e->join[k], 0), "cudaStreamWaitEvent",
                               "a SpGEMM join"));
    }
    return SD_OK;
#undef SD_FREE_ALL
}

/* ------------------------------------------------------------------ graphs */
/* A call's kernels go to the device as CUDA graphs instead of one launch each: [0] the
 * gather of Aᵀ's values, stage 1 and the scan, then [1] stage 2 after the wait for nnz(C);
 * where C is allocated ahead (eager), [2] = [0] and [1] in one graph, the numeric stage
 * right after the scan (one graph launch a call). The graphs keep run_stage's order:
 * each launch it sends to a side stream is a branch of its own, the rest one chain, and a
 * stage's branches join before the next stage. They are built at the first call; a call
 * then updates only the nodes whose arguments moved (the scan's epoch, C's arrays when the
 * allocator hands back other addresses) and launches one or two graphs, where the plain
 * path enqueues every kernel, fork and join itself. Plain launches where the graphs are off
 * (SPARSEDITTO_SG_GRAPH=0 or SPARSEDITTO_GRAPHS=0, for measurements), where they cannot be
 * built (from then on), and on a stream the caller is capturing. */
#define SD_FREE_ALL /* what the graphs hold, the executor's destroy releases */

static void gnode_params(const sg_gnode *n, void **params, struct cudaKernelNodeParams *np)
{
    memset(np, 0, sizeof *np);
    np->func = (void *)n->fn->kernel;
    np->gridDim = (dim3){(unsigned)n->blocks, 1, 1};
    np->blockDim = (dim3){(unsigned)n->threads, 1, 1};
    np->sharedMemBytes = (unsigned)n->smem;
    params[0] = (void *)n->args;
    params[1] = (void *)n->flag;
    np->kernelParams = params;
}

/* A kernel node after deps[0 .. ndeps); *out is NULL for a grid of no blocks (no node, as
 * launch1 launches nothing). */
static sd_status graph_add(sdi_spgemm_exec *e, sg_graph *g, const sdi_function *f, int64_t blocks,
                           int threads, size_t smem, const void *args, size_t size, const int *flag,
                           const cudaGraphNode_t *deps, int ndeps, cudaGraphNode_t *out)
{
    *out = NULL;
    if (blocks <= 0)
        return SD_OK;
    if (blocks > 0x7fffffffll)
        return SDI_ERR(SD_ERR_UNSUPPORTED, "kernel '%s': %lld blocks exceed the grid limit",
                       f->name, (long long)blocks);
    sg_gnode *n = &g->nodes[g->n];
    memset(n, 0, sizeof *n);
    n->fn = f;
    n->blocks = blocks;
    n->threads = threads;
    n->smem = smem;
    n->args = args;
    n->args_size = size;
    n->flag = flag;
    memcpy(n->held, args, size);
    n->held_flag = flag != NULL ? *flag : 0;
    void *params[2];
    struct cudaKernelNodeParams np;
    gnode_params(n, params, &np);
    SD_TRY(sdi_cuda_status(e->ctx, cudaGraphAddKernelNode(&n->node, g->g, deps, (size_t)ndeps, &np),
                           "adding a graph node for", f->name));
    g->n++;
    *out = n->node;
    return SD_OK;
}

/* Stage `stage`'s launches after deps[0 .. *ndeps), in run_stage's order: the launches it
 * sends to side streams a branch each, the rest one chain. deps becomes the stage's last
 * nodes (at most SG_SIDE_STREAMS + 1; unchanged when the stage launches nothing). */
static sd_status graph_stage(sdi_spgemm_exec *e, sg_graph *g, int stage, cudaGraphNode_t *deps,
                             int *ndeps)
{
    const sdi_sg_schedule *s = &e->sched;
    const int *ind = e->ind[stage - 1], nind = e->nind[stage - 1];
    const int nfork = nind - 1 < e->nside ? nind - 1 : e->nside;
    cudaGraphNode_t last[SG_SIDE_STREAMS + 1], chain = NULL, node;
    int nlast = 0;
    for (int i = 0; i < nind && nfork > 0; i++) {
        const sdi_sg_launch *L = &s->launches[ind[i]];
        const bool side = i < nfork;
        SD_TRY(graph_add(e, g, e->fns[ind[i]], L->blocks, L->threads, (size_t)L->smem,
                         &e->largs[ind[i]], sizeof e->largs[ind[i]], NULL,
                         side || chain == NULL ? deps : &chain, side || chain == NULL ? *ndeps : 1,
                         &node));
        if (node != NULL && side)
            last[nlast++] = node;
        else if (node != NULL)
            chain = node;
    }
    for (int l = 0; l < s->nlaunches; l++) {
        const sdi_sg_launch *L = &s->launches[l];
        if (L->stage != stage || (nfork > 0 && launch_independent(L)))
            continue;
        SD_TRY(graph_add(e, g, e->fns[l], L->blocks, L->threads, (size_t)L->smem, &e->largs[l],
                         sizeof e->largs[l], NULL, chain == NULL ? deps : &chain,
                         chain == NULL ? *ndeps : 1, &node));
        if (node != NULL)
            chain = node;
    }
    if (chain != NULL)
        last[nlast++] = chain;
    if (nlast > 0) {
        memcpy(deps, last, (size_t)nlast * sizeof *deps);
        *ndeps = nlast;
    }
    return SD_OK;
}

static sd_status graph_build(sdi_spgemm_exec *e)
{
    const sdi_spgemm_operands *op = e->op;
    const bool eager = !e->sched.out_ub && e->sched.eager_cap > 0;
    for (int i = 0; i < (eager ? 3 : 2); i++) {
        sg_graph *g = &e->graph[i];
        g->nodes = sdi_malloc_array((size_t)e->sched.nlaunches + 2, sizeof *g->nodes);
        SD_CHECK_ALLOC(g->nodes, "the SpGEMM graph's nodes");
        SD_TRY(sdi_cuda_status(e->ctx, cudaGraphCreate(&g->g, 0), "creating", "the SpGEMM graph"));
        cudaGraphNode_t deps[SG_SIDE_STREAMS + 1], node;
        int nd = 0;
        if (i != 1) {
            if (op->aat && e->cfg.bt_gather) {
                SD_TRY(graph_add(e, g, &op->prep.functions[PREP_GATHER], ceil_div(op->bnnz, PREP_THREADS),
                                 PREP_THREADS, 0, &e->gather_args, sizeof e->gather_args, NULL, NULL,
                                 0, &node));
                if (node != NULL)
                    deps[nd++] = node;
            }
            SD_TRY(graph_stage(e, g, 1, deps, &nd));
            SD_TRY(graph_add(e, g, e->scan, e->sched.ntiles, SD_SG_SCAN_THREADS, 0, &e->scan_args,
                             sizeof e->scan_args, &e->scan_copy, deps, nd, &node));
            nd = 0;
            if (node != NULL)
                deps[nd++] = node;
        }
        if (i != 0)
            SD_TRY(graph_stage(e, g, 2, deps, &nd));
        if (g->n == 0) {
            graph_drop(g); /* nothing to launch */
            continue;
        }
        SD_TRY(sdi_cuda_status(e->ctx, cudaGraphInstantiate(&g->x, g->g, 0), "instantiating",
                               "the SpGEMM graph"));
    }
    return SD_OK;
}

/* Gives the graphs up (plain launches from now on), unless the context is broken. */
static sd_status graph_give_up(sdi_spgemm_exec *e, sd_status s)
{
    if (e->ctx->broken)
        return s;
    sdi_log(2, "spgemm: plain launches from now on (%s)", sd_last_error());
    sdi_error_clear();
    (void)cudaGetLastError();
    for (int i = 0; i < SG_GRAPHS; i++)
        graph_drop(&e->graph[i]);
    e->graph_state = -1;
    return SD_OK;
}

/* Whether this call goes through the graphs (built at the first call of m > 0 rows). */
static sd_status graph_ready(sdi_spgemm_exec *e, cudaStream_t st, bool *use)
{
    *use = false;
    if (e->graph_state == 0) {
        e->graph_state = -1;
        if (!sdi_config_get()->graphs || !sdi_config_get()->sg_graph || e->sched.m == 0)
            return SD_OK;
        sd_status s = graph_build(e);
        if (s != SD_OK)
            return graph_give_up(e, s);
        e->graph_state = 1;
    }
    *use = e->graph_state == 1 && !sdi_stream_capturing(st);
    return SD_OK;
}

/* Enqueues graph `which` with the executor's current arguments. *ran is false when the
 * graphs had to be given up before it was enqueued (the caller launches plainly). */
static sd_status graph_run(sdi_spgemm_exec *e, int which, cudaStream_t st, bool *ran)
{
    *ran = false;
    if (e->graph_state != 1)
        return SD_OK;
    sg_graph *g = &e->graph[which];
    for (int i = 0; i < g->n; i++) {
        sg_gnode *n = &g->nodes[i];
        if (memcmp(n->held, n->args, n->args_size) == 0 && (n->flag == NULL || *n->flag == n->held_flag))
            continue;
        void *params[2];
        struct cudaKernelNodeParams np;
        gnode_params(n, params, &np);
        sd_status s = sdi_cuda_status(e->ctx, cudaGraphExecKernelNodeSetParams(g->x, n->node, &np),
                                      "updating the SpGEMM graph's arguments of", n->fn->name);
        if (s != SD_OK)
            return graph_give_up(e, s);
        memcpy(n->held, n->args, n->args_size);
        n->held_flag = n->flag != NULL ? *n->flag : 0;
    }
    if (g->x != NULL)
        SD_TRY(sdi_cuda_status(e->ctx, cudaGraphLaunch(g->x, st), "launching", "the SpGEMM graph"));
    *ran = true;
    e->info.graph_launches += g->x != NULL;
    return SD_OK;
}
#undef SD_FREE_ALL

sd_status sdi_spgemm_exec_run(sdi_spgemm_exec *e, cudaStream_t stream, sdi_sg_alloc alloc,
                              sd_device_csr *c)
{
    void *crow = NULL, *ccol = NULL, *cval = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        out_release(alloc, crow, stream);                                                  \
        out_release(alloc, ccol, stream);                                                  \
        out_release(alloc, cval, stream);                                                  \
    } while (0)
    if (c == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spgemm run: c is NULL");
    memset(c, 0, sizeof *c);
    if (e == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spgemm run: executor is NULL");
    SD_TRY(sdi_ctx_enter(e->ctx));
    sdi_spgemm_operands *op = e->op;
    const sdi_sg_schedule *s = &e->sched;
    const int32_t m = s->m;
    /* Epochs 1 … mask tag the look-back words; at the wrap the words are cleared. */
    e->epoch = e->epoch % SD_SG_EPOCH_MASK + 1u;
    if (e->epoch == 1u && e->calls > 0)
        SD_TRY(sdi_cuda_status(e->ctx, cudaMemsetAsync(e->flags, 0, (size_t)s->ntiles * 8, stream),
                               "clearing", "scan tiles"));
    e->calls++;
    /* B's values when B = Aᵀ: gathered once per call, or read through the permutation. */
    const sd_value *bval = op->same ? op->aval : op->bval;
    const sd_offset *bperm = NULL;
    const bool gather = op->aat && e->cfg.bt_gather;
    if (gather) {
        bval = op->bgather;
    } else if (op->aat) {
        bval = op->aval;
        bperm = op->bperm;
    }
    SD_TRY(out_alloc(e, alloc, &crow, ((size_t)m + 1) * 8, stream, "C's row pointers"));
    int64_t cap = 0;
    /* eager: C at a bound of nnz(C) now, the numeric stage right after the scan, one wait
     * for nnz(C) at the end (sdi_sg_schedule.eager_cap). */
    bool eager = !s->out_ub && s->eager_cap > 0 && m > 0;
    if (s->out_ub) {
        cap = s->ub_total;
        SD_TRY(out_alloc(e, alloc, &ccol, (size_t)cap * 4, stream, "C's columns"));
        SD_TRY(out_alloc(e, alloc, &cval, (size_t)cap * 4, stream, "C's values"));
    } else if (eager) {
        /* The bound is only a speed-up: where the device cannot hold it, C is allocated at
         * nnz(C) after the scan, as without it (the bound may exceed nnz(C) by up to
         * 512 MiB; a product whose exact C fits must not fail for it). */
        cap = s->eager_cap;
        sd_status st = out_alloc(e, alloc, &ccol, (size_t)cap * 4, stream, "C's columns");
        if (st == SD_OK)
            st = out_alloc(e, alloc, &cval, (size_t)cap * 4, stream, "C's values");
        if (st == SD_ERR_OUT_OF_MEMORY) {
            sdi_log(2, "spgemm: C's bound of %lld entries does not fit (%s): C follows the scan",
                    (long long)cap, sd_last_error());
            sdi_error_clear();
            out_release(alloc, ccol, stream);
            out_release(alloc, cval, stream);
            ccol = cval = NULL;
            cap = 0;
            eager = false;
        } else if (st != SD_OK) {
            SD_FREE_ALL;
            return st;
        }
    }
    /* (only the scan reads the epoch: the other launches' arguments stay as they were, so
     * their graph nodes need no update when C's arrays come back at the same addresses) */
    for (int l = 0; l < s->nlaunches; l++) {
        sd_spgemm_args *la = &e->largs[l];
        la->bval = bval;
        la->bperm = bperm;
        la->crow = crow;
        la->ccol = ccol;
        la->cval = cval;
    }
    e->scan_args.bval = bval;
    e->scan_args.bperm = bperm;
    e->scan_args.crow = crow;
    e->scan_args.ccol = ccol;
    e->scan_args.cval = cval;
    e->scan_args.epoch = e->epoch;
    bool graphed = false, ran;
    int first = 0; /* the graph that starts the call: [2] holds stage 2 too */
    if (m > 0) {
        SD_TRY(graph_ready(e, stream, &graphed));
        first = eager && e->graph[2].x != NULL ? 2 : 0;
        if (graphed)
            SD_TRY(graph_run(e, first, stream, &graphed));
    }
    if (!graphed) {
        if (gather)
            SD_TRY(launch1(e->ctx, &op->prep.functions[PREP_GATHER], ceil_div(op->bnnz, PREP_THREADS),
                           PREP_THREADS, 0, &e->gather_args, stream));
        SD_TRY(run_stage(e, 1, stream));
    }
    int64_t nnz = 0;
    if (m > 0) {
        if (!graphed) {
            void *params[2] = {&e->scan_args, &e->scan_copy};
            dim3 g = {(unsigned)s->ntiles, 1, 1}, b = {SD_SG_SCAN_THREADS, 1, 1};
            SD_TRY(sdi_cuda_status(
                e->ctx, cudaLaunchKernel((const void *)e->scan->kernel, g, b, params, 0, stream),
                "launching", e->scan->name));
        }
        if (eager) {
            ran = graphed && first == 2;
            if (graphed && !ran)
                SD_TRY(graph_run(e, 1, stream, &ran));
            if (!ran)
                SD_TRY(run_stage(e, 2, stream));
        }
        if (e->scan_args.nnz_host == NULL)
            SD_TRY(sdi_cuda_status(e->ctx, cudaMemcpyAsync(e->h_nnz, (const int64_t *)crow + m, 8,
                                                           cudaMemcpyDeviceToHost, stream),
                                   "reading nnz(C) of", "sd_spgemm_scan"));
        SD_TRY(sdi_cuda_status(e->ctx, cudaStreamSynchronize(stream), "running the SpGEMM",
                               e->scan->name));
        nnz = *e->h_nnz;
    } else {
        SD_TRY(sdi_cuda_status(e->ctx, cudaMemsetAsync(crow, 0, 8, stream), "clearing",
                               "C's row pointers"));
    }
    if (nnz < 0 || ((s->out_ub || eager) && nnz > cap)) {
        SD_FREE_ALL;
        return SDI_ERR(SD_ERR_INTERNAL, "spgemm: nnz(C) = %lld is out of range (capacity %lld)",
                       (long long)nnz, (long long)cap);
    }
    if (!s->out_ub && !eager) {
        cap = nnz;
        SD_TRY(out_alloc(e, alloc, &ccol, (size_t)nnz * 4, stream, "C's columns"));
        SD_TRY(out_alloc(e, alloc, &cval, (size_t)nnz * 4, stream, "C's values"));
        if (nnz > 0) {
            for (int l = 0; l < s->nlaunches; l++) {
                e->largs[l].ccol = ccol;
                e->largs[l].cval = cval;
            }
            ran = false;
            if (graphed)
                SD_TRY(graph_run(e, 1, stream, &ran));
            if (!ran)
                SD_TRY(run_stage(e, 2, stream));
        }
    }
    c->rows = m;
    c->cols = s->n;
    c->nnz = nnz;
    c->rowptr = crow;
    c->colind = ccol;
    c->vals = cval;
    e->info.nnz_c = nnz;
    const int64_t call = sdi_spgemm_output_bytes(m, cap);
    if (call > e->info.call_bytes) {
        e->info.call_bytes = call;
        e->info.peak_bytes = e->info.plan_bytes + call;
    }
    return SD_OK;
#undef SD_FREE_ALL
}

/* ------------------------------------------------------------------ measurement */
typedef struct {
    sdi_spgemm_produce_fn fn;
    void *arg;
    sd_device_csr c;
    int have;
    const sdi_reference *ref;
    sdi_validation *val;
} measure_state;

static sd_status measure_run(sd_context *ctx, void *p, cudaStream_t st)
{
    (void)ctx;
    measure_state *m = p;
    if (m->have)
        sdi_spgemm_output_free(&m->c, st);
    m->have = 0;
    sd_status s = m->fn(m->arg, st, &m->c);
    if (s == SD_OK)
        m->have = 1;
    return s;
}

static sd_status measure_check(sd_context *ctx, void *p)
{
    measure_state *m = p;
    if (!m->have)
        return SDI_ERR(SD_ERR_INTERNAL, "spgemm measure: no output to check");
    return sdi_spgemm_check(ctx, m->ref, &m->c, m->val);
}

sd_status sdi_spgemm_check(sd_context *ctx, const sdi_reference *ref, const sd_device_csr *c,
                           sdi_validation *val)
{
    sdi_validation local;
    if (val == NULL)
        val = &local;
    memset(val, 0, sizeof *val);
    if (c->rows != ref->c.rows || c->cols != ref->c.cols) {
        snprintf(val->reason, sizeof val->reason, "C is %dx%d, want %dx%d", c->rows, c->cols,
                 ref->c.rows, ref->c.cols);
        return SDI_ERR(SD_ERR_VALIDATION, "SpGEMM output: %s", val->reason);
    }
    /* The validation rule first (docs/ARCHITECTURE.md "Validation"; it sorts before
     * comparing). A pass on the device means C's
     * structure equals the sorted reference's entry for entry, so its columns strictly
     * increase and the host pass below, a copy of C and a loop over it per candidate
     * (0.65 GB for R-MAT scale 16), would only repeat that. */
    sd_status s = sdi_check_spgemm_output(ctx, ref, c->rows, c->cols, c->nnz, c->rowptr, 8, c->colind,
                                          c->vals, val);
    if (s != SD_OK || val->device)
        return s;
    /* Our promise beyond the rule: columns strictly increase in every row. */
    int64_t *rp = sdi_malloc_array((size_t)c->rows + 1, sizeof *rp);
    int32_t *ci = sdi_malloc_array((size_t)(c->nnz > 0 ? c->nnz : 1), sizeof *ci);
    s = rp && ci ? SD_OK : SDI_ERR(SD_ERR_OUT_OF_MEMORY, "host copy of C");
    if (s == SD_OK)
        s = sdi_copy_to_host(ctx, rp, c->rowptr, ((size_t)c->rows + 1) * 8, "C row pointers");
    if (s == SD_OK && c->nnz > 0)
        s = sdi_copy_to_host(ctx, ci, c->colind, (size_t)c->nnz * 4, "C columns");
    for (int32_t i = 0; s == SD_OK && i < c->rows; i++)
        for (int64_t q = rp[i] + 1; q < rp[i + 1]; q++)
            if (ci[q] <= ci[q - 1]) {
                val->ok = false;
                snprintf(val->reason, sizeof val->reason, "row %d: columns not sorted (%d after %d)",
                         i, ci[q], ci[q - 1]);
                s = SDI_ERR(SD_ERR_VALIDATION, "SpGEMM output: %s", val->reason);
                break;
            }
    sdi_free(rp);
    sdi_free(ci);
    return s;
}

sd_status sdi_spgemm_measure(sd_context *ctx, const char *name, sdi_spgemm_produce_fn fn,
                             void *arg, const sdi_reference *ref, sdi_timing *t,
                             sdi_validation *val, int64_t *nnz_c, const sdi_screen *sc,
                             sdi_measured *how)
{
    measure_state m;
    memset(&m, 0, sizeof m);
    m.fn = fn;
    m.arg = arg;
    m.ref = ref;
    m.val = val;
    sd_status s = sdi_measure_screened(ctx, name, measure_run, &m, ref ? measure_check : NULL, &m, sc, t,
                                       how);
    if (nnz_c != NULL)
        *nnz_c = m.have ? m.c.nnz : -1;
    if (m.have)
        sdi_spgemm_output_free(&m.c, ctx->stream);
    sd_status q = sdi_stream_sync(ctx, "after measuring", name);
    return s != SD_OK ? s : q;
}
