/* src/ref/spmm.c: the CPU reference SpMM C = A·B (B cols×k, C rows×k, row-major;
 * double accumulation, OpenMP over rows). */
#include <math.h>
#include <string.h>

#include "ref.h"

sd_status sdi_ref_spmm(const sd_csr *a, const float *b, int k, double *c, int64_t *count,
                       double *absum)
{
    if (a == NULL || a->rowptr == NULL || (a->nnz > 0 && (a->colind == NULL || a->vals == NULL)))
        return SDI_ERR(SD_ERR_INVALID_ARG, "ref spmm: matrix or its arrays are NULL");
    if (k < 1)
        return SDI_ERR(SD_ERR_INVALID_ARG, "ref spmm: dense width k = %d (must be >= 1)", k);
    if ((b == NULL && a->cols > 0) || (c == NULL && a->rows > 0))
        return SDI_ERR(SD_ERR_INVALID_ARG, "ref spmm: b or c is NULL");
    const int32_t rows = a->rows;
    const size_t kk = (size_t)k;
#pragma omp parallel for schedule(dynamic, 64)
    for (int32_t i = 0; i < rows; i++) {
        double *ci = c + (size_t)i * kk;
        double *si = absum != NULL ? absum + (size_t)i * kk : NULL;
        memset(ci, 0, kk * sizeof *ci);
        if (si != NULL)
            memset(si, 0, kk * sizeof *si);
        for (int64_t e = a->rowptr[i]; e < a->rowptr[i + 1]; e++) {
            const double v = (double)a->vals[e];
            const float *bj = b + (size_t)a->colind[e] * kk;
            if (si != NULL) {
                for (size_t t = 0; t < kk; t++) {
                    double p = v * (double)bj[t];
                    ci[t] += p;
                    si[t] += fabs(p);
                }
            } else {
                for (size_t t = 0; t < kk; t++)
                    ci[t] += v * (double)bj[t];
            }
        }
        if (count != NULL)
            count[i] = a->rowptr[i + 1] - a->rowptr[i];
    }
    return SD_OK;
}
