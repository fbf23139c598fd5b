/* src/vendor/baseline_internal.h: what the cuSPARSE baseline files share: the state of
 * one baseline run (device copies of A, the reference), variant bookkeeping and the
 * mapping of cuSPARSE statuses to variant outcomes. Internal to src/vendor. */
#ifndef SDI_BASELINE_INTERNAL_H
#define SDI_BASELINE_INTERNAL_H

#include <cusparse.h>

#include "baseline.h"
#include "../runtime/cs_format.h"

typedef struct {
    sd_context *ctx;
    cusparseHandle_t h;
    const sd_csr *a;
    const sdi_baseline_options *opt;
    sdi_baseline *out;
    const sdi_reference *ref; /* &own_ref, or the caller's (options' ref) */
    sdi_reference own_ref;
    /* A on the device with 32-bit indices (cuSPARSE's fastest and SpGEMM's only type):
     * CSR, and COO row indices for SpMV / SpMM. */
    sdi_cs_matrix dev;
} sdi_bl_state;

/* A new variant entry named `name`, or NULL when the options leave it out (or the
 * table is full, which is a bug reported in the log). */
SDI_HIDDEN sdi_variant_result *sdi_bl_begin(sdi_bl_state *bl, const char *name);

/* Records a cuSPARSE failure of `call` in v (unsupported / out of resources / error)
 * with the status name and string. */
SDI_HIDDEN void sdi_bl_cusparse_failed(sdi_variant_result *v, const char *call,
                                       cusparseStatus_t st);
/* Records a library failure in v from the thread's last error. Returns SD_OK when the
 * baseline can go on with the next variant, or s when it cannot (sticky CUDA error,
 * host memory). */
SDI_HIDDEN sd_status sdi_bl_failed(sdi_bl_state *bl, sdi_variant_result *v, sd_status s);
/* Marks v as measured: timing, validation, roofline fraction. */
SDI_HIDDEN void sdi_bl_measured(sdi_bl_state *bl, sdi_variant_result *v, const sdi_timing *t);
/* The fastest valid variant from index `first` on when it was timed briefly (a search's
 * vendor round, sdi_baseline_options.brief_us): the one to time again in full; NULL when
 * the fastest was timed in full or none is valid. */
SDI_HIDDEN sdi_variant_result *sdi_bl_brief_fastest(sdi_bl_state *bl, int first);

/* Fills `bytes` of device memory with a finite sentinel (≈3.4e38 per float) so that an
 * output entry the variant never writes fails validation. */
SDI_HIDDEN sd_status sdi_bl_poison(sdi_bl_state *bl, void *d, size_t bytes);

/* Per operator (baseline_dense.c: SpMV and SpMM; spgemm.c). */
SDI_HIDDEN sd_status sdi_bl_spmv(sdi_bl_state *bl, const float *x);
SDI_HIDDEN sd_status sdi_bl_spmm(sdi_bl_state *bl, const float *b, int k);
SDI_HIDDEN sd_status sdi_bl_spgemm(sdi_bl_state *bl, const sd_csr *b);

#endif /* SDI_BASELINE_INTERNAL_H */
