/* src/runtime/sg_program.h: the launch program of a SpGEMM plan, as the runtime executes it:
 * the schedule (C's rows grouped into bins by accumulator, the launches of the symbolic and
 * numeric stages with their segments, workspace sizes) and its compile units (one kernel per
 * distinct launch shape). The planner builds both (src/plan/spgemm_schedule.c, src/lower);
 * the executor (src/runtime/spgemm_exec*.c) runs them. Pure data: no CUDA header. */
#ifndef SDI_RUNTIME_SG_PROGRAM_H
#define SDI_RUNTIME_SG_PROGRAM_H

#include <stdint.h>

#include "../core/core.h"
#include "../kernels/spgemm_abi.cuh"

/* ------------------------------------------------------------------ accumulators */
typedef enum {
    SDI_SG_TINY = 0, /* thread per row, sorted list of ≤ UT entries in registers */
    SDI_SG_GHASH,    /* G lanes per row, shared-memory hash table of 2^p slots */
    SDI_SG_GDENSE,   /* G lanes per row, shared-memory dense stripe of 2^p columns */
    SDI_SG_CHASH,    /* CTA per row, shared-memory hash table of 2^p slots */
    SDI_SG_CDENSE,   /* CTA per row, shared-memory dense stripe of 2^p columns */
    SDI_SG_GLOBAL,   /* CTA per row, global-memory dense stripe (slots in a workspace) */
    SDI_SG_COPY,     /* not a bin: the compaction of one-phase rows into C */
    SDI_SG_NKINDS
} sdi_sg_kind;

/* What binning reads: per row of C, u(i) and the first / last column reached. */
typedef struct {
    int32_t m, n;        /* rows and columns of C */
    const int64_t *u;    /* m: products of row i */
    const int32_t *lo;   /* m: first column reached (any value when u = 0) */
    const int32_t *hi;   /* m: last column reached */
    int64_t b_row_max;   /* longest row of B (products per round must fit in int32) */
} sdi_sg_rowinfo;

/* Hardware limits binning needs (from sdi_gpu_props). */
typedef struct {
    int smem_max;      /* dynamic shared memory per CTA (opt-in) minus a margin */
    int sm_count;
    int smem_per_sm;   /* residency (sdi_sg_resident_ctas): shared memory an SM, */
    int threads_per_sm; /* threads and CTAs an SM, */
    int ctas_per_sm;
    int smem_reserved; /* and what the hardware keeps per CTA */
    int64_t mem_bytes; /* device memory */
    int no_wide;       /* SPARSEDITTO_SG_WIDE=0: no wide CTA stripe (sdi_sg_stripe_cols) */
} sdi_sg_limits;


#define SDI_SG_MAX_BINS 64
#define SDI_SG_MAX_LAUNCHES 64

typedef struct {
    int32_t kind;      /* sdi_sg_kind */
    int32_t g;         /* lanes per row (group kinds), else 0 */
    int32_t p;         /* UT (TINY) or log2 of the table / stripe size (a wide CTA stripe:
                          −W/32, see sdi_sg_stripe_cols); 0 for GLOBAL */
    int32_t one_phase; /* 1: SYM skipped, one ONE pass into the staging area */
    int32_t threads;   /* threads per CTA of this bin's launches */
    int32_t first;     /* first index into binrows */
    int32_t nrows;
    int32_t blocks;    /* CTAs of one pass */
    int64_t u_max, u_sum, span_max, bound_max;
    int64_t smem_sym, smem_num; /* bytes per CTA of the SYM and NUM/ONE passes */
} sdi_sg_bin;

typedef struct {
    int32_t kind, g, p, phase; /* phase: SD_SG_PH_* */
    int32_t bin;               /* index into bins; −1 for COPY */
    int32_t blocks;
    int64_t smem;
    int32_t first, nrows;      /* rows of the segment (COPY: tiles) */
} sdi_sg_segment;

typedef struct {
    int32_t stage; /* 1: before the scan; 2: after it (C allocated) */
    int32_t threads;
    int64_t smem;  /* max over the segments */
    int64_t blocks;
    int32_t nsegs;
    sdi_sg_segment segs[SD_SG_MAX_SEGS];
    int32_t resident; /* CTAs an SM can hold (sdi_sg_resident_ctas; not part of its shape) */
} sdi_sg_launch;

