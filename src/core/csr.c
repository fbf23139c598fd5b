/* src/core/csr.c: host CSR allocation, copy, transpose and invariant checks. */
#include <math.h>
#include <string.h>

#include "core.h"

void sd_csr_free(sd_csr *a)
{
    if (a == NULL)
        return;
    sdi_free(a->rowptr);
    sdi_free(a->colind);
    sdi_free(a->vals);
    memset(a, 0, sizeof *a);
}

sd_status sdi_csr_alloc(sd_csr *a, int32_t rows, int32_t cols, int64_t nnz)
{
    memset(a, 0, sizeof *a);
    if (rows < 0 || cols < 0 || nnz < 0)
        return SDI_ERR(SD_ERR_INVALID_ARG, "negative size (rows %d, cols %d, nnz %lld)", rows,
                       cols, (long long)nnz);
    a->rowptr = sdi_calloc((size_t)rows + 1, sizeof *a->rowptr);
    a->colind = sdi_malloc_array((size_t)nnz, sizeof *a->colind);
    a->vals = sdi_malloc_array((size_t)nnz, sizeof *a->vals);
    if (a->rowptr == NULL || a->colind == NULL || a->vals == NULL) {
        sd_csr_free(a);
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY,
                       "out of host memory for a CSR matrix of %d rows and %lld entries", rows,
                       (long long)nnz);
    }
    a->rows = rows;
    a->cols = cols;
    a->nnz = nnz;
    return SD_OK;
}

sd_status sdi_csr_copy(const sd_csr *a, sd_csr *out)
{
    sd_status s = sdi_csr_alloc(out, a->rows, a->cols, a->nnz);
    if (s != SD_OK)
        return s;
    memcpy(out->rowptr, a->rowptr, ((size_t)a->rows + 1) * sizeof *a->rowptr);
    if (a->nnz > 0) {
        memcpy(out->colind, a->colind, (size_t)a->nnz * sizeof *a->colind);
        memcpy(out->vals, a->vals, (size_t)a->nnz * sizeof *a->vals);
    }
    return SD_OK;
}

sd_status sdi_csr_transpose(const sd_csr *a, sd_csr *out)
{
    int64_t *next = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(next);                                                                    \
        sd_csr_free(out);                                                                  \
    } while (0)
    SD_TRY(sdi_csr_alloc(out, a->cols, a->rows, a->nnz));
    next = sdi_malloc_array((size_t)a->cols + 1, sizeof *next);
    SD_CHECK_ALLOC(next, "the transpose's row cursors");
    for (int64_t k = 0; k < a->nnz; k++)
        out->rowptr[a->colind[k] + 1]++;
    for (int32_t j = 0; j < a->cols; j++)
        out->rowptr[j + 1] += out->rowptr[j];
    memcpy(next, out->rowptr, ((size_t)a->cols + 1) * sizeof *next);
    /* Rows of a visited in order, so each row of aᵀ receives its columns sorted. */
    for (int32_t i = 0; i < a->rows; i++) {
        for (int64_t k = a->rowptr[i]; k < a->rowptr[i + 1]; k++) {
            int64_t dst = next[a->colind[k]]++;
            out->colind[dst] = i;
            out->vals[dst] = a->vals[k];
        }
    }
    sdi_free(next);
    return SD_OK;
#undef SD_FREE_ALL
}

bool sdi_csr_same_pattern(const sd_csr *a, const sd_csr *b)
{
    if (a->rows != b->rows || a->cols != b->cols || a->nnz != b->nnz)
        return false;
    if (memcmp(a->rowptr, b->rowptr, ((size_t)a->rows + 1) * sizeof *a->rowptr) != 0)
        return false;
    return a->nnz == 0 || memcmp(a->colind, b->colind, (size_t)a->nnz * sizeof *a->colind) == 0;
}

sd_status sdi_csr_check_structure(const sd_csr *a)
{
    if (a == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "matrix is NULL");
    if (a->rows < 0 || a->cols < 0 || a->nnz < 0)
        return SDI_ERR(SD_ERR_INVALID_ARG, "negative size (rows %d, cols %d, nnz %lld)",
                       a->rows, a->cols, (long long)a->nnz);
    if (a->rowptr == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "rowptr is NULL");
    if (a->nnz > 0 && (a->colind == NULL || a->vals == NULL))
        return SDI_ERR(SD_ERR_INVALID_ARG, "colind or vals is NULL with nnz = %lld",
                       (long long)a->nnz);
    if (a->rowptr[0] != 0)
        return SDI_ERR(SD_ERR_INVALID_ARG, "rowptr[0] is %lld, not 0", (long long)a->rowptr[0]);
    if (a->rowptr[a->rows] != a->nnz)
        return SDI_ERR(SD_ERR_INVALID_ARG, "rowptr[rows] is %lld but nnz is %lld",
                       (long long)a->rowptr[a->rows], (long long)a->nnz);
    for (int32_t i = 0; i < a->rows; i++) {
        int64_t b = a->rowptr[i], e = a->rowptr[i + 1];
        if (e < b || e > a->nnz)
            return SDI_ERR(SD_ERR_INVALID_ARG, "row %d: row pointers decrease or exceed nnz", i);
        for (int64_t k = b; k < e; k++) {
            int32_t j = a->colind[k];
            if (j < 0 || j >= a->cols)
                return SDI_ERR(SD_ERR_INVALID_ARG,
                               "row %d: column %d out of range [0, %d) at entry %lld", i, j,
                               a->cols, (long long)k);
            if (k > b && j <= a->colind[k - 1])
                return SDI_ERR(SD_ERR_INVALID_ARG,
                               "row %d: columns not sorted or duplicated (%d after %d) at "
                               "entry %lld",
                               i, j, a->colind[k - 1], (long long)k);
        }
    }
    return SD_OK;
}

sd_status sd_csr_check(const sd_csr *a)
{
    sd_status s = sdi_csr_check_structure(a);
    if (s != SD_OK)
        return s;
    for (int32_t i = 0; i < a->rows; i++)
        for (int64_t k = a->rowptr[i]; k < a->rowptr[i + 1]; k++)
            if (!isfinite(a->vals[k]))
                return SDI_ERR(SD_ERR_INVALID_ARG, "row %d: value at entry %lld is not finite",
                               i, (long long)k);
    return SD_OK;
}
