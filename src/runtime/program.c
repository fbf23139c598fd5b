/* src/runtime/program.c: launch programs: an ordered list of kernel launches (function,
 * grid, block, dynamic shared memory, arguments bound to named device buffers), the
 * buffers they need, and optional replay through a CUDA graph built from the launches. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "device_memory.h"
#include "program.h"

void sdi_program_init(sdi_program *p) { memset(p, 0, sizeof *p); }

static void drop_graph(sdi_program *p)
{
    if (p->graph != NULL && cudaGraphExecDestroy(p->graph) != cudaSuccess)
        (void)cudaGetLastError();
    if (p->graph_tmpl != NULL && cudaGraphDestroy(p->graph_tmpl) != cudaSuccess)
        (void)cudaGetLastError();
    sdi_free(p->graph_nodes);
    p->graph = NULL;
    p->graph_tmpl = NULL;
    p->graph_nodes = NULL;
}

void sdi_program_free(sdi_program *p)
{
    if (p == NULL)
        return;
    drop_graph(p);
    for (int i = 0; i < p->nbuffers; i++)
        if (p->buffers[i].owned)
            sdi_device_free(p->buffers[i].dev);
    sdi_free(p->buffers);
    sdi_free(p->launches);
    memset(p, 0, sizeof *p);
}

int sdi_program_find_buffer(const sdi_program *p, const char *name)
{
    for (int i = 0; i < p->nbuffers; i++)
        if (strcmp(p->buffers[i].name, name) == 0)
            return i;
    return -1;
}

static sd_status new_buffer(sdi_program *p, const char *name, int *index)
{
    if (name == NULL || name[0] == '\0' || strlen(name) >= SDI_BUFFER_NAME)
        return SDI_ERR(SD_ERR_INVALID_ARG, "program buffer name '%s' is empty or longer than "
                       "%d characters", name ? name : "(null)", SDI_BUFFER_NAME - 1);
    if (sdi_program_find_buffer(p, name) >= 0)
        return SDI_ERR(SD_ERR_INVALID_ARG, "program buffer '%s' exists already", name);
    if (p->nbuffers == p->cap_buffers) {
        int cap = p->cap_buffers ? 2 * p->cap_buffers : 8;
        sdi_buffer *b = sdi_realloc_array(p->buffers, (size_t)cap, sizeof *b);
        if (b == NULL)
            return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for program buffers");
        p->buffers = b;
        p->cap_buffers = cap;
    }
    sdi_buffer *b = &p->buffers[p->nbuffers];
    memset(b, 0, sizeof *b);
    snprintf(b->name, sizeof b->name, "%s", name);
    *index = p->nbuffers++;
    return SD_OK;
}

sd_status sdi_program_alloc_buffer(sd_context *ctx, sdi_program *p, const char *name,
                                   size_t bytes, int *index)
{
    void *dev = NULL;
    char what[96];
    snprintf(what, sizeof what, "program buffer '%s'", name ? name : "(null)");
    sd_status s = sdi_device_malloc(ctx, &dev, bytes, what);
    if (s != SD_OK)
        return s;
    if (dev != NULL) {
        s = sdi_cuda_status(ctx, cudaMemsetAsync(dev, 0, bytes, ctx->stream), what, NULL);
        if (s == SD_OK)
            s = sdi_stream_sync(ctx, what, NULL);
    }
    int i = -1;
    if (s == SD_OK)
        s = new_buffer(p, name, &i);
    if (s != SD_OK) {
        sdi_device_free(dev);
        return s;
    }
    p->buffers[i].dev = dev;
    p->buffers[i].bytes = bytes;
    p->buffers[i].owned = true;
    p->graph_stale = true;
    if (index != NULL)
        *index = i;
    return SD_OK;
}

sd_status sdi_program_bind_buffer(sdi_program *p, const char *name, void *dev, size_t bytes,
                                  int *index)
{
    int i = name ? sdi_program_find_buffer(p, name) : -1;
    if (i >= 0) {
        if (p->buffers[i].owned)
            return SDI_ERR(SD_ERR_INVALID_ARG, "program buffer '%s' is owned by the program "
                           "and cannot be rebound", name);
    } else {
        sd_status s = new_buffer(p, name, &i);
        if (s != SD_OK)
            return s;
    }
    if (p->buffers[i].dev != dev)
        p->graph_args_stale = true; /* the graph's nodes hold the old pointer */
    p->buffers[i].dev = dev;
    p->buffers[i].bytes = bytes;
    p->buffers[i].owned = false;
    if (index != NULL)
        *index = i;
    return SD_OK;
}

