/* src/formats/spmm_formats.c: SpMM builders: split-row chunk lists, row windows,
 * column-window packing, BSR / blocked-ELL / tensor-core tiles, with round trips. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "spmm_formats.h"

/* ------------------------------------------------------------------ distinct keys */

/* Distinct keys colind / width in one group of rows [r0, r1): marks in `mark` stamped with
 * the group's number (unique, so a mark never needs clearing); with `list`, the keys in
 * first-seen order. Column windows (panels × windows) and blocks (block rows × block
 * columns) are both this count. */
static int64_t group_keys(const sd_csr *a, int32_t r0, int32_t r1, int width, int32_t *mark,
                          int32_t stamp, int32_t *list)
{
    int64_t n = 0;
    for (int32_t i = r0; i < r1; i++)
        for (int64_t k = a->rowptr[i]; k < a->rowptr[i + 1]; k++) {
            int32_t w = a->colind[k] / width;
            if (mark[w] != stamp) {
                mark[w] = stamp;
                if (list)
                    list[n] = w;
                n++;
            }
        }
    return n;
}

/* The marks of all threads together stay under this many bytes (one thread always runs). */
#define KEYS_MARK_BYTES ((size_t)1 << 30)

/* Sum and maximum over the groups of group_rows rows of their distinct keys colind / width
 * (keys < nkeys; `what` names them in an error). In parallel, each thread with its own marks: the sweeps count blocks and
 * windows of every candidate size before building any, and serially the delaunay_n24 twin
 * (10^8 entries, random access into 4·10^6 marks) takes ~3 s a count on the H200's host,
 * 13 s of a 65-s SpMM compile (`sparseditto compile --gen twin:name=DIMACS10_delaunay_n24
 * --op spmm -K 256`, stage times). The result does not depend on the threads. */
static sd_status keys_per_group(const sd_csr *a, int group_rows, int width, int32_t nkeys,
                                const char *what, int64_t *total, int64_t *widest)
{
    *total = 0;
    *widest = 0;
    const int32_t ngroups = a->rows > 0 ? (int32_t)(((int64_t)a->rows + group_rows - 1) / group_rows) : 0;
    const size_t mark_bytes = (nkeys > 0 ? (size_t)nkeys : 1) * sizeof(int32_t);
    int team = omp_get_max_threads();
    if ((int64_t)team > ngroups / 256)
        team = ngroups / 256; /* small matrices: one thread, no team to start */
    if ((size_t)team * mark_bytes > KEYS_MARK_BYTES)
        team = (int)(KEYS_MARK_BYTES / mark_bytes);
    if (team < 1)
        team = 1;
    int64_t sum = 0, most = 0;
    bool oom = false;
#pragma omp parallel num_threads(team) reduction(+ : sum) reduction(max : most)
    {
        int32_t *mark = sdi_malloc(mark_bytes);
        bool have = mark != NULL;
        if (!have) {
#pragma omp atomic write
            oom = true;
        } else {
            for (int32_t w = 0; w < nkeys; w++)
                mark[w] = -1;
        }
#pragma omp for schedule(static)
        for (int32_t g = 0; g < ngroups; g++) {
            if (!have)
                continue;
            const int32_t r0 = g * group_rows;
            const int32_t r1 = a->rows - r0 > group_rows ? r0 + group_rows : a->rows;
            const int64_t n = group_keys(a, r0, r1, width, mark, g, NULL);
            sum += n;
            if (n > most)
                most = n;
        }
        sdi_free(mark);
    }
    if (oom)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for %d %s marks", nkeys, what);
    *total = sum;
    *widest = most;
    return SD_OK;
}

/* ------------------------------------------------------------------ split rows */

void sdi_spmm_split_free(sdi_spmm_split *s)
{
    if (s == NULL)
        return;
    sdi_free(s->long_row);
    sdi_free(s->long_first);
    sdi_free(s->chunk_row);
    sdi_free(s->chunk_long);
    sdi_free(s->chunk_start);
    memset(s, 0, sizeof *s);
}

