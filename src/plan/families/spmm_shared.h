/* src/plan/families/spmm_shared.h: what the SpMM families share — the per-family parts of
 * the operator's common rules (sdi_spmm_ops: the default θ_H, the register cap, legality
 * beyond the common fields, the description, the sweep, the lowering), reached by template
 * id from the operator's non-family code (spmm_config.c), and the helpers their sweeps,
 * hooks and lowerings use alike. */
#ifndef SDI_PLAN_SPMM_SHARED_H
#define SDI_PLAN_SPMM_SHARED_H

#include "../../formats/spmm_formats.h"
#include "../family.h"
#include "../spmm.h"

/* A growable list of configurations (sweep members). */
typedef struct {
    sdi_spmm_config *v;
    int n, cap;
} sdi_spmm_cfgs;

typedef struct sdi_spmm_ops {
    const sdi_family *fam; /* the family's entry (name, id = template) */
    /* The family's part of its default θ_H: *c holds the common start (K, 4 warps, the K
     * mapping of sdi_spmm_k_shape with 16 accumulators, rp64). */
    void (*shape)(int k, const sdi_spmm_stats *st, sdi_spmm_config *c);
    /* Floats of accumulators a thread keeps (the register cap's rule); NULL: coarsen·vec. */
    int (*acc)(const sdi_spmm_config *c);
    /* Legality of the thread mapping before the K tiles are counted; NULL: the common
     * vector / lane rules (sdi_spmm_check_lanes). */
    sd_status (*check_mapping)(const sdi_spmm_config *c, const char *n);
    /* Legality beyond the common fields (NULL: none). */
    sd_status (*check)(const sdi_spmm_config *c, const char *n);
    /* The one-line description (without the register cap); NULL: the row-wise fields. */
    void (*describe)(const sdi_spmm_config *c, const char *n, char *buf, size_t cap);
    /* K columns per group pass; NULL: klanes·vec·coarsen. */
    int (*ktile)(const sdi_spmm_config *c);
    /* The members of the family's sweep at `level` (0 defaults only, 1 small, 2 wide),
     * appended to l through sdi_spmm_cfgs_push, uncapped. */
    sd_status (*sweep)(const sd_csr *a, int k, const sdi_spmm_stats *st, int level,
                       sdi_spmm_cfgs *l);
    /* The launch program of c for a (legal c; l carries op, sizes and K). big: an index of
     * B or C may exceed 2^31 (64-bit offsets in the kernel). */
    sd_status (*lower)(sdi_lowered *l, const sd_csr *a, const sdi_spmm_config *c, int big);
} sdi_spmm_ops;

/* The ops of template tmpl (NULL when unknown). */
SDI_HIDDEN const sdi_spmm_ops *sdi_spmm_ops_of(int tmpl);

/* ------------------------------------------------------------------ rules */
SDI_HIDDEN bool sdi_spmm_is_pow2(int x);
SDI_HIDDEN int sdi_spmm_next_pow2(int64_t x);
/* The K mapping: widest vector K allows, lanes to cover K in one tile when K ≤ 32·vec,
 * else 32 lanes and enough vectors per lane (at most max_acc floats). */
SDI_HIDDEN void sdi_spmm_k_shape(int k, int max_acc, int *vec, int *kl, int *co);
/* Lanes per row across nonzeros for a group of kl lanes: about the mean row length. */
SDI_HIDDEN int sdi_spmm_pick_nzpar(int kl, double row_mean);
/* The register cap of c by its family's accumulators (sdi_spmm_ops.acc). */
SDI_HIDDEN int sdi_spmm_regcap_for(const sdi_spmm_config *c);
/* The common vector and lane rules of the CUDA-core mappings. */
SDI_HIDDEN sd_status sdi_spmm_check_lanes(const sdi_spmm_config *c, const char *n);
/* A group of klanes × nzpar lanes within a warp. */
SDI_HIDDEN sd_status sdi_spmm_check_group(const sdi_spmm_config *c, const char *n);

/* ------------------------------------------------------------------ sweeps */
/* The light register cap of a sweep member (sdi_spmm_cfgs_push keeps it): see spmm_shared.c. */
#define SPMM_REGCAP_LIGHT 32
#define SPMM_LIGHT_ROWS 50000
SDI_HIDDEN bool sdi_spmm_light_fits(const sdi_spmm_config *c, const sdi_spmm_stats *st);
/* Appends c at its rule's register cap (the light cap stays) when legal and new. */
SDI_HIDDEN sd_status sdi_spmm_cfgs_push(sdi_spmm_cfgs *l, const sdi_spmm_config *c,
                                        const sdi_spmm_stats *st);
SDI_HIDDEN void sdi_spmm_cfgs_free(sdi_spmm_cfgs *l);
/* Warps of a sweep level: {4, 8} small, {2, 4, 8} wide. */
SDI_HIDDEN int sdi_spmm_sweep_nw(int level);
SDI_HIDDEN const int *sdi_spmm_sweep_warps(int level);

/* ------------------------------------------------------------------ family hooks */
/* The plan of configuration c (family by its template). */
SDI_HIDDEN void sdi_spmm_plan_of(const sdi_spmm_config *c, sdi_plan *out);
/* defaults: the family's rule (sdi_spmm_config_default) as a plan. */
SDI_HIDDEN sd_status sdi_spmm_hook_defaults(const sdi_task *t, int tmpl, sdi_plan *out);
/* sweep: the family's members of the old enumeration with a cap of 64, in order. */
SDI_HIDDEN sd_status sdi_spmm_hook_sweep(const sdi_task *t, int tmpl, int level,
                                         sdi_plan_list *out);
