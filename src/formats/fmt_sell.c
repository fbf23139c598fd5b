/* src/formats/fmt_sell.c: column-major ELL and SELL-C-σ (sorted windows, row
 * permutation), with padding limits. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "formats.h"

static int64_t rowlen(const sd_csr *a, int64_t i) { return a->rowptr[i + 1] - a->rowptr[i]; }

static sd_status check_input(const sd_csr *a, const char *what)
{
    if (a == NULL || a->rowptr == NULL || (a->nnz > 0 && (a->colind == NULL || a->vals == NULL)))
        return SDI_ERR(SD_ERR_INVALID_ARG, "%s: matrix or its arrays are NULL", what);
    if (a->rows < 0 || a->cols < 0 || a->rowptr[a->rows] != a->nnz)
        return SDI_ERR(SD_ERR_INVALID_ARG, "%s: inconsistent sizes", what);
    return SD_OK;
}

/* Fills the `width` slots of one row at stride `ld` from base: the row's entries, then
 * padding (value 0, the row's last column so the x load hits a cached line). */
static void fill_row(const sd_csr *a, int64_t row, int64_t width, int64_t base, int64_t ld,
                     int32_t *col, float *val, int pad_minus1)
{
    int64_t b = row >= 0 ? a->rowptr[row] : 0, n = row >= 0 ? rowlen(a, row) : 0;
    int32_t padc = pad_minus1 ? -1 : n > 0 ? a->colind[b + n - 1] : 0;
    for (int64_t k = 0; k < width; k++) {
        int64_t slot = base + k * ld;
        if (k < n) {
            col[slot] = a->colind[b + k];
            val[slot] = a->vals[b + k];
        } else {
            col[slot] = padc;
            val[slot] = 0.0f;
        }
    }
}

sd_status sdi_fmt_ell(const sd_csr *a, double max_fill, sdi_devfmt *out)
{
    int32_t *col = NULL, *len = NULL;
    float *val = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(col);                                                                     \
        sdi_free(val);                                                                     \
        sdi_free(len);                                                                     \
        sdi_format_free(out);                                                              \
    } while (0)
    if (out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "ell: out is NULL");
    memset(out, 0, sizeof *out);
    SD_TRY(check_input(a, "ell"));
    int64_t width = 0;
    for (int64_t i = 0; i < a->rows; i++)
        width = rowlen(a, i) > width ? rowlen(a, i) : width;
    const int64_t ld = ((int64_t)a->rows + 31) & ~(int64_t)31;
    int64_t slots;
    if (__builtin_mul_overflow(width, ld, &slots))
        return SDI_ERR(SD_ERR_UNSUPPORTED, "ell: %lld × %lld slots overflow", (long long)width,
                       (long long)ld);
    SD_TRY(sdi_format_check_fill("ell", slots, a->nnz, max_fill));
    col = sdi_malloc_array((size_t)(slots > 0 ? slots : 1), sizeof *col);
    SD_CHECK_ALLOC(col, "ell column indices");
    val = sdi_malloc_array((size_t)(slots > 0 ? slots : 1), sizeof *val);
    SD_CHECK_ALLOC(val, "ell values");
    len = sdi_malloc_array((size_t)(a->rows > 0 ? a->rows : 1), sizeof *len);
    SD_CHECK_ALLOC(len, "ell row lengths");
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < ld; r++) {
        fill_row(a, r < a->rows ? r : -1, width, r, ld, col, val, 0);
        if (r < a->rows)
            len[r] = (int32_t)rowlen(a, r);
    }
    out->kind = SDI_FMT_ELL;
    out->rows = a->rows;
    out->cols = a->cols;
    out->nnz = a->nnz;
    out->slots = slots;
    out->ell_width = width;
    out->ell_ld = ld;
    sd_status s = sdi_format_add(out, "colind", col, slots, slots, 4, SDI_ROLE_META, 1);
    col = NULL;
    SD_TRY(s);
    s = sdi_format_add(out, "vals", val, slots, slots, 4, SDI_ROLE_VALUE, 1);
    val = NULL;
    SD_TRY(s);
    s = sdi_format_add(out, "rowlen", len, a->rows, a->rows, 4, SDI_ROLE_HOST, 1);
    len = NULL;
    SD_TRY(s);
    return SD_OK;
