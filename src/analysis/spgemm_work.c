/* src/analysis/spgemm_work.c: SpGEMM work: products per row u(i), nnz(C) exact or by
 * stratified row sampling, γ = Σu / nnz(C), and the ten operator-induced features. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"

sdi_spgemm_opts sdi_spgemm_opts_default(void)
{
    sdi_spgemm_opts o;
    memset(&o, 0, sizeof o);
    /* A cost of 2e8 (products + 8 per entry of A) takes ≈ 1 s on one core, ≈ 0.1 s on 16;
     * beyond that a sample costing 2^25 (≈ 0.1–0.3 s on one core) estimates nnz(C) (lp1,
     * the one shared real matrix above 2e8: error 3e-6; forced at 2 % of the exact cost,
     * the 77 real matrices err by 0.87 % median, 7.4 % at the 95th percentile:
     * `bench_features --gamma-error --seeds 5`). A budget in products instead of seconds
     * keeps the features deterministic on every machine. */
    o.entry_cost = 8.0;
    o.exact_max_products = 2e8;
    o.sample_products = 33554432.0;
    o.min_per_stratum = 32;
    o.seed = 0x5d177005eedULL;
    return o;
}

/* ------------------------------------------------------------------ products per row */

double sdi_spgemm_row_work(const sd_csr *a, const int64_t *brp, int64_t *u)
{
    const int64_t *rp = a->rowptr;
    const int32_t *ci = a->colind;
    unsigned __int128 total = 0;
#pragma omp parallel
    {
        unsigned __int128 t = 0;
#pragma omp for schedule(dynamic, 2048)
        for (int64_t i = 0; i < a->rows; i++) {
            int64_t s = 0; /* ≤ r_i · max_k nnz(B[k,:]) < 2^62 */
            for (int64_t k = rp[i]; k < rp[i + 1]; k++) {
                if (k + 8 < rp[i + 1])
                    __builtin_prefetch(&brp[ci[k + 8]]);
                s += brp[ci[k] + 1] - brp[ci[k]];
            }
            u[i] = s;
            t += (unsigned __int128)s;
        }
#pragma omp critical(sdi_spgemm_row_work)
        total += t;
    }
    return (double)total;
}

void sdi_spgemm_output_bound_compute(const sd_csr *a, const sd_csr *b,
                                     sdi_spgemm_output_bound *out)
{
    const int64_t *rp = a->rowptr, *brp = b->rowptr;
    const int32_t *ci = a->colind, *bci = b->colind;
    unsigned __int128 products = 0;
    int64_t lo = 0, hi = 0;
#pragma omp parallel
    {
        unsigned __int128 tp = 0;
        int64_t tlo = 0, thi = 0;
#pragma omp for schedule(dynamic, 2048)
        for (int64_t i = 0; i < a->rows; i++) {
            int64_t u = 0, longest = 0; /* u ≤ r_i · max_k nnz(B[k,:]) < 2^62 */
            int32_t first = INT32_MAX, last = -1;
            for (int64_t p = rp[i]; p < rp[i + 1]; p++) {
                const int32_t k = ci[p];
                const int64_t len = brp[k + 1] - brp[k];
                if (len == 0)
                    continue;
                u += len;
                if (len > longest)
                    longest = len;
                if (bci[brp[k]] < first)
                    first = bci[brp[k]];
                if (bci[brp[k + 1] - 1] > last)
                    last = bci[brp[k + 1] - 1];
            }
            if (u > 0) {
                const int64_t span = (int64_t)last - first + 1;
                tlo += longest;
                thi += u < span ? u : span;
            }
            tp += (unsigned __int128)u;
        }
#pragma omp critical(sdi_spgemm_output_bound)
        {
            products += tp;
            lo += tlo;
            hi += thi;
        }
    }
    out->products = (double)products;
    out->nnz_c_min = lo;
    out->nnz_c_max = hi;
    out->rows = a->rows;
}

