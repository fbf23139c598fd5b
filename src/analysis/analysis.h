/* src/analysis/analysis.h: the analysis room's internal interface: the feature table,
 * the structural scan, row-length distributions and shape classes, SpGEMM work. */
#ifndef SDI_ANALYSIS_H
#define SDI_ANALYSIS_H

#include "../core/core.h"
#include "gpu.h"

/* ------------------------------------------------------------------ the feature table
 * Indices into sd_features.values, in the canonical order of docs/ARCHITECTURE.md
 * "Structural features" (the model's input
 * order depends on it; features.c holds the one table of names and definitions). */
enum {
    SDI_F_ROWS = 0,
    SDI_F_COLS,
    SDI_F_NNZ,
    SDI_F_DENSITY,
    SDI_F_ROW_MEAN,
    SDI_F_ROW_MAX,
    SDI_F_ROW_CV,
    SDI_F_ROW_Q25,
    SDI_F_ROW_Q50,
    SDI_F_ROW_Q75,
    SDI_F_EMPTY_ROW_FRAC,
    SDI_F_COL_MAX,
    SDI_F_COL_CV,
    SDI_F_ROW_SPAN,
    SDI_F_COL_GAP,
    SDI_F_DIAG_FRAC,
    SDI_F_DENSE_TILE_FRAC,
    SDI_F_DENSE_TILE_NNZ_FRAC,
    SDI_F_RHO_ELL, /* first representation-induced feature */
    SDI_F_RHO_SELL16,
    SDI_F_RHO_SELL32,
    SDI_F_RHO_SELL512,
    SDI_F_RHO_BSR4,
    SDI_F_RHO_BSR8,
    SDI_F_RHO_BSR16,
    SDI_F_RHO_BELL16,
    SDI_F_U_TOTAL, /* first operator-induced feature */
    SDI_F_U_MAX,
    SDI_F_U_P95,
    SDI_F_U_CV,
    SDI_F_UT_TOTAL,
    SDI_F_UT_CV,
    SDI_F_FIT_512,
    SDI_F_FIT_4K,
    SDI_F_FIT_32K,
    SDI_F_GAMMA,
    SDI_F_COUNT
};
_Static_assert(SDI_F_COUNT == SD_NUM_FEATURES, "the feature enum must list exactly 36");

typedef enum {
    SDI_FGROUP_INTRINSIC = 0,
    SDI_FGROUP_REPRESENTATION,
    SDI_FGROUP_OPERATOR
} sdi_feature_group;

typedef struct {
    const char *name;       /* canonical name, e.g. "row_cv" */
    sdi_feature_group group;
    const char *definition; /* one line, edge cases included */
} sdi_feature_info;

/* Entry i of the table (0 ≤ i < SD_NUM_FEATURES), NULL out of range. */
SDI_HIDDEN const sdi_feature_info *sdi_feature_get(int i);
/* Index of a canonical name, -1 when unknown. */
SDI_HIDDEN int sdi_feature_index(const char *name);
/* "intrinsic", "representation-induced", "operator-induced". */
SDI_HIDDEN const char *sdi_feature_group_name(sdi_feature_group g);

/* ------------------------------------------------------------------ length distributions
 * An exact distribution of non-negative integers (row lengths): a histogram of the small
 * values and the large ones sorted. Nearest-rank quantiles and tail sums come from it in
 * O(SDI_LEN_HIST + nbig) without sorting all values. */
#define SDI_LEN_HIST 4096

typedef struct {
    int64_t n;     /* number of values */
    int64_t *hist; /* SDI_LEN_HIST counts: hist[v] = #values equal to v (v < SDI_LEN_HIST) */
    int64_t *big;  /* the values ≥ SDI_LEN_HIST, ascending */
    int64_t nbig;
    int64_t sum, max;
} sdi_len_dist;

