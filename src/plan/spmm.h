/* src/plan/spmm.h: SpMM plans: the template vocabulary of the SpMM mechanism library (one
 * family per template, src/plan/families/spmm_*.c), the configuration struct
 * (representation + schedule + θ_H) of a plan, legality checks and the enumeration of
 * candidates for a matrix and a dense width K (spmm_config.c, through the families). */
#ifndef SDI_PLAN_SPMM_H
#define SDI_PLAN_SPMM_H

#include <stdbool.h>

#include "../core/core.h"
#include "../core/json_parse.h"
#include "../analysis/plan_stats.h"

/* The mechanism templates (src/kernels/spmm_*.cuh). */
typedef enum {
    SDI_SPMM_CSR_ROW = 0, /* row-wise CSR: (sub-)warp groups per row × K tiles */
    SDI_SPMM_CSR_SPLIT,   /* nonzero split: rows longer than T cut into chunks of CH */
    SDI_SPMM_CSR_WINDOW,  /* row windows: sparse entries staged in shared memory */
    SDI_SPMM_BSR,         /* BSR(b) on CUDA cores */
    SDI_SPMM_BELL,        /* blocked-ELL(b) on CUDA cores */
    SDI_SPMM_PCSR,        /* ParamSpMM: PCSR ⟨W, F, V, S⟩ */
    SDI_SPMM_COL_WINDOW,  /* column-window packing: slices of B staged in shared memory */
    SDI_SPMM_BSR_TC,      /* BSR tiles of b×8 (b = block) on tensor cores, FP32 by 3×TF32 */
    SDI_SPMM_NTEMPLATES
} sdi_spmm_template;

/* Dataflow of split rows (SDI_SPMM_CSR_SPLIT). */
typedef enum {
    SDI_SPLIT_ATOMIC = 0, /* two launches: first chunk of every row written, the rest atomically added */
    SDI_SPLIT_FIXUP = 1,  /* one launch: chunk partials to a workspace, the last chunk of a row
                             to finish sums them in chunk order (no float atomics, deterministic) */
    SDI_SPLIT_SEGMENTS = 2, /* one launch, nonzero-balanced over every row (COO style): each group of
                              klanes lanes takes CH consecutive entries, whatever rows they belong
                              to; runs of a row inside a segment are stored, runs of a row cut by a
                              segment boundary finish as in FIXUP (T is unused; nzpar = 1) */
    SDI_SPLIT_SEGATOMIC = 3 /* as SEGMENTS, but the runs of a cut row are added into one slot
                               with float atomics and its last segment reads the slot once (a
                               finish as short for a row of 10^4 entries as for one of 40) */
} sdi_split_mode;

/* One SpMM candidate. Every field is part of the generated code or its format; fields a
 * template does not use are 0. memset to zero before filling (the struct is hashed). */
typedef struct {
    int32_t tmpl; /* sdi_spmm_template */
    int32_t k;    /* dense width K (compile-time constant of the kernel) */
    /* --- thread mapping θ_H (all templates) */
    int32_t warps;   /* warps per CTA (W of ParamSpMM) */
    int32_t klanes;  /* lanes of a group across the K tile */
    int32_t nzpar;   /* lanes of a group across nonzeros (group = klanes·nzpar ≤ 32) */
    int32_t vec;     /* B/C vector width: 1, 2 or 4 floats (K % vec == 0) */
    int32_t coarsen; /* vectors per lane: outputs per thread = vec·coarsen (ParamSpMM F) */
    int32_t regcap;  /* register cap per thread through launch bounds (0 = 64) */
    /* --- CSR split (SDI_SPMM_CSR_SPLIT) */
    int32_t split_threshold; /* T: rows with more nonzeros are split (segments: = CH) */
    int32_t chunk;           /* CH: nonzeros per chunk of a split row (≤ T) / per segment */
    int32_t split_mode;      /* sdi_split_mode */
    int32_t long_nzpar;      /* nzpar of the long-row groups (full warps: klanes·long_nzpar = 32) */
    /* --- row windows (SDI_SPMM_CSR_WINDOW) and column windows (SDI_SPMM_COL_WINDOW) */
    int32_t win_rows; /* rows per window at most / rows per panel (= groups per CTA) */
    int32_t win_cap;  /* nonzeros staged per round (row windows) */
    int32_t cw_width; /* columns per column window (rows of B staged at once) */
    /* --- blocks (BSR, BELL; BSR_TC: b ∈ {8, 16} rows × 8 columns per tile, and
     *     coarsen = 16-column K sub-tiles per warp, klanes = 32, vec = 1) */
    int32_t block; /* b */
    /* --- ParamSpMM (SDI_SPMM_PCSR): W = warps, F = coarsen (vec = 1) */
    int32_t pcsr_v;     /* V ∈ {1, 2} */
    int32_t pcsr_s;     /* S: workload balancing on/off */
    int32_t pcsr_bound; /* S on: slots per PCSR row at most (a multiple of V) */
    int32_t pcsr_group; /* threads per PCSR row: 32 as in the paper; 16/8/4 for K < 32 (ours) */
    /* --- index widths */
    int32_t rp64; /* 64-bit row pointers on the device (nnz ≥ 2^31) */
} sdi_spmm_config;