sd_status sdi_program_upload(sd_context *ctx, sdi_program *p, const char *name,
                             const void *host, size_t bytes)
{
    int i = sdi_program_find_buffer(p, name);
    if (i < 0)
        return SDI_ERR(SD_ERR_INVALID_ARG, "program has no buffer '%s'", name);
    if (p->buffers[i].bytes != bytes)
        return SDI_ERR(SD_ERR_INVALID_ARG, "program buffer '%s' holds %zu bytes, not %zu", name,
                       p->buffers[i].bytes, bytes);
    return sdi_copy_to_device(ctx, p->buffers[i].dev, host, bytes, name);
}

sd_status sdi_program_add_launch(sdi_program *p, sdi_function *fn, const unsigned grid[3],
                                 const unsigned block[3], size_t smem, const sdi_arg *args,
                                 int nargs)
{
    if (fn == NULL || grid == NULL || block == NULL || nargs < 0 ||
        nargs > SDI_MAX_KERNEL_ARGS || (nargs > 0 && args == NULL))
        return SDI_ERR(SD_ERR_INVALID_ARG, "sdi_program_add_launch: bad arguments (%d args, "
                       "at most %d)", nargs, SDI_MAX_KERNEL_ARGS);
    unsigned long long threads = (unsigned long long)block[0] * block[1] * block[2];
    if (threads == 0 || grid[0] == 0 || grid[1] == 0 || grid[2] == 0)
        return SDI_ERR(SD_ERR_INVALID_ARG, "kernel '%s': empty grid or block", fn->name);
    if (threads > (unsigned long long)fn->max_threads)
        return SDI_ERR(SD_ERR_UNSUPPORTED, "kernel '%s': %llu threads per CTA exceed the "
                       "function's limit of %d", fn->name, threads, fn->max_threads);
    if (smem > (size_t)fn->max_dynamic_smem)
        return SDI_ERR(SD_ERR_UNSUPPORTED, "kernel '%s': %zu B dynamic shared memory exceed "
                       "the reserved %d B", fn->name, smem, fn->max_dynamic_smem);
    for (int i = 0; i < nargs; i++)
        if (args[i].kind == SDI_ARG_BUFFER &&
            (args[i].buffer < 0 || args[i].buffer >= p->nbuffers))
            return SDI_ERR(SD_ERR_INVALID_ARG, "kernel '%s': argument %d names buffer %d, "
                           "which does not exist", fn->name, i, args[i].buffer);
    if (p->nlaunches == p->cap_launches) {
        int cap = p->cap_launches ? 2 * p->cap_launches : 4;
        sdi_launch *l = sdi_realloc_array(p->launches, (size_t)cap, sizeof *l);
        if (l == NULL)
            return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for program launches");
        p->launches = l;
        p->cap_launches = cap;
    }
    sdi_launch *l = &p->launches[p->nlaunches++];
    memset(l, 0, sizeof *l);
    l->fn = fn;
    memcpy(l->grid, grid, sizeof l->grid);
    memcpy(l->block, block, sizeof l->block);
    l->smem = smem;
    l->nargs = nargs;
    if (nargs > 0)
        memcpy(l->args, args, (size_t)nargs * sizeof *args);
    p->graph_stale = true;
    return SD_OK;
}

/* A launch's kernel parameters: cudaLaunchKernel and the graph's kernel nodes copy the
 * values out of `params` before returning. */
typedef struct {
    void *params[SDI_MAX_KERNEL_ARGS];
    void *ptrs[SDI_MAX_KERNEL_ARGS];
    sdi_arg vals[SDI_MAX_KERNEL_ARGS];
} arg_pack;

static void **pack_args(const sdi_program *p, const sdi_launch *l, arg_pack *k)
{
    for (int i = 0; i < l->nargs; i++) {
        const sdi_arg *a = &l->args[i];
        switch (a->kind) {
        case SDI_ARG_BUFFER:
            k->ptrs[i] = p->buffers[a->buffer].dev;
            k->params[i] = &k->ptrs[i];
            break;
        case SDI_ARG_PTR:
            k->ptrs[i] = a->v.ptr;
            k->params[i] = &k->ptrs[i];
            break;
        default:
            k->vals[i] = *a;
            k->params[i] = &k->vals[i].v;
            break;
        }
    }
    return l->nargs > 0 ? k->params : NULL;
}

static sd_status launch_one(sd_context *ctx, const sdi_program *p, const sdi_launch *l,
                            cudaStream_t stream)
{
    arg_pack k;
    void **params = pack_args(p, l, &k);
    dim3 grid = {l->grid[0], l->grid[1], l->grid[2]};
    dim3 block = {l->block[0], l->block[1], l->block[2]};
    cudaError_t e = cudaLaunchKernel((const void *)l->fn->kernel, grid, block, params, l->smem,
                                     stream);
    return sdi_cuda_status(ctx, e, "launching", l->fn->name);
}

static sd_status run_launches(sd_context *ctx, const sdi_program *p, cudaStream_t stream)
{
    for (int i = 0; i < p->nlaunches; i++) {
        sd_status s = launch_one(ctx, p, &p->launches[i], stream);
        if (s != SD_OK)
            return s;
    }
    return SD_OK;
}