/* Row lengths of a (rows values; OpenMP-parallel). */
SDI_HIDDEN sd_status sdi_len_dist_of_rows(const int64_t *rowptr, int32_t rows, sdi_len_dist *out);
/* Any n values (v[i] ≥ 0). */
SDI_HIDDEN sd_status sdi_len_dist_of_values(const int64_t *v, int64_t n, sdi_len_dist *out);
SDI_HIDDEN void sdi_len_dist_free(sdi_len_dist *d);
/* The k-th smallest value (0-based, 0 ≤ k < n); 0 when n = 0. */
SDI_HIDDEN int64_t sdi_len_dist_kth(const sdi_len_dist *d, int64_t k);
/* Nearest-rank quantile num/den: the value of 1-based rank ⌈n·num/den⌉ (at least 1). */
SDI_HIDDEN int64_t sdi_len_dist_quantile(const sdi_len_dist *d, int num, int den);
/* Σ (v − mean)² over all values, exact order (deterministic). */
SDI_HIDDEN double sdi_len_dist_sq_dev(const sdi_len_dist *d, double mean);
/* Sum of the m largest values. */
SDI_HIDDEN int64_t sdi_len_dist_top_sum(const sdi_len_dist *d, int64_t m);

/* 1-based nearest rank ⌈n·num/den⌉, at least 1 (n ≥ 1). */
static inline int64_t sdi_nearest_rank(int64_t n, int num, int den)
{
    int64_t r = (int64_t)(((__int128)n * num + den - 1) / den);
    return r < 1 ? 1 : r;
}

/* ------------------------------------------------------------------ shape classes */
typedef struct {
    int64_t nonempty;     /* rows the classification looked at (length ≥ 1) */
    double mean, cv;      /* of the non-empty row lengths */
    double max_mean;      /* max / mean */
    double top1_share;    /* share of nnz in the top 1 % of non-empty rows (⌈1 %⌉ rows) */
    int tail_octaves;     /* octaves [2^b, 2^(b+1)) from ⌈log2(2·mean)⌉ to ⌊log2 max⌋ */
    int tail_occupied;    /* how many of them hold at least one row */
    /* Best two-group split of log2(length) (Otsu): masses, means and CVs of lengths. */
    double w_low, w_high, mean_low, mean_high, cv_low, cv_high;
} sdi_shape_stats;

/* Classifies a row-length distribution (rules and thresholds in shape.c). stats may be
 * NULL. Empty rows are ignored: they are a feature of their own (empty_row_frac). */
SDI_HIDDEN sd_shape_class sdi_shape_classify(const sdi_len_dist *d, sdi_shape_stats *stats);

/* ------------------------------------------------------------------ SpGEMM work
 * For C = A·B: u(i) = Σ_{k ∈ A[i,:]} nnz(B[k,:]) (products of row i), nnz(C) exact or
 * estimated by stratified row sampling, γ = Σu / nnz(C). */
typedef struct {
    /* Cost of computing a row's output count, in products: u(i) + entry_cost·r_i (each
     * entry of A fetches a scattered row of B: two cache misses, about 8 products' worth
     * of hashing; short-row matrices are bound by these misses, not by u). */
    double entry_cost;         /* default 8 */
    double exact_max_products; /* exact nnz(C) when Σu + entry_cost·nnz(A) ≤ this (2e8) */
    double sample_products;    /* cost the sample may take (default 2^25 ≈ 3.4e7) */
    int min_per_stratum;       /* rows sampled at least per stratum (default 32) */
    uint64_t seed;             /* sampling seed (default fixed: results are deterministic) */
    int force_sampling;        /* 1: sample even when exact is cheap (error measurements) */
    int force_exact;           /* 1: exact whatever the cost */
} sdi_spgemm_opts;

SDI_HIDDEN sdi_spgemm_opts sdi_spgemm_opts_default(void);

typedef struct {
    double u_total, u_max, u_p95, u_cv;
    double fit[3];     /* fraction of rows with u(i) ≤ 512, 4096, 32768 */
    double nnz_c;      /* nnz(C): exact, or the stratified estimate */
    double nnz_c_se;   /* standard error of the estimate (0 when exact) */
    double gamma;      /* u_total / nnz_c (0 when nnz_c = 0) */
    int exact;         /* 1 when nnz_c is exact */
    int64_t rows_computed;   /* rows whose output count was computed */
    double products_computed; /* products of those rows (Σu over them) */
    int strata;        /* non-empty strata (sampling path) */
} sdi_spgemm_stats;

/* Work of C = A·B (a->cols == b->rows; only the patterns are read: b->vals may be NULL).
 * opts NULL = defaults. On failure *out is zeroed. */
SDI_HIDDEN sd_status sdi_spgemm_work(const sd_csr *a, const sd_csr *b, const sdi_spgemm_opts *opts,
                                     sdi_spgemm_stats *out);
