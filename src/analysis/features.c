/* src/analysis/features.c: the table of the 36 features, the structural scan
 * (intrinsic and representation-induced features), row-length distributions and the
 * driver that fills sd_features. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"

/* ------------------------------------------------------------------ the table
 * The one table of names, groups and definitions, in the order of docs/ARCHITECTURE.md
 * "Structural features" (the model reads
 * values[] by position). r_i = entries of row i, c_j = entries of column j. Every ratio
 * whose denominator is 0 is 0, so an empty or 0×0 matrix has all-zero features. */
static const sdi_feature_info k_features[SD_NUM_FEATURES] = {
    {"rows", SDI_FGROUP_INTRINSIC, "number of rows"},
    {"cols", SDI_FGROUP_INTRINSIC, "number of columns"},
    {"nnz", SDI_FGROUP_INTRINSIC, "stored entries (explicit zeros included)"},
    {"density", SDI_FGROUP_INTRINSIC, "nnz / (rows*cols); 0 when rows*cols = 0"},
    {"row_mean", SDI_FGROUP_INTRINSIC, "mean row length nnz / rows; 0 when rows = 0"},
    {"row_max", SDI_FGROUP_INTRINSIC, "longest row (entries)"},
    {"row_cv", SDI_FGROUP_INTRINSIC,
     "population std / mean of r_i over all rows; 0 when the mean is 0"},
    {"row_q25", SDI_FGROUP_INTRINSIC,
     "r at nearest rank ceil(rows/4) over all rows (empty included) / mean r; 0 when mean is 0"},
    {"row_q50", SDI_FGROUP_INTRINSIC,
     "r at nearest rank ceil(rows/2) over all rows (empty included) / mean r; 0 when mean is 0"},
    {"row_q75", SDI_FGROUP_INTRINSIC,
     "r at nearest rank ceil(3*rows/4) over all rows (empty included) / mean r; 0 when mean is 0"},
    {"empty_row_frac", SDI_FGROUP_INTRINSIC, "rows without entries / rows; 0 when rows = 0"},
    {"col_max", SDI_FGROUP_INTRINSIC,
     "max c_j / mean c (nnz / cols, over all columns); 0 when nnz = 0"},
    {"col_cv", SDI_FGROUP_INTRINSIC,
     "population std / mean of c_j over all columns; 0 when nnz = 0"},
    {"row_span", SDI_FGROUP_INTRINSIC,
     "mean over non-empty rows of (last - first column + 1) / cols; 0 when all rows are empty"},
    {"col_gap", SDI_FGROUP_INTRINSIC,
     "mean c[k+1] - c[k] over consecutive column pairs within rows; 0 when no row has 2 entries"},
    {"diag_frac", SDI_FGROUP_INTRINSIC,
     "entries with i = j / min(rows, cols); 0 when min(rows, cols) = 0"},
    {"dense_tile_frac", SDI_FGROUP_INTRINSIC,
     "16x16 tiles (i/16, j/16) holding >= 32 entries / occupied tiles; 0 when nnz = 0"},
    {"dense_tile_nnz_frac", SDI_FGROUP_INTRINSIC,
     "entries inside dense 16x16 tiles (>= 32 entries) / nnz; 0 when nnz = 0"},
    {"rho_ell", SDI_FGROUP_REPRESENTATION, "ELL slots / nnz = rows * row_max / nnz; 0 when nnz = 0"},
    {"rho_sell16", SDI_FGROUP_REPRESENTATION,
     "sum over slices of 16 consecutive rows (unsorted, last may be shorter) of |s|*max r / nnz"},
    {"rho_sell32", SDI_FGROUP_REPRESENTATION,
     "sum over slices of 32 consecutive rows (unsorted, last may be shorter) of |s|*max r / nnz"},
    {"rho_sell512", SDI_FGROUP_REPRESENTATION,
     "sum over slices of 512 consecutive rows (unsorted, last may be shorter) of |s|*max r / nnz"},
    {"rho_bsr4", SDI_FGROUP_REPRESENTATION,
     "BSR-4 slots / nnz = 16 * occupied 4x4 blocks / nnz; 0 when nnz = 0"},
    {"rho_bsr8", SDI_FGROUP_REPRESENTATION,
     "BSR-8 slots / nnz = 64 * occupied 8x8 blocks / nnz; 0 when nnz = 0"},
    {"rho_bsr16", SDI_FGROUP_REPRESENTATION,
     "BSR-16 slots / nnz = 256 * occupied 16x16 blocks / nnz; 0 when nnz = 0"},
    {"rho_bell16", SDI_FGROUP_REPRESENTATION,
     "Blocked-ELL-16 slots / nnz = ceil(rows/16) * (max occupied 16x16 blocks in a block row) "
     "* 256 / nnz; 0 when nnz = 0"},
    {"u_total", SDI_FGROUP_OPERATOR,
     "SpGEMM products sum u(i), u(i) = sum over k in A[i,:] of nnz(B[k,:]), B = A if square "
     "else A^T; 0 unless spgemm"},
    {"u_max", SDI_FGROUP_OPERATOR, "max u(i); 0 unless spgemm"},
    {"u_p95", SDI_FGROUP_OPERATOR,
     "u(i) at nearest rank ceil(0.95*rows) over all rows; 0 unless spgemm"},
    {"u_cv", SDI_FGROUP_OPERATOR,
     "population std / mean of u(i) over all rows; 0 when u_total = 0 or not spgemm"},
    {"ut_total", SDI_FGROUP_OPERATOR,
     "products of A*A^T: sum over i of sum over k in A[i,:] of c_k (= u_total when A is not "
     "square); 0 unless spgemm"},
    {"ut_cv", SDI_FGROUP_OPERATOR,
     "population std / mean of the A*A^T row products; 0 when ut_total = 0 or not spgemm"},
    {"fit_512", SDI_FGROUP_OPERATOR,
     "fraction of rows with u(i) <= 512; 0 when rows = 0 or not spgemm"},
    {"fit_4k", SDI_FGROUP_OPERATOR,
     "fraction of rows with u(i) <= 4096; 0 when rows = 0 or not spgemm"},
    {"fit_32k", SDI_FGROUP_OPERATOR,
     "fraction of rows with u(i) <= 32768; 0 when rows = 0 or not spgemm"},
    {"gamma", SDI_FGROUP_OPERATOR,
     "u_total / nnz(C), nnz(C) exact when u_total + 8*nnz <= 2e8, else a stratified "
     "row-sample estimate; 0 when nnz(C) = 0 or not spgemm"},
};

