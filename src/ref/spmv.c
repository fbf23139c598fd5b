/* src/ref/spmv.c: the CPU reference SpMV y = A·x (double accumulation, OpenMP). */
#include <math.h>

#include "ref.h"

sd_status sdi_ref_spmv(const sd_csr *a, const float *x, double *y, int64_t *count,
                       double *absum)
{
    if (a == NULL || a->rowptr == NULL || (a->nnz > 0 && (a->colind == NULL || a->vals == NULL)))
        return SDI_ERR(SD_ERR_INVALID_ARG, "ref spmv: matrix or its arrays are NULL");
    if ((x == NULL && a->cols > 0) || (y == NULL && a->rows > 0))
        return SDI_ERR(SD_ERR_INVALID_ARG, "ref spmv: x or y is NULL");
    const int32_t rows = a->rows;
    /* Dynamic chunks: one huge row must not hold up a whole static block. */
#pragma omp parallel for schedule(dynamic, 256)
    for (int32_t i = 0; i < rows; i++) {
        double sum = 0.0, abs_sum = 0.0;
        for (int64_t k = a->rowptr[i]; k < a->rowptr[i + 1]; k++) {
            double p = (double)a->vals[k] * (double)x[a->colind[k]];
            sum += p;
            abs_sum += fabs(p);
        }
        y[i] = sum;
        if (count != NULL)
            count[i] = a->rowptr[i + 1] - a->rowptr[i];
        if (absum != NULL)
            absum[i] = abs_sum;
    }
    return SD_OK;
}
