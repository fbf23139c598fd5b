/* src/formats/cs_layout.c: cuSPARSE's Sliced-ELL and Blocked-ELL layouts (cs_layout.h), made
 * by the formats' own builders with cuSPARSE's conventions: SELL-32-1 of fmt_sell.c with
 * padding column −1 and 32-bit slice offsets, blocked-ELL of spmm_formats.c in cuSPARSE's
 * row-major value order. One builder per layout: the baseline, the cuSPARSE executor and
 * our own kernels lay a format out alike. */
#include <float.h>
#include <string.h>

#include "cs_layout.h"
#include "formats.h"
#include "spmm_formats.h"

int64_t sdi_cs_sell_slots(const sd_csr *a, int slice)
{
    return sdi_fmt_sell_slots(a, slice);
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

/* Takes array `name` of f over (f no longer frees it). */
static void *steal(sdi_devfmt *f, const char *name)
{
    const int i = sdi_format_find(f, name);
    if (i < 0)
        return NULL;
    void *p = f->arr[i].data;
    if (!f->arr[i].owned)
        return NULL; /* borrowed: never handed on */
    f->arr[i].data = NULL;
    f->arr[i].owned = 0;
    return p;
}

sd_status sdi_cs_sell_build(const sd_csr *a, int slice, bool want_slot, sdi_cs_sell *out)
{
    sdi_devfmt f;
    memset(&f, 0, sizeof f);
    memset(out, 0, sizeof *out);
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_format_free(&f);                                                               \
        sdi_cs_sell_free(out);                                                             \
    } while (0)
    if (slice < 1)
        return SDI_ERR(SD_ERR_INVALID_ARG, "Sliced ELL: slice height %d", slice);
    /* No padding limit here: the callers check theirs (device memory) before building. */
    const sdi_sell_opts o = {.pad_minus1 = 1, .ptr32 = 1, .slot_map = want_slot};
    SD_TRY(sdi_fmt_sell_ex(a, slice, 1, DBL_MAX, &o, &f));
    out->nslices = f.sell_slices;
    out->slots = f.slots;
    out->off = steal(&f, "sliceptr");
    out->col = steal(&f, "colind");
    out->val = steal(&f, "vals");
    if (want_slot)
        out->slot = steal(&f, "slot");
    if (out->off == NULL || out->col == NULL || out->val == NULL || (want_slot && out->slot == NULL)) {
        SD_FREE_ALL;
        return SDI_ERR(SD_ERR_INTERNAL, "Sliced ELL: the builder's arrays are missing");
    }
    sdi_format_free(&f);
    return SD_OK;
#undef SD_FREE_ALL
}

sd_status sdi_cs_bell_width(const sd_csr *a, int bs, int64_t *maxb)
{
    *maxb = 0;
    if (bs < 1)
        return SDI_ERR(SD_ERR_INVALID_ARG, "Blocked ELL: block size %d", bs);
    int64_t nblocks = 0;
    return sdi_spmm_blocks_count(a, bs, bs, &nblocks, maxb);
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
    sdi_spmm_blocks k;
    memset(&k, 0, sizeof k);
    memset(out, 0, sizeof *out);
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_spmm_blocks_free(&k);                                                          \
        sdi_cs_bell_free(out);                                                             \
    } while (0)
    if (bs < 1 || maxb < 1 || maxb > INT32_MAX)
        return SDI_ERR(SD_ERR_INVALID_ARG, "Blocked ELL: block size %d, %lld block slots", bs,
                       (long long)maxb);
    SD_TRY(sdi_spmm_blocks_build(a, bs, bs, (int)maxb, SDI_BLOCKS_ELL_ROWS, &k));
    out->nbr = k.brows;
    out->maxb = maxb;
    out->rows_pad = (int64_t)k.brows * bs;
    out->cols_pad = (int64_t)k.bcols * bs;
    out->ell_cols = maxb * bs;
    out->slots = out->rows_pad * out->ell_cols;
    if (want_slot) {
        out->slot = sdi_malloc_array(a->nnz > 0 ? (size_t)a->nnz : 1, sizeof *out->slot);
        SD_CHECK_ALLOC(out->slot, "Blocked-ELL value slots");
        for (int64_t q = 0; q < out->slots; q++)
            if (k.src[q] >= 0)
                out->slot[k.src[q]] = q;
    }
    out->bcol = k.bcolidx;
    out->val = k.val;
    k.bcolidx = NULL;
    k.val = NULL;
    sdi_spmm_blocks_free(&k);
    return SD_OK;
#undef SD_FREE_ALL
}