const sdi_feature_info *sdi_feature_get(int i)
{
    return (i >= 0 && i < SD_NUM_FEATURES) ? &k_features[i] : NULL;
}

int sdi_feature_index(const char *name)
{
    if (name == NULL)
        return -1;
    for (int i = 0; i < SD_NUM_FEATURES; i++)
        if (strcmp(k_features[i].name, name) == 0)
            return i;
    return -1;
}

const char *sdi_feature_group_name(sdi_feature_group g)
{
    switch (g) {
    case SDI_FGROUP_INTRINSIC: return "intrinsic";
    case SDI_FGROUP_REPRESENTATION: return "representation-induced";
    case SDI_FGROUP_OPERATOR: return "operator-induced";
    }
    return "unknown";
}

/* ------------------------------------------------------------------ length distributions */

static int cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

/* value i: vals[i] when given, else the length of row i. */
static inline int64_t dist_value(const int64_t *rowptr, const int64_t *vals, int64_t i)
{
    return vals != NULL ? vals[i] : rowptr[i + 1] - rowptr[i];
}

static sd_status dist_build(const int64_t *rowptr, const int64_t *vals, int64_t n,
                            sdi_len_dist *out)
{
    int nt = omp_get_max_threads();
    int64_t *th = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(th);                                                                      \
        sdi_len_dist_free(out);                                                            \
    } while (0)
    memset(out, 0, sizeof *out);
    out->n = n;
    out->hist = sdi_calloc(SDI_LEN_HIST, sizeof *out->hist);
    SD_CHECK_ALLOC(out->hist, "a length histogram");
    /* Per-thread histograms (small) merged afterwards: no atomics in the hot loop. */
    th = sdi_calloc((size_t)nt * (SDI_LEN_HIST + 3), sizeof *th);
    SD_CHECK_ALLOC(th, "per-thread length histograms");
