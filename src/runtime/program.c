/* src/runtime/program.c: launch programs: an ordered list of kernel launches (function,
 * grid, block, dynamic shared memory, arguments bound to named device buffers), the
 * buffers they need, and optional replay through a captured CUDA graph. */
#include <stdio.h>
#include <string.h>

#include "../core/rng.h"
#include "runtime.h"

void sdi_program_init(sdi_program *p) { memset(p, 0, sizeof *p); }

static void drop_graph(sdi_program *p)
{
    if (p->graph != NULL && cudaGraphExecDestroy(p->graph) != cudaSuccess)
        (void)cudaGetLastError();
    p->graph = NULL;
    p->graph_stream = NULL;
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
        p->graph_stale = true; /* the graph holds the old pointer */
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

static sd_status launch_one(sd_context *ctx, const sdi_program *p, const sdi_launch *l,
                            cudaStream_t stream)
{
    /* cudaLaunchKernel copies the arguments out of params before returning. */
    void *params[SDI_MAX_KERNEL_ARGS];
    void *ptrs[SDI_MAX_KERNEL_ARGS];
    sdi_arg vals[SDI_MAX_KERNEL_ARGS];
    for (int i = 0; i < l->nargs; i++) {
        const sdi_arg *a = &l->args[i];
        switch (a->kind) {
        case SDI_ARG_BUFFER:
            ptrs[i] = p->buffers[a->buffer].dev;
            params[i] = &ptrs[i];
            break;
        case SDI_ARG_PTR:
            ptrs[i] = a->v.ptr;
            params[i] = &ptrs[i];
            break;
        default:
            vals[i] = *a;
            params[i] = &vals[i].v;
            break;
        }
    }
    dim3 grid = {l->grid[0], l->grid[1], l->grid[2]};
    dim3 block = {l->block[0], l->block[1], l->block[2]};
    cudaError_t e = cudaLaunchKernel((const void *)l->fn->kernel, grid, block,
                                     l->nargs > 0 ? params : NULL, l->smem, stream);
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

sd_status sdi_program_capture(sd_context *ctx, sdi_program *p, cudaStream_t stream)
{
    sd_status s = sdi_ctx_enter(ctx);
    if (s != SD_OK)
        return s;
    if (p->nlaunches == 0)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sdi_program_capture: the program has no launches");
    drop_graph(p);
    cudaGraph_t graph = NULL;
    /* Thread-local mode: other threads' CUDA calls are not forbidden during capture. */
    s = sdi_cuda_status(ctx, cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal),
                        "beginning the graph capture", NULL);
    if (s != SD_OK)
        return s;
    sd_status run = run_launches(ctx, p, stream);
    cudaError_t e = cudaStreamEndCapture(stream, &graph);
    if (run != SD_OK) {
        if (graph != NULL)
            (void)cudaGraphDestroy(graph);
        (void)cudaGetLastError();
        return run;
    }
    s = sdi_cuda_status(ctx, e, "ending the graph capture", NULL);
    if (s != SD_OK)
        return s;
    e = cudaGraphInstantiate(&p->graph, graph, 0);
    (void)cudaGraphDestroy(graph); /* the executable graph keeps its own copy */
    if (e != cudaSuccess) {
        p->graph = NULL;
        return sdi_cuda_status(ctx, e, "instantiating the CUDA graph", NULL);
    }
    p->graph_stream = stream;
    p->graph_stale = false;
    p->use_graph = true;
    return SD_OK;
}

sd_status sdi_program_run(sd_context *ctx, sdi_program *p, cudaStream_t stream)
{
    if (p == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sdi_program_run: program is NULL");
    if (p->use_graph) {
        if (p->graph == NULL || p->graph_stale || p->graph_stream != stream) {
            uint64_t sig = sdi_hash3((uint64_t)(uintptr_t)stream, (uint64_t)p->nbuffers, 0);
            for (int i = 0; i < p->nbuffers; i++)
                sig = sdi_hash3(sig, (uint64_t)(uintptr_t)p->buffers[i].dev, (uint64_t)i);
            if (p->graph != NULL && sig != p->stale_binding) {
                p->stale_binding = sig;
                return run_launches(ctx, p, stream);
            }
            sd_status s = sdi_program_capture(ctx, p, stream);
            if (s != SD_OK)
                return s;
        }
        return sdi_cuda_status(ctx, cudaGraphLaunch(p->graph, stream), "launching the graph of",
                               p->nlaunches > 0 ? p->launches[0].fn->name : NULL);
    }
    return run_launches(ctx, p, stream);
}
