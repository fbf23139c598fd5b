/* src/plan/spmv.h: SpMV plan families: which template, which format and which θ_H
 * (threads per CTA, lanes per row, items per thread, C, σ, b, tile thresholds, index
 * widths, cache hints) one candidate uses; legality checks with static shared-memory
 * bounds; and the enumeration of candidates for a matrix from its row statistics and the
 * GPU's properties. The full plan IR comes later; this struct is what the SpMV templates
 * need, serialisable to one short line and to JSON. */
#ifndef SDI_PLAN_SPMV_H
#define SDI_PLAN_SPMV_H

#include "../analysis/gpu.h"
#include "../core/core.h"
#include "../core/json_parse.h"
#include "../analysis/plan_stats.h"

typedef enum {
    SDI_SPMV_CSR_VEC = 0, /* sub-warp of vw lanes per row (vw from the row lengths) */
    SDI_SPMV_CSR_ADAPTIVE, /* CSR-Adaptive row bins: stream blocks / one row / long-row pieces */
    SDI_SPMV_MERGE,       /* merge-path tiles, carries fixed up by the last CTA */
    SDI_SPMV_TINY,        /* one CTA, one launch: merge path without carries */
    SDI_SPMV_SELL,        /* SELL-C-σ */
    SDI_SPMV_ELL,         /* column-major ELL */
    SDI_SPMV_BSR,         /* BSR(b) */
    SDI_SPMV_TILES16,     /* adaptive 16×16 tiles (dense / CSR / COO per tile) */
    SDI_SPMV_COO,         /* COO: warp-segmented reduction, atomics across warps */
    SDI_SPMV_DIA,         /* diagonals, x staged by column window */
    SDI_SPMV_NFAMILIES
} sdi_spmv_family;

/* One SpMV candidate. memset to zero before filling (the struct is hashed); fields a
 * family does not use stay 0. */
typedef struct {
    int32_t family; /* sdi_spmv_family */
    int32_t block;  /* threads per CTA */
    /* csr_vec */
    int32_t vw;     /* lanes per row: 1 … 32 */
    int32_t vec;    /* 1 or 4 elements per lane per step */
    int32_t unroll; /* row-loop unroll */
    /* merge / tiny */
    int32_t ipt;           /* merge items per thread */
    int32_t tiles_per_cta; /* consecutive tiles per CTA (0 = chosen from the GPU) */
    /* csr_adaptive */
    int32_t cap;   /* nonzeros per stream block */
    int32_t maxr;  /* rows per stream block at most */
    int32_t piece; /* nonzeros per long-row piece */
    /* sell / ell */
    int32_t c, sigma; /* slice height, sort window (1 = unsorted) */
    int32_t tpr, rpt; /* lanes per row group, rows per group */
    /* bsr */
    int32_t b, g; /* block size, lanes per block row */
    /* tiles16 */
    int32_t dense_min, coo_max;
    /* coo */
    int32_t chunk; /* 32-entry steps per warp */
    /* dia */
    int32_t xwin; /* floats of x staged per CTA (0 = none) */
    /* index widths and hints (CSR-based families) */
    int32_t rp32;       /* 32-bit row pointers */
    int32_t colc;       /* 16-bit column deltas (csr_vec only) */
    int32_t colc_shift; /* rows per column base = 2^shift */
    int32_t stream;     /* 1: evict-first loads of the matrix arrays; 2: and x evict-last in L2 */
    int32_t xsmem;      /* csr_vec: 1 = x copied into shared memory by each CTA (cols ≤ the
                           opt-in limit), a few persistent CTAs per SM */
} sdi_spmv_config;


/* Short label of a family ("csr_vec", "merge", "sell", …); "unknown" out of range. */
SDI_HIDDEN const char *sdi_spmv_family_name(int family);
/* Family by label; -1 when unknown. */
SDI_HIDDEN int sdi_spmv_family_from_name(const char *name);
/* One line, e.g. "csr_vec b=256 vw=8 vec=4 u=2 rp32" (parseable by sdi_spmv_config_parse).
 * A buffer of SDI_SPMV_CONFIG_TEXT holds any configuration's line: every field at its
 * widest (-2147483648) makes 402 characters. */
#define SDI_SPMV_CONFIG_TEXT 448
SDI_HIDDEN void sdi_spmv_config_describe(const sdi_spmv_config *c, char *buf, size_t cap);
/* Parses what describe wrote (family label, then key=value or flag words). */
SDI_HIDDEN sd_status sdi_spmv_config_parse(const char *text, sdi_spmv_config *out);
SDI_HIDDEN void sdi_spmv_config_json(const sdi_spmv_config *c, sdi_json *j);
/* Reads what sdi_spmv_config_json wrote, exactly (src/plan/config_json.c); SD_ERR_PARSE
 * names the field that is missing or out of range. */
SDI_HIDDEN sd_status sdi_spmv_config_from_json(const sdi_jvalue *v, sdi_spmv_config *out);

/* Static shared memory (bytes) the family's kernel declares for c. */
SDI_HIDDEN int64_t sdi_spmv_static_smem(const sdi_spmv_config *c);
/* Dynamic shared memory (bytes) of c's kernel for a matrix with cols columns: x's copy
 * under xsmem, else 0. */
SDI_HIDDEN int64_t sdi_spmv_dynamic_smem(const sdi_spmv_config *c, int64_t cols);
/* CTAs of c's kernel resident per SM by threads, shared memory and the CTA limit
 * (registers are checked when the kernel is loaded); gpu may be NULL (H200). */
SDI_HIDDEN int sdi_spmv_ctas_per_sm(const sdi_spmv_config *c, int64_t cols,
                                    const sdi_gpu_props *gpu);

/* Legality of c for a matrix on a GPU: field ranges, shared memory ≤ the default per-CTA
 * limit, threads ≤ the GPU's, 32-bit index limits, the tiny path's size limit, padding
 * limits of the padded formats (from the stats' ρ). SD_ERR_UNSUPPORTED / _INVALID_ARG
 * name the field or bound. gpu may be NULL (H200 limits). */
SDI_HIDDEN sd_status sdi_spmv_config_check(const sdi_spmv_config *c, const sdi_spmv_stats *st,
                                           const sdi_gpu_props *gpu);

/* The family's first choice of θ_H for the matrix (the default of the family). */
SDI_HIDDEN sd_status sdi_spmv_config_default(int family, const sdi_spmv_stats *st,
                                             const sdi_gpu_props *gpu, sdi_spmv_config *out);

/* Candidates: for each family in fam_mask (bit f; 0 = all), legal configurations of a θ_H
 * sweep (level 0 = the defaults, 1 = small sweep, 2 = wide sweep), at most cap in total
 * (round-robin over the families so a small cap still covers each). *out is allocated
 * (free with sdi_free); *n receives the count. */
SDI_HIDDEN sd_status sdi_spmv_enumerate(const sdi_spmv_stats *st, const sdi_gpu_props *gpu,
                                        uint32_t fam_mask, int level, int cap,
                                        sdi_spmv_config **out, int *n);

/* The lane width of csr_vec chosen from the row-length distribution: the power of two
 * minimising idle lane-steps plus the reduction cost per row (vec elements per lane). */
SDI_HIDDEN int sdi_spmv_pick_vw(const sdi_spmv_stats *st, int vec);

#endif /* SDI_PLAN_SPMV_H */
