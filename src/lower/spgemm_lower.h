/* src/lower/spgemm_lower.h: lowering of a SpGEMM schedule: the CUDA source of its
 * launches (segment dispatch over the row templates of src/kernels/spgemm_rows.cuh) and
 * the kernel names, one per launch, in the schedule's launch order. */
#ifndef SDI_LOWER_SPGEMM_H
#define SDI_LOWER_SPGEMM_H

#include "../plan/spgemm.h"

#define SDI_SG_KERNEL_NAME 64

typedef struct {
    char *source;   /* NVRTC source (owned); includes the scan kernel sd_spgemm_scan */
    int nkernels;   /* = schedule's nlaunches */
    char (*names)[SDI_SG_KERNEL_NAME]; /* owned */
    char hex[17];   /* key of the launch shapes, part of every kernel name */
} sdi_sg_lowered;

/* Source of every launch of s. The source depends only on the launch shapes (kinds,
 * lanes, sizes, phases, threads), not on row counts, so products with the same bins
 * share one compiled module. On failure *out is zeroed. */
SDI_HIDDEN sd_status sdi_spgemm_lower(const sdi_sg_schedule *s, sdi_sg_lowered *out);
SDI_HIDDEN void sdi_sg_lowered_free(sdi_sg_lowered *l);

/* Source instantiating every template variant a schedule can produce at `threads`
 * (each kind, lane count, size and phase), one kernel per kind × phase: the compile
 * test of the whole mechanism library. */
SDI_HIDDEN sd_status sdi_spgemm_lower_all_variants(int threads, char **source);

#endif /* SDI_LOWER_SPGEMM_H */
