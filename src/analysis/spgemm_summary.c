/* src/analysis/spgemm_summary.c: the statistics of a SpGEMM task that planning reads: the
 * summary of C's rows (sdi_sg_summarize) and, where no device analysis exists (the offline
 * planner, tests), u(i), lo(i), hi(i) computed on the host (sdi_sg_rowinfo_host). */
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "plan_stats.h"

void sdi_sg_summarize(const sdi_sg_rowinfo *ri, sdi_sg_summary *out)
{
    memset(out, 0, sizeof *out);
    out->m = ri->m;
    out->n = ri->n;
    int64_t nonempty = 0, tiny = 0, narrow = 0;
    for (int32_t i = 0; i < ri->m; i++) {
        const int64_t u = ri->u[i];
        if (u <= 0)
            continue;
        nonempty++;
        out->u_total += (double)u;
        if (u > out->u_max)
            out->u_max = u;
        if (u <= 32)
            tiny++;
        /* the row's column span, at most n */
        int64_t span = (int64_t)ri->hi[i] - ri->lo[i] + 1;
        if (span > ri->n)
            span = ri->n;
        const int64_t bound = u < span ? u : span;
        if (span <= 4 * bound && span <= 2048)
            narrow++;
    }
    if (nonempty > 0) {
        out->frac_tiny = (double)tiny / (double)nonempty;
        out->frac_narrow = (double)narrow / (double)nonempty;
    }
}

sd_status sdi_sg_rowinfo_host(const sd_csr *a, const sd_csr *b, sdi_sg_rowinfo *ri)
{
    int64_t *u = NULL;
    int32_t *lo = NULL, *hi = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(u);                                                                       \
        sdi_free(lo);                                                                      \
        sdi_free(hi);                                                                      \
    } while (0)
    if (ri == NULL || a == NULL || b == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spgemm row analysis: NULL argument");
    memset(ri, 0, sizeof *ri);
    if (b->rows != a->cols)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spgemm row analysis: A is %dx%d and B is %dx%d",
                       a->rows, a->cols, b->rows, b->cols);
    size_t m = (size_t)(a->rows > 0 ? a->rows : 1);
    u = sdi_malloc_array(m, sizeof *u);
    lo = sdi_malloc_array(m, sizeof *lo);
    hi = sdi_malloc_array(m, sizeof *hi);
    if (u == NULL || lo == NULL || hi == NULL) {
        SD_FREE_ALL;
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for the SpGEMM row analysis");
    }
    (void)sdi_spgemm_row_work(a, b->rowptr, u);
    for (int32_t i = 0; i < a->rows; i++) {
        int32_t l = b->cols, h = -1;
        for (int64_t p = a->rowptr[i]; p < a->rowptr[i + 1]; p++) {
            int32_t k = a->colind[p];
            if (b->rowptr[k + 1] > b->rowptr[k]) {
                if (b->colind[b->rowptr[k]] < l)
                    l = b->colind[b->rowptr[k]];
                if (b->colind[b->rowptr[k + 1] - 1] > h)
                    h = b->colind[b->rowptr[k + 1] - 1];
            }
        }
        lo[i] = h >= 0 ? l : 0;
        hi[i] = h >= 0 ? h : 0;
    }
    int64_t bmax = 0;
    for (int32_t k = 0; k < b->rows; k++)
        if (b->rowptr[k + 1] - b->rowptr[k] > bmax)
            bmax = b->rowptr[k + 1] - b->rowptr[k];
    ri->m = a->rows;
    ri->n = b->cols;
    ri->u = u;
    ri->lo = lo;
    ri->hi = hi;
    ri->b_row_max = bmax;
    return SD_OK;
#undef SD_FREE_ALL
}

void sdi_sg_rowinfo_host_free(sdi_sg_rowinfo *ri)
{
    if (ri == NULL)
        return;
    /* the host analysis allocated them (sdi_sg_rowinfo_host) */
    sdi_free((void *)ri->u);
    sdi_free((void *)ri->lo);
    sdi_free((void *)ri->hi);
    memset(ri, 0, sizeof *ri);
}
