/* src/formats/fmt_csr.c: the CSR-based kinds: CSR with 32-bit row pointers and 16-bit
 * column deltas, CSR-Adaptive row blocks, and merge-path tiles. */
#include <limits.h>
#include <string.h>

#include "formats.h"

#define PAD8(n) (((n) + 7) & ~(int64_t)7)

static int64_t rowlen(const sd_csr *a, int64_t i) { return a->rowptr[i + 1] - a->rowptr[i]; }

static sd_status check_csr_input(const sd_csr *a, const char *what)
{
    if (a == NULL || a->rowptr == NULL || (a->nnz > 0 && (a->colind == NULL || a->vals == NULL)))
        return SDI_ERR(SD_ERR_INVALID_ARG, "%s: matrix or its arrays are NULL", what);
    if (a->rows < 0 || a->cols < 0 || a->nnz < 0 || a->rowptr[a->rows] != a->nnz)
        return SDI_ERR(SD_ERR_INVALID_ARG, "%s: inconsistent sizes (rows %d, nnz %lld)", what,
                       a->rows, (long long)a->nnz);
    return SD_OK;
}

int sdi_fmt_colc_fits(const sd_csr *a, int colc_shift)
{
    if (colc_shift < 0 || colc_shift > 30)
        return 0;
    const int64_t g = (int64_t)1 << colc_shift;
    int ok = 1;
#pragma omp parallel for schedule(static) reduction(&& : ok)
    for (int64_t r0 = 0; r0 < a->rows; r0 += g) {
        int64_t r1 = r0 + g < a->rows ? r0 + g : a->rows;
        int32_t lo = INT32_MAX, hi = -1;
        for (int64_t i = r0; i < r1; i++) {
            if (rowlen(a, i) == 0)
                continue;
            int32_t f = a->colind[a->rowptr[i]], l = a->colind[a->rowptr[i + 1] - 1];
            lo = f < lo ? f : lo;
            hi = l > hi ? l : hi;
        }
        if (hi >= 0 && (int64_t)hi - lo > 65535)
            ok = 0;
    }
    return ok;
}

/* Appends rowptr, colind (or colbase + deltas) and vals to f. */
static sd_status add_csr_arrays(sdi_devfmt *f, const sd_csr *a, const sdi_csr_opts *o)
{
    int32_t *rp32 = NULL, *colbase = NULL;
    uint16_t *delta = NULL;
#undef SD_FREE_ALL
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(rp32);                                                                    \
        sdi_free(colbase);                                                                 \
        sdi_free(delta);                                                                   \
    } while (0)
    f->rp32 = o != NULL && o->rp32;
    f->colc = o != NULL && o->colc;
    f->colc_shift = f->colc ? o->colc_shift : 0;
    const int64_t nnz = a->nnz, rows = a->rows;
    if (f->rp32) {
        if (nnz > INT32_MAX)
            return SDI_ERR(SD_ERR_UNSUPPORTED,
                           "32-bit row pointers cannot hold %lld nonzeros", (long long)nnz);
        rp32 = sdi_malloc_array((size_t)rows + 1, sizeof *rp32);
        SD_CHECK_ALLOC(rp32, "32-bit row pointers");
#pragma omp parallel for schedule(static)
        for (int64_t i = 0; i <= rows; i++)
            rp32[i] = (int32_t)a->rowptr[i];
        sd_status s = sdi_format_add(f, "rowptr", rp32, rows + 1, rows + 1, 4, SDI_ROLE_META, 1);
        rp32 = NULL; /* owned by f from here, even on failure */
        SD_TRY(s);
    } else {
        SD_TRY(sdi_format_add(f, "rowptr", a->rowptr, rows + 1, rows + 1, 8, SDI_ROLE_META, 0));
    }
    if (f->colc) {
        if (f->colc_shift < 0 || f->colc_shift > 30)
            return SDI_ERR(SD_ERR_INVALID_ARG, "column delta group shift %d out of [0, 30]",
                           f->colc_shift);
        const int64_t g = (int64_t)1 << f->colc_shift;
        const int64_t ngroups = (rows + g - 1) / g;
        colbase = sdi_malloc_array((size_t)(ngroups > 0 ? ngroups : 1), sizeof *colbase);
        SD_CHECK_ALLOC(colbase, "column bases");
        delta = sdi_calloc((size_t)PAD8(nnz > 0 ? nnz : 1), sizeof *delta);
        SD_CHECK_ALLOC(delta, "16-bit column deltas");
        int64_t bad = -1;
#pragma omp parallel for schedule(static)
        for (int64_t gi = 0; gi < ngroups; gi++) {
            int64_t r0 = gi * g, r1 = r0 + g < rows ? r0 + g : rows;
            int32_t lo = INT32_MAX;
            for (int64_t i = r0; i < r1; i++)
                if (rowlen(a, i) > 0 && a->colind[a->rowptr[i]] < lo)
                    lo = a->colind[a->rowptr[i]];
            if (lo == INT32_MAX)
                lo = 0;
            colbase[gi] = lo;
            for (int64_t k = a->rowptr[r0]; k < a->rowptr[r1]; k++) {
                int64_t d = (int64_t)a->colind[k] - lo;
                if (d > 65535) {
#pragma omp critical(sdi_colc_bad)
                    if (bad < 0 || gi < bad)
                        bad = gi;
                    break;
                }
                delta[k] = (uint16_t)d;
            }
        }
        if (bad >= 0) {
            SD_FREE_ALL;
            return SDI_ERR(SD_ERR_UNSUPPORTED,
                           "16-bit column deltas: rows %lld..%lld span more than 65536 columns",
                           (long long)(bad * g), (long long)((bad + 1) * g - 1));
        }
        sd_status s = sdi_format_add(f, "colbase", colbase, ngroups, ngroups, 4, SDI_ROLE_META, 1);
        colbase = NULL;
        if (s == SD_OK)
            s = sdi_format_add(f, "colind", delta, PAD8(nnz), nnz, 2, SDI_ROLE_META, 1);
        delta = NULL;
        SD_TRY(s);
    } else {
        SD_TRY(sdi_format_add(f, "colind", a->colind, PAD8(nnz), nnz, 4, SDI_ROLE_META, 0));
    }
    SD_TRY(sdi_format_add(f, "vals", a->vals, PAD8(nnz), nnz, 4, SDI_ROLE_VALUE, 0));
    return SD_OK;
