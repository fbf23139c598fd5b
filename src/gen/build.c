/* src/gen/build.c: the generators' common machinery: row-wise CSR builder, sorted
 * distinct sampling, the exact split of a total over rows, CSR from edge lists and
 * symmetrisation. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "gen.h"

/* ------------------------------------------------------------------ sorting */

/* Sorts v[0, n) and removes duplicates; returns the distinct count. */
static int64_t sort_unique(int32_t *v, int64_t n)
{
    sdi_sort_i32(v, n);
    int64_t w = 0;
    for (int64_t k = 0; k < n; k++)
        if (w == 0 || v[w - 1] != v[k])
            v[w++] = v[k];
    return w;
}

/* ------------------------------------------------------------------ sampling */

/* Selection sampling (Knuth's Algorithm S): each of the range candidates is taken with
 * probability (still needed)/(still left); O(range), sorted by construction. */
static void select_all(sdi_rng *r, int64_t lo, int64_t range, int64_t n, int32_t *out)
{
    int64_t need = n, w = 0;
    for (int64_t t = 0; need > 0 && t < range; t++) {
        if ((int64_t)sdi_rng_below(r, (uint64_t)(range - t)) < need) {
            out[w++] = (int32_t)(lo + t);
            need--;
        }
    }
}

void sdi_gen_sample(sdi_rng *r, int64_t lo, int64_t range, int64_t n, int32_t *out)
{
    if (n <= 0)
        return;
    if (n >= range) {
        for (int64_t k = 0; k < n; k++)
            out[k] = (int32_t)(lo + k);
        return;
    }
    if (n * 4 > range) {
        select_all(r, lo, range, n, out);
        return;
    }
    /* Draw, sort, drop duplicates, draw the missing ones again: the result is the first
     * n distinct values of an i.i.d. sequence, a uniform n-subset. */
    int64_t have = 0;
    while (have < n) {
        for (int64_t k = have; k < n; k++)
            out[k] = (int32_t)(lo + (int64_t)sdi_rng_below(r, (uint64_t)range));
        have = sort_unique(out, n);
    }
}

void sdi_gen_sample_mixed(sdi_rng *r, int64_t cols, int64_t wlo, int64_t wlen, double p_local,
                          int64_t n, int32_t *out)
{
    if (n <= 0)
        return;
    if (n * 4 > cols || wlen < 1 || p_local <= 0.0) {
        sdi_gen_sample(r, 0, cols, n, out);
        return;
    }
    int64_t have = 0;
    while (have < n) {
        for (int64_t k = have; k < n; k++) {
            int64_t c;
            if (sdi_rng_uniform(r) < p_local)
                c = wlo + (int64_t)sdi_rng_below(r, (uint64_t)wlen);
            else
                c = (int64_t)sdi_rng_below(r, (uint64_t)cols);
            out[k] = (int32_t)c;
        }
        have = sort_unique(out, n);
    }
}

/* ------------------------------------------------------------------ the row builder */

sd_status sdi_gen_build(const sdi_rowgen *g, sd_csr *out)
{
    memset(out, 0, sizeof *out);
    const int32_t rows = g->rows;
    if (rows < 0 || g->cols < 0)
        return SDI_ERR(SD_ERR_INVALID_ARG, "gen: negative size %d x %d", rows, g->cols);
    int64_t *rowptr = sdi_calloc((size_t)rows + 1, sizeof *rowptr);
    if (rowptr == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "gen: out of host memory for %d row pointers",
                       rows);
#pragma omp parallel for schedule(dynamic, 1024)
    for (int32_t i = 0; i < rows; i++)
        rowptr[i + 1] = g->lens != NULL ? g->lens[i] : g->len(g, i);
    for (int32_t i = 0; i < rows; i++)
        rowptr[i + 1] += rowptr[i];
    const int64_t nnz = rowptr[rows];
    int32_t *colind = sdi_malloc_array((size_t)nnz, sizeof *colind);
    float *vals = sdi_malloc_array((size_t)nnz, sizeof *vals);
    if (colind == NULL || vals == NULL) {
        sdi_free(rowptr);
        sdi_free(colind);
        sdi_free(vals);
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY,
                       "gen: out of host memory for a matrix of %lld entries", (long long)nnz);
    }