sd_status sdi_spgemm_output_check(const sd_csr *a, const sd_csr *b, const char *product,
                                  const sdi_gpu_props *gpu)
{
    if (gpu == NULL || gpu->global_mem_bytes <= 0)
        return SD_OK;
    sdi_spgemm_output_bound ob;
    sdi_spgemm_output_bound_compute(a, b, &ob);
    /* The smallest C the product can have, allocated as the executor allocates it: if even
     * that exceeds the device, no plan can run (larger bounds only speed a plan up, and the
     * executor falls back to nnz(C) when they do not fit). */
    const int64_t need = sdi_spgemm_output_bytes(ob.rows, ob.nnz_c_min);
    if (need <= gpu->global_mem_bytes)
        return SD_OK;
    return SDI_ERR(SD_ERR_OUT_OF_MEMORY,
                   "SpGEMM %s does not fit the device: %.3g products; C holds at least %lld "
                   "entries (at most %lld), %.1f GB with its row pointers, beyond the %.1f GB "
                   "of %s%s",
                   product, ob.products, (long long)ob.nnz_c_min, (long long)ob.nnz_c_max,
                   (double)need / 1e9, (double)gpu->global_mem_bytes / 1e9, gpu->name,
                   gpu->from_device ? "" : " (profile)");
}

#define CV_CHUNK 8192

double sdi_cv_i64(const int64_t *v, int64_t n, double total)
{
    if (n <= 0 || total <= 0.0)
        return 0.0;
    double mean = total / (double)n;
    int64_t nch = (n + CV_CHUNK - 1) / CV_CHUNK;
    /* Fixed chunks summed in order: the same result with any number of threads. A failed
     * allocation falls back to one sequential pass (same chunking, same result). */
    double *part = sdi_malloc_array((size_t)nch, sizeof *part);
    double s = 0.0;
    if (part != NULL) {
#pragma omp parallel for schedule(static)
        for (int64_t ch = 0; ch < nch; ch++) {
            int64_t e = (ch + 1) * CV_CHUNK < n ? (ch + 1) * CV_CHUNK : n;
            double p = 0.0;
            for (int64_t i = ch * CV_CHUNK; i < e; i++)
                p += ((double)v[i] - mean) * ((double)v[i] - mean);
            part[ch] = p;
        }
        for (int64_t ch = 0; ch < nch; ch++)
            s += part[ch];
        sdi_free(part);
    } else {
        for (int64_t ch = 0; ch < nch; ch++) {
            int64_t e = (ch + 1) * CV_CHUNK < n ? (ch + 1) * CV_CHUNK : n;
            double p = 0.0;
            for (int64_t i = ch * CV_CHUNK; i < e; i++)
                p += ((double)v[i] - mean) * ((double)v[i] - mean);
            s += p;
        }
    }
    return sqrt(s / (double)n) / mean;
}

/* k-th smallest of v[0..n) (0-based), reordering v: quickselect with a three-way
 * partition (row lengths repeat a lot) and seeded pivots (deterministic). */
static int64_t select_kth(int64_t *v, int64_t n, int64_t k)
{
    uint64_t rng = 0x9e3779b97f4a7c15ULL;
    int64_t lo = 0, hi = n - 1;
    while (lo < hi) {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        int64_t p = v[lo + (int64_t)(rng % (uint64_t)(hi - lo + 1))];
        int64_t lt = lo, i = lo, gt = hi;
        while (i <= gt) {
            if (v[i] < p) {
                int64_t t = v[lt];
                v[lt++] = v[i];
                v[i++] = t;
            } else if (v[i] > p) {
                int64_t t = v[gt];
                v[gt--] = v[i];
                v[i] = t;
            } else {
                i++;
            }
        }
        if (k < lt)
            hi = lt - 1;
        else if (k > gt)
            lo = gt + 1;
        else
            return p;
    }
    return v[k];
}

/* Order-preserving bucket of a value: values below 256 get their own bucket, larger ones
 * are bucketed by bit length and the 8 bits after the leading one (relative width
 * ≤ 1/256), so a bucket rarely holds many distinct values. */
#define KTH_BUCKETS (256 + 55 * 256)

static inline int kth_bucket(int64_t v)
{
    if (v < 256)
        return v < 0 ? 0 : (int)v;
    int e = 63 - __builtin_clzll((uint64_t)v); /* 8 … 62 */
    return 256 + (e - 8) * 256 + (int)((v >> (e - 8)) & 255);
}

/* k-th smallest of v[0..n) (0-based) without reordering v: a parallel histogram of
 * buckets finds the bucket holding rank k, whose values are then gathered and selected. */
static sd_status parallel_kth(const int64_t *v, int64_t n, int64_t k, int64_t *out)
{
    int nt = omp_get_max_threads();
    int64_t *hist = NULL, *vals = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(hist);                                                                    \
        sdi_free(vals);                                                                    \
    } while (0)
    *out = 0;
    if (n <= 0)
        return SD_OK;
    hist = sdi_calloc((size_t)nt * KTH_BUCKETS, sizeof *hist);
    SD_CHECK_ALLOC(hist, "quantile histograms");
