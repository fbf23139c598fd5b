/* src/formats/reorder.c: Rabbit-order-style community reordering, reverse Cuthill-McKee,
 * degree sort, permutation application and permutation files. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/io.h"
#include "reorder.h"

static const char *const method_names[SDI_REORDER_NMETHODS] = {"rabbit", "rcm", "degree"};

const char *sdi_reorder_method_name(int m)
{
    return (m >= 0 && m < SDI_REORDER_NMETHODS) ? method_names[m] : NULL;
}

int sdi_reorder_method_from_name(const char *name)
{
    for (int m = 0; m < SDI_REORDER_NMETHODS; m++)
        if (name != NULL && strcmp(name, method_names[m]) == 0)
            return m;
    return -1;
}

/* ------------------------------------------------------------------ permutations */

sd_status sdi_perm_check(const int32_t *p, int32_t n)
{
    if (n < 0 || (n > 0 && p == NULL))
        return SDI_ERR(SD_ERR_INVALID_ARG, "permutation: NULL or negative size");
    uint8_t *seen = sdi_calloc(n > 0 ? (size_t)n : 1, 1);
    if (seen == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory checking a permutation");
    for (int32_t i = 0; i < n; i++) {
        if (p[i] < 0 || p[i] >= n) {
            sdi_free(seen);
            return SDI_ERR(SD_ERR_INVALID_ARG, "permutation: entry %d is %d, outside 0..%d", i,
                           p[i], n - 1);
        }
        if (seen[p[i]]) {
            sdi_free(seen);
            return SDI_ERR(SD_ERR_INVALID_ARG, "permutation: entry %d repeats index %d", i, p[i]);
        }
        seen[p[i]] = 1;
    }
    sdi_free(seen);
    return SD_OK;
}

sd_status sdi_perm_invert(const int32_t *p, int32_t n, int32_t **inv)
{
    *inv = NULL;
    sd_status s = sdi_perm_check(p, n);
    if (s != SD_OK)
        return s;
    int32_t *q = sdi_malloc_array(n > 0 ? (size_t)n : 1, sizeof *q);
    if (q == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory inverting a permutation");
    for (int32_t i = 0; i < n; i++)
        q[p[i]] = i;
    *inv = q;
    return SD_OK;
}

/* Sorts (col, val) pairs of one row by column: insertion sort for short rows, else an
 * index sort through 64-bit keys (column in the high half, position in the low half). */
static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

static void sort_row(int32_t *col, float *val, int64_t n, uint64_t *keys, int32_t *tc, float *tv)
{
    if (n <= 32) {
        for (int64_t i = 1; i < n; i++) {
            int32_t c = col[i];
            float v = val[i];
            int64_t j = i - 1;
            while (j >= 0 && col[j] > c) {
                col[j + 1] = col[j];
                val[j + 1] = val[j];
                j--;
            }
            col[j + 1] = c;
            val[j + 1] = v;
        }
        return;
    }
    for (int64_t i = 0; i < n; i++)
        keys[i] = ((uint64_t)(uint32_t)col[i] << 32) | (uint64_t)i;
    qsort(keys, (size_t)n, sizeof *keys, cmp_u64);
    for (int64_t i = 0; i < n; i++) {
        int64_t from = (int64_t)(keys[i] & 0xffffffffu);
        tc[i] = col[from];
        tv[i] = val[from];
    }
    memcpy(col, tc, (size_t)n * sizeof *col);
    memcpy(val, tv, (size_t)n * sizeof *val);
}

sd_status sdi_csr_permute(const sd_csr *a, const int32_t *perm_rows, const int32_t *perm_cols,
                          sd_csr *out)
{
    int32_t *inv_cols = NULL, *tc = NULL;
    uint64_t *keys = NULL;
    float *tv = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(inv_cols);                                                                \
        sdi_free(keys);                                                                    \
        sdi_free(tc);                                                                      \
        sdi_free(tv);                                                                      \
        sd_csr_free(out);                                                                  \
    } while (0)
    memset(out, 0, sizeof *out);
    if (perm_rows != NULL)
        SD_TRY(sdi_perm_check(perm_rows, a->rows));
    if (perm_cols != NULL)
        SD_TRY(sdi_perm_invert(perm_cols, a->cols, &inv_cols));
    SD_TRY(sdi_csr_alloc(out, a->rows, a->cols, a->nnz));
    int64_t widest = 0;
    out->rowptr[0] = 0;
    for (int32_t i = 0; i < a->rows; i++) {
        int32_t o = perm_rows ? perm_rows[i] : i;
        int64_t len = a->rowptr[o + 1] - a->rowptr[o];
        out->rowptr[i + 1] = out->rowptr[i] + len;
        if (len > widest)
            widest = len;
    }
    if (inv_cols != NULL && widest > 32) {
        keys = sdi_malloc_array((size_t)widest, sizeof *keys);
        tc = sdi_malloc_array((size_t)widest, sizeof *tc);
        tv = sdi_malloc_array((size_t)widest, sizeof *tv);
        if (!keys || !tc || !tv) {
            SD_FREE_ALL;
            return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory sorting permuted rows");
        }
    }
    for (int32_t i = 0; i < a->rows; i++) {
        int32_t o = perm_rows ? perm_rows[i] : i;
        int64_t src = a->rowptr[o], dst = out->rowptr[i];
        int64_t len = out->rowptr[i + 1] - dst;
        for (int64_t k = 0; k < len; k++) {
            int32_t c = a->colind[src + k];
            out->colind[dst + k] = inv_cols ? inv_cols[c] : c;
            out->vals[dst + k] = a->vals[src + k];
        }
        if (inv_cols)
            sort_row(out->colind + dst, out->vals + dst, len, keys, tc, tv);
    }
    sdi_free(inv_cols);
    sdi_free(keys);
    sdi_free(tc);
    sdi_free(tv);
#undef SD_FREE_ALL
    return SD_OK;
}

/* ------------------------------------------------------------------ graphs
 * Undirected, unweighted adjacency without self loops or repeats. */
typedef struct {
    int32_t n;
    int64_t *off; /* n + 1 */
    int32_t *adj;
} graph;

static void graph_free(graph *g)
{
    sdi_free(g->off);
    sdi_free(g->adj);
    memset(g, 0, sizeof *g);
}

/* Square: pattern of A + Aᵀ minus the diagonal. Rectangular: the bipartite graph with
 * rows 0..rows-1 and columns rows..rows+cols-1. */
static sd_status graph_build(const sd_csr *a, graph *g)
{
    int64_t *fill = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(fill);                                                                    \
        graph_free(g);                                                                     \
    } while (0)
    memset(g, 0, sizeof *g);
    bool square = a->rows == a->cols;
    int64_t n64 = square ? a->rows : (int64_t)a->rows + a->cols;
    if (n64 > INT32_MAX)
        return SDI_ERR(SD_ERR_UNSUPPORTED, "reorder: %lld vertices exceed int32",
                       (long long)n64);
    int32_t n = (int32_t)n64;
    int32_t coff = square ? 0 : a->rows;
    g->n = n;
    g->off = sdi_calloc((size_t)n + 1, sizeof *g->off);
    SD_CHECK_ALLOC(g->off, "graph offsets");
    for (int32_t i = 0; i < a->rows; i++)
        for (int64_t k = a->rowptr[i]; k < a->rowptr[i + 1]; k++) {
            int32_t j = a->colind[k] + coff;
            if (square && j == i)
                continue;
            g->off[i + 1]++;
            g->off[j + 1]++;
        }
    for (int32_t v = 0; v < n; v++)
        g->off[v + 1] += g->off[v];
    g->adj = sdi_malloc_array(g->off[n] > 0 ? (size_t)g->off[n] : 1, sizeof *g->adj);
    SD_CHECK_ALLOC(g->adj, "graph adjacency");
    fill = sdi_malloc_array((size_t)n + 1, sizeof *fill);
    SD_CHECK_ALLOC(fill, "graph fill cursors");
    memcpy(fill, g->off, ((size_t)n + 1) * sizeof *fill);
    for (int32_t i = 0; i < a->rows; i++)
        for (int64_t k = a->rowptr[i]; k < a->rowptr[i + 1]; k++) {
            int32_t j = a->colind[k] + coff;
            if (square && j == i)
                continue;
            g->adj[fill[i]++] = j;
            g->adj[fill[j]++] = i;
        }
    /* Square graphs hold (i, j) twice when both a_ij and a_ji exist: sort and dedupe.
     * Vertex lists are filled in increasing source order, so each list is the merge of
     * two sorted runs; a plain sort keeps this simple. */
    if (square) {
        int64_t w = 0;
        for (int32_t v = 0; v < n; v++) {
            int64_t b = g->off[v], e = g->off[v + 1];
            int32_t *l = g->adj + b;
            int64_t len = e - b;
            sdi_sort_i32(l, len);
            g->off[v] = w;
            for (int64_t x = 0; x < len; x++)
                if (x == 0 || l[x] != l[x - 1])
                    g->adj[w++] = l[x];
        }
        g->off[n] = w;
    }
    sdi_free(fill);
#undef SD_FREE_ALL
    return SD_OK;
}