#pragma omp parallel num_threads(nt)
    {
        int64_t *h = th + (size_t)omp_get_thread_num() * (SDI_LEN_HIST + 3);
        int64_t nbig = 0, sum = 0, max = 0;
#pragma omp for schedule(static)
        for (int64_t i = 0; i < n; i++) {
            int64_t v = dist_value(rowptr, vals, i);
            if (v < SDI_LEN_HIST)
                h[v]++;
            else
                nbig++;
            sum += v;
            if (v > max)
                max = v;
        }
        h[SDI_LEN_HIST] = nbig;
        h[SDI_LEN_HIST + 1] = sum;
        h[SDI_LEN_HIST + 2] = max;
    }
    for (int t = 0; t < nt; t++) {
        const int64_t *h = th + (size_t)t * (SDI_LEN_HIST + 3);
        for (int v = 0; v < SDI_LEN_HIST; v++)
            out->hist[v] += h[v];
        out->nbig += h[SDI_LEN_HIST];
        out->sum += h[SDI_LEN_HIST + 1];
        if (h[SDI_LEN_HIST + 2] > out->max)
            out->max = h[SDI_LEN_HIST + 2];
    }
    sdi_free(th);
    th = NULL;
    if (out->nbig > 0) {
        /* At most sum / SDI_LEN_HIST values: a sequential gather and a sort are cheap. */
        out->big = sdi_malloc_array((size_t)out->nbig, sizeof *out->big);
        SD_CHECK_ALLOC(out->big, "the long-row list");
        int64_t m = 0;
        for (int64_t i = 0; i < n; i++) {
            int64_t v = dist_value(rowptr, vals, i);
            if (v >= SDI_LEN_HIST)
                out->big[m++] = v;
        }
        qsort(out->big, (size_t)m, sizeof *out->big, cmp_i64);
    }
    return SD_OK;
#undef SD_FREE_ALL
}

sd_status sdi_len_dist_of_rows(const int64_t *rowptr, int32_t rows, sdi_len_dist *out)
{
    return dist_build(rowptr, NULL, rows, out);
}

sd_status sdi_len_dist_of_values(const int64_t *v, int64_t n, sdi_len_dist *out)
{
    return dist_build(NULL, v, n, out);
}

void sdi_len_dist_free(sdi_len_dist *d)
{
    if (d == NULL)
        return;
    sdi_free(d->hist);
    sdi_free(d->big);
    memset(d, 0, sizeof *d);
}

int64_t sdi_len_dist_kth(const sdi_len_dist *d, int64_t k)
{
    if (d->n == 0 || k < 0)
        return 0;
    if (k >= d->n)
        k = d->n - 1;
    int64_t small = d->n - d->nbig;
    if (k >= small)
        return d->big[k - small];
    int64_t acc = 0;
    for (int v = 0; v < SDI_LEN_HIST; v++) {
        acc += d->hist[v];
        if (k < acc)
            return v;
    }
    return 0; /* unreachable: the histogram holds `small` values */
}

int64_t sdi_len_dist_quantile(const sdi_len_dist *d, int num, int den)
{
    if (d->n == 0)
        return 0;
    return sdi_len_dist_kth(d, sdi_nearest_rank(d->n, num, den) - 1);
}

double sdi_len_dist_sq_dev(const sdi_len_dist *d, double mean)
{
    double s = 0.0;
    for (int v = 0; v < SDI_LEN_HIST; v++)
        if (d->hist[v] != 0)
            s += (double)d->hist[v] * ((double)v - mean) * ((double)v - mean);
    for (int64_t k = 0; k < d->nbig; k++)
        s += ((double)d->big[k] - mean) * ((double)d->big[k] - mean);
    return s;
}