#pragma omp parallel num_threads(nt)
    {
        int64_t *h = hist + (size_t)omp_get_thread_num() * KTH_BUCKETS;
#pragma omp for schedule(static)
        for (int64_t i = 0; i < n; i++)
            h[kth_bucket(v[i])]++;
    }
    int64_t below = 0;
    int b = 0;
    for (; b < KTH_BUCKETS; b++) {
        int64_t c = 0;
        for (int t = 0; t < nt; t++)
            c += hist[(size_t)t * KTH_BUCKETS + b];
        if (k < below + c)
            break;
        below += c;
    }
    if (b < 256) { /* a bucket of one value */
        *out = b;
        SD_FREE_ALL;
        return SD_OK;
    }
    int64_t m = 0;
    for (int t = 0; t < nt; t++)
        m += hist[(size_t)t * KTH_BUCKETS + b];
    vals = sdi_malloc_array((size_t)m + 1, sizeof *vals);
    SD_CHECK_ALLOC(vals, "a quantile bucket");
    int64_t fill = 0;
    for (int64_t i = 0; i < n; i++) /* the bucket's m values, gathered in order */
        if (kth_bucket(v[i]) == b)
            vals[fill++] = v[i];
    *out = select_kth(vals, m, k - below);
    SD_FREE_ALL;
    return SD_OK;
#undef SD_FREE_ALL
}

/* ------------------------------------------------------------------ output count of a row
 * Rows with few products use an open-addressing hash set that fits in L1/L2; rows with
 * many use a bitmap over B's columns (allocated on first need, one per thread). */
#define HASH_MAX_U 16384 /* products; the table holds ≤ 2^15 keys (128 KiB) */
#define HASH_CAP_MAX 32768
#define HASH_EMPTY 0xffffffffu

typedef struct {
    uint32_t *table; /* HASH_CAP_MAX keys */
    uint64_t *bitmap; /* (b->cols + 63) / 64 words, zero between rows */
} row_accum;

static int64_t row_out_count(const sd_csr *a, const sd_csr *b, int64_t i, int64_t ui,
                             row_accum *w, int *oom)
{
    if (ui == 0)
        return 0;
    const int32_t *ac = a->colind, *bc = b->colind;
    const int64_t *bp = b->rowptr;
    int64_t count = 0;
    if (ui <= HASH_MAX_U) {
        uint32_t cap = 16;
        int shift = 28; /* 32 − log2(cap): the product's high bits, which mix all of j's */
        while (cap < 2 * (uint64_t)ui) {
            cap <<= 1;
            shift--;
        }
        uint32_t mask = cap - 1;
        uint32_t *t = w->table;
        memset(t, 0xff, (size_t)cap * sizeof *t);
        const int64_t k0 = a->rowptr[i], k1 = a->rowptr[i + 1];
        for (int64_t k = k0; k < k1; k++) {
            /* B's rows are scattered: prefetch the row pointers 4 entries ahead and the
             * columns 2 ahead (their row pointers are in cache by then). */
            if (k + 4 < k1)
                __builtin_prefetch(&bp[ac[k + 4]]);
            if (k + 2 < k1)
                __builtin_prefetch(&bc[bp[ac[k + 2]]]);
            int32_t kk = ac[k];
            for (int64_t q = bp[kk]; q < bp[kk + 1]; q++) {
                uint32_t j = (uint32_t)bc[q];
                uint32_t h = (j * 0x9e3779b1u) >> shift;
                while (t[h] != HASH_EMPTY && t[h] != j)
                    h = (h + 1) & mask;
                if (t[h] == HASH_EMPTY) {
                    t[h] = j;
                    count++;
                }
            }
        }
        return count;
    }
    if (w->bitmap == NULL) {
        w->bitmap = sdi_calloc(((size_t)b->cols + 63) / 64, sizeof *w->bitmap);
        if (w->bitmap == NULL) {
            *oom = 1;
            return 0;
        }
    }
    uint64_t *bm = w->bitmap;
    for (int64_t k = a->rowptr[i]; k < a->rowptr[i + 1]; k++) {
        if (k + 4 < a->rowptr[i + 1])
            __builtin_prefetch(&bp[ac[k + 4]]);
        if (k + 2 < a->rowptr[i + 1])
            __builtin_prefetch(&bc[bp[ac[k + 2]]]);
        int32_t kk = ac[k];
        for (int64_t q = bp[kk]; q < bp[kk + 1]; q++) {
            uint32_t j = (uint32_t)bc[q];
            uint64_t bit = 1ULL << (j & 63);
            if (!(bm[j >> 6] & bit)) {
                bm[j >> 6] |= bit;
                count++;
            }
        }
    }
    /* Clear what this row set (cheaper than the whole bitmap when the row is short). */
    for (int64_t k = a->rowptr[i]; k < a->rowptr[i + 1]; k++) {
        int32_t kk = ac[k];
        for (int64_t q = bp[kk]; q < bp[kk + 1]; q++)
            bm[(uint32_t)bc[q] >> 6] = 0;
    }
    return count;
}

