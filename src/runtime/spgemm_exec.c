/* src/runtime/spgemm_exec.c: a SpGEMM executor's creation: a schedule and its compile
 * units (moved in from the lowering) → one module per unit plus the scan's (through the
 * memo and the JIT cache), the workspaces allocated once, the argument blocks, side
 * streams for a stage's independent launches. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memo.h"
#include "spgemm_internal.h"

/* Each stage's independent launches in ascending grid size (once, for every call): the
 * smallest grids (the heaviest rows, few CTAs running long) go to the side streams first. */
static void stage_order(sdi_spgemm_exec *e)
{
    const sdi_sg_schedule *s = &e->sched;
    for (int stage = 1; stage <= 2; stage++) {
        int *ind = e->ind[stage - 1], n = 0;
        for (int l = 0; l < s->nlaunches; l++)
            if (s->launches[l].stage == stage && sdi_sg_launch_independent(&s->launches[l]))
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

sd_status sdi_spgemm_exec_adopt(sd_context *ctx, sdi_spgemm_operands *op, sdi_sg_schedule *sched,
                                const sdi_sg_lowered *low, sdi_spgemm_exec **out)
{
    sdi_spgemm_exec *e = NULL;
#define SD_FREE_ALL sdi_spgemm_exec_destroy(e)
    if (out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spgemm exec: out is NULL");
    *out = NULL;
    if (op == NULL || sched == NULL || low == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spgemm exec: operands, schedule or units are NULL");
    SD_TRY(sdi_ctx_enter(ctx));
    const double t0 = sdi_now();
    if (sched->m != op->ri.m || sched->n != op->ri.n || low->nkernels != sched->nlaunches)
        return SDI_ERR(SD_ERR_INVALID_ARG,
                       "spgemm exec: the schedule (%d x %d, %d launches) is not this "
                       "product's (%d x %d) or its lowering's (%d kernels)",
                       sched->m, sched->n, sched->nlaunches, op->ri.m, op->ri.n, low->nkernels);
    e = sdi_calloc(1, sizeof *e);
    SD_CHECK_ALLOC(e, "spgemm executor");
    e->ctx = ctx;
    e->op = op;
    e->sched = *sched; /* moved: the caller's copy is emptied */
    memset(sched, 0, sizeof *sched);
    const sdi_sg_schedule *s = &e->sched;
    e->info.schedule_ms = (sdi_now() - t0) * 1e3;

    /* Units → modules: one per distinct launch shape (shared with every other schedule
     * that has the shape, through the memo), plus the scan. */
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
    SD_TRY(sg_dalloc(ctx, &e->binrows, (size_t)s->nbinrows * 4, "bin rows", &bytes));
    if (s->nbinrows > 0)
        SD_TRY(sdi_copy_to_device(ctx, e->binrows, s->binrows, (size_t)s->nbinrows * 4, "bin rows"));
    if (s->ub != NULL) {
        SD_TRY(sg_dalloc(ctx, &e->ub, ((size_t)m + 1) * 8, "staging offsets", &bytes));
        SD_TRY(sdi_copy_to_device(ctx, e->ub, s->ub, ((size_t)m + 1) * 8, "staging offsets"));
        SD_TRY(sg_dalloc(ctx, &e->tcol, (size_t)s->ub_total * 4, "staging columns", &bytes));
        SD_TRY(sg_dalloc(ctx, &e->tval, (size_t)s->ub_total * 4, "staging values", &bytes));
    }
    SD_TRY(sg_dalloc(ctx, &e->cnt, (size_t)m * 4, "row counts", &bytes));
    SD_TRY(sg_dzero(ctx, e->cnt, (size_t)m * 4, "row counts"));
    SD_TRY(sg_dalloc(ctx, &e->flags, (size_t)s->ntiles * 8, "scan tiles", &bytes));
    SD_TRY(sg_dzero(ctx, e->flags, (size_t)s->ntiles * 8, "scan tiles"));
    if (s->gslots > 0) {
        const size_t nv = (size_t)s->gslots * (size_t)s->gwidth;
        SD_TRY(sg_dalloc(ctx, &e->gval, nv * 4, "global stripes", &bytes));
        SD_TRY(sg_dalloc(ctx, &e->gbits, nv / 8, "global stripe bitmaps", &bytes));
        SD_TRY(sg_dzero(ctx, e->gval, nv * 4, "global stripes"));
        SD_TRY(sg_dzero(ctx, e->gbits, nv / 8, "global stripe bitmaps"));
        if (s->gparts > 0) {
            SD_TRY(sg_dalloc(ctx, &e->gdone, (size_t)s->grows * 4, "global row counters", &bytes));
            SD_TRY(sg_dzero(ctx, e->gdone, (size_t)s->grows * 4, "global row counters"));
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
    if (op->aat && s->bt_gather) { /* B's values gathered from A's at every call */
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
                                (op->aat && s->bt_gather && op->annz > 0 ? 1 : 0);
    sdi_sg_schedule_describe(s, e->info.bins, sizeof e->info.bins);
    snprintf(e->info.config, sizeof e->info.config, "%s", s->config_text);
    e->info.setup_ms = (sdi_now() - t0) * 1e3;
    *out = e;
    return SD_OK;
#undef SD_FREE_ALL
}
