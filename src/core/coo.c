/* src/core/coo.c: the COO staging buffer and its conversion to canonical CSR
 * (one counting pass by row, per-row stable sorts, duplicates summed in double). */
#include <string.h>

#include "core.h"

sd_status sdi_coo_init(sdi_coo *c, int32_t rows, int32_t cols, int64_t cap_hint)
{
    memset(c, 0, sizeof *c);
    c->rows = rows;
    c->cols = cols;
    /* The hint is only a hint: capacity starts small so memory follows what is really
     * pushed, never what a header declares. */
    int64_t cap = cap_hint < 1024 ? 1024 : (cap_hint > (1 << 20) ? (1 << 20) : cap_hint);
    c->ri = sdi_malloc_array((size_t)cap, sizeof *c->ri);
    c->ci = sdi_malloc_array((size_t)cap, sizeof *c->ci);
    c->v = sdi_malloc_array((size_t)cap, sizeof *c->v);
    if (c->ri == NULL || c->ci == NULL || c->v == NULL) {
        sdi_coo_free(c);
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for triplets");
    }
    c->cap = cap;
    return SD_OK;
}

static sd_status coo_grow(sdi_coo *c)
{
    int64_t cap = c->cap + c->cap / 2 + 1024;
    int32_t *ri = sdi_realloc_array(c->ri, (size_t)cap, sizeof *ri);
    if (ri == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory growing to %lld triplets",
                       (long long)cap);
    c->ri = ri;
    int32_t *ci = sdi_realloc_array(c->ci, (size_t)cap, sizeof *ci);
    if (ci == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory growing to %lld triplets",
                       (long long)cap);
    c->ci = ci;
    float *v = sdi_realloc_array(c->v, (size_t)cap, sizeof *v);
    if (v == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory growing to %lld triplets",
                       (long long)cap);
    c->v = v;
    c->cap = cap;
    return SD_OK;
}

sd_status sdi_coo_push(sdi_coo *c, int32_t i, int32_t j, float v)
{
    if (c->nnz == c->cap) {
        sd_status s = coo_grow(c);
        if (s != SD_OK)
            return s;
    }
    c->ri[c->nnz] = i;
    c->ci[c->nnz] = j;
    c->v[c->nnz] = v;
    c->nnz++;
    return SD_OK;
}

void sdi_coo_free(sdi_coo *c)
{
    if (c == NULL)
        return;
    sdi_free(c->ri);
    sdi_free(c->ci);
    sdi_free(c->v);
    memset(c, 0, sizeof *c);
}

/* Stable sort of one row's (column, value) pairs by column. Short rows: insertion sort;
 * long rows: bottom-up merge sort through tc/tv (room for n pairs). Stability keeps
 * duplicates in input order, so they are summed in input order. */
static void sort_row(int32_t *col, float *val, int64_t n, int32_t *tc, float *tv)
{
    if (n <= 32) {
        for (int64_t k = 1; k < n; k++) {
            int32_t c = col[k];
            float v = val[k];
            int64_t m = k;
            while (m > 0 && col[m - 1] > c) {
                col[m] = col[m - 1];
                val[m] = val[m - 1];
                m--;
            }
            col[m] = c;
            val[m] = v;
        }
        return;
    }
    /* Runs of 16 by insertion, then merges ping-ponging between the row and tc/tv. */
    for (int64_t b = 0; b < n; b += 16)
        sort_row(col + b, val + b, (n - b < 16) ? n - b : 16, NULL, NULL);
    int32_t *sc = col, *dc = tc;
    float *sv = val, *dv = tv;
    for (int64_t w = 16; w < n; w *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * w) {
            int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int64_t a = lo, b = mid, o = lo;
            while (a < mid && b < hi) {
                if (sc[b] < sc[a]) {
                    dc[o] = sc[b];
                    dv[o++] = sv[b++];
                } else {
                    dc[o] = sc[a];
                    dv[o++] = sv[a++];
                }
            }
            while (a < mid) {
                dc[o] = sc[a];
                dv[o++] = sv[a++];
            }
            while (b < hi) {
                dc[o] = sc[b];
                dv[o++] = sv[b++];
            }
        }
        int32_t *t = sc;
        sc = dc;
        dc = t;
        float *u = sv;
        sv = dv;
        dv = u;
    }
    if (sc != col) {
        memcpy(col, sc, (size_t)n * sizeof *col);
        memcpy(val, sv, (size_t)n * sizeof *val);
    }
}