/* Output counts of the listed rows (or of all rows when list is NULL) into cnt[]. */
static sd_status out_counts(const sd_csr *a, const sd_csr *b, const int64_t *u,
                            const int32_t *list, int64_t n, int64_t *cnt)
{
    int nt = omp_get_max_threads();
    row_accum *w = sdi_calloc((size_t)nt, sizeof *w);
    if (w == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for SpGEMM accumulators");
    int oom = 0;
    for (int t = 0; t < nt && !oom; t++) {
        w[t].table = sdi_malloc_array(HASH_CAP_MAX, sizeof *w[t].table);
        oom = (w[t].table == NULL);
    }
    const int chunk = list != NULL ? 1 : 64;
    if (!oom) {
#pragma omp parallel num_threads(nt)
        {
            row_accum *mine = &w[omp_get_thread_num()];
            int my_oom = 0;
            /* A sampled list is short and ordered by stratum (lightest first): walk it
             * backwards, one row at a time, so the heaviest rows start first. */
#pragma omp for schedule(dynamic, chunk)
            for (int64_t p = 0; p < n; p++) {
                if (my_oom)
                    continue;
                int64_t q = list != NULL ? n - 1 - p : p;
                int64_t i = list != NULL ? list[q] : q;
                cnt[q] = row_out_count(a, b, i, u[i], mine, &my_oom);
            }
            if (my_oom) {
#pragma omp atomic write
                oom = 1;
            }
        }
    }
    for (int t = 0; t < nt; t++) {
        sdi_free(w[t].table);
        sdi_free(w[t].bitmap);
    }
    sdi_free(w);
    if (oom)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for SpGEMM accumulators");
    return SD_OK;
}

/* ------------------------------------------------------------------ stratified sampling
 * Strata are log2 buckets of u(i): stratum 0 holds u = 0 (output 0, never computed),
 * stratum h ≥ 1 holds 2^(h−1) ≤ u < 2^h. A row's output count grows with u, so within a
 * stratum its spread is roughly proportional to ū_h; with cost c̄_h = ū_h + entry_cost·r̄_h
 * per sampled row, the variance-optimal allocation under a cost budget is
 * n_h ∝ N_h·ū_h/√c̄_h (Neyman with costs), clamped to [min(N_h, min_per_stratum), N_h].
 * Rows are drawn without replacement by a seeded partial Fisher–Yates shuffle. Estimate (separate ratio
 * estimator, U_h = Σ_{i in h} u(i)): nnz(C) ≈ Σ_h U_h · Σ_{sampled} nnz(C[i,:]) / Σ_{sampled} u(i). */
#define NSTRATA 64

static inline int stratum_of(int64_t u) { return u == 0 ? 0 : 64 - __builtin_clzll((uint64_t)u); }

static inline uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* The minimum per stratum is halved (down to MIN_FLOOR rows, enough for a variance)
 * while the minimums alone would exceed the budget, so the cost stays within
 * max(budget, MIN_FLOOR · Σ_h ū_h) ≤ max(budget, 2·MIN_FLOOR·u_max). */
#define MIN_FLOOR 2

static void allocate(const int64_t *N, const double *U, const double *R, const sdi_spgemm_opts *o,
                     int64_t *n)
{
    double w[NSTRATA], cbar[NSTRATA];
    int64_t lo_n[NSTRATA];
    double hi_lambda = 0.0;
    int64_t min_per = o->min_per_stratum > 1 ? o->min_per_stratum : 1;
    int64_t floor_per = min_per < MIN_FLOOR ? min_per : MIN_FLOOR;
    for (;;) {
        double cost = 0.0;
        for (int h = 1; h < NSTRATA; h++)
            if (N[h] > 0)
                cost += (double)(N[h] < min_per ? N[h] : min_per) *
                        ((U[h] + o->entry_cost * R[h]) / (double)N[h]);
        if (cost <= o->sample_products || min_per <= floor_per)
            break;
        min_per = min_per / 2 > floor_per ? min_per / 2 : floor_per;
    }
    for (int h = 0; h < NSTRATA; h++) {
        n[h] = 0;
        w[h] = cbar[h] = 0.0;
        lo_n[h] = 0;
        if (h == 0 || N[h] == 0)
            continue;
        cbar[h] = (U[h] + o->entry_cost * R[h]) / (double)N[h]; /* cost per row */
        w[h] = (double)N[h] * (U[h] / (double)N[h]) / sqrt(cbar[h]);
        lo_n[h] = N[h] < min_per ? N[h] : min_per;
        if ((double)N[h] / w[h] > hi_lambda)
            hi_lambda = (double)N[h] / w[h];
    }
    double lo = 0.0, hi = hi_lambda;
    for (int it = 0; it < 100; it++) {
        double mid = 0.5 * (lo + hi), cost = 0.0;
        for (int h = 1; h < NSTRATA; h++) {
            if (N[h] == 0)
                continue;
            double want = ceil(mid * w[h]);
            double nh = want < (double)lo_n[h] ? (double)lo_n[h] : want > (double)N[h] ? (double)N[h] : want;
            cost += nh * cbar[h];
        }
        if (cost <= o->sample_products)
            lo = mid;
        else
            hi = mid;
    }
    /* Take hi when it already samples everything within budget (exact). */
    double total_all = 0.0;
    for (int h = 1; h < NSTRATA; h++)
        total_all += U[h] + o->entry_cost * R[h];
    double lambda = total_all <= o->sample_products ? hi_lambda : lo;
    for (int h = 1; h < NSTRATA; h++) {
        if (N[h] == 0)
            continue;
        double want = ceil(lambda * w[h]);
        int64_t nh = want >= (double)N[h] ? N[h] : (int64_t)want;
        n[h] = nh < lo_n[h] ? lo_n[h] : nh;
    }
}

static sd_status sampled_nnz_c(const sd_csr *a, const sd_csr *b, const int64_t *u,
                               const sdi_spgemm_opts *o, sdi_spgemm_stats *st)
{
    int32_t *order = NULL, *list = NULL;
    int64_t *cnt = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(order);                                                                   \
        sdi_free(list);                                                                    \
        sdi_free(cnt);                                                                     \
    } while (0)
    int64_t N[NSTRATA] = {0}, n[NSTRATA], start[NSTRATA + 1];
    double U[NSTRATA] = {0}, R[NSTRATA] = {0};
    int32_t rows = a->rows;
    for (int32_t i = 0; i < rows; i++) {
        int h = stratum_of(u[i]);
        N[h]++;
        U[h] += (double)u[i];
        R[h] += (double)(a->rowptr[i + 1] - a->rowptr[i]);
    }
    allocate(N, U, R, o, n);
    start[0] = 0;
    for (int h = 0; h < NSTRATA; h++)
        start[h + 1] = start[h] + N[h];
    /* Rows grouped by stratum (counting sort, rows ascending within a stratum). */
    order = sdi_malloc_array((size_t)rows + 1, sizeof *order);
    SD_CHECK_ALLOC(order, "the sampling order");
    {
        int64_t pos[NSTRATA];
        memcpy(pos, start, sizeof pos);
        for (int32_t i = 0; i < rows; i++)
            order[pos[stratum_of(u[i])]++] = i;
    }
    int64_t nsel = 0;
    for (int h = 1; h < NSTRATA; h++)
        nsel += n[h];
    list = sdi_malloc_array((size_t)nsel + 1, sizeof *list);
    SD_CHECK_ALLOC(list, "the sampled rows");
    cnt = sdi_malloc_array((size_t)nsel + 1, sizeof *cnt);
    SD_CHECK_ALLOC(cnt, "the sampled counts");
    int64_t m = 0;
    st->products_computed = 0.0;
    st->strata = 0;
    for (int h = 1; h < NSTRATA; h++) {
        if (N[h] == 0)
            continue;
        st->strata++;
        int32_t *g = order + start[h];
        if (n[h] < N[h]) {
            uint64_t rs = o->seed ^ (0xa0761d6478bd642fULL * (uint64_t)(h + 1));
            for (int64_t k = 0; k < n[h]; k++) {
                int64_t r = k + (int64_t)(splitmix64(&rs) % (uint64_t)(N[h] - k));
                int32_t t = g[k];
                g[k] = g[r];
                g[r] = t;
            }
        }
        for (int64_t k = 0; k < n[h]; k++) {
            list[m++] = g[k];
            st->products_computed += (double)u[g[k]];
        }
    }
    SD_TRY(out_counts(a, b, u, list, nsel, cnt));
    /* Separate ratio estimator per stratum: nnz(C[i,:]) tracks u(i) closely, so
     * U_h · Σc/Σu (c: sampled output counts) removes the spread of u inside a stratum
     * that the plain expansion N_h/n_h · Σc keeps. Exact when n_h = N_h (then Σu = U_h). */
    double est = 0.0, var = 0.0;
    int exact = 1;
    m = 0;
    for (int h = 1; h < NSTRATA; h++) {
        if (N[h] == 0)
            continue;
        double sc = 0.0, su = 0.0;
        for (int64_t k = 0; k < n[h]; k++) {
            sc += (double)cnt[m + k];
            su += (double)u[list[m + k]];
        }
        if (n[h] == N[h]) {
            est += sc;
        } else {
            exact = 0;
            double r = sc / su; /* su ≥ n_h > 0: stratum h ≥ 1 holds u ≥ 1 */
            est += U[h] * r;
            if (n[h] > 1) {
                double se2 = 0.0;
                for (int64_t k = 0; k < n[h]; k++) {
                    double e = (double)cnt[m + k] - r * (double)u[list[m + k]];
                    se2 += e * e;
                }
                se2 /= (double)(n[h] - 1);
                var += (double)N[h] * (double)N[h] * (1.0 - (double)n[h] / (double)N[h]) * se2 /
                       (double)n[h];
            }
        }
        m += n[h];
    }
    st->nnz_c = est;
    st->nnz_c_se = exact ? 0.0 : sqrt(var);
    st->exact = exact;
    st->rows_computed = nsel;
    SD_FREE_ALL;
    return SD_OK;
#undef SD_FREE_ALL
}

