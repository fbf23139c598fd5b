/* src/analysis/spmm_stats.c: the SpMM statistics of a task (plan_stats.h): one O(rows)
 * scan of the row lengths. */
#include <math.h>
#include <string.h>

#include "plan_stats.h"

void sdi_spmm_stats_compute(const sd_csr *a, sdi_spmm_stats *out)
{
    memset(out, 0, sizeof *out);
    out->rows = a->rows;
    out->cols = a->cols;
    out->nnz = a->nnz;
    double sum2 = 0;
    for (int32_t i = 0; i < a->rows; i++) {
        int64_t l = a->rowptr[i + 1] - a->rowptr[i];
        if (l > out->row_max)
            out->row_max = l;
        out->rows_empty += l == 0;
        sum2 += (double)l * (double)l;
    }
    if (a->rows > 0) {
        out->row_mean = (double)a->nnz / a->rows;
        double var = sum2 / a->rows - out->row_mean * out->row_mean;
        out->row_cv = out->row_mean > 0 ? sqrt(var > 0 ? var : 0) / out->row_mean : 0;
    }
}
