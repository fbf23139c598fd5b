/* src/plan/spmv.h: the SpMV part of a plan (sdi_plan.p.spmv): which family and which θ_H
 * (threads per CTA, lanes per row, items per thread, C, σ, b, tile thresholds, index
 * widths, cache hints), serialisable to one short line and to JSON. Each family — its
 * defaults, sweeps, legality and lowering — is one file of src/plan/families/
 * (spmv_<name>.c), reached through the family table (src/plan/family.h). */
#ifndef SDI_PLAN_SPMV_H
#define SDI_PLAN_SPMV_H

#include "../analysis/gpu.h"
#include "../core/core.h"
#include "../core/json_parse.h"
#include "../analysis/plan_stats.h"

/* The families' ids (the entries' sdi_family.id; table order). */
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


/* Short label of a family ("csr_vec", "merge", "sell", …: the table entry's name);
 * "unknown" out of range. */
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

/* The lane width of csr_vec (src/plan/families/spmv_csr_vec.c) from the row lengths: the
 * power of two about the mean row length over vec elements per lane, in [1, 32]. */
SDI_HIDDEN int sdi_spmv_pick_vw(const sdi_spmv_stats *st, int vec);

#endif /* SDI_PLAN_SPMV_H */
