/* src/runtime/spgemm_internal.h: what the SpGEMM executor's files share (operands, the
 * executor and its graphs, small device helpers). Internal to the runtime's
 * spgemm_*.c; everything else goes through spgemm_exec.h. */
#ifndef SDI_SPGEMM_INTERNAL_H
#define SDI_SPGEMM_INTERNAL_H

#include <stdbool.h>
#include <string.h>

#include "context.h"
#include "device_memory.h"
#include "module.h"
#include "spgemm_exec.h"

/* ------------------------------------------------------------------ helpers */
static inline sd_status sg_launch1(sd_context *ctx, const sdi_function *f, int64_t grid, int threads,
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

static inline int64_t sg_ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Device allocation through the hooks, counted in *bytes. */
static inline sd_status sg_dalloc(sd_context *ctx, void **p, size_t bytes, const char *what, int64_t *total)
{
    sd_status s = sdi_device_malloc(ctx, p, bytes, what);
    if (s == SD_OK)
        *total += (int64_t)bytes;
    return s;
}

static inline sd_status sg_dzero(sd_context *ctx, void *p, size_t bytes, const char *what)
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

/* Whether launch L may run beside the other launches of its stage: its segments touch only
 * their own rows (not the global bin's shared stripes and counters). */
static inline bool sdi_sg_launch_independent(const sdi_sg_launch *L)
{
    for (int q = 0; q < L->nsegs; q++)
        if (L->segs[q].kind == SDI_SG_GLOBAL)
            return false;
    return true;
}

/* Operand preparation's kernels, by PREP_* index (spgemm_operands.c). */
extern const char *const sdi_sg_prep_names[PREP_N];

#endif /* SDI_SPGEMM_INTERNAL_H */