#pragma omp parallel for schedule(dynamic, 256)
    for (int32_t i = 0; i < rows; i++) {
        int64_t b = rowptr[i], n = rowptr[i + 1] - b;
        g->fill(g, i, colind + b, n);
        memset(vals + b, 0, (size_t)n * sizeof *vals);
    }
    out->rows = rows;
    out->cols = g->cols;
    out->nnz = nnz;
    out->rowptr = rowptr;
    out->colind = colind;
    out->vals = vals;
    return SD_OK;
}

/* ------------------------------------------------------------------ exact split */

/* Left share of n draws without replacement from N positions, K of them on the left. */
static int64_t hypergeometric(sdi_rng *r, int64_t N, int64_t K, int64_t n)
{
    if (n <= 64) {
        int64_t taken = 0, k = K, left = N;
        for (int64_t t = 0; t < n; t++, left--)
            if ((int64_t)sdi_rng_below(r, (uint64_t)left) < k) {
                taken++;
                k--;
            }
        return taken;
    }
    double p = (double)K / (double)N;
    double mean = (double)n * p;
    double var = (double)n * p * (1.0 - p) * ((double)(N - n) / (double)(N > 1 ? N - 1 : 1));
    double x = floor(mean + sqrt(var > 0 ? var : 0) * sdi_rng_normal(r) + 0.5);
    if (x < 0)
        x = 0;
    if (x > (double)n)
        x = (double)n;
    return (int64_t)x;
}

static void split_rec(uint64_t seed, int64_t cap, int32_t lo, int32_t hi, int64_t n,
                      int64_t *lens, int32_t grain)
{
    while (hi - lo > 1) {
        if (n == 0) {
            for (int32_t i = lo; i < hi; i++)
                lens[i] = 0;
            return;
        }
        int32_t mid = lo + (hi - lo) / 2;
        int64_t lcap = (int64_t)(mid - lo) * cap, rcap = (int64_t)(hi - mid) * cap;
        sdi_rng r;
        sdi_rng_seed(&r, seed, SDI_STREAM_SPLIT, ((uint64_t)(uint32_t)lo << 32) | (uint32_t)hi);
        int64_t nl = hypergeometric(&r, lcap + rcap, lcap, n);
        if (nl > lcap)
            nl = lcap;
        if (n - nl > rcap)
            nl = n - rcap;
        if (hi - lo > grain) {
#pragma omp task firstprivate(seed, cap, lo, mid, nl, lens, grain)
            split_rec(seed, cap, lo, mid, nl, lens, grain);
        } else {
            split_rec(seed, cap, lo, mid, nl, lens, grain);
        }
        lo = mid;
        n -= nl;
    }
    if (hi - lo == 1)
        lens[lo] = n;
}

void sdi_gen_split(uint64_t seed, int32_t rows, int64_t cap, int64_t total, int64_t *lens)
{
    if (rows <= 0)
        return;
    int32_t grain = rows / 256 > 4096 ? rows / 256 : 4096;
#pragma omp parallel
#pragma omp single
    split_rec(seed, cap, 0, rows, total, lens, grain);
}

/* ------------------------------------------------------------------ edge lists */

sd_status sdi_gen_from_edges(int32_t rows, int32_t cols, int64_t n, int32_t **ri, int32_t **ci,
                             sd_csr *out)
{
    int64_t *rowptr = NULL, *len = NULL;
    int32_t *colind = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(rowptr);                                                                  \
        sdi_free(len);                                                                     \
        sdi_free(colind);                                                                  \
        sdi_free(*ri);                                                                     \
        sdi_free(*ci);                                                                     \
        *ri = NULL;                                                                        \
        *ci = NULL;                                                                        \
    } while (0)
    memset(out, 0, sizeof *out);
    rowptr = sdi_calloc((size_t)rows + 1, sizeof *rowptr);
    SD_CHECK_ALLOC(rowptr, "row pointers");
    colind = sdi_malloc_array((size_t)n, sizeof *colind);
    SD_CHECK_ALLOC(colind, "edge columns");
    const int32_t *r = *ri, *c = *ci;
    for (int64_t k = 0; k < n; k++)
        rowptr[r[k] + 1]++;
    for (int32_t i = 0; i < rows; i++)
        rowptr[i + 1] += rowptr[i];
    /* rowptr[i] serves as row i's cursor; afterwards it holds the end of row i. */
    for (int64_t k = 0; k < n; k++)
        colind[rowptr[r[k]]++] = c[k];
    for (int32_t i = rows; i > 0; i--)
        rowptr[i] = rowptr[i - 1];
    rowptr[0] = 0;
    sdi_free(*ri);
    sdi_free(*ci);
    *ri = NULL;
    *ci = NULL;
    len = sdi_malloc_array((size_t)rows + 1, sizeof *len);
    SD_CHECK_ALLOC(len, "row lengths");