sd_status sdi_spmm_split_build(const sd_csr *a, int threshold, int chunk, int mode,
                               sdi_spmm_split *out)
{
    memset(out, 0, sizeof *out);
    if (chunk < 1 || threshold < chunk)
        return SDI_ERR(SD_ERR_INVALID_ARG,
                       "split: need 1 <= chunk (%d) <= threshold (%d)", chunk, threshold);
    if (mode != 0 && mode != 1)
        return SDI_ERR(SD_ERR_INVALID_ARG, "split: mode must be 0 (atomic) or 1 (fixup)");
#define SD_FREE_ALL sdi_spmm_split_free(out)
    out->threshold = threshold;
    out->chunk = chunk;
    out->mode = mode;
    int32_t nlong = 0;
    int64_t nchunks = 0;
    for (int32_t i = 0; i < a->rows; i++) {
        int64_t len = a->rowptr[i + 1] - a->rowptr[i];
        if (len > threshold) {
            int64_t pieces = (len + chunk - 1) / chunk;
            nlong++;
            nchunks += mode == SDI_SPMM_SPLIT_FIXUP ? pieces : pieces - 1;
        }
    }
    out->nlong = nlong;
    out->nchunks = nchunks;
    out->long_row = sdi_malloc_array(nlong > 0 ? (size_t)nlong : 1, sizeof *out->long_row);
    SD_CHECK_ALLOC(out->long_row, "long rows");
    size_t nc = nchunks > 0 ? (size_t)nchunks : 1;
    out->chunk_row = sdi_malloc_array(nc, sizeof *out->chunk_row);
    SD_CHECK_ALLOC(out->chunk_row, "chunk rows");
    out->chunk_start = sdi_malloc_array(nc, sizeof *out->chunk_start);
    SD_CHECK_ALLOC(out->chunk_start, "chunk starts");
    if (mode == SDI_SPMM_SPLIT_FIXUP) {
        out->long_first = sdi_malloc_array((size_t)nlong + 1, sizeof *out->long_first);
        SD_CHECK_ALLOC(out->long_first, "long-row chunk offsets");
        out->chunk_long = sdi_malloc_array(nc, sizeof *out->chunk_long);
        SD_CHECK_ALLOC(out->chunk_long, "chunk long-row indices");
    }
    int32_t l = 0;
    int64_t c = 0;
    for (int32_t i = 0; i < a->rows; i++) {
        int64_t b = a->rowptr[i], e = a->rowptr[i + 1];
        if (e - b <= threshold)
            continue;
        if (out->long_first)
            out->long_first[l] = c;
        out->long_row[l] = i;
        int64_t first = mode == SDI_SPMM_SPLIT_FIXUP ? b : b + chunk;
        for (int64_t k = first; k < e; k += chunk) {
            out->chunk_row[c] = i;
            out->chunk_start[c] = k;
            if (out->chunk_long)
                out->chunk_long[c] = l;
            c++;
        }
        l++;
    }
    if (out->long_first)
        out->long_first[nlong] = c;
#undef SD_FREE_ALL
    return SD_OK;
}

sd_status sdi_spmm_split_to_csr(const sd_csr *a, const sdi_spmm_split *s, sd_csr *out)
{
    uint8_t *seen = NULL;
    sdi_coo coo;
    memset(&coo, 0, sizeof coo);
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(seen);                                                                    \
        sdi_coo_free(&coo);                                                                \
        sd_csr_free(out);                                                                  \
    } while (0)
    memset(out, 0, sizeof *out);
    seen = sdi_calloc(a->nnz > 0 ? (size_t)a->nnz : 1, 1);
    SD_CHECK_ALLOC(seen, "visit marks");
    SD_TRY(sdi_coo_init(&coo, a->rows, a->cols, a->nnz));
    /* The row-wise pass: short rows whole; long rows only their first chunk in atomic
     * mode, nothing in fixup mode. */
    for (int32_t i = 0; i < a->rows; i++) {
        int64_t b = a->rowptr[i], e = a->rowptr[i + 1];
        if (e - b > s->threshold) {
            if (s->mode == SDI_SPMM_SPLIT_FIXUP)
                continue;
            e = b + s->chunk;
        }
        for (int64_t k = b; k < e; k++) {
            seen[k]++;
            SD_TRY(sdi_coo_push(&coo, i, a->colind[k], a->vals[k]));
        }
    }
    for (int64_t c = 0; c < s->nchunks; c++) {
        int32_t i = s->chunk_row[c];
        if (i < 0 || i >= a->rows) {
            SD_FREE_ALL;
            return SDI_ERR(SD_ERR_INTERNAL, "split: chunk %lld targets row %d", (long long)c, i);
        }
        if (s->chunk_long && s->long_row[s->chunk_long[c]] != i) {
            SD_FREE_ALL;
            return SDI_ERR(SD_ERR_INTERNAL, "split: chunk %lld long-row index disagrees",
                           (long long)c);
        }
        int64_t b = s->chunk_start[c], e = a->rowptr[i + 1];
        if (b < a->rowptr[i] || b >= e) {
            SD_FREE_ALL;
            return SDI_ERR(SD_ERR_INTERNAL, "split: chunk %lld starts outside row %d",
                           (long long)c, i);
        }
        if (e > b + s->chunk)
            e = b + s->chunk;
        for (int64_t k = b; k < e; k++) {
            seen[k]++;
            SD_TRY(sdi_coo_push(&coo, i, a->colind[k], a->vals[k]));
        }
    }
    for (int64_t k = 0; k < a->nnz; k++)
        if (seen[k] != 1) {
            SD_FREE_ALL;
            return SDI_ERR(SD_ERR_INTERNAL, "split: entry %lld visited %d times", (long long)k,
                           seen[k]);
        }
    SD_TRY(sdi_coo_to_csr(&coo, out, NULL));
    sdi_free(seen);
    sdi_coo_free(&coo);