/* ------------------------------------------------------------------ the work of A·B */

/* Everything after u: max, p95, CV, fit fractions, nnz(C) exact or sampled, γ. u is
 * only read. On failure *out is zeroed. */
static sd_status stats_from_u(const sd_csr *a, const sd_csr *b, const int64_t *u, double total,
                              const sdi_spgemm_opts *opts, sdi_spgemm_stats *out)
{
    int64_t *cnt = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(cnt);                                                                     \
        memset(out, 0, sizeof *out);                                                       \
    } while (0)
    memset(out, 0, sizeof *out);
    int64_t rows = a->rows;
    double t0 = sdi_now();
    int64_t umax = 0, f512 = 0, f4k = 0, f32k = 0;
#pragma omp parallel for schedule(static) reduction(max : umax) reduction(+ : f512, f4k, f32k)
    for (int64_t i = 0; i < rows; i++) {
        int64_t x = u[i];
        if (x > umax)
            umax = x;
        f512 += (x <= 512);
        f4k += (x <= 4096);
        f32k += (x <= 32768);
    }
    out->u_total = total;
    out->u_max = (double)umax;
    out->u_cv = sdi_cv_i64(u, rows, total);
    if (rows > 0) {
        out->fit[0] = (double)f512 / (double)rows;
        out->fit[1] = (double)f4k / (double)rows;
        out->fit[2] = (double)f32k / (double)rows;
        int64_t p95 = 0;
        SD_TRY(parallel_kth(u, rows, sdi_nearest_rank(rows, 95, 100) - 1, &p95));
        out->u_p95 = (double)p95;
    }
    double t_stats = sdi_now();
    double cost = total + opts->entry_cost * (double)a->nnz;
    int exact = opts->force_exact || (!opts->force_sampling && cost <= opts->exact_max_products);
    if (total == 0.0) {
        out->exact = 1; /* no products, no output */
    } else if (exact) {
        cnt = sdi_malloc_array((size_t)rows, sizeof *cnt);
        SD_CHECK_ALLOC(cnt, "SpGEMM output counts");
        SD_TRY(out_counts(a, b, u, NULL, rows, cnt));
        int64_t c = 0;
#pragma omp parallel for schedule(static) reduction(+ : c)
        for (int64_t i = 0; i < rows; i++)
            c += cnt[i];
        out->nnz_c = (double)c;
        out->exact = 1;
        out->rows_computed = rows;
        out->products_computed = total;
        sdi_free(cnt);
        cnt = NULL;
    } else {
        SD_TRY(sampled_nnz_c(a, b, u, opts, out));
    }
    out->gamma = out->nnz_c > 0.0 ? total / out->nnz_c : 0.0;
    sdi_log(3, "analysis: SpGEMM u statistics %.3f s, nnz(C) %.3f s (%s, %lld rows)",
            t_stats - t0, sdi_now() - t_stats, out->exact ? "exact" : "sampled",
            (long long)out->rows_computed);
    return SD_OK;
