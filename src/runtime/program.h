/* src/runtime/program.h: launch programs: named device buffers and a list of kernel
 * launches, run in order or replayed as a CUDA graph. */
#ifndef SDI_PROGRAM_H
#define SDI_PROGRAM_H

#include <stdbool.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "module.h"

#define SDI_MAX_KERNEL_ARGS 24
#define SDI_BUFFER_NAME 48

typedef enum {
    SDI_ARG_BUFFER = 0, /* the device pointer of a named buffer */
    SDI_ARG_I32,
    SDI_ARG_I64,
    SDI_ARG_F32,
    SDI_ARG_PTR /* a raw device pointer fixed at build time */
} sdi_arg_kind;

typedef struct {
    sdi_arg_kind kind;
    int buffer; /* SDI_ARG_BUFFER: index into the program's buffers */
    union {
        int32_t i32;
        int64_t i64;
        float f32;
        void *ptr;
    } v;
} sdi_arg;

typedef struct {
    char name[SDI_BUFFER_NAME];
    void *dev;
    size_t bytes;
    bool owned; /* allocated by the program (freed with it) or bound by the caller */
} sdi_buffer;

typedef struct {
    sdi_function *fn; /* borrowed from a module that outlives the program */
    unsigned grid[3], block[3];
    size_t smem;
    int nargs;
    sdi_arg args[SDI_MAX_KERNEL_ARGS];
} sdi_launch;

typedef struct {
    int nbuffers, cap_buffers;
    sdi_buffer *buffers;
    int nlaunches, cap_launches;
    sdi_launch *launches;
    /* Replay the launches as a CUDA graph built from them (one kernel node per launch,
     * in order). Issuing a graph costs the host 1.3 us against 3.5 us per plain launch on
     * the H200 (bench/bench_launch), and an event-timed execution of an empty
     * kernel 3.1 against 5.4 us: for small matrices that is most of the time. A rebound
     * buffer only updates the nodes' arguments in the instantiated graph; a stream that is
     * being captured (the caller's own graph) gets plain launches. */
    bool use_graph;
    cudaGraph_t graph_tmpl;       /* the graph the executable was instantiated from */
    cudaGraphExec_t graph;
    cudaGraphNode_t *graph_nodes; /* [nlaunches], the kernel nodes in launch order */
    bool graph_stale;             /* launches changed: build again */
    bool graph_args_stale;        /* a bound buffer moved: update the nodes' arguments */
    bool graph_failed;            /* could not be built here: plain launches from now on */
    long graph_runs;              /* executions replayed as the graph (tests, reports) */
} sdi_program;

SDI_HIDDEN void sdi_program_init(sdi_program *p);
/* Frees owned buffers and the graph; accepts a zeroed program. */
SDI_HIDDEN void sdi_program_free(sdi_program *p);
/* A buffer of `bytes` owned by the program (zero-filled). *index may be NULL. */
SDI_HIDDEN sd_status sdi_program_alloc_buffer(sd_context *ctx, sdi_program *p,
                                              const char *name, size_t bytes, int *index);
/* A buffer owned by the caller (e.g. x and y of one execution); rebinding an existing
 * name replaces its pointer. */
SDI_HIDDEN sd_status sdi_program_bind_buffer(sdi_program *p, const char *name, void *dev,
                                             size_t bytes, int *index);
SDI_HIDDEN int sdi_program_find_buffer(const sdi_program *p, const char *name);
/* Uploads host data into a named buffer (sizes must match). */
SDI_HIDDEN sd_status sdi_program_upload(sd_context *ctx, sdi_program *p, const char *name,
                                        const void *host, size_t bytes);
/* Appends a launch; arguments are copied. Checks block ≤ the function's limits and
 * that buffer arguments exist. */
SDI_HIDDEN sd_status sdi_program_add_launch(sdi_program *p, sdi_function *fn,
                                            const unsigned grid[3], const unsigned block[3],
                                            size_t smem, const sdi_arg *args, int nargs);
/* Enqueues every launch in order on `stream` (or replays the graph when use_graph).
 * Asynchronous; launch-time errors name the kernel. */
SDI_HIDDEN sd_status sdi_program_run(sd_context *ctx, sdi_program *p, cudaStream_t stream);
/* Whether `stream` is being captured into a graph (the caller's): then launches go into
 * the caller's graph as they are. An unanswerable query counts as capturing. */
SDI_HIDDEN bool sdi_stream_capturing(cudaStream_t stream);

/* Argument constructors. */
static inline sdi_arg sdi_arg_buffer(int index)
{
    sdi_arg a = {.kind = SDI_ARG_BUFFER, .buffer = index};
    return a;
}
static inline sdi_arg sdi_arg_i32(int32_t v)
{
    sdi_arg a = {.kind = SDI_ARG_I32, .buffer = -1};
    a.v.i32 = v;
    return a;
}
static inline sdi_arg sdi_arg_i64(int64_t v)
{
    sdi_arg a = {.kind = SDI_ARG_I64, .buffer = -1};
    a.v.i64 = v;
    return a;
}
static inline sdi_arg sdi_arg_f32(float v)
{
    sdi_arg a = {.kind = SDI_ARG_F32, .buffer = -1};
    a.v.f32 = v;
    return a;
}

#endif /* SDI_PROGRAM_H */