static void node_params(const sdi_program *p, const sdi_launch *l, arg_pack *k,
                        struct cudaKernelNodeParams *np)
{
    memset(np, 0, sizeof *np);
    np->func = (void *)l->fn->kernel;
    np->gridDim = (dim3){l->grid[0], l->grid[1], l->grid[2]};
    np->blockDim = (dim3){l->block[0], l->block[1], l->block[2]};
    np->sharedMemBytes = (unsigned)l->smem;
    np->kernelParams = pack_args(p, l, k);
}

/* The graph of the launches as a chain of kernel nodes, built directly (no stream
 * capture, so no stream of the caller's is involved). */
static sd_status build_graph(sd_context *ctx, sdi_program *p)
{
    drop_graph(p);
    p->graph_nodes = sdi_calloc((size_t)p->nlaunches, sizeof *p->graph_nodes);
    if (p->graph_nodes == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for the graph's nodes");
    const char *first = p->launches[0].fn->name;
    sd_status s = sdi_cuda_status(ctx, cudaGraphCreate(&p->graph_tmpl, 0),
                                  "creating the CUDA graph of", first);
    for (int i = 0; i < p->nlaunches && s == SD_OK; i++) {
        arg_pack k;
        struct cudaKernelNodeParams np;
        node_params(p, &p->launches[i], &k, &np);
        s = sdi_cuda_status(ctx,
                            cudaGraphAddKernelNode(&p->graph_nodes[i], p->graph_tmpl,
                                                   i > 0 ? &p->graph_nodes[i - 1] : NULL,
                                                   i > 0 ? 1 : 0, &np),
                            "adding a graph node for", p->launches[i].fn->name);
    }
    if (s == SD_OK)
        s = sdi_cuda_status(ctx, cudaGraphInstantiate(&p->graph, p->graph_tmpl, 0),
                            "instantiating the CUDA graph of", first);
    if (s != SD_OK) {
        p->graph = NULL; /* not instantiated */
        drop_graph(p);
        return s;
    }
    p->graph_stale = false;
    p->graph_args_stale = false;
    return SD_OK;
}

/* A rebound buffer: the nodes that read buffers get their arguments again (launches of
 * the graph already enqueued keep theirs, as CUDA documents). */
static sd_status update_graph_args(sd_context *ctx, sdi_program *p)
{
    for (int i = 0; i < p->nlaunches; i++) {
        const sdi_launch *l = &p->launches[i];
        bool reads_buffer = false;
        for (int j = 0; j < l->nargs && !reads_buffer; j++)
            reads_buffer = l->args[j].kind == SDI_ARG_BUFFER;
        if (!reads_buffer)
            continue;
        arg_pack k;
        struct cudaKernelNodeParams np;
        node_params(p, l, &k, &np);
        sd_status s = sdi_cuda_status(
            ctx, cudaGraphExecKernelNodeSetParams(p->graph, p->graph_nodes[i], &np),
            "updating the graph's arguments of", l->fn->name);
        if (s != SD_OK)
            return s;
    }
    p->graph_args_stale = false;
    return SD_OK;
}

bool sdi_stream_capturing(cudaStream_t stream)
{
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(stream, &cs) != cudaSuccess) {
        (void)cudaGetLastError();
        return true;
    }
    return cs != cudaStreamCaptureStatusNone;
}

/* Makes the graph current; false (plain launches) when it cannot be, and for good once
 * it failed for any reason but a broken context. */
static bool graph_ready(sd_context *ctx, sdi_program *p, sd_status *fatal)
{
    sd_status s = SD_OK;
    if (p->graph == NULL || p->graph_stale)
        s = build_graph(ctx, p);
    else if (p->graph_args_stale)
        s = update_graph_args(ctx, p);
    if (s == SD_OK)
        return true;
    if (ctx->broken) {
        *fatal = s;
        return false;
    }
    sdi_log(2, "program of '%s': plain launches from now on (%s)", p->launches[0].fn->name,
            sd_last_error());
    sdi_error_clear();
    (void)cudaGetLastError();
    drop_graph(p);
    p->graph_failed = true;
    return false;
}

sd_status sdi_program_run(sd_context *ctx, sdi_program *p, cudaStream_t stream)
{
    if (p == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sdi_program_run: program is NULL");
    if (p->use_graph && !p->graph_failed && p->nlaunches > 0 && !sdi_stream_capturing(stream)) {
        sd_status fatal = SD_OK;
        if (graph_ready(ctx, p, &fatal)) {
            p->graph_runs++;
            return sdi_cuda_status(ctx, cudaGraphLaunch(p->graph, stream),
                                   "launching the graph of", p->launches[0].fn->name);
        }
        if (fatal != SD_OK)
            return fatal;
    }
    return run_launches(ctx, p, stream);
}
