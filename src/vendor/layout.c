/* src/vendor/layout.c: cuSPARSE's Sliced-ELL and Blocked-ELL layouts built on the
 * host, shared by the baseline and the cuSPARSE executor (layout.h). */
#include <stdlib.h>
#include <string.h>

#include "../core/core.h"
#include "layout.h"

int64_t sdi_cs_sell_slots(const sd_csr *a, int slice)
{
    const int64_t nsl = ((int64_t)a->rows + slice - 1) / slice;
    int64_t total = 0;
    for (int64_t s = 0; s < nsl; s++) {
        int64_t w = 0;
        for (int64_t r = s * slice; r < (s + 1) * slice && r < a->rows; r++)
            if (a->rowptr[r + 1] - a->rowptr[r] > w)
                w = a->rowptr[r + 1] - a->rowptr[r];
        total += w * slice;
    }
    return total;
}

void sdi_cs_sell_free(sdi_cs_sell *s)
{
    if (s == NULL)
        return;
    sdi_free(s->off);
    sdi_free(s->col);
    sdi_free(s->val);
    sdi_free(s->slot);
    memset(s, 0, sizeof *s);
}

sd_status sdi_cs_sell_build(const sd_csr *a, int slice, bool want_slot, sdi_cs_sell *out)
{
#define SD_FREE_ALL sdi_cs_sell_free(out)
    memset(out, 0, sizeof *out);
    if (slice < 1)
        return SDI_ERR(SD_ERR_INVALID_ARG, "Sliced ELL: slice height %d", slice);
    const int64_t nsl = ((int64_t)a->rows + slice - 1) / slice;
    const int64_t total = sdi_cs_sell_slots(a, slice);
    if (total > INT32_MAX)
        return SDI_ERR(SD_ERR_UNSUPPORTED, "Sliced ELL-%d needs %lld slots: beyond 32-bit offsets",
                       slice, (long long)total);
    const size_t n = total > 0 ? (size_t)total : 1;
    out->nslices = nsl;
    out->slots = total;
    out->off = sdi_malloc_array((size_t)nsl + 1, sizeof *out->off);
    out->col = sdi_malloc_array(n, sizeof *out->col);
    out->val = sdi_calloc(n, sizeof *out->val);
    SD_CHECK_ALLOC(out->off, "Sliced-ELL slice offsets");
    SD_CHECK_ALLOC(out->col, "Sliced-ELL column indices");
    SD_CHECK_ALLOC(out->val, "Sliced-ELL values");
    if (want_slot) {
        out->slot = sdi_malloc_array(a->nnz > 0 ? (size_t)a->nnz : 1, sizeof *out->slot);
        SD_CHECK_ALLOC(out->slot, "Sliced-ELL value slots");
    }
    for (size_t i = 0; i < n; i++)
        out->col[i] = -1;
    int64_t pos = 0;
    for (int64_t s = 0; s < nsl; s++) {
        out->off[s] = (int32_t)pos;
        int64_t w = 0;
        for (int64_t r = s * slice; r < (s + 1) * slice && r < a->rows; r++) {
            const int64_t len = a->rowptr[r + 1] - a->rowptr[r];
            if (len > w)
                w = len;
            for (int64_t j = 0; j < len; j++) {
                const int64_t e = a->rowptr[r] + j, at = pos + j * slice + (r - s * slice);
                out->col[at] = a->colind[e];
                out->val[at] = a->vals[e];
                if (out->slot != NULL)
                    out->slot[e] = at;
            }
        }
        pos += w * slice;
    }
    out->off[nsl] = (int32_t)pos;
    return SD_OK;
#undef SD_FREE_ALL
}

/* Block row br's distinct block columns into list (unsorted; at most cap of them),
 * marking them in mark (mark[bc] == br once seen); returns their count, all of them. */
static int64_t block_row_cols(const sd_csr *a, int bs, int64_t br, int64_t *mark, int32_t *list,
                              int64_t cap)
{
    int64_t n = 0;
    for (int64_t r = br * bs; r < (br + 1) * bs && r < a->rows; r++)
        for (int64_t e = a->rowptr[r]; e < a->rowptr[r + 1]; e++) {
            const int64_t bc = a->colind[e] / bs;
            if (mark[bc] != br) {
                mark[bc] = br;
                if (n < cap)
                    list[n] = (int32_t)bc;
                n++;
            }
        }
    return n;
}

static int64_t *new_marks(const sd_csr *a, int bs, size_t *count)
{
    const int64_t nbc = ((int64_t)a->cols + bs - 1) / bs;
    *count = nbc > 0 ? (size_t)nbc : 1;
    int64_t *mark = sdi_malloc_array(*count, sizeof *mark);
    if (mark != NULL)
        for (size_t i = 0; i < *count; i++)
            mark[i] = -1;
    return mark;
}

