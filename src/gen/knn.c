/* src/gen/knn.c: k-nearest-neighbour graphs of random points in the unit square, cube
 * or hypercube of up to SDI_KNN_MAX_DIM dimensions (mesh/road-like in 2-3, less local
 * above). Points are bucketed in a grid of about two points per cell and numbered cell
 * by cell (spatial locality, as in a mesh ordering); each point's k nearest are found by
 * searching rings of cells: O(n·k) in 2-3 dimensions, a ring of 3^dim cells and more
 * above, which is why dim stops at 5. Optionally symmetrised. */
#include <math.h>
#include <string.h>

#include "gen.h"

#define SDI_KNN_MAX_DIM 5

typedef struct {
    int dim;
    int64_t g; /* cells per side */
    double h;  /* cell side = 1/g */
    const float *p; /* dim coordinates per point, in cell order */
    const int64_t *cellstart;
} knn_grid;

static int64_t cell_coord(double x, int64_t g)
{
    int64_t c = (int64_t)(x * (double)g);
    return c < 0 ? 0 : (c >= g ? g - 1 : c);
}

/* Candidate list sorted by (distance, id), at most k long. */
typedef struct {
    int64_t count, k;
    double *d;
    int32_t *id;
} knn_best;

static void knn_offer(knn_best *b, double d, int32_t id)
{
    if (b->count == b->k &&
        (d > b->d[b->k - 1] || (d == b->d[b->k - 1] && id > b->id[b->k - 1])))
        return;
    int64_t pos = b->count < b->k ? b->count++ : b->k - 1;
    while (pos > 0 && (b->d[pos - 1] > d || (b->d[pos - 1] == d && b->id[pos - 1] > id))) {
        b->d[pos] = b->d[pos - 1];
        b->id[pos] = b->id[pos - 1];
        pos--;
    }
    b->d[pos] = d;
    b->id[pos] = id;
}

static void knn_scan_cell(const knn_grid *gr, int64_t cell, int32_t self, const float *q,
                          knn_best *b)
{
    for (int64_t j = gr->cellstart[cell]; j < gr->cellstart[cell + 1]; j++) {
        if (j == self)
            continue;
        double d = 0.0;
        for (int t = 0; t < gr->dim; t++) {
            double diff = (double)gr->p[j * gr->dim + t] - (double)q[t];
            d += diff * diff;
        }
        knn_offer(b, d, (int32_t)j);
    }
}

/* The k nearest of point i (ids into cols, unsorted). Ring r is the shell of cells at
 * Chebyshev distance r from i's cell, clipped to the grid: an odometer over the outer
 * coordinates, and along x (coordinate 0) every cell when some outer coordinate is on
 * the shell, only the two ends otherwise. */
static void knn_search(const knn_grid *gr, int32_t i, knn_best *b)
{
    const float *q = gr->p + (int64_t)i * gr->dim;
    const int dim = gr->dim;
    const int64_t g = gr->g;
    int64_t c[SDI_KNN_MAX_DIM], lo[SDI_KNN_MAX_DIM], hi[SDI_KNN_MAX_DIM], o[SDI_KNN_MAX_DIM];
    for (int t = 0; t < dim; t++)
        c[t] = cell_coord(q[t], g);
    b->count = 0;
    for (int64_t r = 0; r <= g; r++) {
        for (int t = 0; t < dim; t++) {
            lo[t] = c[t] - r < 0 ? -c[t] : -r;
            hi[t] = c[t] + r >= g ? g - 1 - c[t] : r;
            o[t] = lo[t];
        }
        for (;;) {
            bool face = r == 0;
            int64_t base = 0; /* the cell index without coordinate 0 */
            for (int t = dim - 1; t >= 1; t--) {
                face = face || o[t] == -r || o[t] == r;
                base = base * g + c[t] + o[t];
            }
            base *= g;
            int64_t step = face ? 1 : 2 * r;
            for (int64_t dx = face ? lo[0] : -r; dx <= hi[0]; dx += step)
                if (dx >= lo[0])
                    knn_scan_cell(gr, base + c[0] + dx, i, q, b);
            int t = 1; /* next outer offset */
            while (t < dim && o[t] == hi[t]) {
                o[t] = lo[t];
                t++;
            }
            if (t >= dim)
                break;
            o[t]++;
        }
        /* Every point outside the searched cells is at least r·h away. */
        double reach = (double)r * gr->h;
        if (b->count == b->k && b->d[b->k - 1] < reach * reach)
            break;
    }
}

