/* src/formats/fmt_convert.c: every format back to canonical CSR (the round trip of the
 * builders): padding dropped through the host-only masks and lengths, permutations
 * undone, compressed indices decoded. */
#include <string.h>

#include "formats.h"

/* The array's host data, or NULL when absent or shorter than need elements. */
static const void *arr(const sdi_devfmt *f, const char *name, int64_t need)
{
    const sdi_fmt_array *a = sdi_format_array(f, name);
    if (a == NULL || a->data == NULL || a->host_count < need)
        return NULL;
    return a->data;
}

#define NEED(p, name, n)                                                                   \
    do {                                                                                   \
        if (((p) = arr(f, (name), (n))) == NULL) {                                         \
            sdi_coo_free(&coo);                                                            \
            return SDI_ERR(SD_ERR_INVALID_ARG, "%s format: array %s missing or short",     \
                           sdi_fmt_kind_name(f->kind), (name));                            \
        }                                                                                  \
    } while (0)
#define PUSH(i, j, v)                                                                      \
    do {                                                                                   \
        sd_status ps_ = sdi_coo_push(&coo, (i), (j), (v));                                 \
        if (ps_ != SD_OK) {                                                                \
            sdi_coo_free(&coo);                                                            \
            return ps_;                                                                    \
        }                                                                                  \
    } while (0)

static int64_t rp_at(const void *rp, int rp32, int64_t i)
{
    return rp32 ? (int64_t)((const int32_t *)rp)[i] : ((const int64_t *)rp)[i];
}

static sd_status csr_like(const sdi_devfmt *f, sd_csr *out)
{
    sdi_coo coo;
    sd_status s = sdi_coo_init(&coo, f->rows, f->cols, f->nnz);
    if (s != SD_OK)
        return s;
    const void *rp, *ci, *cb = NULL;
    const float *v;
    NEED(rp, "rowptr", (int64_t)f->rows + 1);
    NEED(ci, "colind", f->nnz);
    NEED(v, "vals", f->nnz);
    if (f->colc)
        NEED(cb, "colbase", f->rows > 0 ? ((int64_t)(f->rows - 1) >> f->colc_shift) + 1 : 0);
    for (int64_t i = 0; i < f->rows; i++)
        for (int64_t k = rp_at(rp, f->rp32, i); k < rp_at(rp, f->rp32, i + 1); k++) {
            int32_t c = f->colc ? ((const int32_t *)cb)[i >> f->colc_shift] +
                                      ((const uint16_t *)ci)[k]
                                : ((const int32_t *)ci)[k];
            PUSH((int32_t)i, c, v[k]);
        }
    s = sdi_coo_to_csr(&coo, out, NULL);
    sdi_coo_free(&coo);
    return s;
}

static sd_status from_coo(const sdi_devfmt *f, sd_csr *out)
{
    sdi_coo coo;
    sd_status s = sdi_coo_init(&coo, f->rows, f->cols, f->nnz);
    if (s != SD_OK)
        return s;
    const int32_t *ri, *ci;
    const float *v;
    NEED(ri, "rowind", f->nnz);
    NEED(ci, "colind", f->nnz);
    NEED(v, "vals", f->nnz);
    for (int64_t k = 0; k < f->nnz; k++)
        PUSH(ri[k], ci[k], v[k]);
    s = sdi_coo_to_csr(&coo, out, NULL);
    sdi_coo_free(&coo);
    return s;
}

static sd_status from_ell_sell(const sdi_devfmt *f, sd_csr *out)
{
    sdi_coo coo;
    sd_status s = sdi_coo_init(&coo, f->rows, f->cols, f->nnz);
    if (s != SD_OK)
        return s;
    const int32_t *ci, *len, *perm = NULL;
    const int64_t *sp = NULL;
    const float *v;
    NEED(ci, "colind", f->slots);
    NEED(v, "vals", f->slots);
    NEED(len, "rowlen", f->rows);
    if (f->kind == SDI_FMT_SELL) {
        NEED(sp, "sliceptr", f->sell_slices + 1);
        NEED(perm, "perm", f->rows);
    }
    for (int64_t i = 0; i < f->rows; i++) {
        int64_t base, ld, row;
        if (f->kind == SDI_FMT_ELL) {
            base = i;
            ld = f->ell_ld;
            row = i;
        } else {
            base = sp[i / f->sell_c] + i % f->sell_c;
            ld = f->sell_c;
            row = perm[i];
        }
        for (int64_t k = 0; k < len[i]; k++)
            PUSH((int32_t)row, ci[base + k * ld], v[base + k * ld]);
    }
    s = sdi_coo_to_csr(&coo, out, NULL);
    sdi_coo_free(&coo);
    return s;
}

