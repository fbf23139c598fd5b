/* src/formats/pcsr.c: the PCSR format of ParamSpMM (rowPtr, colIdx, val, TRow) for any
 * V ∈ {1, 2} and S on/off, its round trip to CSR, padding ratio and balancing features. */
#include <math.h>
#include <string.h>

#include "spmm_formats.h"

void sdi_spmm_gather_values(const int64_t *src, int64_t n, const float *vals, float *dst)
{
    for (int64_t s = 0; s < n; s++)
        dst[s] = src[s] >= 0 ? vals[src[s]] : 0.0f;
}

static int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

double sdi_pcsr_padding_ratio(const sd_csr *a, int v)
{
    if (a->nnz == 0 || v < 1)
        return 0.0;
    int64_t slots = 0;
    for (int32_t i = 0; i < a->rows; i++)
        slots += round_up(a->rowptr[i + 1] - a->rowptr[i], v);
    return (double)slots / (double)a->nnz;
}

void sdi_pcsr_free(sdi_pcsr *p)
{
    if (p == NULL)
        return;
    sdi_free(p->rowptr);
    sdi_free(p->colidx);
    sdi_free(p->val);
    sdi_free(p->src);
    sdi_free(p->trow);
    sdi_free(p->split_rows);
    memset(p, 0, sizeof *p);
}

sd_status sdi_pcsr_build(const sd_csr *a, int v, int s, int bound, sdi_pcsr *out)
{
    memset(out, 0, sizeof *out);
    if (v != 1 && v != 2)
        return SDI_ERR(SD_ERR_INVALID_ARG, "PCSR: vector size V must be 1 or 2 (got %d)", v);
    if (s != 0 && s != 1)
        return SDI_ERR(SD_ERR_INVALID_ARG, "PCSR: balancing S must be 0 or 1 (got %d)", s);
    if (s && (bound < v || bound % v != 0))
        return SDI_ERR(SD_ERR_INVALID_ARG,
                       "PCSR: bound %d must be a positive multiple of V = %d", bound, v);
#define SD_FREE_ALL sdi_pcsr_free(out)
    out->rows = a->rows;
    out->cols = a->cols;
    out->v = v;
    out->s = s;
    out->bound = s ? bound : 0;
    out->nnz = a->nnz;
    /* Pass 1: sizes. */
    int64_t prows = 0, slots = 0;
    int32_t nsplit = 0;
    for (int32_t i = 0; i < a->rows; i++) {
        int64_t len = round_up(a->rowptr[i + 1] - a->rowptr[i], v);
        slots += len;
        int64_t pieces = 1;
        if (s && len > bound)
            pieces = (len + bound - 1) / bound;
        prows += pieces;
        nsplit += pieces > 1;
    }
    out->prows = prows;
    out->slots = slots;
    out->nsplit = nsplit;
    out->rowptr = sdi_malloc_array((size_t)prows + 1, sizeof *out->rowptr);
    SD_CHECK_ALLOC(out->rowptr, "PCSR row pointers");
    out->colidx = sdi_malloc_array((size_t)slots, sizeof *out->colidx);
    out->val = sdi_malloc_array((size_t)slots, sizeof *out->val);
    out->src = sdi_malloc_array((size_t)slots, sizeof *out->src);
    if (slots > 0) {
        SD_CHECK_ALLOC(out->colidx, "PCSR column indices");
        SD_CHECK_ALLOC(out->val, "PCSR values");
        SD_CHECK_ALLOC(out->src, "PCSR value sources");
    }
    if (s) {
        out->trow = sdi_malloc_array((size_t)prows > 0 ? (size_t)prows : 1, sizeof *out->trow);
        SD_CHECK_ALLOC(out->trow, "PCSR target rows");
        out->split_rows = sdi_malloc_array(nsplit > 0 ? (size_t)nsplit : 1, sizeof *out->split_rows);
        SD_CHECK_ALLOC(out->split_rows, "PCSR split rows");
    }
    /* Pass 2: fill. */
    int64_t p = 0, at = 0;
    int32_t ns = 0;
    out->rowptr[0] = 0;
    for (int32_t i = 0; i < a->rows; i++) {
        int64_t b = a->rowptr[i], e = a->rowptr[i + 1];
        int64_t len = round_up(e - b, v);
        for (int64_t q = 0; q < len; q++) {
            int64_t k = b + q;
            if (k < e) {
                out->colidx[at + q] = a->colind[k];
                out->val[at + q] = a->vals[k];
                out->src[at + q] = k;
            } else { /* padding repeats the last real column with a zero value */
                out->colidx[at + q] = a->colind[e - 1];
                out->val[at + q] = 0.0f;
                out->src[at + q] = -1;
            }
        }
        int64_t pieces = (s && len > bound) ? (len + bound - 1) / bound : 1;
        if (pieces > 1)
            out->split_rows[ns++] = i;
        for (int64_t c = 0; c < pieces; c++) {
            int64_t end = (c + 1 < pieces) ? at + (c + 1) * bound : at + len;
            if (s)
                out->trow[p] = pieces > 1 ? -(i + 1) : i;
            out->rowptr[++p] = end;
        }
        at += len;
    }
#undef SD_FREE_ALL
    return SD_OK;
}

