/* src/ref/ref.h: CPU reference operators (double accumulation, OpenMP) and the
 * validation rule (docs/ARCHITECTURE.md "Validation"). They are the oracle of every GPU
 * test. */
#ifndef SDI_REF_H
#define SDI_REF_H

#include <stdbool.h>

#include "../core/core.h"

/* y = A·x in double. count[i] (products summed into y[i]) and absum[i] (Σ|a·x|) may be
 * NULL; when given they feed the γ_{n+1}·S term of the validation bound. */
SDI_HIDDEN sd_status sdi_ref_spmv(const sd_csr *a, const float *x, double *y, int64_t *count,
                                  double *absum);
/* C = A·B, B is cols×k row-major, C is rows×k row-major (double). count has rows
 * entries (every column of a row sums the same number of products); absum rows×k. */
SDI_HIDDEN sd_status sdi_ref_spmm(const sd_csr *a, const float *b, int k, double *c,
                                  int64_t *count, double *absum);

/* Reference SpGEMM result: the symbolic structure is every reached (i, j) (a product
 * that cancels keeps its entry), columns sorted; values, counts and Σ|a·b| in double. */
typedef struct {
    int32_t rows, cols;
    int64_t nnz;
    int64_t *rowptr;
    int32_t *colind;
    double *vals;
    int64_t *count;
    double *absum;
} sdi_ref_csr;

SDI_HIDDEN sd_status sdi_ref_spgemm(const sd_csr *a, const sd_csr *b, sdi_ref_csr *out);
SDI_HIDDEN void sdi_ref_csr_free(sdi_ref_csr *c);

/* ------------------------------------------------------------------ validation
 * |ŷ − y| ≤ 1e-5 + 1e-3·|y| + γ_{n+1}·S, γ_m = m·u/(1 − m·u), u = 2⁻²⁴
 * (docs/ARCHITECTURE.md "Validation"). NaN/Inf in the output always fails. */
typedef struct {
    bool ok;
    int64_t n_checked;
    int64_t n_violations;
    int64_t n_nonfinite;
    /* the worst entry: largest |ŷ − y| / bound (or the first non-finite one) */
    int64_t row, col; /* -1 when no entry was checked */
    double got, want, bound, ratio;
    bool device;      /* passed on the device against the reference's mirror (SpGEMM: the
                         structure equals the sorted reference's, entry for entry) */
    char reason[256]; /* empty when ok */
} sdi_validation;

SDI_HIDDEN double sdi_gamma(int64_t m);
SDI_HIDDEN double sdi_validation_bound(double want, int64_t count, double absum);

/* Dense output of rows×width entries (row-major). want/count/absum as the references
 * fill them (count per row). Returns SD_OK or SD_ERR_VALIDATION (message names the
 * worst entry). */
SDI_HIDDEN sd_status sdi_validate_dense(const float *got, const double *want,
                                        const int64_t *count, const double *absum,
                                        int64_t rows, int64_t width, sdi_validation *out);
/* Exact comparison (small-integer values whose FP32 sums are exact). */
SDI_HIDDEN sd_status sdi_validate_dense_exact(const float *got, const double *want,
                                              int64_t rows, int64_t width,
                                              sdi_validation *out);
/* SpGEMM: got's rows are sorted and coalesced first (a copy), then dimensions, nnz,
 * row pointers and column indices must match exactly and values meet the bound. */
SDI_HIDDEN sd_status sdi_validate_spgemm(const sd_csr *got, const sdi_ref_csr *want,
                                         sdi_validation *out);

#endif /* SDI_REF_H */
