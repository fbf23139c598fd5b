/* src/formats/fmt_tiles.c: adaptive 16×16 tiles (CB-SpMV style): each occupied tile of
 * a tile row stored dense, CSR-in-tile or COO-in-tile by its nonzero count. */
#include <limits.h>
#include <string.h>

#include "formats.h"

#define TILE 16

static int tile_type(int64_t nnz, int dense_min, int coo_max)
{
    if (nnz >= dense_min)
        return SDI_TILE_DENSE;
    return nnz <= coo_max ? SDI_TILE_COO : SDI_TILE_CSR;
}

/* Value slots (aligned to 4 for float4 loads of dense tiles) and index bytes of a tile. */
static int64_t tile_vals(int type, int64_t nnz)
{
    return type == SDI_TILE_DENSE ? TILE * TILE : (nnz + 3) & ~(int64_t)3;
}
static int64_t tile_idx(int type, int64_t nnz)
{
    return type == SDI_TILE_DENSE ? 0 : type == SDI_TILE_CSR ? TILE + nnz : nnz;
}

sd_status sdi_fmt_tiles16(const sd_csr *a, int dense_min, int coo_max, double max_fill,
                          sdi_devfmt *out)
{
    int32_t *trp = NULL, *desc = NULL;
    int64_t *cnt = NULL;
    uint8_t *idx = NULL, *mask = NULL;
    float *val = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(trp);                                                                     \
        sdi_free(desc);                                                                    \
        sdi_free(cnt);                                                                     \
        sdi_free(idx);                                                                     \
        sdi_free(mask);                                                                    \
        sdi_free(val);                                                                     \
        sdi_format_free(out);                                                              \
    } while (0)
    if (out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "tiles16: out is NULL");
    memset(out, 0, sizeof *out);
    if (a == NULL || a->rowptr == NULL || (a->nnz > 0 && (a->colind == NULL || a->vals == NULL)))
        return SDI_ERR(SD_ERR_INVALID_ARG, "tiles16: matrix or its arrays are NULL");
    if (dense_min < 1 || dense_min > TILE * TILE + 1 || coo_max < 0 || coo_max >= dense_min)
        return SDI_ERR(SD_ERR_INVALID_ARG,
                       "tiles16: dense threshold %d must be in [1, 257] and above the COO "
                       "threshold %d", dense_min, coo_max);
    const int64_t ntr = ((int64_t)a->rows + TILE - 1) / TILE;
    cnt = sdi_malloc_array((size_t)ntr + 1, sizeof *cnt);
    SD_CHECK_ALLOC(cnt, "tile counts");
#pragma omp parallel for schedule(dynamic, 256)
    for (int64_t tr = 0; tr < ntr; tr++)
        cnt[tr] = sdi_fmt_block_cols(a, TILE, tr, NULL);
    int64_t ntiles = 0;
    for (int64_t tr = 0; tr < ntr; tr++) {
        int64_t c = cnt[tr];
        cnt[tr] = ntiles;
        ntiles += c;
    }
    cnt[ntr] = ntiles;
    if (ntiles > INT32_MAX / 4)
        SD_TRY(SDI_ERR(SD_ERR_UNSUPPORTED, "tiles16: %lld tiles exceed 32-bit descriptors",
                       (long long)ntiles));
    trp = sdi_malloc_array((size_t)ntr + 1, sizeof *trp);
    SD_CHECK_ALLOC(trp, "tile row pointers");
    desc = sdi_malloc_array((size_t)(ntiles > 0 ? ntiles : 1) * 4, sizeof *desc);
    SD_CHECK_ALLOC(desc, "tile descriptors");
    /* Pass 1: tile columns and nonzero counts straight into the descriptors (the block-row
     * merge of fmt_bsr.c), then each tile's type beside its count. */
