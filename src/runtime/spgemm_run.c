/* src/runtime/spgemm_run.c: one SpGEMM call: stage-1 launches (SYM for two-phase bins, ONE
 * for one-phase bins) → look-back scan (+ the compaction when C was allocated at the upper
 * bound) → one wait for nnz(C) → C's arrays → stage-2 launches (NUM for two-phase bins,
 * compaction of one-phase rows); the launches of a call replayed as CUDA graphs (see
 * "graphs"). Also what releases operands and executors. Compiles nothing: the run path
 * links without the JIT. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../analysis/analysis.h"
#include "program.h"
#include "spgemm_internal.h"

/* ------------------------------------------------------------------ operands */
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
int64_t sdi_spgemm_operands_value_bytes(const sdi_spgemm_operands *op)
{
    return op == NULL ? 0 : op->annz * 4 + (op->bval != NULL ? op->bnnz * 4 : 0);
}
double sdi_spgemm_operands_setup_ms(const sdi_spgemm_operands *op) { return op ? op->setup_ms : 0; }

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
            SD_TRY(sg_launch1(e->ctx, e->fns[l], L->blocks, L->threads, (size_t)L->smem, &e->largs[l], on));
        }
    }
    for (int l = 0; l < s->nlaunches; l++) {
        const sdi_sg_launch *L = &s->launches[l];
        if (L->stage != stage || (nfork > 0 && sdi_sg_launch_independent(L)))
            continue;
        SD_TRY(sg_launch1(e->ctx, e->fns[l], L->blocks, L->threads, (size_t)L->smem, &e->largs[l], st));
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
        if (L->stage != stage || (nfork > 0 && sdi_sg_launch_independent(L)))
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
            if (op->aat && e->sched.bt_gather) {
                SD_TRY(graph_add(e, g, &op->prep.functions[PREP_GATHER], sg_ceil_div(op->bnnz, PREP_THREADS),
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
    const bool gather = op->aat && e->sched.bt_gather;
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
            SD_TRY(sg_launch1(e->ctx, &op->prep.functions[PREP_GATHER], sg_ceil_div(op->bnnz, PREP_THREADS),
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