/* The size of C = A·B bounded from the patterns alone, in one O(nnz(A)) pass: no row of C
 * has fewer entries than the longest row of B it gathers, nor more than its products or
 * the columns between the first and the last it reaches. */
typedef struct {
    double products;   /* Σu, exact in 128 bits, then rounded */
    int64_t nnz_c_min; /* Σ_i max_{k ∈ A[i,:]} nnz(B[k,:]) */
    int64_t nnz_c_max; /* Σ_i min(u(i), span(i)) */
    int32_t rows;      /* rows of C */
} sdi_spgemm_output_bound;

SDI_HIDDEN void sdi_spgemm_output_bound_compute(const sd_csr *a, const sd_csr *b,
                                                sdi_spgemm_output_bound *out);
/* Device bytes of a C of `rows` rows and nnz entries as the SpGEMM executor allocates it:
 * 64-bit row pointers, 32-bit columns and float values (INT64_MAX when beyond: a bound
 * of nnz(C) can reach 2^62). */
static inline int64_t sdi_spgemm_output_bytes(int64_t rows, int64_t nnz)
{
    if (nnz > INT64_MAX / 8 - rows - 1)
        return INT64_MAX;
    return (rows + 1) * 8 + nnz * 8;
}
/* SD_ERR_OUT_OF_MEMORY, naming the products, C's bounds and the memory, when C = A·B
 * (product: "A·A", "A·Aᵀ" or "A·B") cannot fit the memory of gpu even at its smallest
 * possible size; SD_OK otherwise (and when gpu's memory is unknown). Run before
 * planning or compiling anything: a product of 10^11 entries is named up front instead of
 * after seconds of NVRTC. */
SDI_HIDDEN sd_status sdi_spgemm_output_check(const sd_csr *a, const sd_csr *b,
                                             const char *product, const sdi_gpu_props *gpu);
/* u(i) of C = A·B from B's row pointers (brp has a->cols + 1 entries); returns Σu
 * (exact in 128 bits, then rounded to double). OpenMP-parallel. */
SDI_HIDDEN double sdi_spgemm_row_work(const sd_csr *a, const int64_t *brp, int64_t *u);
/* Population CV of n values (0 when the mean is 0), deterministic whatever the threads. */
SDI_HIDDEN double sdi_cv_i64(const int64_t *v, int64_t n, double total);
/* Pattern of aᵀ (rowptr cols+1, colind nnz sorted per row, vals NULL), from column
 * counts when given (counts may be NULL). Free with sd_csr_free. */
SDI_HIDDEN sd_status sdi_pattern_transpose(const sd_csr *a, const int64_t *col_counts,
                                           sd_csr *out);
/* The ten operator-induced features of sd_analyze for SD_OP_SPGEMM (the requested
 * product A·A when square, A·Aᵀ otherwise; ut from A·Aᵀ), written into
 * values[SDI_F_U_TOTAL .. SDI_F_GAMMA]. col_counts: c_j of a (cols entries). */
SDI_HIDDEN sd_status sdi_spgemm_operator_features(const sd_csr *a, const int64_t *col_counts,
                                                  const sdi_spgemm_opts *opts, double *values,
                                                  sdi_spgemm_stats *stats);

/* ------------------------------------------------------------------ the driver */
typedef struct {
    sdi_spgemm_opts spgemm;  /* SpGEMM estimate options */
} sdi_analyze_opts;

typedef struct {
    sdi_spgemm_stats spgemm; /* filled for SD_OP_SPGEMM */
    sdi_shape_stats shape;
    double seconds_structure, seconds_spgemm;
} sdi_analyze_info;

SDI_HIDDEN sdi_analyze_opts sdi_analyze_opts_default(void);
/* The 36 features of a (structure assumed checked) for op; opts and info may be NULL.
 * On failure *out is zeroed. */
SDI_HIDDEN sd_status sdi_features_compute(const sd_csr *a, sd_op op, const sdi_analyze_opts *opts,
                                          sd_features *out, sdi_analyze_info *info);
/* Parallel structural check (same invariants and messages as sdi_csr_check_structure;
 * the message names the first offending row). */
SDI_HIDDEN sd_status sdi_analysis_check(const sd_csr *a);

#endif /* SDI_ANALYSIS_H */
