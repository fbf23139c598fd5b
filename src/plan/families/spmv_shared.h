/* src/plan/families/spmv_shared.h: what several SpMV families share — the limits of the
 * padded formats, the defaults every family starts from, the field checks common to all,
 * the sweep list (legal, distinct, at most SDI_SPMV_SWEEP_CAP) and the lowering helpers
 * (template, kernels, launches whose arguments name the format's arrays). */
#ifndef SDI_PLAN_FAMILIES_SPMV_SHARED_H
#define SDI_PLAN_FAMILIES_SPMV_SHARED_H

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "../family.h"
#include "../spmv.h"

/* The SpMV entries of the family table, in the order of sdi_spmv_family. */
extern const sdi_family sdi_family_spmv_csr_vec;
extern const sdi_family sdi_family_spmv_csr_adaptive;
extern const sdi_family sdi_family_spmv_merge;
extern const sdi_family sdi_family_spmv_tiny;
extern const sdi_family sdi_family_spmv_sell;
extern const sdi_family sdi_family_spmv_ell;
extern const sdi_family sdi_family_spmv_bsr;
extern const sdi_family sdi_family_spmv_tiles16;
extern const sdi_family sdi_family_spmv_coo;
extern const sdi_family sdi_family_spmv_dia;

#define SDI_SPMV_PAD_LIMIT 8.0       /* padded formats: slots ≤ PAD_LIMIT · nnz */
#define SDI_SPMV_DIA_MAXD 64
#define SDI_SPMV_TINY_MAX_ITEMS 32768 /* rows + nnz one CTA consumes in a few microseconds */
#define SDI_SPMV_SWEEP_CAP 64        /* plans of one family's sweep at most */

#define SDI_SPMV_BAD(...) SDI_ERR(SD_ERR_UNSUPPORTED, __VA_ARGS__)

SDI_HIDDEN int sdi_spmv_is_pow2(int64_t x);
SDI_HIDDEN int64_t sdi_spmv_ceil_div(int64_t a, int64_t b);

/* Feature `name` of the task (0 when the task has none: the ranking hooks). */
SDI_HIDDEN double sdi_spmv_feature(const sdi_task *t, const char *name);

/* A plan of op SpMV holding c (family index from the table). */
SDI_HIDDEN void sdi_spmv_plan_set(sdi_plan *p, const sdi_spmv_config *c);

/* ------------------------------------------------------------------ defaults */
/* out zeroed, with the family id and 256 threads per CTA. */
SDI_HIDDEN void sdi_spmv_default_base(int family, sdi_spmv_config *out);
/* 32-bit row pointers whenever nnz fits them. */
SDI_HIDDEN int sdi_spmv_default_rp32(const sdi_spmv_stats *st);
/* Evict-first matrix loads when the working set exceeds twice the L2. */
SDI_HIDDEN int sdi_spmv_working_set_exceeds_l2(const sdi_spmv_stats *st, const sdi_gpu_props *gpu);
SDI_HIDDEN int sdi_spmv_x_fits_l2(const sdi_spmv_stats *st, const sdi_gpu_props *gpu);

/* ------------------------------------------------------------------ legality */
/* The checks every family shares (threads, static shared memory smem, 32-bit row
 * pointers, csr_vec-only fields unless csr_vec, stream hint), in that order; *c receives
 * the plan's parameters. SD_ERR_INVALID_ARG for a plan of another operator or family. */
SDI_HIDDEN sd_status sdi_spmv_check_common(const sdi_family *fam, const sdi_task *t,
                                           const sdi_plan *p, int64_t smem,
                                           const sdi_spmv_config **c);
/* CTAs of block threads with smem bytes of shared memory resident per SM (threads,
 * shared memory and the CTA limit; registers are checked when loaded); gpu may be NULL. */
SDI_HIDDEN int sdi_spmv_resident_ctas(int block, int64_t smem, const sdi_gpu_props *gpu);

/* ------------------------------------------------------------------ sweeps */
typedef struct {
    const sdi_family *fam;
    const sdi_task *t;
    sdi_plan_list l; /* this family's plans, distinct, in sweep order */
} sdi_spmv_sweep;

/* Adds c when legal (illegal sweep points are skipped) and new. */
SDI_HIDDEN sd_status sdi_spmv_sweep_try(sdi_spmv_sweep *s, const sdi_spmv_config *c);
/* The points every streamed family shares: x evict-last in L2 when the default streams
 * and x fits (all but DIA), and for SELL / ELL 8 slots in flight. */