#undef SD_FREE_ALL
}

static void init_format(sdi_devfmt *f, int kind, const sd_csr *a)
{
    memset(f, 0, sizeof *f);
    f->kind = kind;
    f->rows = a->rows;
    f->cols = a->cols;
    f->nnz = a->nnz;
    f->slots = a->nnz;
}

sd_status sdi_fmt_csr(const sd_csr *a, const sdi_csr_opts *o, sdi_devfmt *out)
{
    if (out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "csr format: out is NULL");
    memset(out, 0, sizeof *out);
    sd_status s = check_csr_input(a, "csr format");
    if (s != SD_OK)
        return s;
    init_format(out, SDI_FMT_CSR, a);
    s = add_csr_arrays(out, a, o);
    if (s != SD_OK)
        sdi_format_free(out);
    return s;
}

/* ------------------------------------------------------------------ row blocks */
sd_status sdi_fmt_rowblocks(const sd_csr *a, const sdi_csr_opts *o, int cap, int max_rows,
                            int piece, sdi_devfmt *out)
{
    int32_t *items = NULL, *lrbase = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(items);                                                                   \
        sdi_free(lrbase);                                                                  \
        sdi_format_free(out);                                                              \
    } while (0)
    if (out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "row blocks: out is NULL");
    memset(out, 0, sizeof *out);
    SD_TRY(check_csr_input(a, "row blocks"));
    if (cap < 1 || max_rows < 1 || piece < 1)
        return SDI_ERR(SD_ERR_INVALID_ARG, "row blocks: cap %d, max_rows %d, piece %d must be >= 1",
                       cap, max_rows, piece);
    init_format(out, SDI_FMT_ROWBLOCKS, a);
    out->rb_cap = cap;
    out->rb_max_rows = max_rows;
    out->rb_piece = piece;
    SD_TRY(add_csr_arrays(out, a, o));
    /* Count first: items, long rows, pieces. */
    int64_t nitems = 0, nlong = 0, npieces = 0;
    for (int64_t r = 0; r < a->rows;) {
        int64_t len = rowlen(a, r);
        if (len > cap) {
            int64_t np = (len + piece - 1) / piece;
            nitems += np;
            npieces += np;
            nlong++;
            r++;
            continue;
        }
        int64_t nz = 0, nr = 0;
        while (r < a->rows && nr < max_rows && nz + rowlen(a, r) <= cap) {
            nz += rowlen(a, r);
            nr++;
            r++;
        }
        nitems++;
    }
    if (nitems > INT32_MAX / 4 || npieces > INT32_MAX)
        return SDI_ERR(SD_ERR_UNSUPPORTED, "row blocks: %lld items exceed the 32-bit item table",
                       (long long)nitems);
    items = sdi_malloc_array((size_t)(nitems > 0 ? nitems : 1) * 4, sizeof *items);
    SD_CHECK_ALLOC(items, "row block items");
    lrbase = sdi_malloc_array((size_t)nlong + 1, sizeof *lrbase);
    SD_CHECK_ALLOC(lrbase, "long-row piece offsets");
    int64_t it = 0, lid = 0;
    lrbase[0] = 0;
    for (int64_t r = 0; r < a->rows;) {
        int64_t len = rowlen(a, r);
        if (len > cap) {
            int64_t np = (len + piece - 1) / piece;
            for (int64_t p = 0; p < np; p++) {
                items[4 * it + 0] = (int32_t)r;
                items[4 * it + 1] = 0;
                items[4 * it + 2] = (int32_t)p;
                items[4 * it + 3] = (int32_t)lid;
                it++;
            }
            lrbase[lid + 1] = (int32_t)(lrbase[lid] + np);
            lid++;
            r++;
            continue;
        }
        int64_t r0 = r, nz = 0, nr = 0;
        while (r < a->rows && nr < max_rows && nz + rowlen(a, r) <= cap) {
            nz += rowlen(a, r);
            nr++;
            r++;
        }
        items[4 * it + 0] = (int32_t)r0;
        items[4 * it + 1] = (int32_t)nr;
        items[4 * it + 2] = 0;
        items[4 * it + 3] = 0;
        it++;
    }
    out->rb_items = nitems;
    out->rb_long = nlong;
    out->rb_pieces = npieces;
    sd_status s = sdi_format_add(out, "items", items, nitems * 4, nitems * 4, 4, SDI_ROLE_META, 1);
    items = NULL;
    SD_TRY(s);
    s = sdi_format_add(out, "lrbase", lrbase, nlong + 1, nlong + 1, 4, SDI_ROLE_META, 1);
    lrbase = NULL;
    SD_TRY(s);
    SD_TRY(sdi_format_add(out, "lrpart", NULL, npieces, 0, 4, SDI_ROLE_WORKSPACE, 0));
    SD_TRY(sdi_format_add(out, "lrcount", NULL, nlong, 0, 4, SDI_ROLE_WORKSPACE, 0));
    return SD_OK;
