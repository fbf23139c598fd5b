/* src/core/coo.c: the COO staging buffer and its conversion to canonical CSR
 * (two stable counting sorts: by column, then by row; then duplicates summed). */
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

sd_status sdi_coo_to_csr(const sdi_coo *c, sd_csr *out, int64_t *n_duplicates)
{
    int64_t *colptr = NULL, *perm = NULL, *next = NULL;
    int32_t *tmp_col = NULL;
    double *acc = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(colptr);                                                                  \
        sdi_free(perm);                                                                    \
        sdi_free(next);                                                                    \
        sdi_free(tmp_col);                                                                 \
        sdi_free(acc);                                                                     \
        sd_csr_free(out);                                                                  \
    } while (0)
    memset(out, 0, sizeof *out);
    if (n_duplicates != NULL)
        *n_duplicates = 0;
    const int64_t n = c->nnz;
    /* Pass 1: order triplets by column (stable). */
    colptr = sdi_calloc((size_t)c->cols + 1, sizeof *colptr);
    SD_CHECK_ALLOC(colptr, "column counts");
    perm = sdi_malloc_array((size_t)n, sizeof *perm);
    SD_CHECK_ALLOC(perm, "a sort permutation");
    for (int64_t k = 0; k < n; k++)
        colptr[c->ci[k] + 1]++;
    for (int32_t j = 0; j < c->cols; j++)
        colptr[j + 1] += colptr[j];
    for (int64_t k = 0; k < n; k++)
        perm[colptr[c->ci[k]]++] = k;
    sdi_free(colptr);
    colptr = NULL;
    /* Pass 2: stable by row, so columns come out sorted within each row. */
    next = sdi_calloc((size_t)c->rows + 1, sizeof *next);
    SD_CHECK_ALLOC(next, "row counts");
    for (int64_t k = 0; k < n; k++)
        next[c->ri[k] + 1]++;
    for (int32_t i = 0; i < c->rows; i++)
        next[i + 1] += next[i];
    tmp_col = sdi_malloc_array((size_t)n, sizeof *tmp_col);
    SD_CHECK_ALLOC(tmp_col, "sorted columns");
    acc = sdi_malloc_array((size_t)n, sizeof *acc);
    SD_CHECK_ALLOC(acc, "sorted values");
    {
        /* next[i] is the cursor of row i; rowstart kept in perm's order by reuse. */
        int64_t *cursor = sdi_malloc_array((size_t)c->rows + 1, sizeof *cursor);
        SD_CHECK_ALLOC(cursor, "row cursors");
        memcpy(cursor, next, ((size_t)c->rows + 1) * sizeof *cursor);
        for (int64_t t = 0; t < n; t++) {
            int64_t k = perm[t];
            int64_t dst = cursor[c->ri[k]]++;
            tmp_col[dst] = c->ci[k];
            acc[dst] = (double)c->v[k];
        }
        sdi_free(cursor);
    }
    sdi_free(perm);
    perm = NULL;
    /* Pass 3: merge duplicates in place (sum in double, explicit zeros kept). */
    int64_t w = 0, dups = 0;
    for (int32_t i = 0; i < c->rows; i++) {
        int64_t b = next[i], e = next[i + 1];
        next[i] = w;
        for (int64_t k = b; k < e; k++) {
            if (w > next[i] && tmp_col[w - 1] == tmp_col[k]) {
                acc[w - 1] += acc[k];
                dups++;
            } else {
                tmp_col[w] = tmp_col[k];
                acc[w] = acc[k];
                w++;
            }
        }
    }
    next[c->rows] = w;
    SD_TRY(sdi_csr_alloc(out, c->rows, c->cols, w));
    memcpy(out->rowptr, next, ((size_t)c->rows + 1) * sizeof *next);
    if (w > 0)
        memcpy(out->colind, tmp_col, (size_t)w * sizeof *tmp_col);
    for (int64_t k = 0; k < w; k++)
        out->vals[k] = (float)acc[k];
    if (n_duplicates != NULL)
        *n_duplicates = dups;
    sdi_free(next);
    sdi_free(tmp_col);
    sdi_free(acc);
    return SD_OK;
#undef SD_FREE_ALL
}
