/* src/lower/spgemm_units.h: lowering of a SpGEMM plan: its schedule over C's rows
 * (src/plan/spgemm_schedule.c) and one compile unit per distinct launch shape (a source
 * holding exactly one kernel: segment dispatch over the row templates of
 * src/kernels/spgemm_rows.cuh) with, per launch, the unit it runs; the SpGEMM families'
 * `lower` hook; and the parallel compilation of many plans' units into a context's memo. */
#ifndef SDI_LOWER_SPGEMM_UNITS_H
#define SDI_LOWER_SPGEMM_UNITS_H

#include "../plan/family.h"
#include "../plan/spgemm.h"
#include "../runtime/lowered.h"
#include "../runtime/sg_program.h"

/* The units of every launch of s; a shape repeated in s is one unit. The scan kernel is
 * not part of any unit (sdi_spgemm_scan_request compiles it once). On failure *out is
 * zeroed. */
SDI_HIDDEN sd_status sdi_spgemm_lower(const sdi_sg_schedule *s, sdi_sg_lowered *out);

/* Source instantiating every template variant a schedule can produce at `threads`
 * (each kind, lane count, size and phase), one kernel per kind × phase: the compile
 * test of the whole mechanism library. */
SDI_HIDDEN sd_status sdi_spgemm_lower_all_variants(int threads, char **source);

/* cfg scheduled under lim on the rows ri (sdi_sg_schedule_build) and lowered: out->sg and
 * out->sg_units filled, with the operator, C's shape and the workspace bytes. On failure
 * *out is zeroed. */
SDI_HIDDEN sd_status sdi_spgemm_lower_config(const sdi_sg_limits *lim, const sdi_sg_rowinfo *ri,
                                             const sdi_spgemm_config *cfg, sdi_lowered *out);
/* The SpGEMM families' `lower` hook: p on the task's rows (t->sg_rows) under its limits
 * (t->sg_lim, else those of t->gpu); A's shape and nnz from t->a when set. */
SDI_HIDDEN sd_status sdi_spgemm_lower_plan(const sdi_task *t, const sdi_plan *p, sdi_lowered *out);

/* Compiles the distinct launch units of n configurations for a product whose rows are ri
 * (sdi_spgemm_operands_rowinfo of its operands; a shape shared by several configurations
 * once) and the scan, in parallel (OpenMP threads, NVRTC is thread-safe), into the
 * context's memo, so that the executables' creation finds them. The limits are those of
 * ctx's device. Configurations that cannot be scheduled are skipped (their build reports
 * them); returns the first compile error, if any. */
SDI_HIDDEN sd_status sdi_spgemm_precompile(sd_context *ctx, const sdi_sg_rowinfo *ri,
                                           const sdi_spgemm_config *cfgs, int n);
/* The same for n SpGEMM plans. */
SDI_HIDDEN sd_status sdi_spgemm_precompile_plans(sd_context *ctx, const sdi_sg_rowinfo *ri,
                                                 const sdi_plan *plans, int n);

#endif /* SDI_LOWER_SPGEMM_UNITS_H */