int64_t sdi_len_dist_top_sum(const sdi_len_dist *d, int64_t m)
{
    int64_t s = 0;
    for (int64_t k = d->nbig - 1; k >= 0 && m > 0; k--, m--)
        s += d->big[k];
    for (int v = SDI_LEN_HIST - 1; v >= 0 && m > 0; v--) {
        int64_t take = d->hist[v] < m ? d->hist[v] : m;
        s += take * v;
        m -= take;
    }
    return s;
}

/* ------------------------------------------------------------------ the structural scan */

/* Counters of one thread's share of the scan; all integers, so the result does not
 * depend on the number of threads. */
typedef struct {
    int64_t span_sum;  /* Σ (last − first + 1) over non-empty rows */
    int64_t gap_sum;   /* Σ (last − first) = Σ of consecutive differences */
    int64_t pairs;     /* Σ (r_i − 1) over non-empty rows */
    int64_t nonempty;
    int64_t diag;
    int64_t occ4, occ8, occ16; /* occupied b×b blocks */
    int64_t dense16, dense_nnz; /* 16×16 tiles with ≥ 32 entries, entries in them */
    int64_t bell_max;  /* most occupied 16-blocks in one 16-row block row */
    char pad[64];      /* keep threads' counters on separate cache lines */
} scan_acc;

#define DENSE_TILE_MIN 32

static inline int has_column(const int32_t *c, int64_t b, int64_t e, int32_t j)
{
    while (b < e) {
        int64_t m = b + (e - b) / 2;
        if (c[m] < j)
            b = m + 1;
        else if (c[m] > j)
            e = m;
        else
            return 1;
    }
    return 0;
}

/* One 16-row block row: per-row counters, column counts, and its block census (one
 * merge of its sorted rows in column order, core/csr_blocks.c) for the occupied 4×4, 8×8
 * and 16×16 blocks and the dense tiles. */
static void scan_block_row(const sd_csr *a, int64_t bi, scan_acc *acc, int64_t *cc, int cc_atomic,
                           int32_t *cc_private, int64_t *mx16)
{
    const int64_t *rp = a->rowptr;
    const int32_t *ci = a->colind;
    int32_t r0 = (int32_t)(bi * 16);
    int32_t r1 = (a->rows - r0 < 16) ? a->rows : r0 + 16;
    int64_t bmax = 0;
    for (int32_t i = r0; i < r1; i++) {
        int64_t b = rp[i], e = rp[i + 1], len = e - b;
        if (len > bmax)
            bmax = len;
        if (len == 0)
            continue;
        int32_t first = ci[b], last = ci[e - 1];
        acc->nonempty++;
        acc->span_sum += (int64_t)last - first + 1;
        acc->gap_sum += (int64_t)last - first;
        acc->pairs += len - 1;
        if (i >= first && i <= last && has_column(ci, b, e, i))
            acc->diag++;
    }
    mx16[bi] = bmax;
    /* Column counts over the block row's entries (one contiguous range). */
    const int64_t kb = rp[r0], ke = rp[r1];
    if (cc_private != NULL) {
        for (int64_t k = kb; k < ke; k++)
            cc_private[ci[k]]++;
    } else if (cc_atomic) {
        for (int64_t k = kb; k < ke; k++)
            __atomic_fetch_add(&cc[ci[k]], 1, __ATOMIC_RELAXED);
    } else {
        for (int64_t k = kb; k < ke; k++)
            cc[ci[k]]++;
    }
    sdi_block_census c;
    sdi_csr_block_census(a, bi, DENSE_TILE_MIN, &c);
    acc->occ4 += c.occ[2];
    acc->occ8 += c.occ[3];
    acc->occ16 += c.occ[4];
    acc->dense16 += c.dense_tiles;
    acc->dense_nnz += c.dense_nnz;
    if (c.occ[4] > acc->bell_max)
        acc->bell_max = c.occ[4];
}