#undef SD_FREE_ALL
}

sd_status sdi_spgemm_work(const sd_csr *a, const sd_csr *b, const sdi_spgemm_opts *opts,
                          sdi_spgemm_stats *out)
{
    if (out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "SpGEMM work: out is NULL");
    memset(out, 0, sizeof *out);
    if (a == NULL || b == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "SpGEMM work: a or b is NULL");
    if (a->cols != b->rows)
        return SDI_ERR(SD_ERR_INVALID_ARG,
                       "SpGEMM work: A is %dx%d and B is %dx%d: inner sizes differ", a->rows,
                       a->cols, b->rows, b->cols);
    sdi_spgemm_opts defaults = sdi_spgemm_opts_default();
    if (opts == NULL)
        opts = &defaults;
    int64_t *u = sdi_malloc_array((size_t)a->rows + 1, sizeof *u);
    if (u == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory allocating SpGEMM row work");
    double total = sdi_spgemm_row_work(a, b->rowptr, u);
    sd_status s = stats_from_u(a, b, u, total, opts, out);
    sdi_free(u);
    return s;
}

/* ------------------------------------------------------------------ Aᵀ pattern */

sd_status sdi_pattern_transpose(const sd_csr *a, const int64_t *col_counts, sd_csr *out)
{
    int64_t *cursor = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(cursor);                                                                  \
        sd_csr_free(out);                                                                  \
    } while (0)
    memset(out, 0, sizeof *out);
    out->rowptr = sdi_calloc((size_t)a->cols + 1, sizeof *out->rowptr);
    SD_CHECK_ALLOC(out->rowptr, "the transpose's row pointers");
    out->colind = sdi_malloc_array((size_t)a->nnz + 1, sizeof *out->colind);
    SD_CHECK_ALLOC(out->colind, "the transpose's columns");
    out->rows = a->cols;
    out->cols = a->rows;
    out->nnz = a->nnz;
    if (col_counts != NULL) {
        for (int32_t j = 0; j < a->cols; j++)
            out->rowptr[j + 1] = out->rowptr[j] + col_counts[j];
    } else {
        for (int64_t k = 0; k < a->nnz; k++)
            out->rowptr[a->colind[k] + 1]++;
        for (int32_t j = 0; j < a->cols; j++)
            out->rowptr[j + 1] += out->rowptr[j];
    }
    cursor = sdi_malloc_array((size_t)a->cols + 1, sizeof *cursor);
    SD_CHECK_ALLOC(cursor, "the transpose's cursors");
    memcpy(cursor, out->rowptr, ((size_t)a->cols + 1) * sizeof *cursor);
    /* Parallel scatter (rows land in any order), then each row of Aᵀ sorted. */
    const int64_t *rp = a->rowptr;
    const int32_t *ci = a->colind;
#pragma omp parallel for schedule(dynamic, 1024)
    for (int32_t i = 0; i < a->rows; i++)
        for (int64_t k = rp[i]; k < rp[i + 1]; k++) {
            int64_t d = __atomic_fetch_add(&cursor[ci[k]], 1, __ATOMIC_RELAXED);
            out->colind[d] = i;
        }
#pragma omp parallel for schedule(dynamic, 1024)
    for (int32_t j = 0; j < a->cols; j++) {
        int32_t *r = out->colind + out->rowptr[j];
        int64_t len = out->rowptr[j + 1] - out->rowptr[j];
        sdi_sort_i32(r, len); /* insertion sort itself below 25 entries */
    }
    sdi_free(cursor);
    return SD_OK;
#undef SD_FREE_ALL
}