static sd_status from_bsr(const sdi_devfmt *f, sd_csr *out)
{
    sdi_coo coo;
    sd_status s = sdi_coo_init(&coo, f->rows, f->cols, f->nnz);
    if (s != SD_OK)
        return s;
    const int32_t *bp, *bc;
    const float *v;
    const uint8_t *m;
    const int64_t b = f->bsr_b;
    NEED(bp, "browptr", f->bsr_brows + 1);
    NEED(bc, "bcolind", f->bsr_blocks);
    NEED(v, "bvals", f->slots);
    NEED(m, "mask", f->slots);
    for (int64_t br = 0; br < f->bsr_brows; br++)
        for (int64_t j = bp[br]; j < bp[br + 1]; j++)
            for (int64_t e = 0; e < b * b; e++)
                if (m[j * b * b + e])
                    PUSH((int32_t)(br * b + e / b), (int32_t)(bc[j] * b + e % b),
                         v[j * b * b + e]);
    s = sdi_coo_to_csr(&coo, out, NULL);
    sdi_coo_free(&coo);
    return s;
}

static sd_status from_tiles(const sdi_devfmt *f, sd_csr *out)
{
    sdi_coo coo;
    sd_status s = sdi_coo_init(&coo, f->rows, f->cols, f->nnz);
    if (s != SD_OK)
        return s;
    const int32_t *tp, *d;
    const uint8_t *idx, *m;
    const float *v;
    NEED(tp, "trowptr", f->t_rows + 1);
    NEED(d, "tdesc", f->t_tiles * 4);
    NEED(idx, "tidx", 0);
    NEED(v, "tvals", f->slots);
    NEED(m, "mask", f->slots);
    for (int64_t tr = 0; tr < f->t_rows; tr++)
        for (int64_t t = tp[tr]; t < tp[tr + 1]; t++) {
            const int32_t *q = d + 4 * t;
            int type = q[1] >> 16, z = q[1] & 0xffff;
            int64_t col0 = (int64_t)q[0] * 16, row0 = tr * 16, vo = q[2], io = q[3];
            if (type == SDI_TILE_DENSE) {
                for (int e = 0; e < 256; e++)
                    if (m[vo + e])
                        PUSH((int32_t)(row0 + e / 16), (int32_t)(col0 + e % 16), v[vo + e]);
            } else if (type == SDI_TILE_CSR) {
                for (int r = 0; r < 16; r++) {
                    int end = r < 15 ? idx[io + r + 1] : z;
                    for (int k = idx[io + r]; k < end; k++)
                        PUSH((int32_t)(row0 + r), (int32_t)(col0 + idx[io + 16 + k]), v[vo + k]);
                }
            } else {
                for (int k = 0; k < z; k++)
                    PUSH((int32_t)(row0 + (idx[io + k] >> 4)), (int32_t)(col0 + (idx[io + k] & 15)),
                         v[vo + k]);
            }
        }
    s = sdi_coo_to_csr(&coo, out, NULL);
    sdi_coo_free(&coo);
    return s;
}

static sd_status from_dia(const sdi_devfmt *f, sd_csr *out)
{
    sdi_coo coo;
    sd_status s = sdi_coo_init(&coo, f->rows, f->cols, f->nnz);
    if (s != SD_OK)
        return s;
    const int32_t *off;
    const float *v;
    const uint8_t *m;
    NEED(off, "offsets", f->dia_ndiag);
    NEED(v, "vals", f->slots);
    NEED(m, "mask", f->slots);
    for (int64_t i = 0; i < f->rows; i++)
        for (int d = 0; d < f->dia_ndiag; d++)
            if (m[d * f->dia_ld + i])
                PUSH((int32_t)i, (int32_t)(i + off[d]), v[d * f->dia_ld + i]);
    s = sdi_coo_to_csr(&coo, out, NULL);
    sdi_coo_free(&coo);
    return s;
}

sd_status sdi_format_to_csr(const sdi_devfmt *f, sd_csr *out)
{
    if (out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "format to csr: out is NULL");
    memset(out, 0, sizeof *out);
    if (f == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "format to csr: format is NULL");
    switch (f->kind) {
    case SDI_FMT_CSR:
    case SDI_FMT_ROWBLOCKS:
    case SDI_FMT_MERGE:
        return csr_like(f, out);
    case SDI_FMT_COO:
        return from_coo(f, out);
    case SDI_FMT_ELL:
    case SDI_FMT_SELL:
        return from_ell_sell(f, out);
    case SDI_FMT_BSR:
        return from_bsr(f, out);
    case SDI_FMT_TILES16:
        return from_tiles(f, out);
    case SDI_FMT_DIA:
        return from_dia(f, out);
    default:
        return SDI_ERR(SD_ERR_INVALID_ARG, "format to csr: kind %d unknown", f->kind);
    }
}
