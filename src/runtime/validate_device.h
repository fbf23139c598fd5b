/* src/runtime/validate_device.h: the CPU reference of a task and the validation of device
 * outputs against it (on the device for large outputs). */
#ifndef SDI_VALIDATE_DEVICE_H
#define SDI_VALIDATE_DEVICE_H

#include <stdint.h>

#include "../ref/ref.h"

typedef struct {
    sd_op op;
    int k;     /* dense width: 1 for SpMV, K for SpMM */
    int exact; /* compare exactly (small-integer inputs) instead of the bound */
    int64_t rows;
    double *want;   /* rows × k */
    int64_t *count; /* rows */
    double *absum;  /* rows × k */
    sdi_ref_csr c;  /* SpGEMM */
    /* Device mirror for large dense outputs (FP32 reference + conservative bound),
     * built on the first check; see sdi_check_dense_output. Owned. */
    struct sdi_ref_device *dev;
} sdi_reference;

/* CPU reference for SpMV (k = 1, xb = x) or SpMM (xb = B, cols × k row-major). */
SDI_HIDDEN sd_status sdi_reference_dense(const sd_csr *a, sd_op op, const float *xb, int k,
                                         int exact, sdi_reference *out);
/* CPU reference for C = A·B. */
SDI_HIDDEN sd_status sdi_reference_spgemm(const sd_csr *a, const sd_csr *b, sdi_reference *out);
SDI_HIDDEN void sdi_reference_free(sdi_reference *r);
/* Applies the rule of docs/ARCHITECTURE.md "Validation" (or exactness) to the rows × k
 * floats at d_out. Large outputs
 * (≥ SDI_DEVICE_CHECK_MIN entries) are checked on the device against a mirror of the
 * reference built on the first call (FP32 reference + bound minus its rounding, so a
 * device pass implies the exact rule); whatever the device flags, and every small
 * output, is copied back and judged on the host, so failures carry the host's message.
 * SPARSEDITTO_HOST_VALIDATION=1 forces the host path. */
#define SDI_DEVICE_CHECK_MIN (1 << 18)
/* The mirror is uploaded this many entries at a time, from two pinned slots (192 MiB for
 * SpGEMM) whose copies overlap the next chunk's computation. */
#define SDI_MIRROR_CHUNK ((int64_t)1 << 24)
SDI_HIDDEN sd_status sdi_check_dense_output(sd_context *ctx, const sdi_reference *r,
                                            const float *d_out, sdi_validation *val);
/* Applies the SpGEMM rule to a device CSR (row pointers of 4 or 8 bytes): a large output
 * (≥ SDI_DEVICE_CHECK_MIN entries, as many as the reference's) is compared on the device
 * with a mirror of the reference (its structure exactly, values as above). A mirror larger
 * than a quarter of the free device memory is streamed: its row pointers stay on the
 * device, its entries are computed and uploaded a chunk at a time at each check
 * (SPARSEDITTO_STREAMED_MIRROR=1 forces that, for tests). An output the device flags, and
 * every other, is copied back and judged on the host (whose message a failure carries). */
SDI_HIDDEN sd_status sdi_check_spgemm_output(sd_context *ctx, const sdi_reference *r,
                                             int32_t rows, int32_t cols, int64_t nnz,
                                             const void *d_rowptr, int rowptr_bytes,
                                             const int32_t *d_colind, const float *d_vals,
                                             sdi_validation *val);

#endif /* SDI_VALIDATE_DEVICE_H */