SDI_HIDDEN sd_status sdi_spmv_sweep_stream(sdi_spmv_sweep *s, const sdi_spmv_config *d);
SDI_HIDDEN sd_status sdi_spmv_sweep_unroll8(sdi_spmv_sweep *s, const sdi_spmv_config *d);
/* Appends the first SDI_SPMV_SWEEP_CAP plans to out and frees the sweep's list. */
SDI_HIDDEN sd_status sdi_spmv_sweep_finish(sdi_spmv_sweep *s, sdi_plan_list *out);

/* ------------------------------------------------------------------ lowering */
/* Starts a lowering: out zeroed with op, sizes and template. */
SDI_HIDDEN sd_status sdi_spmv_low_begin(const sdi_task *t, const char *tmpl, sdi_lowered *out);
/* The kernels' names, in launch order (the source hooks: no launch names them). */
SDI_HIDDEN sd_status sdi_spmv_low_kernels(sdi_lowered *l, const char *const *kernels, int n);
SDI_HIDDEN sd_status sdi_spmv_low_macro(sdi_lowered *l, const char *name, long long v);
/* Takes the built format over (arrays appended; f zeroed), with the bytes and slots. */
SDI_HIDDEN sd_status sdi_spmv_low_format(sdi_lowered *l, sdi_devfmt *f);
/* A launch of kernel (by name; added to the kernels when new) on grid CTAs of block threads; SD_ERR_UNSUPPORTED when the
 * grid is out of [1, INT_MAX]. */
SDI_HIDDEN sd_status sdi_spmv_low_launch(sdi_lowered *l, const char *kernel, int64_t grid,
                                         int block, sdi_low_launch **out);
/* Arguments: a format array by name (a null pointer when absent, host-only or empty: the
 * kernel has nothing to read), x, y, constants. */
SDI_HIDDEN sd_status sdi_spmv_arg_array(const sdi_lowered *l, sdi_low_launch *ln,
                                        const char *name);
SDI_HIDDEN sd_status sdi_spmv_arg(sdi_low_launch *ln, int kind, int64_t v);
/* Finishes: the static shared memory and the host build time since t0 (sdi_now). */
SDI_HIDDEN void sdi_spmv_low_end(sdi_lowered *l, int64_t smem, double t0);

/* SD_FREE_ALL of a lowering: its format f (until taken over) and out. */
#define SDI_SPMV_LOWER_FREE                                                                 \
    do {                                                                                   \
        sdi_format_free(&f);                                                               \
        sdi_lowered_free(out);                                                             \
    } while (0)

/* ------------------------------------------------------------------ merge path
 * merge and tiny: one template (spmv_merge.cuh); tiny is the single-CTA instance without
 * carries (single = 1). */
SDI_HIDDEN int64_t sdi_spmv_merge_smem(const sdi_spmv_config *c);
SDI_HIDDEN sd_status sdi_spmv_merge_check(const sdi_family *fam, const sdi_task *t,
                                          const sdi_plan *p, int single);
SDI_HIDDEN sd_status sdi_spmv_merge_source(const sdi_task *t, const sdi_plan *p, int single,
                                           sdi_lowered *out);
SDI_HIDDEN sd_status sdi_spmv_merge_source_hook(const sdi_task *t, const sdi_plan *p, int single,
                                                sdi_lowered *out);
SDI_HIDDEN sd_status sdi_spmv_merge_lower(const sdi_family *fam, const sdi_task *t,
                                          const sdi_plan *p, int single, sdi_lowered *out);

/* ------------------------------------------------------------------ slices
 * sell and ell: one template (spmv_sell.cuh); ELL is one slice of 32-row groups over
 * column-major storage (ell = 1). check: the fields both read (tpr, rpt, unroll). */
SDI_HIDDEN sd_status sdi_spmv_sell_check(const sdi_family *fam, const sdi_task *t,
                                         const sdi_plan *p, const sdi_spmv_config **c);
SDI_HIDDEN sd_status sdi_spmv_sell_source(const sdi_task *t, const sdi_plan *p, int ell,
                                          sdi_lowered *out);
SDI_HIDDEN sd_status sdi_spmv_sell_source_hook(const sdi_task *t, const sdi_plan *p, int ell,
                                               sdi_lowered *out);
SDI_HIDDEN sd_status sdi_spmv_sell_lower(const sdi_family *fam, const sdi_task *t,
                                         const sdi_plan *p, int ell, sdi_lowered *out);

/* Property hooks many families share. */
SDI_HIDDEN bool sdi_spmv_no_atomics(const sdi_plan *p);
SDI_HIDDEN bool sdi_spmv_no_vo_label(const sdi_plan *p, char *buf, size_t cap);

#endif /* SDI_PLAN_FAMILIES_SPMV_SHARED_H */