static int64_t degree(const graph *g, int32_t v) { return g->off[v + 1] - g->off[v]; }

/* ------------------------------------------------------------------ RCM */

/* BFS from s over unvisited vertices (stamp != mark); level structure in `queue`.
 * Returns the number of vertices reached; *ecc the last level, *last the start of it. */
static int32_t bfs_levels(const graph *g, int32_t s, int32_t *stamp, int32_t mark,
                          const uint8_t *done, int32_t *queue, int32_t *level, int32_t *ecc,
                          int32_t *last_start)
{
    int32_t head = 0, tail = 0;
    queue[tail++] = s;
    stamp[s] = mark;
    level[s] = 0;
    *last_start = 0;
    while (head < tail) {
        int32_t u = queue[head++];
        for (int64_t k = g->off[u]; k < g->off[u + 1]; k++) {
            int32_t w = g->adj[k];
            if (done[w] || stamp[w] == mark)
                continue;
            stamp[w] = mark;
            level[w] = level[u] + 1;
            if (level[w] != level[queue[tail - 1]])
                *last_start = tail;
            queue[tail++] = w;
        }
    }
    *ecc = level[queue[tail - 1]];
    return tail;
}

static sd_status order_rcm(const graph *g, int32_t *order)
{
    int32_t n = g->n;
    int32_t *stamp = NULL, *queue = NULL, *level = NULL, *by_deg = NULL;
    uint8_t *done = NULL;
    uint64_t *keys = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(stamp);                                                                   \
        sdi_free(queue);                                                                   \
        sdi_free(level);                                                                   \
        sdi_free(by_deg);                                                                  \
        sdi_free(done);                                                                    \
        sdi_free(keys);                                                                    \
    } while (0)
    size_t nn = n > 0 ? (size_t)n : 1;
    stamp = sdi_malloc_array(nn, sizeof *stamp);
    queue = sdi_malloc_array(nn, sizeof *queue);
    level = sdi_malloc_array(nn, sizeof *level);
    by_deg = sdi_malloc_array(nn, sizeof *by_deg);
    done = sdi_calloc(nn, 1);
    keys = sdi_malloc_array(nn, sizeof *keys);
    if (!stamp || !queue || !level || !by_deg || !done || !keys) {
        SD_FREE_ALL;
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for RCM");
    }
    /* Vertices by increasing degree: component starts are taken in this order. */
    for (int32_t v = 0; v < n; v++) {
        stamp[v] = -1;
        int64_t d = degree(g, v);
        keys[v] = ((uint64_t)(d > 0xffffffffLL ? 0xffffffffLL : d) << 32) | (uint32_t)v;
    }
    qsort(keys, nn, sizeof *keys, cmp_u64);
    for (int32_t v = 0; v < n; v++)
        by_deg[v] = (int32_t)(keys[v] & 0xffffffffu);
    int32_t placed = 0, mark = 0;
    for (int32_t t = 0; t < n; t++) {
        int32_t s = by_deg[t];
        if (done[s])
            continue;
        /* Pseudo-peripheral start (George-Liu): BFS, move to the lowest-degree vertex of
         * the last level while the eccentricity grows (bounded number of rounds). */
        int32_t ecc = -1, last = 0;
        for (int round = 0; round < 16; round++) {
            int32_t e, ls;
            int32_t reached = bfs_levels(g, s, stamp, mark++, done, queue, level, &e, &ls);
            if (e <= ecc)
                break;
            ecc = e;
            last = s;
            int32_t best = queue[ls];
            for (int32_t q = ls; q < reached; q++)
                if (degree(g, queue[q]) < degree(g, best))
                    best = queue[q];
            if (best == s)
                break;
            s = best;
        }
        s = last;
        /* Cuthill-McKee BFS: neighbours appended by increasing degree. */
        int32_t head = placed;
        order[placed++] = s;
        done[s] = 1;
        while (head < placed) {
            int32_t u = order[head++];
            int32_t nk = 0;
            for (int64_t k = g->off[u]; k < g->off[u + 1]; k++) {
                int32_t w = g->adj[k];
                if (done[w])
                    continue;
                done[w] = 1;
                int64_t d = degree(g, w);
                keys[nk++] = ((uint64_t)(d > 0xffffffffLL ? 0xffffffffLL : d) << 32) | (uint32_t)w;
            }
            qsort(keys, (size_t)nk, sizeof *keys, cmp_u64);
            for (int32_t q = 0; q < nk; q++)
                order[placed++] = (int32_t)(keys[q] & 0xffffffffu);
        }
    }
    /* Reverse the whole Cuthill-McKee order. */
    for (int32_t i = 0, j = n - 1; i < j; i++, j--) {
        int32_t tmp = order[i];
        order[i] = order[j];
        order[j] = tmp;
    }
    SD_FREE_ALL;