/* Column counts: private 32-bit counters per thread (summed afterwards) when they fit in
 * PRIVATE_BYTES_MAX, else shared 64-bit counters with atomic increments. Atomics on
 * scattered addresses serialise on their cache misses (a locked instruction waits for
 * its line): ≈ 50 ns per entry on the 2-core dev box against ≈ 5 ns for private ones. */
#define PRIVATE_BYTES_MAX ((int64_t)512 << 20)

static sd_status structural_scan(const sd_csr *a, scan_acc *tot, int64_t *cc, int64_t *mx16)
{
    int nt = omp_get_max_threads();
    int64_t nbr = ((int64_t)a->rows + 15) / 16;
    scan_acc *accs = NULL;
    int32_t *priv = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(accs);                                                                    \
        sdi_free(priv);                                                                    \
    } while (0)
    accs = sdi_calloc((size_t)nt, sizeof *accs);
    SD_CHECK_ALLOC(accs, "the scan's per-thread counters");
    if (nt > 1 && (int64_t)a->cols * nt * (int64_t)sizeof *priv <= PRIVATE_BYTES_MAX)
        priv = sdi_calloc((size_t)a->cols * (size_t)nt, sizeof *priv); /* NULL: atomics */
    const int cc_atomic = nt > 1 && priv == NULL;
#pragma omp parallel num_threads(nt)
    {
        int t = omp_get_thread_num();
        int32_t *mine = (priv != NULL) ? priv + (size_t)t * (size_t)a->cols : NULL;
#pragma omp for schedule(dynamic, 256)
        for (int64_t bi = 0; bi < nbr; bi++)
            scan_block_row(a, bi, &accs[t], cc, cc_atomic, mine, mx16);
        if (priv != NULL) {
#pragma omp for schedule(static)
            for (int64_t j = 0; j < a->cols; j++) {
                int64_t sum = 0;
                for (int u = 0; u < nt; u++)
                    sum += priv[(size_t)u * (size_t)a->cols + (size_t)j];
                cc[j] = sum;
            }
        }
    }
    memset(tot, 0, sizeof *tot);
    for (int t = 0; t < nt; t++) {
        tot->span_sum += accs[t].span_sum;
        tot->gap_sum += accs[t].gap_sum;
        tot->pairs += accs[t].pairs;
        tot->nonempty += accs[t].nonempty;
        tot->diag += accs[t].diag;
        tot->occ4 += accs[t].occ4;
        tot->occ8 += accs[t].occ8;
        tot->occ16 += accs[t].occ16;
        tot->dense16 += accs[t].dense16;
        tot->dense_nnz += accs[t].dense_nnz;
        if (accs[t].bell_max > tot->bell_max)
            tot->bell_max = accs[t].bell_max;
    }
    SD_FREE_ALL;
    return SD_OK;
#undef SD_FREE_ALL
}

/* ρ_SELL(C) from the 16-row slice maxima (C a multiple of 16). */
static double sell_slots(const int64_t *mx16, int64_t nbr, int32_t rows, int c)
{
    int per = c / 16;
    double slots = 0.0;
    for (int64_t s = 0; s < nbr; s += per) {
        int64_t mx = 0;
        for (int64_t k = s; k < s + per && k < nbr; k++)
            if (mx16[k] > mx)
                mx = mx16[k];
        int64_t first = s * 16, last = (s + per) * 16;
        if (last > rows)
            last = rows;
        slots += (double)(last - first) * (double)mx;
    }
    return slots;
}

/* Column statistics in fixed chunks (deterministic whatever the thread count). */
#define COL_CHUNK 16384