#undef SD_FREE_ALL
}

/* ------------------------------------------------------------------ merge path */
void sdi_merge_path_search(const sd_csr *a, int64_t d, int32_t *row, int64_t *nz)
{
    int64_t lo = d - a->nnz > 0 ? d - a->nnz : 0;
    int64_t hi = d < a->rows ? d : a->rows;
    while (lo < hi) {
        int64_t pivot = lo + (hi - lo) / 2;
        /* Row end `pivot` comes before nonzero d − pivot − 1 when it is ≤ that index. */
        if (a->rowptr[pivot + 1] <= d - pivot - 1)
            lo = pivot + 1;
        else
            hi = pivot;
    }
    *row = (int32_t)lo;
    *nz = d - lo;
}

sd_status sdi_fmt_merge(const sd_csr *a, const sdi_csr_opts *o, int tile, int tiles_per_cta,
                        sdi_devfmt *out)
{
    int32_t *trow = NULL;
    int64_t *tnz = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(trow);                                                                    \
        sdi_free(tnz);                                                                     \
        sdi_format_free(out);                                                              \
    } while (0)
    if (out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "merge path: out is NULL");
    memset(out, 0, sizeof *out);
    SD_TRY(check_csr_input(a, "merge path"));
    if (tile < 1 || tiles_per_cta < 1)
        return SDI_ERR(SD_ERR_INVALID_ARG, "merge path: tile %d and tiles per CTA %d must be >= 1",
                       tile, tiles_per_cta);
    init_format(out, SDI_FMT_MERGE, a);
    out->mp_tile = tile;
    out->mp_tiles_per_cta = tiles_per_cta;
    SD_TRY(add_csr_arrays(out, a, o));
    const int64_t total = (int64_t)a->rows + a->nnz;
    const int64_t ntiles = (total + tile - 1) / tile;
    const int64_t nctas = (ntiles + tiles_per_cta - 1) / tiles_per_cta;
    if (nctas > INT32_MAX)
        return SDI_ERR(SD_ERR_UNSUPPORTED, "merge path: %lld CTAs exceed the grid",
                       (long long)nctas);
    trow = sdi_malloc_array((size_t)ntiles + 1, sizeof *trow);
    SD_CHECK_ALLOC(trow, "merge-path tile rows");
    tnz = sdi_malloc_array((size_t)ntiles + 1, sizeof *tnz);
    SD_CHECK_ALLOC(tnz, "merge-path tile nonzeros");
#pragma omp parallel for schedule(static)
    for (int64_t k = 0; k <= ntiles; k++) {
        int64_t d = k * tile < total ? k * tile : total;
        sdi_merge_path_search(a, d, &trow[k], &tnz[k]);
    }
    out->mp_tiles = ntiles;
    out->mp_ctas = nctas;
    sd_status s = sdi_format_add(out, "tilerow", trow, ntiles + 1, ntiles + 1, 4, SDI_ROLE_META, 1);
    trow = NULL;
    SD_TRY(s);
    s = sdi_format_add(out, "tilenz", tnz, ntiles + 1, ntiles + 1, 8, SDI_ROLE_META, 1);
    tnz = NULL;
    SD_TRY(s);
    SD_TRY(sdi_format_add(out, "carry_row", NULL, nctas, 0, 4, SDI_ROLE_WORKSPACE, 0));
    SD_TRY(sdi_format_add(out, "carry_val", NULL, nctas, 0, 4, SDI_ROLE_WORKSPACE, 0));
    SD_TRY(sdi_format_add(out, "counter", NULL, 1, 0, 4, SDI_ROLE_WORKSPACE, 0));
    return SD_OK;
#undef SD_FREE_ALL
}