#undef SD_FREE_ALL
    return SD_OK;
}

/* ------------------------------------------------------------------ row windows */

void sdi_spmm_windows_free(sdi_spmm_windows *w)
{
    if (w == NULL)
        return;
    sdi_free(w->win_ptr);
    memset(w, 0, sizeof *w);
}

sd_status sdi_spmm_windows_build(const sd_csr *a, int max_rows, int cap, sdi_spmm_windows *out)
{
    memset(out, 0, sizeof *out);
    if (max_rows < 1 || cap < 1)
        return SDI_ERR(SD_ERR_INVALID_ARG, "windows: max_rows (%d) and cap (%d) must be >= 1",
                       max_rows, cap);
#define SD_FREE_ALL sdi_spmm_windows_free(out)
    out->max_rows = max_rows;
    out->cap = cap;
    /* Greedy: extend the window while rows and nonzeros fit; at most rows windows. */
    out->win_ptr = sdi_malloc_array((size_t)a->rows + 1, sizeof *out->win_ptr);
    SD_CHECK_ALLOC(out->win_ptr, "window pointers");
    int32_t nw = 0, i = 0;
    while (i < a->rows) {
        out->win_ptr[nw++] = i;
        int32_t j = i + 1;
        int64_t base = a->rowptr[i];
        while (j < a->rows && j - i < max_rows && a->rowptr[j + 1] - base <= cap)
            j++;
        if (j - i > out->rows_max)
            out->rows_max = j - i;
        i = j;
    }
    out->win_ptr[nw] = a->rows;
    out->nwin = nw;
#undef SD_FREE_ALL
    return SD_OK;
}

/* ------------------------------------------------------------------ column windows */

void sdi_spmm_colwin_free(sdi_spmm_colwin *c)
{
    if (c == NULL)
        return;
    sdi_free(c->panel_seg);
    sdi_free(c->seg_col0);
    sdi_free(c->seg_start);
    sdi_free(c->seg_rowoff);
    sdi_free(c->colidx);
    sdi_free(c->val);
    sdi_free(c->src);
    memset(c, 0, sizeof *c);
}

sd_status sdi_spmm_colwin_count(const sd_csr *a, int panel_rows, int width, int64_t *nseg)
{
    *nseg = 0;
    if (panel_rows < 1 || width < 1)
        return SDI_ERR(SD_ERR_INVALID_ARG, "column windows: panel_rows and width must be >= 1");
    int64_t widest = 0;
    return keys_per_group(a, panel_rows, width, a->cols / width + 1, "window", nseg, &widest);
}

