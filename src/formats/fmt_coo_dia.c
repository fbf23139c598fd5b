/* src/formats/fmt_coo_dia.c: row-major COO and DIA (banded / stencil matrices). */
#include <limits.h>
#include <string.h>

#include "formats.h"

int32_t *sdi_fmt_row_indices(const sd_csr *a)
{
    int32_t *ri = sdi_malloc_array((size_t)(a->nnz > 0 ? a->nnz : 1), sizeof *ri);
    if (ri == NULL)
        return NULL;
#pragma omp parallel for schedule(dynamic, 1024)
    for (int64_t i = 0; i < a->rows; i++)
        for (int64_t k = a->rowptr[i]; k < a->rowptr[i + 1]; k++)
            ri[k] = (int32_t)i;
    return ri;
}

sd_status sdi_fmt_coo(const sd_csr *a, sdi_devfmt *out)
{
    int32_t *ri = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(ri);                                                                      \
        sdi_format_free(out);                                                              \
    } while (0)
    if (out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "coo: out is NULL");
    memset(out, 0, sizeof *out);
    if (a == NULL || a->rowptr == NULL || (a->nnz > 0 && (a->colind == NULL || a->vals == NULL)))
        return SDI_ERR(SD_ERR_INVALID_ARG, "coo: matrix or its arrays are NULL");
    ri = sdi_fmt_row_indices(a);
    SD_CHECK_ALLOC(ri, "coo row indices");
    out->kind = SDI_FMT_COO;
    out->rows = a->rows;
    out->cols = a->cols;
    out->nnz = a->nnz;
    out->slots = a->nnz;
    sd_status s = sdi_format_add(out, "rowind", ri, a->nnz, a->nnz, 4, SDI_ROLE_META, 1);
    ri = NULL;
    SD_TRY(s);
    SD_TRY(sdi_format_add(out, "colind", a->colind, a->nnz, a->nnz, 4, SDI_ROLE_META, 0));
    SD_TRY(sdi_format_add(out, "vals", a->vals, a->nnz, a->nnz, 4, SDI_ROLE_VALUE, 0));
    return SD_OK;
#undef SD_FREE_ALL
}

/* Inserts v into the sorted set (n entries, capacity cap); returns the new count, or
 * cap + 1 when the set would overflow. */
static int set_insert(int64_t *set, int n, int cap, int64_t v)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (set[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < n && set[lo] == v)
        return n;
    if (n == cap)
        return cap + 1;
    memmove(set + lo + 1, set + lo, (size_t)(n - lo) * sizeof *set);
    set[lo] = v;
    return n + 1;
}

sd_status sdi_fmt_dia(const sd_csr *a, double max_fill, int max_diags, sdi_devfmt *out)
{
    int64_t *set = NULL;
    int32_t *off = NULL;
    float *val = NULL;
    uint8_t *mask = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(set);                                                                     \
        sdi_free(off);                                                                     \
        sdi_free(val);                                                                     \
        sdi_free(mask);                                                                    \
        sdi_format_free(out);                                                              \
    } while (0)
    if (out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "dia: out is NULL");
    memset(out, 0, sizeof *out);
    if (a == NULL || a->rowptr == NULL || (a->nnz > 0 && (a->colind == NULL || a->vals == NULL)))
        return SDI_ERR(SD_ERR_INVALID_ARG, "dia: matrix or its arrays are NULL");
    if (max_diags < 1 || max_diags > 4096)
        return SDI_ERR(SD_ERR_INVALID_ARG, "dia: max_diags %d out of [1, 4096]", max_diags);
    set = sdi_malloc_array((size_t)max_diags, sizeof *set);
    SD_CHECK_ALLOC(set, "dia offsets");
    int n = 0;
    for (int64_t i = 0; i < a->rows; i++) {
        for (int64_t k = a->rowptr[i]; k < a->rowptr[i + 1]; k++) {
            n = set_insert(set, n, max_diags, (int64_t)a->colind[k] - i);
            if (n > max_diags) {
                SD_FREE_ALL;
                return SDI_ERR(SD_ERR_UNSUPPORTED,
                               "dia: more than %d diagonals (row %lld adds another)", max_diags,
                               (long long)i);
            }
        }
    }
    const int64_t ld = ((int64_t)a->rows + 31) & ~(int64_t)31;
    const int64_t slots = (int64_t)n * ld;
    SD_TRY(sdi_format_check_fill("dia", slots, a->nnz, max_fill));
    off = sdi_malloc_array((size_t)(n > 0 ? n : 1), sizeof *off);
    SD_CHECK_ALLOC(off, "dia offsets");
    for (int d = 0; d < n; d++)
        off[d] = (int32_t)set[d];
    SDI_FREE(set);
    val = sdi_calloc((size_t)(slots > 0 ? slots : 1), sizeof *val);
    SD_CHECK_ALLOC(val, "dia values");
    mask = sdi_calloc((size_t)(slots > 0 ? slots : 1), sizeof *mask);
    SD_CHECK_ALLOC(mask, "dia mask");
#pragma omp parallel for schedule(dynamic, 1024)
    for (int64_t i = 0; i < a->rows; i++) {
        int d = 0;
        for (int64_t k = a->rowptr[i]; k < a->rowptr[i + 1]; k++) {
            int64_t o = (int64_t)a->colind[k] - i;
            while (off[d] < o) /* columns ascend, so do their offsets */
                d++;
            val[(int64_t)d * ld + i] = a->vals[k];
            mask[(int64_t)d * ld + i] = 1;
        }
    }
    out->kind = SDI_FMT_DIA;
    out->rows = a->rows;
    out->cols = a->cols;
    out->nnz = a->nnz;
    out->slots = slots;
    out->dia_ndiag = n;
    out->dia_ld = ld;
    sd_status s = sdi_format_add(out, "offsets", off, n, n, 4, SDI_ROLE_META, 1);
    off = NULL;
    SD_TRY(s);
    s = sdi_format_add(out, "vals", val, slots, slots, 4, SDI_ROLE_VALUE, 1);
    val = NULL;
    SD_TRY(s);
    s = sdi_format_add(out, "mask", mask, slots, slots, 1, SDI_ROLE_HOST, 1);
    mask = NULL;
    SD_TRY(s);
    return SD_OK;
#undef SD_FREE_ALL
}