#undef SD_FREE_ALL
}

/* Sort key of a row inside its σ window: longer rows first, then by index (stable). */
typedef struct {
    int64_t len;
    int32_t row;
} row_key;

static int cmp_row_key(const void *pa, const void *pb)
{
    const row_key *x = pa, *y = pb;
    if (x->len != y->len)
        return x->len > y->len ? -1 : 1;
    return (x->row > y->row) - (x->row < y->row);
}

int64_t sdi_fmt_sell_slots(const sd_csr *a, int c)
{
    const int64_t nsl = ((int64_t)a->rows + c - 1) / c;
    int64_t total = 0;
    for (int64_t sl = 0; sl < nsl; sl++) {
        int64_t w = 0;
        for (int64_t r = sl * c; r < (sl + 1) * c && r < a->rows; r++)
            w = rowlen(a, r) > w ? rowlen(a, r) : w;
        total += w * c;
    }
    return total;
}

sd_status sdi_fmt_sell(const sd_csr *a, int c, int sigma, double max_fill, sdi_devfmt *out)
{
    return sdi_fmt_sell_ex(a, c, sigma, max_fill, NULL, out);
}

sd_status sdi_fmt_sell_ex(const sd_csr *a, int c, int sigma, double max_fill,
                          const sdi_sell_opts *o, sdi_devfmt *out)
{
    const sdi_sell_opts none = {0, 0, 0};
    if (o == NULL)
        o = &none;
    int64_t *slotmap = NULL;
    int32_t *perm = NULL, *col = NULL, *len = NULL;
    int64_t *sptr = NULL;
    float *val = NULL;
    row_key *keys = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(perm);                                                                    \
        sdi_free(col);                                                                     \
        sdi_free(len);                                                                     \
        sdi_free(sptr);                                                                    \
        sdi_free(val);                                                                     \
        sdi_free(keys);                                                                    \
        sdi_free(slotmap);                                                                 \
        sdi_format_free(out);                                                              \
    } while (0)
    if (out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sell: out is NULL");
    memset(out, 0, sizeof *out);
    SD_TRY(check_input(a, "sell"));
    if (c < 2 || c > 1024 || (c & (c - 1)) != 0)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sell: C = %d is not a power of two in [2, 1024]", c);
    if (sigma < 1)
        sigma = 1;
    const int sorted = sigma > 1;
    int64_t win = sorted ? (((int64_t)sigma + c - 1) / c) * c : 1;
    const int64_t rows = a->rows;
    const int64_t nslices = (rows + c - 1) / c;
    perm = sdi_malloc_array((size_t)(rows > 0 ? rows : 1), sizeof *perm);
    SD_CHECK_ALLOC(perm, "sell row permutation");
    if (sorted) {
        keys = sdi_malloc_array((size_t)(rows > 0 ? rows : 1), sizeof *keys);
        SD_CHECK_ALLOC(keys, "sell sort keys");
#pragma omp parallel for schedule(dynamic, 1)
        for (int64_t w0 = 0; w0 < rows; w0 += win) {
            int64_t w1 = w0 + win < rows ? w0 + win : rows;
            for (int64_t i = w0; i < w1; i++) {
                keys[i].len = rowlen(a, i);
                keys[i].row = (int32_t)i;
            }
            qsort(keys + w0, (size_t)(w1 - w0), sizeof *keys, cmp_row_key);
            for (int64_t i = w0; i < w1; i++)
                perm[i] = keys[i].row;
        }
        SDI_FREE(keys);
    } else {
        for (int64_t i = 0; i < rows; i++)
            perm[i] = (int32_t)i;
    }
    sptr = sdi_malloc_array((size_t)nslices + 1, sizeof *sptr);
    SD_CHECK_ALLOC(sptr, "sell slice pointers");
    sptr[0] = 0;
    for (int64_t s = 0; s < nslices; s++) {
        int64_t w = 0;
        for (int64_t i = s * c; i < (s + 1) * c && i < rows; i++)
            w = rowlen(a, perm[i]) > w ? rowlen(a, perm[i]) : w;
        if (__builtin_add_overflow(sptr[s], w * c, &sptr[s + 1]))
            SD_TRY(SDI_ERR(SD_ERR_UNSUPPORTED, "sell: slot count overflows"));
    }
    const int64_t slots = sptr[nslices];
    SD_TRY(sdi_format_check_fill("sell", slots, a->nnz, max_fill));
    if (o->ptr32 && slots > INT32_MAX)
        SD_TRY(SDI_ERR(SD_ERR_UNSUPPORTED, "sell: %lld slots are beyond 32-bit slice offsets",
                       (long long)slots));
    col = sdi_malloc_array((size_t)(slots > 0 ? slots : 1), sizeof *col);
    SD_CHECK_ALLOC(col, "sell column indices");
    val = sdi_malloc_array((size_t)(slots > 0 ? slots : 1), sizeof *val);
    SD_CHECK_ALLOC(val, "sell values");
    len = sdi_malloc_array((size_t)(rows > 0 ? rows : 1), sizeof *len);
    SD_CHECK_ALLOC(len, "sell row lengths");
#pragma omp parallel for schedule(dynamic, 64)
    for (int64_t s = 0; s < nslices; s++) {
        int64_t w = (sptr[s + 1] - sptr[s]) / c;
        for (int64_t lane = 0; lane < c; lane++) {
            int64_t i = s * c + lane;
            fill_row(a, i < rows ? perm[i] : -1, w, sptr[s] + lane, c, col, val, o->pad_minus1);
            if (i < rows)
                len[i] = (int32_t)rowlen(a, perm[i]);
        }
    }
    out->kind = SDI_FMT_SELL;
    out->rows = a->rows;
    out->cols = a->cols;
    out->nnz = a->nnz;
    out->slots = slots;
    out->sell_c = c;
    out->sell_sigma = sorted ? (int32_t)win : 1;
    out->sell_slices = nslices;
    out->sell_permuted = sorted;
    if (o->slot_map) { /* where each entry lives: value updates gather into the slots */
        slotmap = sdi_malloc_array((size_t)(a->nnz > 0 ? a->nnz : 1), sizeof *slotmap);
        SD_CHECK_ALLOC(slotmap, "sell value slots");
        for (int64_t i = 0; i < rows; i++) {
            const int64_t r = perm[i], base = sptr[i / c] + i % c;
            for (int64_t k = 0; k < rowlen(a, r); k++)
                slotmap[a->rowptr[r] + k] = base + k * c;
        }
    }
    if (o->ptr32) { /* the slice offsets narrowed in place (checked above) */
        int32_t *p32 = (int32_t *)sptr;
        for (int64_t q = 0; q <= nslices; q++)
            p32[q] = (int32_t)sptr[q];
    }
    sd_status s = sdi_format_add(out, "sliceptr", sptr, nslices + 1, nslices + 1,
                                 o->ptr32 ? 4 : 8, SDI_ROLE_META, 1);
    sptr = NULL;
    SD_TRY(s);
    s = sdi_format_add(out, "colind", col, slots, slots, 4, SDI_ROLE_META, 1);
    col = NULL;
    SD_TRY(s);
    s = sdi_format_add(out, "vals", val, slots, slots, 4, SDI_ROLE_VALUE, 1);
    val = NULL;
    SD_TRY(s);
    s = sdi_format_add(out, "perm", perm, rows, rows, 4, sorted ? SDI_ROLE_META : SDI_ROLE_HOST, 1);
    perm = NULL;
    SD_TRY(s);
    s = sdi_format_add(out, "rowlen", len, rows, rows, 4, SDI_ROLE_HOST, 1);
    len = NULL;
    SD_TRY(s);
    if (slotmap != NULL) {
        s = sdi_format_add(out, "slot", slotmap, a->nnz, a->nnz, 8, SDI_ROLE_HOST, 1);
        slotmap = NULL;
        SD_TRY(s);
    }
    return SD_OK;
#undef SD_FREE_ALL
}