sd_status sdi_spmm_colwin_build(const sd_csr *a, int panel_rows, int width,
                                sdi_spmm_colwin *out)
{
    int32_t *mark = NULL, *list = NULL, *slot = NULL;
    int64_t *cursor = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(mark);                                                                    \
        sdi_free(list);                                                                    \
        sdi_free(slot);                                                                    \
        sdi_free(cursor);                                                                  \
        sdi_spmm_colwin_free(out);                                                         \
    } while (0)
    memset(out, 0, sizeof *out);
    int64_t nseg = 0;
    SD_TRY(sdi_spmm_colwin_count(a, panel_rows, width, &nseg));
    int32_t ncw = a->cols / width + 1;
    int32_t npanels = (a->rows + panel_rows - 1) / panel_rows;
    out->rows = a->rows;
    out->cols = a->cols;
    out->panel_rows = panel_rows;
    out->width = width;
    out->npanels = npanels;
    out->nnz = a->nnz;
    out->nseg = nseg;
    size_t nsz = nseg > 0 ? (size_t)nseg : 1, nz = a->nnz > 0 ? (size_t)a->nnz : 1;
    out->panel_seg = sdi_malloc_array((size_t)npanels + 1, sizeof *out->panel_seg);
    out->seg_col0 = sdi_malloc_array(nsz, sizeof *out->seg_col0);
    out->seg_start = sdi_malloc_array(nsz + 1, sizeof *out->seg_start);
    out->seg_rowoff = sdi_calloc(nsz * ((size_t)panel_rows + 1), sizeof *out->seg_rowoff);
    out->colidx = sdi_malloc_array(nz, sizeof *out->colidx);
    out->val = sdi_malloc_array(nz, sizeof *out->val);
    out->src = sdi_malloc_array(nz, sizeof *out->src);
    mark = sdi_malloc_array((size_t)ncw, sizeof *mark);
    list = sdi_malloc_array((size_t)ncw, sizeof *list);
    slot = sdi_malloc_array((size_t)ncw, sizeof *slot);
    cursor = sdi_malloc_array(nsz, sizeof *cursor);
    if (!out->panel_seg || !out->seg_col0 || !out->seg_start || !out->seg_rowoff ||
        !out->colidx || !out->val || !out->src || !mark || !list || !slot || !cursor) {
        SD_FREE_ALL;
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for column-window packing");
    }
    for (int32_t w = 0; w < ncw; w++)
        mark[w] = -1;
    int64_t s = 0, at = 0;
    out->panel_seg[0] = 0;
    for (int32_t p = 0; p < npanels; p++) {
        int32_t r0 = p * panel_rows;
        int32_t r1 = r0 + panel_rows < a->rows ? r0 + panel_rows : a->rows;
        int64_t n = group_keys(a, r0, r1, width, mark, p, list);
        sdi_sort_i32(list, n);
        /* Count entries per (segment, row), then prefix sums inside each segment. */
        for (int64_t q = 0; q < n; q++) {
            slot[list[q]] = (int32_t)q;
            out->seg_col0[s + q] = list[q] * width;
        }
        for (int32_t i = r0; i < r1; i++)
            for (int64_t k = a->rowptr[i]; k < a->rowptr[i + 1]; k++) {
                int64_t sg = s + slot[a->colind[k] / width];
                out->seg_rowoff[sg * (panel_rows + 1) + (i - r0) + 1]++;
            }
        for (int64_t q = 0; q < n; q++) {
            int32_t *off = out->seg_rowoff + (s + q) * (panel_rows + 1);
            for (int32_t r = 0; r < panel_rows; r++)
                off[r + 1] += off[r];
            out->seg_start[s + q] = at;
            cursor[s + q] = at;
            at += off[panel_rows];
        }
        /* Scatter: rows in order, columns ascending, so each (segment, row) run is sorted. */
        for (int32_t i = r0; i < r1; i++)
            for (int64_t k = a->rowptr[i]; k < a->rowptr[i + 1]; k++) {
                int64_t sg = s + slot[a->colind[k] / width];
                int64_t dst = cursor[sg]++;
                out->colidx[dst] = a->colind[k];
                out->val[dst] = a->vals[k];
                out->src[dst] = k;
            }
        /* cursor ran through the rows in order: entries of row r sit after rows < r. */
        s += n;
        out->panel_seg[p + 1] = s;
    }
    out->seg_start[nseg] = at;
    sdi_free(mark);
    sdi_free(list);
    sdi_free(slot);
    sdi_free(cursor);
    mark = list = slot = NULL;
    cursor = NULL;