static sd_status column_stats(const int64_t *cc, int32_t cols, double mean, int64_t *max_out,
                              double *sq_out)
{
    int64_t nch = ((int64_t)cols + COL_CHUNK - 1) / COL_CHUNK;
    double *sq = sdi_calloc((size_t)(nch > 0 ? nch : 1), sizeof *sq);
    if (sq == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for column statistics");
    int64_t mx = 0;
#pragma omp parallel for schedule(static) reduction(max : mx)
    for (int64_t ch = 0; ch < nch; ch++) {
        int64_t j1 = (ch + 1) * COL_CHUNK < cols ? (ch + 1) * COL_CHUNK : cols;
        double s = 0.0;
        for (int64_t j = ch * COL_CHUNK; j < j1; j++) {
            double d = (double)cc[j] - mean;
            s += d * d;
            if (cc[j] > mx)
                mx = cc[j];
        }
        sq[ch] = s;
    }
    double s = 0.0;
    for (int64_t ch = 0; ch < nch; ch++)
        s += sq[ch];
    sdi_free(sq);
    *max_out = mx;
    *sq_out = s;
    return SD_OK;
}

static inline double ratio(double num, double den) { return den != 0.0 ? num / den : 0.0; }

sdi_analyze_opts sdi_analyze_opts_default(void)
{
    sdi_analyze_opts o;
    memset(&o, 0, sizeof o);
    o.spgemm = sdi_spgemm_opts_default();
    return o;
}

sd_status sdi_features_compute(const sd_csr *a, sd_op op, const sdi_analyze_opts *opts,
                               sd_features *out, sdi_analyze_info *info)
{
    int64_t *cc = NULL, *mx16 = NULL;
    sdi_len_dist dist;
    memset(&dist, 0, sizeof dist);
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(cc);                                                                      \
        sdi_free(mx16);                                                                    \
        sdi_len_dist_free(&dist);                                                          \
        memset(out, 0, sizeof *out);                                                       \
        if (info != NULL)                                                                  \
            memset(info, 0, sizeof *info);                                                 \
    } while (0)
    memset(out, 0, sizeof *out);
    if (info != NULL)
        memset(info, 0, sizeof *info);
    sdi_analyze_opts defaults = sdi_analyze_opts_default();
    if (opts == NULL)
        opts = &defaults;
    double t0 = sdi_now();
    const int32_t rows = a->rows, cols = a->cols;
    const int64_t nnz = a->nnz;
    int64_t nbr = ((int64_t)rows + 15) / 16;
    cc = sdi_calloc((size_t)cols + 1, sizeof *cc);
    SD_CHECK_ALLOC(cc, "column counters");
    mx16 = sdi_calloc((size_t)nbr + 1, sizeof *mx16);
    SD_CHECK_ALLOC(mx16, "slice maxima");
    scan_acc s;
    SD_TRY(structural_scan(a, &s, cc, mx16));
    double t_scan = sdi_now();
    SD_TRY(sdi_len_dist_of_rows(a->rowptr, rows, &dist));
    double t_dist = sdi_now();

    double *v = out->values;
    double dn = (double)nnz, dr = (double)rows, dc = (double)cols;
    double mean_r = ratio(dn, dr), mean_c = ratio(dn, dc);
    v[SDI_F_ROWS] = dr;
    v[SDI_F_COLS] = dc;
    v[SDI_F_NNZ] = dn;
    v[SDI_F_DENSITY] = ratio(dn, dr * dc);
    v[SDI_F_ROW_MEAN] = mean_r;
    v[SDI_F_ROW_MAX] = (double)dist.max;
    v[SDI_F_ROW_CV] = ratio(sqrt(ratio(sdi_len_dist_sq_dev(&dist, mean_r), dr)), mean_r);
    v[SDI_F_ROW_Q25] = ratio((double)sdi_len_dist_quantile(&dist, 1, 4), mean_r);
    v[SDI_F_ROW_Q50] = ratio((double)sdi_len_dist_quantile(&dist, 1, 2), mean_r);
    v[SDI_F_ROW_Q75] = ratio((double)sdi_len_dist_quantile(&dist, 3, 4), mean_r);
    v[SDI_F_EMPTY_ROW_FRAC] = ratio((double)(rows - s.nonempty), dr);
    int64_t cmax = 0;
    double csq = 0.0;
    SD_TRY(column_stats(cc, cols, mean_c, &cmax, &csq));
    v[SDI_F_COL_MAX] = ratio((double)cmax, mean_c);
    v[SDI_F_COL_CV] = ratio(sqrt(ratio(csq, dc)), mean_c);
    v[SDI_F_ROW_SPAN] = ratio((double)s.span_sum / (s.nonempty > 0 ? (double)s.nonempty : 1.0), dc);
    v[SDI_F_COL_GAP] = ratio((double)s.gap_sum, (double)s.pairs);
    v[SDI_F_DIAG_FRAC] = ratio((double)s.diag, (double)(rows < cols ? rows : cols));
    v[SDI_F_DENSE_TILE_FRAC] = ratio((double)s.dense16, (double)s.occ16);
    v[SDI_F_DENSE_TILE_NNZ_FRAC] = ratio((double)s.dense_nnz, dn);

    v[SDI_F_RHO_ELL] = ratio(dr * (double)dist.max, dn);
    v[SDI_F_RHO_SELL16] = ratio(sell_slots(mx16, nbr, rows, 16), dn);
    v[SDI_F_RHO_SELL32] = ratio(sell_slots(mx16, nbr, rows, 32), dn);
    v[SDI_F_RHO_SELL512] = ratio(sell_slots(mx16, nbr, rows, 512), dn);
    v[SDI_F_RHO_BSR4] = ratio(16.0 * (double)s.occ4, dn);
    v[SDI_F_RHO_BSR8] = ratio(64.0 * (double)s.occ8, dn);
    v[SDI_F_RHO_BSR16] = ratio(256.0 * (double)s.occ16, dn);
    v[SDI_F_RHO_BELL16] = ratio((double)nbr * (double)s.bell_max * 256.0, dn);

    sdi_shape_stats shape;
    out->shape_class = sdi_shape_classify(&dist, &shape);
    out->op = op;
    double t1 = sdi_now();
    sdi_log(3, "analysis: scan %.3f s, row lengths %.3f s, columns and the rest %.3f s",
            t_scan - t0, t_dist - t_scan, t1 - t_dist);
    sdi_spgemm_stats sp;
    memset(&sp, 0, sizeof sp);
    if (op == SD_OP_SPGEMM)
        SD_TRY(sdi_spgemm_operator_features(a, cc, &opts->spgemm, v, &sp));
    if (info != NULL) {
        info->spgemm = sp;
        info->shape = shape;
        info->seconds_structure = t1 - t0;
        info->seconds_spgemm = sdi_now() - t1;
    }
    sdi_free(cc);
    sdi_free(mx16);
    sdi_len_dist_free(&dist);
    return SD_OK;
#undef SD_FREE_ALL
}