/* check: the plan's configuration for the task's statistics. */
SDI_HIDDEN sd_status sdi_spmm_hook_check(const sdi_task *t, const sdi_plan *p);
/* lower: checks, then the family's lowering (sdi_spmm_ops.lower) with the task's matrix. */
SDI_HIDDEN sd_status sdi_spmm_hook_lower(const sdi_task *t, const sdi_plan *p, sdi_lowered *out);
/* c lowered for a with its statistics st (tests, benches, tools: no family table needed). */
SDI_HIDDEN sd_status sdi_spmm_lower_config(const sd_csr *a, const sdi_spmm_stats *st,
                                           const sdi_spmm_config *c, sdi_lowered *out);
/* A feature of the task by name (0 without features). */
SDI_HIDDEN double sdi_spmm_feature(const sdi_task *t, const char *name);

/* ------------------------------------------------------------------ lowering */
/* Adds a macro with an integer value when *s is SD_OK (the first failure stays in *s). */
SDI_HIDDEN void sdi_spmm_macro(sd_status *s, sdi_lowered *l, const char *name, int value);
/* SD_K, SD_RP64, SD_BIG, SD_MINB (and SD_INFLIGHT at the light cap). */
SDI_HIDDEN sd_status sdi_spmm_common_macros(sdi_lowered *l, const sdi_spmm_config *c,
                                            int threads, int big);
/* Kernel names sd_spmm_<family>_<16 hex of the macros> (and "_b" for a second kernel),
 * added as kernels and as SD_KNAME / SD_KNAME2. */
SDI_HIDDEN sd_status sdi_spmm_name_kernels(sdi_lowered *l, const char *family, int nkernels);
/* An array (sdi_lowered_add_array; host moves in when owned); VALUE arrays gather the CSR
 * entries src (nslots; moved in, NULL = the CSR values as they are). */
SDI_HIDDEN sd_status sdi_spmm_add_array(sdi_lowered *l, const char *name, void *host,
                                        size_t bytes, int role, int owned, int64_t *src,
                                        int64_t nslots, int *index);
/* Row pointers: borrowed int64 when rp64, else an int32 copy. */
SDI_HIDDEN sd_status sdi_spmm_rp_array(sdi_lowered *l, const char *name, const int64_t *rp,
                                       int64_t n, int rp64, int *index);
/* A's rowptr, colind and vals (borrowed). */
SDI_HIDDEN sd_status sdi_spmm_csr_arrays(sdi_lowered *l, const sd_csr *a, int rp64, int *irp,
                                         int *ici, int *iva);
/* A launch of kernel `kernel` on a gx × gy grid of `threads`-thread CTAs. */
SDI_HIDDEN sdi_low_launch *sdi_spmm_add_launch(sdi_lowered *l, int kernel, int64_t gx, int gy,
                                               int threads);
SDI_HIDDEN void sdi_spmm_arg_array(sdi_low_launch *x, int index);
SDI_HIDDEN void sdi_spmm_arg_in(sdi_low_launch *x);
SDI_HIDDEN void sdi_spmm_arg_out(sdi_low_launch *x);
SDI_HIDDEN void sdi_spmm_arg_null(sdi_low_launch *x);
SDI_HIDDEN void sdi_spmm_arg_i32(sdi_low_launch *x, int64_t v);
SDI_HIDDEN void sdi_spmm_arg_i64(sdi_low_launch *x, int64_t v);

/* ------------------------------------------------------------------ blocks (bsr, bell, bsr_tc) */
SDI_HIDDEN int sdi_spmm_blocks_acc(const sdi_spmm_config *c);
SDI_HIDDEN sd_status sdi_spmm_blocks_check(const sdi_spmm_config *c, const char *n);
SDI_HIDDEN void sdi_spmm_blocks_describe(const sdi_spmm_config *c, const char *n, char *buf,
                                         size_t cap);
/* b = 4 and the K mapping of 64 / b accumulators. */
SDI_HIDDEN void sdi_spmm_blocks_shape(int k, const sdi_spmm_stats *st, sdi_spmm_config *c);
/* BSR / BELL: each block size whose padding is acceptable, × the level's warps. */
SDI_HIDDEN sd_status sdi_spmm_blocks_sweep(int tmpl, const sd_csr *a, int k,
                                           const sdi_spmm_stats *st, int level,
                                           sdi_spmm_cfgs *l);
/* Hands bk's arrays to l (block-row pointers unless with_rowptr is false, block columns,
 * nslots values); their indices in *ibp (−1 without row pointers), *ibc, *ibv. */
SDI_HIDDEN sd_status sdi_spmm_block_arrays(sdi_lowered *l, sdi_spmm_blocks *bk, int32_t brows,
                                           int rp64, bool with_rowptr, size_t nslots, int *ibp,
                                           int *ibc, int *ibv);
/* BSR(b) / blocked-ELL(b) on CUDA cores (spmm_bsr.cuh). */
SDI_HIDDEN sd_status sdi_spmm_blocks_lower(sdi_lowered *l, const sd_csr *a,
                                           const sdi_spmm_config *c, int big);

#endif /* SDI_PLAN_SPMM_SHARED_H */