#pragma omp parallel for schedule(dynamic, 256)
    for (int64_t tr = 0; tr < ntr; tr++) {
        trp[tr] = (int32_t)cnt[tr];
        int32_t *d = desc + 4 * cnt[tr];
        const int64_t n = sdi_fmt_block_scan(a, TILE, tr, d, d + 1, 4, 0, NULL);
        for (int64_t t = 0; t < n; t++)
            d[4 * t + 1] |= tile_type(d[4 * t + 1], dense_min, coo_max) << 16;
    }
    trp[ntr] = (int32_t)ntiles;
    /* Offsets (serial prefix over tiles). */
    int64_t nvals = 0, nidx = 0, ndense = 0, ncsr = 0, ncoo = 0;
    for (int64_t t = 0; t < ntiles; t++) {
        int type = desc[4 * t + 1] >> 16;
        int64_t z = desc[4 * t + 1] & 0xffff;
        if (nvals > INT32_MAX || nidx > INT32_MAX)
            break;
        desc[4 * t + 2] = (int32_t)nvals;
        desc[4 * t + 3] = (int32_t)nidx;
        nvals += tile_vals(type, z);
        nidx += tile_idx(type, z);
        ndense += type == SDI_TILE_DENSE;
        ncsr += type == SDI_TILE_CSR;
        ncoo += type == SDI_TILE_COO;
    }
    if (nvals > INT32_MAX || nidx > INT32_MAX)
        SD_TRY(SDI_ERR(SD_ERR_UNSUPPORTED, "tiles16: value or index offsets exceed 32 bits"));
    SD_TRY(sdi_format_check_fill("tiles16", nvals, a->nnz, max_fill));
    val = sdi_calloc((size_t)(nvals > 0 ? nvals : 1), sizeof *val);
    SD_CHECK_ALLOC(val, "tile values");
    mask = sdi_calloc((size_t)(nvals > 0 ? nvals : 1), sizeof *mask);
    SD_CHECK_ALLOC(mask, "tile value mask");
    const int64_t nidx_pad = (nidx + 15) & ~(int64_t)15;
    idx = sdi_calloc((size_t)(nidx_pad > 0 ? nidx_pad : 1), sizeof *idx);
    SD_CHECK_ALLOC(idx, "tile indices");
    /* Pass 2: fill. */
#pragma omp parallel for schedule(dynamic, 256)
    for (int64_t tr = 0; tr < ntr; tr++) {
        int64_t first = cnt[tr], n = cnt[tr + 1] - first;
        int64_t cur[TILE], end[TILE];
        int nr = 0;
        for (int64_t r = tr * TILE; r < (tr + 1) * TILE && r < a->rows; r++, nr++) {
            cur[nr] = a->rowptr[r];
            end[nr] = a->rowptr[r + 1];
        }
        for (int64_t t = first; t < first + n; t++) {
            const int32_t *d = desc + 4 * t;
            int32_t tc = d[0];
            int type = d[1] >> 16;
            int64_t vo = d[2], io = d[3], pos = 0;
            for (int i = 0; i < nr; i++) {
                if (type == SDI_TILE_CSR)
                    idx[io + i] = (uint8_t)pos;
                while (cur[i] < end[i] && a->colind[cur[i]] / TILE == tc) {
                    int c = a->colind[cur[i]] % TILE;
                    float v = a->vals[cur[i]];
                    if (type == SDI_TILE_DENSE) {
                        val[vo + i * TILE + c] = v;
                        mask[vo + i * TILE + c] = 1;
                    } else {
                        val[vo + pos] = v;
                        mask[vo + pos] = 1;
                        if (type == SDI_TILE_CSR)
                            idx[io + TILE + pos] = (uint8_t)c;
                        else
                            idx[io + pos] = (uint8_t)(i << 4 | c);
                    }
                    pos++;
                    cur[i]++;
                }
            }
            if (type == SDI_TILE_CSR)
                for (int i = nr; i < TILE; i++)
                    idx[io + i] = (uint8_t)pos;
        }
    }
    SDI_FREE(cnt);
    out->kind = SDI_FMT_TILES16;
    out->rows = a->rows;
    out->cols = a->cols;
    out->nnz = a->nnz;
    out->slots = nvals;
    out->t_dense_min = dense_min;
    out->t_coo_max = coo_max;
    out->t_rows = ntr;
    out->t_tiles = ntiles;
    out->t_dense = ndense;
    out->t_csr = ncsr;
    out->t_coo = ncoo;
    sd_status s = sdi_format_add(out, "trowptr", trp, ntr + 1, ntr + 1, 4, SDI_ROLE_META, 1);
    trp = NULL;
    SD_TRY(s);
    s = sdi_format_add(out, "tdesc", desc, ntiles * 4, ntiles * 4, 4, SDI_ROLE_META, 1);
    desc = NULL;
    SD_TRY(s);
    s = sdi_format_add(out, "tidx", idx, nidx_pad, nidx_pad, 1, SDI_ROLE_META, 1);
    idx = NULL;
    SD_TRY(s);
    s = sdi_format_add(out, "tvals", val, nvals, nvals, 4, SDI_ROLE_VALUE, 1);
    val = NULL;
    SD_TRY(s);
    s = sdi_format_add(out, "mask", mask, nvals, nvals, 1, SDI_ROLE_HOST, 1);
    mask = NULL;
    SD_TRY(s);
    return SD_OK;
#undef SD_FREE_ALL
}
