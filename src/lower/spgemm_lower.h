/* src/lower/spgemm_lower.h: lowering of a SpGEMM schedule: one compile unit per distinct
 * launch shape (a source holding exactly one kernel: segment dispatch over the row
 * templates of src/kernels/spgemm_rows.cuh) and, per launch, the unit it runs. */
#ifndef SDI_LOWER_SPGEMM_H
#define SDI_LOWER_SPGEMM_H

#include "../plan/spgemm.h"
#include "../runtime/sg_program.h"



/* The units of every launch of s; a shape repeated in s is one unit. The scan kernel is
 * not part of any unit (sdi_spgemm_scan_request compiles it once). On failure *out is
 * zeroed. */
SDI_HIDDEN sd_status sdi_spgemm_lower(const sdi_sg_schedule *s, sdi_sg_lowered *out);
/* The kernel launch l runs (its unit's name). */
SDI_HIDDEN const char *sdi_sg_lowered_kernel(const sdi_sg_lowered *low, int l);

/* Source instantiating every template variant a schedule can produce at `threads`
 * (each kind, lane count, size and phase), one kernel per kind × phase: the compile
 * test of the whole mechanism library. */
SDI_HIDDEN sd_status sdi_spgemm_lower_all_variants(int threads, char **source);

#endif /* SDI_LOWER_SPGEMM_H */