/* The schedule of one product under one configuration. */
typedef struct {
    int32_t m, n;
    int32_t *binrows; /* nbinrows rows with products, grouped by bin (owned) */
    int32_t nbinrows;
    int32_t nempty;   /* rows without products (count 0, never launched) */
    int32_t nbins;
    sdi_sg_bin bins[SDI_SG_MAX_BINS];
    int32_t nlaunches;
    sdi_sg_launch launches[SDI_SG_MAX_LAUNCHES];
    int64_t *ub;      /* m + 1 staging offsets (owned; NULL without one-phase rows) */
    int64_t ub_total; /* staging entries */
    int32_t out_ub;   /* C allocated at ub_total entries before the kernels */
    /* > 0: two-phase rows, C allocated at this bound of nnz(C) (Σ min(u(i), span(i)))
     * before the kernels, so the numeric stage follows the scan without the host's wait
     * for nnz(C); the configuration's out_ub where one-phase staging does not apply */
    int64_t eager_cap;
    int32_t need_rowlo;
    int64_t gwidth;   /* global stripes: columns (multiple of 32) and slots */
    int64_t gslots;
    int32_t gparts;   /* > 0: CTAs per global row (a stripe per row); 0: waves */
    int32_t grows;    /* rows in global stripes */
    int64_t ntiles;   /* scan tiles */
    double u_total;
    int64_t u_max;
    int64_t ws_bytes; /* staging + global stripes */
    int32_t fast;     /* the configuration's NVRTC fast-compile level (fast_compile) */
    int32_t warp_brow; /* the configuration's warp_brow */
    int32_t bt_gather; /* the configuration's bt_gather (B = Aᵀ: its values gathered per call) */
    char config_text[320]; /* the configuration's one-line description (reports) */
} sdi_sg_schedule;

/* Columns of a dense stripe (GDENSE, CDENSE) of size code p: 2^p, or, for the "wide" CTA
 * stripe, p = −W/32: W columns, a multiple of 32 (C's columns rounded up), for rows whose
 * span passes the largest power of two that fits in shared memory while W still fits:
 * without it such rows went to global stripes (the Belcastro_mouse_gene twin's 45,101
 * columns: 2^16 does not fit, 45,120 does). */
static inline int64_t sdi_sg_stripe_cols(int p)
{
    return p >= 0 ? (int64_t)1 << p : -(int64_t)p * 32;
}

#define SDI_SG_KERNEL_NAME 64

/* One compile unit. Its source depends only on the launch shape (threads, then kind,
 * lanes, size and phase per segment; rows, blocks and bins are runtime arguments), and
 * its kernel is named after that shape, so an equal launch of any other configuration or
 * matrix yields a byte-identical unit: one memo / JIT-cache entry, one NVRTC run. */
typedef struct {
    char name[SDI_SG_KERNEL_NAME]; /* "sd_sg_<16 hex of the shape>": the unit's only kernel */
    char *source;                  /* NVRTC source (owned): every segment's template inline;
                                      the unit's identity (JIT key) in both forms */
    /* The linked form (SPARSEDITTO_SG_LINK=1): a dispatch kernel calling one relocatable
     * function per segment, each in a source of its own (parts), so that a segment variant
     * is compiled once for every unit, configuration and product that uses it; NULL and 0
     * without it. maxrreg: the parts' register cap under the unit's launch bounds. */
    char *link_source;
    char *parts[SD_SG_MAX_SEGS];
    int nparts;
    int maxrreg;
} sdi_sg_unit;

typedef struct {
    int nkernels;       /* = schedule's nlaunches */
    int *unit_of;       /* per launch: index into units (owned) */
    int nunits;         /* distinct launch shapes (≤ nkernels) */
    sdi_sg_unit *units; /* owned, in order of first use */
    char hex[17];       /* key of all the launch shapes: the schedule's identity in labels */
    int fast;           /* the units' NVRTC fast-compile level (sdi_jit_request.fast): the
                           schedule's */
} sdi_sg_lowered;

/* Frees what a schedule and a lowering own (accept zeroed input). */
SDI_HIDDEN void sdi_sg_schedule_free(sdi_sg_schedule *s);
SDI_HIDDEN void sdi_sg_lowered_free(sdi_sg_lowered *l);

/* Reading a schedule (src/runtime/sg_program.c: the executor and the reports need them
 * without the planner). The accumulator's name ("tiny", "ghash", …; "unknown"). */
SDI_HIDDEN const char *sdi_sg_kind_name(int kind);
/* A bin's size from its size code p: entries of a TINY list, columns of a dense stripe,
 * slots of a hash table (GLOBAL's width is the schedule's, not p's). */
SDI_HIDDEN int64_t sdi_sg_kind_size(int kind, int p);
/* One line: every bin (kind, size, rows) and the launches per stage. */
SDI_HIDDEN void sdi_sg_schedule_describe(const sdi_sg_schedule *s, char *buf, size_t cap);
SDI_HIDDEN void sdi_sg_schedule_json(const sdi_sg_schedule *s, sdi_json *j);
/* The kernel of launch l (its unit's name), NULL past the end. */
SDI_HIDDEN const char *sdi_sg_lowered_kernel(const sdi_sg_lowered *low, int l);

#endif /* SDI_RUNTIME_SG_PROGRAM_H */