/* ------------------------------------------------------------------ sd_analyze's ten */

/* Square A: u(i) = Σ_{k ∈ A[i,:]} r_k and u_T(i) = Σ_{k ∈ A[i,:]} c_k in one pass over A,
 * reading (r_k, c_k) side by side: one scattered access per entry instead of three. */
static void square_work(const sd_csr *a, const int32_t *rc, int64_t *u, int64_t *ut, double *tu,
                        double *tut)
{
    const int64_t *rp = a->rowptr;
    const int32_t *ci = a->colind;
    unsigned __int128 su = 0, sut = 0;
#pragma omp parallel
    {
        unsigned __int128 lu = 0, lut = 0;
#pragma omp for schedule(dynamic, 2048)
        for (int64_t i = 0; i < a->rows; i++) {
            int64_t x = 0, y = 0;
            for (int64_t k = rp[i]; k < rp[i + 1]; k++) {
                if (k + 8 < rp[i + 1])
                    __builtin_prefetch(&rc[2 * (int64_t)ci[k + 8]]);
                x += rc[2 * (int64_t)ci[k]];
                y += rc[2 * (int64_t)ci[k] + 1];
            }
            u[i] = x;
            ut[i] = y;
            lu += (unsigned __int128)x;
            lut += (unsigned __int128)y;
        }
#pragma omp critical(sdi_square_work)
        {
            su += lu;
            sut += lut;
        }
    }
    *tu = (double)su;
    *tut = (double)sut;
}

