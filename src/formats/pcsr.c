/* src/formats/pcsr.c: the PCSR format of ParamSpMM (rowPtr, colIdx, val, TRow) for any
 * V ∈ {1, 2} and S on/off, its round trip to CSR, padding ratio and balancing features. */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include <omp.h>

#include "spmm_formats.h"

void sdi_spmm_gather_values(const int64_t *src, int64_t n, const float *vals, float *dst)
{
#pragma omp parallel for schedule(static) if (n >= 1 << 20)
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

/* Rows from which a build runs on a team of threads (fewer rows a thread cost more to
 * start than they save). */
#define PCSR_PAR_ROWS 65536

/* Row range t of nt. */
static void pcsr_range(int32_t rows, int t, int nt, int32_t *r0, int32_t *r1)
{
    *r0 = (int32_t)((int64_t)rows * t / nt);
    *r1 = (int32_t)((int64_t)rows * (t + 1) / nt);
}

/* The sizes of rows [r0, r1): slots, PCSR rows, split rows. */
static void pcsr_count(const sd_csr *a, int v, int s, int bound, int32_t r0, int32_t r1,
                       int64_t *slots, int64_t *prows, int64_t *nsplit)
{
    int64_t sl = 0, pr = 0, ns = 0;
    for (int32_t i = r0; i < r1; i++) {
        int64_t len = round_up(a->rowptr[i + 1] - a->rowptr[i], v);
        sl += len;
        int64_t pieces = (s && len > bound) ? (len + bound - 1) / bound : 1;
        pr += pieces;
        ns += pieces > 1;
    }
    *slots = sl;
    *prows = pr;
    *nsplit = ns;
}

/* Fills rows [r0, r1), whose first slot, PCSR row and split row are at, p and ns. */
static void pcsr_fill(const sd_csr *a, int s, int bound, int32_t r0, int32_t r1, int64_t at,
                      int64_t p, int64_t ns, sdi_pcsr *out)
{
    const int v = out->v;
    for (int32_t i = r0; i < r1; i++) {
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
}

/* Two passes over row ranges, one a thread: each range's sizes, their prefix sums, then
 * each range filled from its offsets. The arrays are the same at any thread count (the
 * delaunay_n24 twin, 10^8 entries: a search builds PCSR two or three times, ~1 s each on
 * one core). */
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
    int64_t *part = NULL; /* per range: slots, PCSR rows, split rows; then their offsets */
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(part);                                                                    \
        sdi_pcsr_free(out);                                                                \
    } while (0)
    out->rows = a->rows;
    out->cols = a->cols;
    out->v = v;
    out->s = s;
    out->bound = s ? bound : 0;
    out->nnz = a->nnz;
    int team = omp_get_max_threads();
    if ((int64_t)team > a->rows / PCSR_PAR_ROWS)
        team = (int)(a->rows / PCSR_PAR_ROWS);
    if (team < 1)
        team = 1;
    part = sdi_calloc(3 * ((size_t)team + 1), sizeof *part);
    SD_CHECK_ALLOC(part, "PCSR row ranges");
    bool oom = false; /* the error is raised after the team, on the calling thread */
#pragma omp parallel num_threads(team)
    {
        const int nt = omp_get_num_threads(), t = omp_get_thread_num();
        int32_t r0, r1;
        pcsr_range(a->rows, t, nt, &r0, &r1);
        pcsr_count(a, v, s, bound, r0, r1, &part[3 * (t + 1)], &part[3 * (t + 1) + 1],
                   &part[3 * (t + 1) + 2]);
#pragma omp barrier
#pragma omp single
        {
            for (int q = 1; q <= nt; q++)
                for (int f = 0; f < 3; f++)
                    part[3 * q + f] += part[3 * (q - 1) + f];
            const int64_t slots = part[3 * nt], prows = part[3 * nt + 1];
            const int64_t nsplit = part[3 * nt + 2];
            out->prows = prows;
            out->slots = slots;
            out->nsplit = (int32_t)nsplit;
            out->rowptr = sdi_malloc_array((size_t)prows + 1, sizeof *out->rowptr);
            out->colidx = sdi_malloc_array(slots > 0 ? (size_t)slots : 1, sizeof *out->colidx);
            out->val = sdi_malloc_array(slots > 0 ? (size_t)slots : 1, sizeof *out->val);
            out->src = sdi_malloc_array(slots > 0 ? (size_t)slots : 1, sizeof *out->src);
            if (s) {
                out->trow = sdi_malloc_array(prows > 0 ? (size_t)prows : 1, sizeof *out->trow);
                out->split_rows =
                    sdi_malloc_array(nsplit > 0 ? (size_t)nsplit : 1, sizeof *out->split_rows);
            }
            oom = out->rowptr == NULL || out->colidx == NULL || out->val == NULL ||
                  out->src == NULL || (s && (out->trow == NULL || out->split_rows == NULL));
            if (!oom)
                out->rowptr[0] = 0;
        } /* implicit barrier */
        if (!oom)
            pcsr_fill(a, s, bound, r0, r1, part[3 * t], part[3 * t + 1], part[3 * t + 2], out);
    }
    if (oom) {
        const long long slots = (long long)out->slots, prows = (long long)out->prows;
        SD_FREE_ALL;
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for PCSR (%lld slots, %lld rows)",
                       slots, prows);
    }
    sdi_free(part);
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
