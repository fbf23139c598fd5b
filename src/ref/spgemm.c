/* src/ref/spgemm.c: the CPU reference SpGEMM C = A·B (Gustavson: per-thread dense
 * accumulator and marker, a symbolic count pass then a numeric fill pass, parallel over
 * rows with dynamic scheduling; double accumulation). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "ref.h"

/* The per-thread accumulators cost 24 bytes per column of B: the thread count is capped
 * so that all of them together stay under this many bytes (one thread always runs). */
#define SDI_REF_SPGEMM_ACC_BYTES (4ull << 30)

void sdi_ref_csr_free(sdi_ref_csr *c)
{
    if (c == NULL)
        return;
    sdi_free(c->rowptr);
    sdi_free(c->colind);
    sdi_free(c->vals);
    sdi_free(c->count);
    sdi_free(c->absum);
    memset(c, 0, sizeof *c);
}

static sd_status check_operand(const sd_csr *m, const char *name)
{
    if (m == NULL || m->rowptr == NULL || m->rows < 0 || m->cols < 0 ||
        (m->nnz > 0 && (m->colind == NULL || m->vals == NULL)))
        return SDI_ERR(SD_ERR_INVALID_ARG, "ref spgemm: %s or its arrays are NULL or negative",
                       name);
    return SD_OK;
}

sd_status sdi_ref_spgemm(const sd_csr *a, const sd_csr *b, sdi_ref_csr *out)
{
    if (out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "ref spgemm: out is NULL");
    memset(out, 0, sizeof *out);
    sd_status st = check_operand(a, "A");
    if (st == SD_OK)
        st = check_operand(b, "B");
    if (st != SD_OK)
        return st;
    if (a->cols != b->rows)
        return SDI_ERR(SD_ERR_INVALID_ARG,
                       "ref spgemm: A is %d x %d but B is %d x %d (A.cols != B.rows)", a->rows,
                       a->cols, b->rows, b->cols);
    const int32_t rows = a->rows, cols = b->cols;
    out->rows = rows;
    out->cols = cols;
    out->rowptr = sdi_calloc((size_t)rows + 1, sizeof *out->rowptr);
    if (out->rowptr == NULL) {
        sdi_ref_csr_free(out);
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "ref spgemm: out of host memory for row pointers");
    }

    int nt = omp_get_max_threads();
    {
        unsigned long long per = 24ull * (unsigned long long)(cols > 0 ? cols : 1);
        unsigned long long cap = SDI_REF_SPGEMM_ACC_BYTES / per;
        if (cap < 1)
            cap = 1;
        if ((unsigned long long)nt > cap)
            nt = (int)cap;
    }
    int fail = 0; /* 1: accumulator allocation failed, 2: output allocation failed, 3: too large */
    int64_t total = 0;
    double need = 0;
    long long avail = -1;
    const size_t ncols = (size_t)cols;

