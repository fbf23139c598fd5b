/* src/analysis/plan_stats.h: the statistics of a task that planning reads — computed once
 * by the analysis of a search (or of the offline planner) and passed to every family's
 * enumeration, legality check and lowering (src/plan/family.h, sdi_task). */
#ifndef SDI_ANALYSIS_PLAN_STATS_H
#define SDI_ANALYSIS_PLAN_STATS_H

#include "../core/core.h"
#include "../runtime/sg_program.h"

/* ------------------------------------------------------------------ features */
/* The task's 36 features for op (src/analysis/analyze_task.c): the matrix checked
 * (sdi_analysis_check), then sdi_features_compute; on failure *out is zeroed and the
 * message names sd_analyze, as the public entry point's did. What the search and the
 * planner call (never the public sd_analyze); sd_analyze is this plus its argument checks. */
SDI_HIDDEN sd_status sdi_analyze(const sd_csr *a, sd_op op, sd_features *out);

/* ------------------------------------------------------------------ SpMV */
/* Row-length summary and structure probes used by legality and enumeration. */
typedef struct {
    int32_t rows, cols;
    int64_t nnz;
    int64_t row_max, rows_empty;
    double row_mean, row_cv;
    int64_t row_q50, row_q90; /* nearest-rank quantiles of the row lengths */
    int64_t log2_hist[33];    /* rows with length in [2^(k−1), 2^k) (k = 0: empty) */
    int32_t ndiag;            /* distinct diagonals (capped at 65; 65 = more) */
    int32_t colc_ok0, colc_ok5; /* 16-bit column deltas fit per row / per 32 rows */
    double rho_sell32;        /* SELL-32 slots / nnz, unsorted */
    double rho_bsr[5];        /* by log2 b: [1] b = 2, [2] 4, [3] 8, [4] 16 (BSR slots / nnz) */
    double rho_tiles_dense;   /* fraction of nnz in 16×16 tiles with ≥ 128 nonzeros */
} sdi_spmv_stats;

/* One O(nnz) scan (OpenMP). */
SDI_HIDDEN sd_status sdi_spmv_stats_compute(const sd_csr *a, sdi_spmv_stats *out);

/* ------------------------------------------------------------------ SpMM */
/* Row-length summary used by legality and enumeration (one O(rows) scan). */
typedef struct {
    int32_t rows, cols;
    int64_t nnz;
    int64_t row_max;
    double row_mean, row_cv;
    int64_t rows_empty;
} sdi_spmm_stats;

SDI_HIDDEN void sdi_spmm_stats_compute(const sd_csr *a, sdi_spmm_stats *out);

/* ------------------------------------------------------------------ SpGEMM */
/* Summary of a product used to enumerate candidates. */
typedef struct {
    int32_t m, n;
    double u_total;
    int64_t u_max;
    double frac_tiny;   /* rows with 0 < u ≤ 32 over rows with products */
    double frac_narrow; /* rows whose span ≤ 4 × min(u, span) and ≤ 2048 */
} sdi_sg_summary;

SDI_HIDDEN void sdi_sg_summarize(const sdi_sg_rowinfo *ri, sdi_sg_summary *out);

/* u(i), lo(i), hi(i) of C = A·B computed on the host (b = A for A·A, Aᵀ for A·Aᵀ): the
 * offline planner's and the tests' row analysis, where the search reads the device's
 * (sdi_spgemm_operands_rowinfo). The arrays are allocated; free them with
 * sdi_sg_rowinfo_host_free. */
SDI_HIDDEN sd_status sdi_sg_rowinfo_host(const sd_csr *a, const sd_csr *b, sdi_sg_rowinfo *out);
SDI_HIDDEN void sdi_sg_rowinfo_host_free(sdi_sg_rowinfo *ri);

#endif /* SDI_ANALYSIS_PLAN_STATS_H */
