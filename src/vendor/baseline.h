/* src/vendor/baseline.h: the cuSPARSE baseline: every applicable generic-API variant of an
 * operator, validated and timed (docs/ARCHITECTURE.md "The cuSPARSE baseline and the
 * fallback"). */
#ifndef SDI_BASELINE_H
#define SDI_BASELINE_H

#include <stdbool.h>
#include <stdint.h>

#include "../core/core.h"
#include "../runtime/timing.h"
#include "../runtime/validate_device.h"

typedef enum {
    SDI_VARIANT_OK = 0,          /* validated and timed */
    SDI_VARIANT_UNSUPPORTED,     /* cuSPARSE refused the configuration */
    SDI_VARIANT_OUT_OF_RESOURCES, /* device memory or cuSPARSE resources */
    SDI_VARIANT_INVALID,         /* ran but failed validation */
    SDI_VARIANT_SKIPPED,         /* not attempted (e.g. padding would not fit) */
    SDI_VARIANT_ERROR            /* another failure (named in detail) */
} sdi_variant_status;

#define SDI_BASELINE_MAX_VARIANTS 16

typedef struct {
    char name[48]; /* e.g. "csr_alg1", "bell16", "spgemm_alg3_c0.2" */
    sdi_variant_status status;
    char detail[384];  /* cuSPARSE status string, validation reason, ... */
    sdi_timing timing; /* status OK only */
    double setup_ms;   /* one-time preprocessing (format build, buffer, preprocess) */
    double roofline_frac; /* t_limit / mean (0 when no roofline) */
    sdi_validation val;
    bool brief; /* timing is sdi_measure_screened's brief protocol (options' brief_us) */
} sdi_variant_result;

typedef struct {
    int k;            /* SpMM dense width */
    int aat;          /* SpGEMM: 1 = A·Aᵀ, 0 = A·A (needs square A), -1 = by shape */
    const sd_csr *b;  /* SpGEMM: a general B (A·B; aat is then ignored); NULL = A or Aᵀ */
    int exact;        /* inputs are small integers: validate exactly */
    const char *only; /* NULL = every variant; else a comma list of variant names */
    int max_padding_ratio; /* Blocked-ELL: skip when slots > ratio × nnz (0 = 64) */
    double brief_us;  /* > 0: a variant whose timed warm-up takes this long is timed by the
                         brief protocol (sdi_screen), and the fastest variant is then timed
                         again in full, so the baseline's best never is brief (a search's
                         vendor round: four SpGEMM algorithms × 25 products of 290 ms are
                         66 s of the af_shell10 twin's compile; SpMV and SpMM alike);
                         0 = every variant in full */
    const sdi_reference *ref; /* NULL: the baseline computes its CPU reference; else the
                         caller's for exactly this task (same op, K, x / B, product, exact),
                         borrowed: a search validates its candidates and cuSPARSE's against
                         one reference, not two (the af_shell10 twin's A·A reference,
                         1.3·10⁹ entries, took tens of seconds each time) */
} sdi_baseline_options;

typedef struct {
    sd_op op;
    int k;
    int aat;
    int general_b; /* SpGEMM: B was a general operand (A·B) */
    int32_t rows, cols;
    int64_t nnz;
    int64_t nnz_c; /* SpGEMM output nnz (from the reference) */
    int nvariants;
    sdi_variant_result v[SDI_BASELINE_MAX_VARIANTS];
    int best; /* fastest valid variant by mean time; -1 when none */
    double roofline_bytes, roofline_us;
    double copy_bw, launch_us;
} sdi_baseline;

/* Every applicable cuSPARSE generic-API algorithm and format for op on A (values as
 * given), x / B given by the caller (rows × ... as the operator needs; NULL for
 * SpGEMM), each validated against the CPU reference and timed; the fastest valid one is
 * out->best. A variant's failure is recorded in its entry, not returned; the status is
 * an error only when nothing could be attempted (no device, sticky CUDA error, host
 * memory). */
SDI_HIDDEN sd_status sdi_cusparse_baseline(sd_context *ctx, const sd_csr *a, sd_op op,
                                           const float *xb, const sdi_baseline_options *opt,
                                           sdi_baseline *out);
SDI_HIDDEN const char *sdi_variant_status_name(sdi_variant_status s);
/* Writes the baseline as a JSON object into j (name, status, times, validation, ...). */
SDI_HIDDEN void sdi_baseline_json(const sdi_baseline *b, sdi_json *j);

#endif /* SDI_BASELINE_H */