#pragma omp parallel num_threads(nt)
    {
        int32_t *marker = sdi_malloc_array(ncols, sizeof *marker);
        double *acc = sdi_malloc_array(ncols, sizeof *acc);
        double *sab = sdi_malloc_array(ncols, sizeof *sab);
        int32_t *cnt = sdi_malloc_array(ncols, sizeof *cnt);
        if (marker == NULL || acc == NULL || sab == NULL || cnt == NULL) {
#pragma omp atomic write
            fail = 1;
        }
#pragma omp barrier
        int failed;
#pragma omp atomic read
        failed = fail;
        if (!failed) {
            /* Symbolic pass: the marker holds the last row that reached a column. */
            for (int32_t j = 0; j < cols; j++)
                marker[j] = -1;
#pragma omp for schedule(dynamic, 64)
            for (int32_t i = 0; i < rows; i++) {
                int64_t len = 0;
                for (int64_t ka = a->rowptr[i]; ka < a->rowptr[i + 1]; ka++) {
                    int32_t k = a->colind[ka];
                    for (int64_t kb = b->rowptr[k]; kb < b->rowptr[k + 1]; kb++) {
                        int32_t j = b->colind[kb];
                        if (marker[j] != i) {
                            marker[j] = i;
                            len++;
                        }
                    }
                }
                out->rowptr[i + 1] = len;
            }
#pragma omp single
            {
                for (int32_t i = 0; i < rows; i++)
                    out->rowptr[i + 1] += out->rowptr[i];
                total = out->rowptr[rows];
                size_t n = (size_t)total;
                /* Linux grants more than it has and kills the process when the pages are
                 * touched: a product larger than the available memory is refused here. */
                need = (double)n * (double)(sizeof *out->colind + sizeof *out->vals + sizeof *out->count +
                                            sizeof *out->absum);
                if (!sdi_host_mem_fits(need, &avail)) {
#pragma omp atomic write
                    fail = 3;
                } else {
                out->colind = sdi_malloc_array(n, sizeof *out->colind);
                out->vals = sdi_malloc_array(n, sizeof *out->vals);
                out->count = sdi_malloc_array(n, sizeof *out->count);
                out->absum = sdi_malloc_array(n, sizeof *out->absum);
                if (out->colind == NULL || out->vals == NULL || out->count == NULL ||
                    out->absum == NULL) {
#pragma omp atomic write
                    fail = 2;
                }
                }
            }
#pragma omp atomic read
            failed = fail;
            if (!failed) {
                for (int32_t j = 0; j < cols; j++)
                    marker[j] = -1;
#pragma omp for schedule(dynamic, 64)
                for (int32_t i = 0; i < rows; i++) {
                    const int64_t base = out->rowptr[i];
                    int32_t *ci = out->colind + base;
                    int64_t len = 0;
                    int32_t lo = cols, hi = -1; /* the row's column span */
                    for (int64_t ka = a->rowptr[i]; ka < a->rowptr[i + 1]; ka++) {
                        const double av = (double)a->vals[ka];
                        const int32_t k = a->colind[ka];
                        for (int64_t kb = b->rowptr[k]; kb < b->rowptr[k + 1]; kb++) {
                            const int32_t j = b->colind[kb];
                            const double p = av * (double)b->vals[kb];
                            if (marker[j] != i) {
                                marker[j] = i;
                                ci[len++] = j;
                                lo = j < lo ? j : lo;
                                hi = j > hi ? j : hi;
                                acc[j] = p;
                                sab[j] = fabs(p);
                                cnt[j] = 1;
                            } else {
                                acc[j] += p;
                                sab[j] += fabs(p);
                                cnt[j]++;
                            }
                        }
                    }
                    /* Sorted columns: a scan of the marker over the row's span when the
                     * row fills at least an eighth of it (banded and dense-ish rows), a
                     * comparison sort otherwise. */
                    if (len > 32 && (int64_t)hi - lo + 1 <= 8 * len) {
                        int64_t w = 0;
                        for (int32_t j = lo; j <= hi && w < len; j++)
                            if (marker[j] == i)
                                ci[w++] = j;
                    } else {
                        sdi_sort_i32(ci, len);
                    }
                    for (int64_t e = 0; e < len; e++) {
                        const int32_t j = ci[e];
                        out->vals[base + e] = acc[j];
                        out->absum[base + e] = sab[j];
                        out->count[base + e] = cnt[j];
                    }
                }
            }
        }
        sdi_free(marker);
        sdi_free(acc);
        sdi_free(sab);
        sdi_free(cnt);
    }
    if (fail != 0) {
        int64_t n = fail == 2 ? total : 0;
        sdi_ref_csr_free(out);
        if (fail == 3)
            return SDI_ERR(SD_ERR_OUT_OF_MEMORY,
                           "ref spgemm: the product has %lld nonzeros; its reference needs %.1f GiB of "
                           "host memory but %.1f GiB are available",
                           (long long)total, need / 1073741824.0, (double)avail / 1073741824.0);
        if (fail == 1)
            return SDI_ERR(SD_ERR_OUT_OF_MEMORY,
                           "ref spgemm: out of host memory for the accumulators (%d threads x "
                           "%d columns)",
                           nt, cols);
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY,
                       "ref spgemm: out of host memory for a product of %lld entries",
                       (long long)n);
    }
    out->nnz = total;
    return SD_OK;
}