sd_status sdi_spgemm_operator_features(const sd_csr *a, const int64_t *col_counts,
                                       const sdi_spgemm_opts *opts, double *v,
                                       sdi_spgemm_stats *st)
{
    sd_csr at;
    memset(&at, 0, sizeof at);
    int64_t *u = NULL, *ut = NULL;
    int32_t *rc = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sd_csr_free(&at);                                                                  \
        sdi_free(u);                                                                       \
        sdi_free(ut);                                                                      \
        sdi_free(rc);                                                                      \
        memset(st, 0, sizeof *st);                                                         \
    } while (0)
    memset(st, 0, sizeof *st);
    sdi_spgemm_opts defaults = sdi_spgemm_opts_default();
    if (opts == NULL)
        opts = &defaults;
    double ut_total = 0.0, ut_cv = 0.0;
    if (a->rows == a->cols) {
        /* r_k ≤ cols and c_k ≤ rows fit in 32 bits. */
        rc = sdi_malloc_array(2 * (size_t)a->cols + 2, sizeof *rc);
        SD_CHECK_ALLOC(rc, "row and column lengths");
        u = sdi_malloc_array((size_t)a->rows + 1, sizeof *u);
        SD_CHECK_ALLOC(u, "SpGEMM row work");
        ut = sdi_malloc_array((size_t)a->rows + 1, sizeof *ut);
        SD_CHECK_ALLOC(ut, "A*A^T row work");
#pragma omp parallel for schedule(static)
        for (int64_t k = 0; k < a->cols; k++) {
            rc[2 * k] = (int32_t)(a->rowptr[k + 1] - a->rowptr[k]);
            rc[2 * k + 1] = (int32_t)col_counts[k];
        }
        double t0 = sdi_now(), total = 0.0;
        square_work(a, rc, u, ut, &total, &ut_total);
        sdi_log(3, "analysis: SpGEMM u and u_T %.3f s", sdi_now() - t0);
        sdi_free(rc);
        rc = NULL;
        ut_cv = sdi_cv_i64(ut, a->rows, ut_total);
        sdi_free(ut);
        ut = NULL;
        SD_TRY(stats_from_u(a, a, u, total, opts, st));
    } else {
        SD_TRY(sdi_pattern_transpose(a, col_counts, &at));
        SD_TRY(sdi_spgemm_work(a, &at, opts, st));
        ut_total = st->u_total; /* the requested product already is A·Aᵀ */
        ut_cv = st->u_cv;
    }
    v[SDI_F_U_TOTAL] = st->u_total;
    v[SDI_F_U_MAX] = st->u_max;
    v[SDI_F_U_P95] = st->u_p95;
    v[SDI_F_U_CV] = st->u_cv;
    v[SDI_F_UT_TOTAL] = ut_total;
    v[SDI_F_UT_CV] = ut_cv;
    v[SDI_F_FIT_512] = st->fit[0];
    v[SDI_F_FIT_4K] = st->fit[1];
    v[SDI_F_FIT_32K] = st->fit[2];
    v[SDI_F_GAMMA] = st->gamma;
    sd_csr_free(&at);
    sdi_free(u);
    return SD_OK;
#undef SD_FREE_ALL
}