#pragma omp parallel for schedule(dynamic, 256)
    for (int32_t i = 0; i < rows; i++)
        len[i] = sort_unique(colind + rowptr[i], rowptr[i + 1] - rowptr[i]);
    int64_t w = 0;
    for (int32_t i = 0; i < rows; i++) {
        int64_t b = rowptr[i];
        if (b != w && len[i] > 0)
            memmove(colind + w, colind + b, (size_t)len[i] * sizeof *colind);
        rowptr[i] = w;
        w += len[i];
    }
    rowptr[rows] = w;
    sdi_free(len);
    len = NULL;
    int32_t *shrunk = sdi_realloc_array(colind, (size_t)(w > 0 ? w : 1), sizeof *colind);
    if (shrunk != NULL)
        colind = shrunk; /* a failed shrink keeps the larger block */
    float *vals = sdi_calloc((size_t)(w > 0 ? w : 1), sizeof *vals);
    SD_CHECK_ALLOC(vals, "values");
    out->rows = rows;
    out->cols = cols;
    out->nnz = w;
    out->rowptr = rowptr;
    out->colind = colind;
    out->vals = vals;
    return SD_OK;
#undef SD_FREE_ALL
}

/* ------------------------------------------------------------------ symmetrisation */

/* Merged length (or the merge itself into dst when not NULL) of two sorted lists. */
static int64_t merge_union(const int32_t *x, int64_t nx, const int32_t *y, int64_t ny,
                           int32_t *dst)
{
    int64_t p = 0, q = 0, w = 0;
    while (p < nx || q < ny) {
        int32_t v;
        if (q >= ny || (p < nx && x[p] < y[q]))
            v = x[p++];
        else if (p >= nx || y[q] < x[p])
            v = y[q++];
        else {
            v = x[p++];
            q++;
        }
        if (dst != NULL)
            dst[w] = v;
        w++;
    }
    return w;
}

sd_status sdi_gen_symmetrize(sd_csr *a)
{
    sd_csr t, s;
    memset(&t, 0, sizeof t);
    memset(&s, 0, sizeof s);
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sd_csr_free(&t);                                                                   \
        sd_csr_free(&s);                                                                   \
    } while (0)
    if (a->rows != a->cols)
        return SDI_ERR(SD_ERR_INVALID_ARG, "gen: symmetrising a %d x %d matrix", a->rows,
                       a->cols);
    SD_TRY(sdi_csr_transpose(a, &t));
    const int32_t n = a->rows;
    int64_t *rowptr = sdi_calloc((size_t)n + 1, sizeof *rowptr);
    SD_CHECK_ALLOC(rowptr, "row pointers");
    s.rowptr = rowptr;
#pragma omp parallel for schedule(dynamic, 1024)
    for (int32_t i = 0; i < n; i++)
        rowptr[i + 1] = merge_union(a->colind + a->rowptr[i], a->rowptr[i + 1] - a->rowptr[i],
                                    t.colind + t.rowptr[i], t.rowptr[i + 1] - t.rowptr[i], NULL);
    for (int32_t i = 0; i < n; i++)
        rowptr[i + 1] += rowptr[i];
    const int64_t nnz = rowptr[n];
    s.colind = sdi_malloc_array((size_t)nnz, sizeof *s.colind);
    SD_CHECK_ALLOC(s.colind, "symmetric columns");
    s.vals = sdi_calloc((size_t)(nnz > 0 ? nnz : 1), sizeof *s.vals);
    SD_CHECK_ALLOC(s.vals, "symmetric values");
#pragma omp parallel for schedule(dynamic, 1024)
    for (int32_t i = 0; i < n; i++)
        merge_union(a->colind + a->rowptr[i], a->rowptr[i + 1] - a->rowptr[i],
                    t.colind + t.rowptr[i], t.rowptr[i + 1] - t.rowptr[i],
                    s.colind + rowptr[i]);
    s.rows = s.cols = n;
    s.nnz = nnz;
    sd_csr_free(&t);
    sd_csr_free(a);
    *a = s;
    return SD_OK;
#undef SD_FREE_ALL
}