#undef SD_FREE_ALL
    return SD_OK;
}

sd_status sdi_spmm_colwin_to_csr(const sdi_spmm_colwin *c, sd_csr *out)
{
    sdi_coo coo;
    memset(&coo, 0, sizeof coo);
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_coo_free(&coo);                                                                \
        sd_csr_free(out);                                                                  \
    } while (0)
    memset(out, 0, sizeof *out);
    SD_TRY(sdi_coo_init(&coo, c->rows, c->cols, c->nnz));
    for (int32_t p = 0; p < c->npanels; p++)
        for (int64_t s = c->panel_seg[p]; s < c->panel_seg[p + 1]; s++) {
            const int32_t *off = c->seg_rowoff + s * (c->panel_rows + 1);
            for (int32_t r = 0; r < c->panel_rows; r++) {
                int32_t i = p * c->panel_rows + r;
                for (int64_t k = c->seg_start[s] + off[r]; k < c->seg_start[s] + off[r + 1]; k++) {
                    if (i >= c->rows || c->colidx[k] < c->seg_col0[s] ||
                        c->colidx[k] >= c->seg_col0[s] + c->width) {
                        SD_FREE_ALL;
                        return SDI_ERR(SD_ERR_INTERNAL,
                                       "column windows: entry %lld outside its segment",
                                       (long long)k);
                    }
                    SD_TRY(sdi_coo_push(&coo, i, c->colidx[k], c->val[k]));
                }
            }
        }
    int64_t dups = 0;
    SD_TRY(sdi_coo_to_csr(&coo, out, &dups));
    sdi_coo_free(&coo);
    if (dups != 0) {
        sd_csr_free(out);
        return SDI_ERR(SD_ERR_INTERNAL, "column windows: %lld entries stored twice",
                       (long long)dups);
    }
#undef SD_FREE_ALL
    return SD_OK;
}

/* ------------------------------------------------------------------ blocks */

void sdi_spmm_blocks_free(sdi_spmm_blocks *b)
{
    if (b == NULL)
        return;
    sdi_free(b->browptr);
    sdi_free(b->bcolidx);
    sdi_free(b->val);
    sdi_free(b->src);
    memset(b, 0, sizeof *b);
}

void sdi_spmm_tc_slot(int e, int *r, int *c)
{
    /* mma.m16n8k8 tf32 A fragment: lane = e / 4 holds a0..a3 at
     * (g, t), (g + 8, t), (g, t + 4), (g + 8, t + 4) with g = lane / 4, t = lane % 4. */
    sdi_spmm_tc_slot_rows(16, e, r, c);
}

void sdi_spmm_tc_slot_rows(int bm, int e, int *r, int *c)
{
    int halves = bm / 8, per_lane = 2 * halves;
    int lane = e / per_lane, i = e % per_lane;
    int g = lane / 4, t = lane % 4;
    *r = g + 8 * (i % halves);
    *c = t + 4 * (i / halves);
}

sd_status sdi_spmm_blocks_count(const sd_csr *a, int bm, int bn, int64_t *nblocks,
                                int64_t *max_per_brow)
{
    *nblocks = 0;
    *max_per_brow = 0;
    if (bm < 1 || bn < 1)
        return SDI_ERR(SD_ERR_INVALID_ARG, "blocks: block sizes must be >= 1");
    return keys_per_group(a, bm, bn, (int32_t)(((int64_t)a->cols + bn - 1) / bn), "block",
                          nblocks, max_per_brow);
}