sd_status sdi_cs_bell_width(const sd_csr *a, int bs, int64_t *maxb)
{
    *maxb = 0;
    if (bs < 1)
        return SDI_ERR(SD_ERR_INVALID_ARG, "Blocked ELL: block size %d", bs);
    size_t nm = 0;
    int64_t *mark = new_marks(a, bs, &nm);
    if (mark == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for Blocked-ELL marks");
    const int64_t nbr = ((int64_t)a->rows + bs - 1) / bs;
    for (int64_t br = 0; br < nbr; br++) {
        const int64_t n = block_row_cols(a, bs, br, mark, NULL, 0);
        if (n > *maxb)
            *maxb = n;
    }
    sdi_free(mark);
    return SD_OK;
}

void sdi_cs_bell_free(sdi_cs_bell *b)
{
    if (b == NULL)
        return;
    sdi_free(b->bcol);
    sdi_free(b->val);
    sdi_free(b->slot);
    memset(b, 0, sizeof *b);
}

sd_status sdi_cs_bell_build(const sd_csr *a, int bs, int64_t maxb, bool want_slot, sdi_cs_bell *out)
{
    int64_t *mark = NULL;
    int32_t *list = NULL, *bslot = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(mark);                                                                    \
        sdi_free(list);                                                                    \
        sdi_free(bslot);                                                                   \
        sdi_cs_bell_free(out);                                                             \
    } while (0)
    memset(out, 0, sizeof *out);
    if (bs < 1 || maxb < 1)
        return SDI_ERR(SD_ERR_INVALID_ARG, "Blocked ELL: block size %d, %lld block slots", bs,
                       (long long)maxb);
    out->nbr = ((int64_t)a->rows + bs - 1) / bs;
    out->maxb = maxb;
    out->rows_pad = out->nbr * bs;
    out->cols_pad = (((int64_t)a->cols + bs - 1) / bs) * bs;
    out->ell_cols = maxb * bs;
    out->slots = out->rows_pad * out->ell_cols;
    size_t nm = 0;
    mark = new_marks(a, bs, &nm);
    bslot = sdi_malloc_array(nm, sizeof *bslot);
    list = sdi_malloc_array((size_t)maxb, sizeof *list);
    out->bcol = sdi_malloc_array((size_t)(out->nbr > 0 ? out->nbr : 1) * (size_t)maxb, sizeof *out->bcol);
    out->val = sdi_calloc(out->slots > 0 ? (size_t)out->slots : 1, sizeof *out->val);
    SD_CHECK_ALLOC(mark, "Blocked-ELL marks");
    SD_CHECK_ALLOC(bslot, "Blocked-ELL block slots");
    SD_CHECK_ALLOC(list, "Blocked-ELL block list");
    SD_CHECK_ALLOC(out->bcol, "Blocked-ELL column indices");
    SD_CHECK_ALLOC(out->val, "Blocked-ELL values");
    if (want_slot) {
        out->slot = sdi_malloc_array(a->nnz > 0 ? (size_t)a->nnz : 1, sizeof *out->slot);
        SD_CHECK_ALLOC(out->slot, "Blocked-ELL value slots");
    }
    for (int64_t br = 0; br < out->nbr; br++) {
        const int64_t n = block_row_cols(a, bs, br, mark, list, maxb);
        if (n > maxb) {
            SD_FREE_ALL;
            return SDI_ERR(SD_ERR_INVALID_ARG, "Blocked ELL: block row %lld has %lld block columns, "
                           "more than the %lld slots asked", (long long)br, (long long)n, (long long)maxb);
        }
        sdi_sort_i32(list, n);
        for (int64_t j = 0; j < maxb; j++)
            out->bcol[br * maxb + j] = j < n ? list[j] : -1;
        for (int64_t j = 0; j < n; j++)
            bslot[list[j]] = (int32_t)j;
        for (int64_t r = br * bs; r < (br + 1) * bs && r < a->rows; r++)
            for (int64_t e = a->rowptr[r]; e < a->rowptr[r + 1]; e++) {
                const int32_t c = a->colind[e];
                const int64_t at = r * out->ell_cols + (int64_t)bslot[c / bs] * bs + c % bs;
                out->val[at] = a->vals[e];
                if (out->slot != NULL)
                    out->slot[e] = at;
            }
    }
    sdi_free(mark);
    sdi_free(list);
    sdi_free(bslot);
    return SD_OK;
#undef SD_FREE_ALL
}