#undef SD_FREE_ALL
    return SD_OK;
}

/* ------------------------------------------------------------------ Rabbit order
 * Vertices are visited by increasing degree; each merges into the neighbouring
 * community with the largest modularity gain ΔQ(u, x) = w_ux/m2 − d_u·d_x/m2² (m2 = total
 * degree, d = aggregated community degrees), when that gain is positive. A merged
 * vertex hands its aggregated edge list to the community it joins (concatenated lazily
 * and compacted when that community's head is visited) and becomes its child in the
 * dendrogram. Vertices that never merge are the top-level communities. The order is a
 * DFS of the dendrogram (a vertex, then the subtrees of the vertices merged into it, in
 * merge order), top-level communities in the order their heads were visited, so each
 * community occupies consecutive indices. Edge endpoints are resolved to community heads
 * with a union-find kept apart from the dendrogram. */
typedef struct {
    int32_t *nbr;
    float *w;
    int64_t len, cap;
} edge_pool;

static sd_status pool_reserve(edge_pool *p, int64_t extra)
{
    if (p->len + extra <= p->cap)
        return SD_OK;
    int64_t cap = p->cap > 0 ? p->cap : 1024;
    while (cap < p->len + extra)
        cap *= 2;
    int32_t *nbr = sdi_realloc_array(p->nbr, (size_t)cap, sizeof *nbr);
    if (nbr == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for community edges");
    p->nbr = nbr;
    float *w = sdi_realloc_array(p->w, (size_t)cap, sizeof *w);
    if (w == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for community edges");
    p->w = w;
    p->cap = cap;
    return SD_OK;
}

static int32_t uf_find(int32_t *uf, int32_t v)
{
    int32_t r = v;
    while (uf[r] != r)
        r = uf[r];
    while (uf[v] != r) {
        int32_t next = uf[v];
        uf[v] = r;
        v = next;
    }
    return r;
}

static sd_status order_rabbit(const graph *g, int32_t *order)
{
    int32_t n = g->n;
    size_t nn = n > 0 ? (size_t)n : 1;
    edge_pool pool = {0};
    int64_t *eoff = NULL, *elen = NULL;
    int32_t *chain_head = NULL, *chain_tail = NULL, *chain_next = NULL;
    int32_t *child_head = NULL, *child_tail = NULL, *sibling = NULL;
    int32_t *uf = NULL, *touched = NULL, *stack = NULL, *roots = NULL;
    double *dcomm = NULL;
    float *acc = NULL;
    uint64_t *keys = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(pool.nbr);                                                                \
        sdi_free(pool.w);                                                                  \
        sdi_free(eoff);                                                                    \
        sdi_free(elen);                                                                    \
        sdi_free(chain_head);                                                              \
        sdi_free(chain_tail);                                                              \
        sdi_free(chain_next);                                                              \
        sdi_free(child_head);                                                              \
        sdi_free(child_tail);                                                              \
        sdi_free(sibling);                                                                 \
        sdi_free(uf);                                                                      \
        sdi_free(touched);                                                                 \
        sdi_free(stack);                                                                   \
        sdi_free(roots);                                                                   \
        sdi_free(dcomm);                                                                   \
        sdi_free(acc);                                                                     \
        sdi_free(keys);                                                                    \
    } while (0)
    eoff = sdi_malloc_array(nn, sizeof *eoff);
    elen = sdi_malloc_array(nn, sizeof *elen);
    chain_head = sdi_malloc_array(nn, sizeof *chain_head);
    chain_tail = sdi_malloc_array(nn, sizeof *chain_tail);
    chain_next = sdi_malloc_array(nn, sizeof *chain_next);
    child_head = sdi_malloc_array(nn, sizeof *child_head);
    child_tail = sdi_malloc_array(nn, sizeof *child_tail);
    sibling = sdi_malloc_array(nn, sizeof *sibling);
    uf = sdi_malloc_array(nn, sizeof *uf);
    touched = sdi_malloc_array(nn, sizeof *touched);
    stack = sdi_malloc_array(nn, sizeof *stack);
    roots = sdi_malloc_array(nn, sizeof *roots);
    dcomm = sdi_malloc_array(nn, sizeof *dcomm);
    acc = sdi_calloc(nn, sizeof *acc);
    keys = sdi_malloc_array(nn, sizeof *keys);
    if (!eoff || !elen || !chain_head || !chain_tail || !chain_next || !child_head ||
        !child_tail || !sibling || !uf || !touched || !stack || !roots || !dcomm || !acc ||
        !keys) {
        SD_FREE_ALL;
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for Rabbit order");
    }
    /* Every vertex starts with its own adjacency (unit weights) in the pool. */
    SD_TRY(pool_reserve(&pool, g->off[n] + 1));
    double m2 = 0;
    for (int32_t v = 0; v < n; v++) {
        eoff[v] = g->off[v];
        elen[v] = degree(g, v);
        for (int64_t k = g->off[v]; k < g->off[v + 1]; k++) {
            pool.nbr[k] = g->adj[k];
            pool.w[k] = 1.0f;
        }
        chain_head[v] = chain_tail[v] = chain_next[v] = -1;
        child_head[v] = child_tail[v] = sibling[v] = -1;
        uf[v] = v;
        dcomm[v] = (double)degree(g, v);
        m2 += dcomm[v];
        int64_t d = degree(g, v);
        keys[v] = ((uint64_t)(d > 0xffffffffLL ? 0xffffffffLL : d) << 32) | (uint32_t)v;
    }
    pool.len = g->off[n];
    qsort(keys, nn, sizeof *keys, cmp_u64);
    int32_t nroots_visit = 0;
    for (int32_t t = 0; t < n; t++) {
        int32_t u = (int32_t)(keys[t] & 0xffffffffu);
        /* Compact u's aggregated edges: its own list plus the lists of the vertices
         * merged into it so far, endpoints resolved to community heads. */
        int32_t nt = 0;
        for (int32_t src = u; src >= 0; src = (src == u) ? chain_head[u] : chain_next[src]) {
            for (int64_t k = eoff[src]; k < eoff[src] + elen[src]; k++) {
                int32_t x = uf_find(uf, pool.nbr[k]);
                if (x == u)
                    continue; /* internal edge of the community */
                if (acc[x] == 0.0f)
                    touched[nt++] = x;
                acc[x] += pool.w[k];
            }
        }
        SD_TRY(pool_reserve(&pool, nt));
        eoff[u] = pool.len;
        elen[u] = nt;
        chain_head[u] = chain_tail[u] = -1;
        int32_t best = -1;
        double best_gain = 0.0;
        for (int32_t q = 0; q < nt; q++) {
            int32_t x = touched[q];
            double wx = acc[x];
            pool.nbr[pool.len + q] = x;
            pool.w[pool.len + q] = (float)wx;
            acc[x] = 0.0f;
            double gain = wx / m2 - dcomm[u] * dcomm[x] / (m2 * m2);
            if (gain > best_gain) {
                best_gain = gain;
                best = x;
            }
        }
        pool.len += nt;
        if (best < 0) {
            roots[nroots_visit++] = u; /* a top-level community (for now) */
            continue;
        }
        /* Merge u into best: union-find, aggregated degree, lazy edge concatenation,
         * dendrogram child in merge order. */
        uf[u] = best;
        dcomm[best] += dcomm[u];
        if (chain_tail[best] < 0)
            chain_head[best] = u;
        else
            chain_next[chain_tail[best]] = u;
        chain_tail[best] = u;
        chain_next[u] = -1;
        if (child_tail[best] < 0)
            child_head[best] = u;
        else
            sibling[child_tail[best]] = u;
        child_tail[best] = u;
    }
    /* DFS of the dendrogram from each top-level head (a visited root may have been
     * merged later: only heads still at the top count). */
    int32_t placed = 0;
    for (int32_t r = 0; r < nroots_visit; r++) {
        int32_t h = roots[r];
        if (uf[h] != h)
            continue;
        int32_t sp = 0;
        stack[sp++] = h;
        while (sp > 0) {
            int32_t v = stack[--sp];
            order[placed++] = v;
            /* Push children in reverse merge order so they pop in merge order. */
            int32_t cnt = 0;
            for (int32_t c = child_head[v]; c >= 0; c = sibling[c])
                touched[cnt++] = c;
            for (int32_t c = cnt - 1; c >= 0; c--)
                stack[sp++] = touched[c];
        }
    }
    if (placed != n) {
        SD_FREE_ALL;
        return SDI_ERR(SD_ERR_INTERNAL, "Rabbit order placed %d of %d vertices", placed, n);
    }
    SD_FREE_ALL;
#undef SD_FREE_ALL
    return SD_OK;
}

/* ------------------------------------------------------------------ entry point */

static sd_status order_degree(const sd_csr *a, int32_t *order)
{
    size_t n = a->rows > 0 ? (size_t)a->rows : 1;
    uint64_t *keys = sdi_malloc_array(n, sizeof *keys);
    if (keys == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for degree sort");
    /* Decreasing length, ties by index: complement the length in the high half. */
    for (int32_t i = 0; i < a->rows; i++) {
        int64_t len = a->rowptr[i + 1] - a->rowptr[i];
        uint64_t l = len > 0xffffffffLL ? 0xffffffffULL : (uint64_t)len;
        keys[i] = ((0xffffffffULL - l) << 32) | (uint32_t)i;
    }
    qsort(keys, (size_t)a->rows, sizeof *keys, cmp_u64);
    for (int32_t i = 0; i < a->rows; i++)
        order[i] = (int32_t)(keys[i] & 0xffffffffu);
    sdi_free(keys);
    return SD_OK;
}

sd_status sdi_reorder(const sd_csr *a, int method, int32_t **perm_rows, int32_t **perm_cols)
{
    int32_t *pr = NULL, *pc = NULL, *vorder = NULL;
    graph g = {0};
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(pr);                                                                      \
        sdi_free(pc);                                                                      \
        sdi_free(vorder);                                                                  \
        graph_free(&g);                                                                    \
    } while (0)
    *perm_rows = NULL;
    if (perm_cols)
        *perm_cols = NULL;
    if (method < 0 || method >= SDI_REORDER_NMETHODS)
        return SDI_ERR(SD_ERR_INVALID_ARG, "reorder: unknown method %d", method);
    bool square = a->rows == a->cols;
    pr = sdi_malloc_array(a->rows > 0 ? (size_t)a->rows : 1, sizeof *pr);
    SD_CHECK_ALLOC(pr, "row permutation");
    if (method == SDI_REORDER_DEGREE) {
        SD_TRY(order_degree(a, pr));
    } else {
        SD_TRY(graph_build(a, &g));
        vorder = sdi_malloc_array(g.n > 0 ? (size_t)g.n : 1, sizeof *vorder);
        SD_CHECK_ALLOC(vorder, "vertex order");
        if (method == SDI_REORDER_RCM)
            SD_TRY(order_rcm(&g, vorder));
        else
            SD_TRY(order_rabbit(&g, vorder));
        if (square) {
            memcpy(pr, vorder, (size_t)a->rows * sizeof *pr);
        } else { /* rows in the order their vertices were placed */
            int32_t at = 0;
            for (int32_t q = 0; q < g.n; q++)
                if (vorder[q] < a->rows)
                    pr[at++] = vorder[q];
        }
    }
    SD_TRY(sdi_perm_check(pr, a->rows));
    if (square && perm_cols) {
        pc = sdi_malloc_array(a->rows > 0 ? (size_t)a->rows : 1, sizeof *pc);
        SD_CHECK_ALLOC(pc, "column permutation");
        memcpy(pc, pr, (size_t)a->rows * sizeof *pc);
    }
    *perm_rows = pr;
    if (perm_cols)
        *perm_cols = pc;
    pr = pc = NULL;
    SD_FREE_ALL;
#undef SD_FREE_ALL
    return SD_OK;
}

/* ------------------------------------------------------------------ files */

sd_status sdi_perm_write(const char *path, const int32_t *p, int32_t n)
{
    sdi_atomic_file af;
    sd_status s = sdi_atomic_begin(&af, path);
    if (s != SD_OK)
        return s;
    FILE *f = sdi_atomic_stream(&af);
    if (f == NULL) {
        s = SDI_ERR(SD_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
        sdi_atomic_abort(&af);
        return s;
    }
    /* A failed fprintf is reported by the commit (the stream's error flag). */
    for (int32_t i = 0; i < n && !ferror(f); i++)
        fprintf(f, "%d\n", p[i]);
    return sdi_atomic_commit(&af);
}

sd_status sdi_perm_read(const char *path, int32_t **p, int32_t *n)
{
    *p = NULL;
    *n = 0;
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return SDI_ERR(SD_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    int32_t *v = NULL;
    int64_t cnt = 0, cap = 0;
    char line[128];
    long lineno = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        lineno++;
        size_t len = strlen(line);
        if (len == sizeof line - 1 && line[len - 1] != '\n') {
            fclose(f);
            sdi_free(v);
            return SDI_ERR(SD_ERR_PARSE, "%s: line %ld: too long", path, lineno);
        }
        char *s = line;
        while (*s == ' ' || *s == '\t')
            s++;
        if (*s == '\n' || *s == '\r' || *s == '\0')
            continue;
        char *end;
        errno = 0;
        long x = strtol(s, &end, 10);
        while (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n')
            end++;
        if (end == s || *end != '\0' || errno != 0 || x < 0 || x > INT32_MAX) {
            fclose(f);
            sdi_free(v);
            return SDI_ERR(SD_ERR_PARSE, "%s: line %ld: expected one index >= 0", path, lineno);
        }
        if (cnt == cap) {
            cap = cap ? cap * 2 : 1024;
            if (cap > (int64_t)INT32_MAX + 1)
                cap = (int64_t)INT32_MAX + 1;
            if (cnt == cap) {
                fclose(f);
                sdi_free(v);
                return SDI_ERR(SD_ERR_PARSE, "%s: more than 2^31 indices", path);
            }
            int32_t *nv = sdi_realloc_array(v, (size_t)cap, sizeof *nv);
            if (nv == NULL) {
                fclose(f);
                sdi_free(v);
                return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory reading %s", path);
            }
            v = nv;
        }
        v[cnt++] = (int32_t)x;
    }
    fclose(f);
    *p = v;
    *n = (int32_t)cnt;
    return SD_OK;
}