sd_status sdi_spmm_blocks_build(const sd_csr *a, int bm, int bn, int ell, int tc_layout,
                                sdi_spmm_blocks *out)
{
    int32_t *mark = NULL, *list = NULL, *pos = NULL;
    int32_t *slot_of = NULL; /* element (r, c) of a block → slot index */
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(mark);                                                                    \
        sdi_free(list);                                                                    \
        sdi_free(pos);                                                                     \
        sdi_free(slot_of);                                                                 \
        sdi_spmm_blocks_free(out);                                                         \
    } while (0)
    memset(out, 0, sizeof *out);
    if (tc_layout == SDI_BLOCKS_TC && ((bm != 16 && bm != 8) || bn != 8))
        return SDI_ERR(SD_ERR_INVALID_ARG, "blocks: the tensor-core layout needs 16x8 or 8x8 "
                       "blocks (not %dx%d)", bm, bn);
    if (tc_layout == SDI_BLOCKS_ELL_ROWS && ell < 1)
        return SDI_ERR(SD_ERR_INVALID_ARG, "blocks: the row-major ELL layout needs an ELL width");
    if (tc_layout < SDI_BLOCKS_COLMAJOR || tc_layout > SDI_BLOCKS_ELL_ROWS)
        return SDI_ERR(SD_ERR_INVALID_ARG, "blocks: layout %d", tc_layout);
    int64_t nblocks = 0, widest = 0;
    SD_TRY(sdi_spmm_blocks_count(a, bm, bn, &nblocks, &widest));
    if (ell < 0)
        return SDI_ERR(SD_ERR_INVALID_ARG, "blocked-ELL width must be >= 0");
    int32_t brows = (a->rows + bm - 1) / bm, bcols = (a->cols + bn - 1) / bn;
    if (ell > 0 && ell < widest)
        return SDI_ERR(SD_ERR_INVALID_ARG,
                       "blocked-ELL width %d is below the widest block row (%lld blocks)", ell,
                       (long long)widest);
    out->rows = a->rows;
    out->cols = a->cols;
    out->bm = bm;
    out->bn = bn;
    out->brows = brows;
    out->bcols = bcols;
    out->ell = ell;
    out->tc_layout = tc_layout;
    out->nnz = a->nnz;
    int64_t stored = ell > 0 ? (int64_t)brows * ell : nblocks;
    out->nblocks = stored;
    size_t bsz = (size_t)bm * (size_t)bn, ns = stored > 0 ? (size_t)stored : 1;
    size_t nslots = 0;
    if (!sdi_mul_ok(ns, bsz, &nslots))
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "blocks: %lld blocks of %dx%d overflow",
                       (long long)stored, bm, bn);
    if (ell == 0) {
        out->browptr = sdi_malloc_array((size_t)brows + 1, sizeof *out->browptr);
        SD_CHECK_ALLOC(out->browptr, "block row pointers");
    }
    out->bcolidx = sdi_malloc_array(ns, sizeof *out->bcolidx);
    out->val = sdi_calloc(nslots, sizeof *out->val);
    out->src = sdi_malloc_array(nslots, sizeof *out->src);
    mark = sdi_malloc_array(bcols > 0 ? (size_t)bcols : 1, sizeof *mark);
    list = sdi_malloc_array(bcols > 0 ? (size_t)bcols : 1, sizeof *list);
    pos = sdi_malloc_array(bcols > 0 ? (size_t)bcols : 1, sizeof *pos);
    slot_of = sdi_malloc_array(bsz, sizeof *slot_of);
    if (!out->bcolidx || !out->val || !out->src || !mark || !list || !pos || !slot_of) {
        SD_FREE_ALL;
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for %lld blocks of %dx%d",
                       (long long)stored, bm, bn);
    }
    for (size_t q = 0; q < nslots; q++)
        out->src[q] = -1;
    /* Element (r, c) → slot: column-major, or the mma fragment order. */
    if (tc_layout == SDI_BLOCKS_TC) {
        for (int e = 0; e < bm * 8; e++) {
            int r, c;
            sdi_spmm_tc_slot_rows(bm, e, &r, &c);
            slot_of[r * bn + c] = e;
        }
    } else {
        for (int r = 0; r < bm; r++)
            for (int c = 0; c < bn; c++)
                slot_of[r * bn + c] = c * bm + r;
    }
    for (int32_t j = 0; j < bcols; j++)
        mark[j] = -1;
    int64_t at = 0;
    for (int32_t br = 0; br < brows; br++) {
        if (out->browptr)
            out->browptr[br] = at;
        const int32_t r0 = br * bm, r1 = r0 + bm < a->rows ? r0 + bm : a->rows;
        int64_t n = group_keys(a, r0, r1, bn, mark, br, list);
        sdi_sort_i32(list, n);
        for (int64_t q = 0; q < n; q++) {
            pos[list[q]] = (int32_t)q;
            out->bcolidx[at + q] = list[q];
        }
        for (int32_t i = r0; i < r1; i++)
            for (int64_t k = a->rowptr[i]; k < a->rowptr[i + 1]; k++) {
                int32_t bc = a->colind[k] / bn;
                size_t q = (size_t)(at + pos[bc]) * bsz +
                           (size_t)slot_of[(i - r0) * bn + (a->colind[k] - bc * bn)];
                if (tc_layout == SDI_BLOCKS_ELL_ROWS) /* row i of the ELL, block slot pos[bc] */
                    q = ((size_t)i * (size_t)ell + (size_t)pos[bc]) * (size_t)bn +
                        (size_t)(a->colind[k] - bc * bn);
                out->val[q] = a->vals[k];
                out->src[q] = k;
            }
        int64_t width = ell > 0 ? ell : n;
        for (int64_t q = n; q < width; q++)
            out->bcolidx[at + q] = -1;
        at += width;
    }
    if (out->browptr)
        out->browptr[brows] = at;
    sdi_free(mark);
    sdi_free(list);
    sdi_free(pos);
    sdi_free(slot_of);
    mark = list = pos = slot_of = NULL;