/* One counting pass by row straight into the output arrays (no column-sized workspace,
 * so a matrix with 2^31 columns costs nothing extra); rows whose columns arrive out of
 * order are sorted on their own. Input already in row-major order (what writers
 * produce) is copied as is. Duplicates, now adjacent, are summed in double. */
sd_status sdi_coo_to_csr(const sdi_coo *c, sd_csr *out, int64_t *n_duplicates)
{
    int32_t *tc = NULL;
    float *tv = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(tc);                                                                      \
        sdi_free(tv);                                                                      \
        sd_csr_free(out);                                                                  \
    } while (0)
    memset(out, 0, sizeof *out);
    if (n_duplicates != NULL)
        *n_duplicates = 0;
    const int64_t n = c->nnz;
    const int32_t rows = c->rows;
    SD_TRY(sdi_csr_alloc(out, rows, c->cols, n));
    int64_t *rp = out->rowptr;
    int32_t *col = out->colind;
    float *val = out->vals;
    bool ordered = true;
    int32_t pi = 0, pj = 0;
    for (int64_t k = 0; k < n; k++) {
        int32_t i = c->ri[k], j = c->ci[k];
        rp[i + 1]++;
        ordered = ordered && (i > pi || (i == pi && j >= pj));
        pi = i;
        pj = j;
    }
    for (int32_t i = 0; i < rows; i++)
        rp[i + 1] += rp[i];
    if (ordered) {
        if (n > 0) {
            memcpy(col, c->ci, (size_t)n * sizeof *col);
            memcpy(val, c->v, (size_t)n * sizeof *val);
        }
    } else {
        /* rp[i] serves as row i's cursor, ending at the start of row i + 1; shifted back. */
        for (int64_t k = 0; k < n; k++) {
            int64_t d = rp[c->ri[k]]++;
            col[d] = c->ci[k];
            val[d] = c->v[k];
        }
        if (rows > 0)
            memmove(rp + 1, rp, (size_t)rows * sizeof *rp);
        rp[0] = 0;
        int64_t room = 0;
        for (int32_t i = 0; i < rows; i++) {
            int64_t b = rp[i], len = rp[i + 1] - b, k = 1;
            while (k < len && col[b + k - 1] <= col[b + k])
                k++;
            if (k >= len)
                continue;
            if (len > 32 && len > room) {
                sdi_free(tc);
                sdi_free(tv);
                tc = sdi_malloc_array((size_t)len, sizeof *tc);
                tv = sdi_malloc_array((size_t)len, sizeof *tv);
                room = 0;
                SD_CHECK_ALLOC(tc, "a row sort buffer");
                SD_CHECK_ALLOC(tv, "a row sort buffer");
                room = len;
            }
            sort_row(col + b, val + b, len, tc, tv);
        }
        sdi_free(tc);
        sdi_free(tv);
        tc = NULL;
        tv = NULL;
    }
    /* Merge duplicates in place (explicit zeros and cancelling sums are kept). */
    int64_t w = 0, dups = 0;
    for (int32_t i = 0; i < rows; i++) {
        int64_t k = rp[i], e = rp[i + 1];
        rp[i] = w;
        while (k < e) {
            int32_t j = col[k];
            if (k + 1 < e && col[k + 1] == j) {
                double acc = (double)val[k++];
                while (k < e && col[k] == j) {
                    acc += (double)val[k++];
                    dups++;
                }
                col[w] = j;
                val[w++] = (float)acc;
            } else {
                col[w] = j;
                val[w++] = val[k++];
            }
        }
    }
    rp[rows] = w;
    if (w < n) {
        /* Give back the room of merged duplicates; keeping it is harmless if that fails. */
        int32_t *nc = sdi_realloc_array(out->colind, (size_t)(w > 0 ? w : 1), sizeof *nc);
        if (nc != NULL)
            out->colind = nc;
        float *nv = sdi_realloc_array(out->vals, (size_t)(w > 0 ? w : 1), sizeof *nv);
        if (nv != NULL)
            out->vals = nv;
        out->nnz = w;
    }
    if (n_duplicates != NULL)
        *n_duplicates = dups;
    return SD_OK;
#undef SD_FREE_ALL
}
