/* src/lower/spgemm_lower.h: lowering of a SpGEMM schedule: one compile unit per distinct
 * launch shape (a source holding exactly one kernel: segment dispatch over the row
 * templates of src/kernels/spgemm_rows.cuh) and, per launch, the unit it runs. */
#ifndef SDI_LOWER_SPGEMM_H
#define SDI_LOWER_SPGEMM_H

#include "../plan/spgemm.h"

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


/* The units of every launch of s; a shape repeated in s is one unit. The scan kernel is
 * not part of any unit (sdi_spgemm_scan_request compiles it once). On failure *out is
 * zeroed. */
SDI_HIDDEN sd_status sdi_spgemm_lower(const sdi_sg_schedule *s, sdi_sg_lowered *out);
SDI_HIDDEN void sdi_sg_lowered_free(sdi_sg_lowered *l);
/* The kernel launch l runs (its unit's name). */
SDI_HIDDEN const char *sdi_sg_lowered_kernel(const sdi_sg_lowered *low, int l);

/* Source instantiating every template variant a schedule can produce at `threads`
 * (each kind, lane count, size and phase), one kernel per kind × phase: the compile
 * test of the whole mechanism library. */
SDI_HIDDEN sd_status sdi_spgemm_lower_all_variants(int threads, char **source);

#endif /* SDI_LOWER_SPGEMM_H */