#undef SD_FREE_ALL
    return SD_OK;
}

sd_status sdi_spmm_blocks_to_csr(const sdi_spmm_blocks *b, sd_csr *out)
{
    sdi_coo coo;
    memset(&coo, 0, sizeof coo);
    int32_t er[128], ec[128];
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_coo_free(&coo);                                                                \
        sd_csr_free(out);                                                                  \
    } while (0)
    memset(out, 0, sizeof *out);
    SD_TRY(sdi_coo_init(&coo, b->rows, b->cols, b->nnz));
    if (b->tc_layout == SDI_BLOCKS_TC)
        for (int e = 0; e < b->bm * 8 && e < 128; e++)
            sdi_spmm_tc_slot_rows(b->bm, e, &er[e], &ec[e]);
    size_t bsz = (size_t)b->bm * (size_t)b->bn;
    for (int32_t br = 0; br < b->brows; br++) {
        int64_t q0 = b->ell > 0 ? (int64_t)br * b->ell : b->browptr[br];
        int64_t q1 = b->ell > 0 ? q0 + b->ell : b->browptr[br + 1];
        for (int64_t q = q0; q < q1; q++) {
            int32_t bc = b->bcolidx[q];
            for (size_t e = 0; e < bsz; e++) {
                size_t slot = (size_t)q * bsz + e;
                if (b->tc_layout != SDI_BLOCKS_ELL_ROWS && b->src[slot] < 0)
                    continue;
                int r, c;
                if (b->tc_layout == SDI_BLOCKS_ELL_ROWS) {
                    /* slot = (row · ell + block slot) · bn + column: block slot q − q0 */
                    const size_t rows_slot = (size_t)b->ell * (size_t)b->bn;
                    const int64_t row = (int64_t)br * b->bm + (int64_t)(e / (size_t)b->bn);
                    slot = (size_t)row * rows_slot + (size_t)(q - q0) * (size_t)b->bn +
                           e % (size_t)b->bn;
                    if (b->src[slot] < 0)
                        continue;
                    r = (int)(e / (size_t)b->bn);
                    c = (int)(e % (size_t)b->bn);
                } else if (b->tc_layout == SDI_BLOCKS_TC) {
                    r = er[e];
                    c = ec[e];
                } else {
                    r = (int)(e % (size_t)b->bm);
                    c = (int)(e / (size_t)b->bm);
                }
                int64_t i = (int64_t)br * b->bm + r, j = (int64_t)bc * b->bn + c;
                if (bc < 0 || i >= b->rows || j >= b->cols) {
                    SD_FREE_ALL;
                    return SDI_ERR(SD_ERR_INTERNAL, "blocks: slot %zu maps outside the matrix",
                                   slot);
                }
                SD_TRY(sdi_coo_push(&coo, (int32_t)i, (int32_t)j, b->val[slot]));
            }
        }
    }
    int64_t dups = 0;
    SD_TRY(sdi_coo_to_csr(&coo, out, &dups));
    sdi_coo_free(&coo);
    if (dups != 0) {
        sd_csr_free(out);
        return SDI_ERR(SD_ERR_INTERNAL, "blocks: %lld entries stored twice", (long long)dups);
    }
#undef SD_FREE_ALL
    return SD_OK;
}