sd_status sdi_pcsr_to_csr(const sdi_pcsr *p, sd_csr *out)
{
    int64_t *count = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(count);                                                                   \
        sd_csr_free(out);                                                                  \
    } while (0)
    memset(out, 0, sizeof *out);
    if (!p->s && p->prows != p->rows)
        return SDI_ERR(SD_ERR_INTERNAL, "PCSR: %lld PCSR rows for %d rows without balancing",
                       (long long)p->prows, p->rows);
    /* Real entries: a slot whose column differs from the slot before it in the same
     * target row (entries are strictly increasing; a padding slot repeats). */
    count = sdi_calloc((size_t)p->rows + 1, sizeof *count);
    SD_CHECK_ALLOC(count, "row counts");
    int32_t prev_row = -1;
    int32_t prev_col = -1;
    for (int64_t q = 0; q < p->prows; q++) {
        int32_t r = p->s ? p->trow[q] : (int32_t)q;
        if (r < 0)
            r = -r - 1;
        if (r < 0 || r >= p->rows) {
            SD_FREE_ALL;
            return SDI_ERR(SD_ERR_INTERNAL, "PCSR row %lld targets row %d of %d",
                           (long long)q, r, p->rows);
        }
        if (r < prev_row) {
            SD_FREE_ALL;
            return SDI_ERR(SD_ERR_INTERNAL, "PCSR row %lld targets row %d after row %d",
                           (long long)q, r, prev_row);
        }
        if (r != prev_row)
            prev_col = -1;
        prev_row = r;
        for (int64_t k = p->rowptr[q]; k < p->rowptr[q + 1]; k++) {
            if (p->colidx[k] != prev_col)
                count[r + 1]++;
            prev_col = p->colidx[k];
        }
    }
    for (int32_t i = 0; i < p->rows; i++)
        count[i + 1] += count[i];
    sd_status st = sdi_csr_alloc(out, p->rows, p->cols, count[p->rows]);
    if (st != SD_OK) {
        SD_FREE_ALL;
        return st;
    }
    memcpy(out->rowptr, count, ((size_t)p->rows + 1) * sizeof *count);
    prev_row = -1;
    prev_col = -1;
    int64_t at = 0;
    for (int64_t q = 0; q < p->prows; q++) {
        int32_t r = p->s ? p->trow[q] : (int32_t)q;
        if (r < 0)
            r = -r - 1;
        if (r != prev_row)
            prev_col = -1;
        prev_row = r;
        for (int64_t k = p->rowptr[q]; k < p->rowptr[q + 1]; k++) {
            if (p->colidx[k] != prev_col) {
                out->colind[at] = p->colidx[k];
                out->vals[at] = p->val[k];
                at++;
            }
            prev_col = p->colidx[k];
        }
    }
    sdi_free(count);
#undef SD_FREE_ALL
    return SD_OK;
}

void sdi_pcsr_describe(const sdi_pcsr *p, sdi_pcsr_features *out)
{
    memset(out, 0, sizeof *out);
    out->pr = p->nnz > 0 ? (double)p->slots / (double)p->nnz : 0.0;
    out->prow_per_row = p->rows > 0 ? (double)p->prows / (double)p->rows : 0.0;
    out->nsplit = p->nsplit;
    if (p->prows == 0)
        return;
    double sum = 0, sum2 = 0, mx = 0;
    for (int64_t q = 0; q < p->prows; q++) {
        double l = (double)(p->rowptr[q + 1] - p->rowptr[q]);
        sum += l;
        sum2 += l * l;
        if (l > mx)
            mx = l;
    }
    double mean = sum / (double)p->prows;
    double var = sum2 / (double)p->prows - mean * mean;
    out->slots_mean = mean;
    out->slots_max = mx;
    out->slots_cv = mean > 0 ? sqrt(var > 0 ? var : 0) / mean : 0.0;
}