/* Short label of a template ("csr_row", "pcsr", ...). */
SDI_HIDDEN const char *sdi_spmm_template_name(int tmpl);
/* Template by label; -1 when unknown. */
SDI_HIDDEN int sdi_spmm_template_from_name(const char *name);
/* One-line description of c, e.g. "csr_row k=32 w=4 kl=8 nz=1 v=4 co=1". A buffer of
 * SDI_SPMM_CONFIG_TEXT holds any configuration's line: every field at its widest
 * (-2147483648) makes 148 characters. */
#define SDI_SPMM_CONFIG_TEXT 192
SDI_HIDDEN void sdi_spmm_config_describe(const sdi_spmm_config *c, char *buf, size_t cap);
SDI_HIDDEN void sdi_spmm_config_json(const sdi_spmm_config *c, sdi_json *j);
/* Reads what sdi_spmm_config_json wrote, exactly (src/plan/config_json.c); SD_ERR_PARSE
 * names the field that is missing or out of range. */
SDI_HIDDEN sd_status sdi_spmm_config_from_json(const sdi_jvalue *v, sdi_spmm_config *out);

/* Derived sizes. */
SDI_HIDDEN int sdi_spmm_ktile(const sdi_spmm_config *c);  /* K columns per group pass */
SDI_HIDDEN int sdi_spmm_ktiles(const sdi_spmm_config *c); /* ⌈K / ktile⌉ */
/* Whether c is csr_split's nonzero-balanced dataflow (SEGMENTS or SEGATOMIC). */
SDI_HIDDEN bool sdi_spmm_split_segmented(const sdi_spmm_config *c);

/* Legality of c for a matrix: field ranges, K divisibility by vec, thread and shared
 * memory limits, grid limits and workspace bounds. SD_ERR_INVALID_ARG names the field. */
SDI_HIDDEN sd_status sdi_spmm_config_check(const sdi_spmm_config *c, const sdi_spmm_stats *st);

/* A ready-made configuration of each template for a matrix and K: the θ_H that the
 * family's rules pick first (the base of its sweep; its defaults hook starts from it). */
SDI_HIDDEN sd_status sdi_spmm_config_default(int tmpl, int k, const sdi_spmm_stats *st,
                                             sdi_spmm_config *out);

/* Whether the column windows of c (SDI_SPMM_COL_WINDOW) are dense enough to stage: on
 * average each staged B row serves at least two entries (else staging reads more of B than
 * the entries do). The sweep keeps only such members, and the family's defaults hook the
 * same way. */
SDI_HIDDEN sd_status sdi_spmm_colwin_dense(const sd_csr *a, const sdi_spmm_config *c, bool *dense);

/* The candidate set: for each template enabled in tmpl_mask (bit t = template t; 0 = all),
 * a small θ_H sweep of legal configurations, at most cap in total (round-robin over the
 * templates so that a small cap still covers each). *out is allocated (caller frees with
 * sdi_free); *n receives the count. level 0 = the defaults only, 1 = small sweep,
 * 2 = wide sweep. */
SDI_HIDDEN sd_status sdi_spmm_enumerate(const sd_csr *a, int k, uint32_t tmpl_mask, int level,
                                        int cap, sdi_spmm_config **out, int *n);

/* ParamSpMM's full parameter space for K (W ∈ {1,2,4,8}, F ∈ {1,2,4}, V ∈ {1,2},
 * S ∈ {0,1}), legal members only, group 32 plus the sub-warp extension when K < 32. */
SDI_HIDDEN sd_status sdi_spmm_enumerate_pcsr(const sd_csr *a, int k, int include_subwarp,
                                             sdi_spmm_config **out, int *n);

#endif /* SDI_PLAN_SPMM_H */