/* ------------------------------------------------------------------ the input check */

sd_status sdi_analysis_check(const sd_csr *a)
{
    if (a == NULL || a->rows < 0 || a->cols < 0 || a->nnz < 0 || a->rowptr == NULL ||
        (a->nnz > 0 && (a->colind == NULL || a->vals == NULL)) || a->rowptr[0] != 0 ||
        a->rowptr[a->rows] != a->nnz)
        return sdi_csr_check_structure(a); /* fails at once, with its message */
    const int64_t *rp = a->rowptr;
    const int32_t *ci = a->colind;
    int64_t first_bad = a->rows;
    /* Rows checked in parallel; the message comes from the sequential check, which stops
     * at the same (first) offending row. */
#pragma omp parallel for schedule(dynamic, 4096) reduction(min : first_bad)
    for (int64_t i = 0; i < a->rows; i++) {
        int64_t b = rp[i], e = rp[i + 1];
        int bad = (b < 0 || e < b || e > a->nnz);
        for (int64_t k = b; !bad && k < e; k++)
            bad = ci[k] < 0 || ci[k] >= a->cols || (k > b && ci[k] <= ci[k - 1]);
        if (bad && i < first_bad)
            first_bad = i;
    }
    if (first_bad == a->rows)
        return SD_OK;
    sd_status st = sdi_csr_check_structure(a);
    return st != SD_OK ? st
                       : SDI_ERR(SD_ERR_INTERNAL, "row %lld: structure check disagreement",
                                 (long long)first_bad);
}