sd_status sdi_gen_knn(const sdi_gen_params *p, sd_csr *out)
{
    int64_t n, k, dim, sym;
    sd_status s = sdi_gen_int(p, "n", 4096, 1, INT32_MAX, &n);
    if (s == SD_OK)
        s = sdi_gen_int(p, "k", 8, 1, 4096, &k);
    if (s == SD_OK)
        s = sdi_gen_int(p, "dim", 2, 2, SDI_KNN_MAX_DIM, &dim);
    if (s == SD_OK)
        s = sdi_gen_int(p, "sym", 1, 0, 1, &sym);
    if (s != SD_OK || p->check_only)
        return s;
    if (k > n - 1)
        k = n - 1;
    float *orig = NULL, *pts = NULL;
    int32_t *cellof = NULL;
    int64_t *cellstart = NULL, *rowptr = NULL;
    int32_t *colind = NULL;
    float *vals = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(orig);                                                                    \
        sdi_free(pts);                                                                     \
        sdi_free(cellof);                                                                  \
        sdi_free(cellstart);                                                               \
        sdi_free(rowptr);                                                                  \
        sdi_free(colind);                                                                  \
        sdi_free(vals);                                                                    \
    } while (0)
    memset(out, 0, sizeof *out);
    int64_t g = (int64_t)floor(pow((double)n / 2.0, 1.0 / (double)dim));
    if (g < 1)
        g = 1;
    int64_t ncell = 1;
    for (int64_t t = 0; t < dim; t++)
        ncell *= g;
    orig = sdi_malloc_array((size_t)(n * dim), sizeof *orig);
    SD_CHECK_ALLOC(orig, "knn points");
    pts = sdi_malloc_array((size_t)(n * dim), sizeof *pts);
    SD_CHECK_ALLOC(pts, "knn points");
    cellof = sdi_malloc_array((size_t)n, sizeof *cellof);
    SD_CHECK_ALLOC(cellof, "knn cells");
    cellstart = sdi_calloc((size_t)ncell + 1, sizeof *cellstart);
    SD_CHECK_ALLOC(cellstart, "knn cell starts");
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < n; t++) {
        sdi_rng r;
        sdi_rng_seed(&r, p->seed, SDI_STREAM_POINTS, (uint64_t)t);
        int64_t cell = 0;
        for (int d = (int)dim - 1; d >= 0; d--) {
            float x = (float)sdi_rng_uniform(&r);
            if (x >= 1.0f) /* rounding of a value just below 1 */
                x = 0x1.fffffep-1f;
            orig[t * dim + d] = x;
            cell = cell * g + cell_coord(x, g);
        }
        cellof[t] = (int32_t)cell;
    }
    /* The cell index above is (x_{dim-1}·g + ...)·g + x_0 with x_0 = first coordinate:
     * the same layout knn_search uses ((z·g + y)·g + x). */
    for (int64_t t = 0; t < n; t++)
        cellstart[cellof[t] + 1]++;
    for (int64_t c = 0; c < ncell; c++)
        cellstart[c + 1] += cellstart[c];
    for (int64_t t = 0; t < n; t++) { /* stable: cell order, then original order */
        int64_t dst = cellstart[cellof[t]]++;
        memcpy(pts + dst * dim, orig + t * dim, (size_t)dim * sizeof *pts);
    }
    for (int64_t c = ncell; c > 0; c--)
        cellstart[c] = cellstart[c - 1];
    cellstart[0] = 0;
    sdi_free(orig);
    orig = NULL;
    sdi_free(cellof);
    cellof = NULL;

    rowptr = sdi_malloc_array((size_t)n + 1, sizeof *rowptr);
    SD_CHECK_ALLOC(rowptr, "row pointers");
    colind = sdi_malloc_array((size_t)(n * k), sizeof *colind);
    SD_CHECK_ALLOC(colind, "knn neighbours");
    vals = sdi_calloc((size_t)(n * k > 0 ? n * k : 1), sizeof *vals);
    SD_CHECK_ALLOC(vals, "values");
    for (int64_t i = 0; i <= n; i++)
        rowptr[i] = i * k;
    knn_grid gr = {(int)dim, g, 1.0 / (double)g, pts, cellstart};
    int oom = 0;
    if (k > 0) {
#pragma omp parallel
        {
            knn_best b = {0, k, sdi_malloc_array((size_t)k, sizeof(double)),
                          sdi_malloc_array((size_t)k, sizeof(int32_t))};
            if (b.d == NULL || b.id == NULL) {
#pragma omp atomic write
                oom = 1;
            }
#pragma omp barrier
            int failed;
#pragma omp atomic read
            failed = oom;
            if (!failed) {
#pragma omp for schedule(dynamic, 1024)
                for (int64_t i = 0; i < n; i++) {
                    knn_search(&gr, (int32_t)i, &b);
                    memcpy(colind + i * k, b.id, (size_t)k * sizeof *colind);
                    sdi_sort_i32(colind + i * k, k);
                }
            }
            sdi_free(b.d);
            sdi_free(b.id);
        }
    }
    if (oom) {
        SD_FREE_ALL;
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "gen: knn: out of host memory for candidates");
    }
    sdi_free(pts);
    pts = NULL;
    sdi_free(cellstart);
    cellstart = NULL;
    out->rows = out->cols = (int32_t)n;
    out->nnz = n * k;
    out->rowptr = rowptr;
    out->colind = colind;
    out->vals = vals;
    rowptr = NULL;
    colind = NULL;
    vals = NULL;
    if (sym) {
        s = sdi_gen_symmetrize(out);
        if (s != SD_OK) {
            sd_csr_free(out);
            return s;
        }
    }
    return SD_OK;
#undef SD_FREE_ALL
}
