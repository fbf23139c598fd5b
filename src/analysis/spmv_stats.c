/* src/analysis/spmv_stats.c: the SpMV statistics of a matrix (analysis/plan_stats.h):
 * row-length summary and structure probes (diagonals, 16-bit column deltas, SELL-32 and
 * BSR padding, dense 16×16 tiles), computed once per task. */
#include <math.h>
#include <string.h>

#include "../formats/formats.h"
#include "plan_stats.h"

/* Occupied b×b blocks for b = 2, 4, 8, 16 (blocks[lb]) and the nonzeros in 16×16 tiles of
 * ≥ 128: one block census per 16-row block row (a single merge of its rows). */
static void block_counts(const sd_csr *a, int64_t blocks[5], int64_t *dense_nnz)
{
    const int64_t nbr = ((int64_t)a->rows + 15) / 16;
    int64_t b2 = 0, b4 = 0, b8 = 0, b16 = 0, dense = 0;
#pragma omp parallel for schedule(dynamic, 256) reduction(+ : b2, b4, b8, b16, dense)
    for (int64_t br = 0; br < nbr; br++) {
        sdi_block_census c;
        sdi_csr_block_census(a, br, 128, &c);
        b2 += c.occ[1];
        b4 += c.occ[2];
        b8 += c.occ[3];
        b16 += c.occ[4];
        dense += c.dense_nnz;
    }
    blocks[1] = b2;
    blocks[2] = b4;
    blocks[3] = b8;
    blocks[4] = b16;
    *dense_nnz = dense;
}

/* Distinct diagonals, capped: stops at cap + 1. */
static int count_diagonals(const sd_csr *a, int cap)
{
    int64_t set[80];
    int n = 0;
    for (int64_t i = 0; i < a->rows; i++)
        for (int64_t k = a->rowptr[i]; k < a->rowptr[i + 1]; k++) {
            int64_t d = (int64_t)a->colind[k] - i;
            int lo = 0, hi = n;
            while (lo < hi) {
                int mid = (lo + hi) / 2;
                if (set[mid] < d)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            if (lo < n && set[lo] == d)
                continue;
            if (n == cap)
                return cap + 1;
            memmove(set + lo + 1, set + lo, (size_t)(n - lo) * sizeof *set);
            set[lo] = d;
            n++;
        }
    return n;
}

sd_status sdi_spmv_stats_compute(const sd_csr *a, sdi_spmv_stats *out)
{
    if (out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spmv stats: out is NULL");
    memset(out, 0, sizeof *out);
    if (a == NULL || a->rowptr == NULL || a->rows < 0)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spmv stats: matrix is NULL or malformed");
    out->rows = a->rows;
    out->cols = a->cols;
    out->nnz = a->nnz;
    double sum2 = 0;
    int64_t sell32 = 0;
    for (int64_t i = 0; i < a->rows; i++) {
        int64_t l = a->rowptr[i + 1] - a->rowptr[i];
        out->row_max = l > out->row_max ? l : out->row_max;
        out->rows_empty += l == 0;
        sum2 += (double)l * (double)l;
        int k = 0;
        while (k < 32 && ((int64_t)1 << k) <= l)
            k++;
        out->log2_hist[k]++;
    }
    for (int64_t s = 0; s < a->rows; s += 32) {
        int64_t w = 0;
        for (int64_t i = s; i < s + 32 && i < a->rows; i++) {
            int64_t l = a->rowptr[i + 1] - a->rowptr[i];
            w = l > w ? l : w;
        }
        sell32 += w * (s + 32 <= a->rows ? 32 : a->rows - s);
    }
    if (a->rows > 0) {
        out->row_mean = (double)a->nnz / a->rows;
        double var = sum2 / a->rows - out->row_mean * out->row_mean;
        out->row_cv = out->row_mean > 0 ? sqrt(var > 0 ? var : 0) / out->row_mean : 0;
        /* Quantiles from the log2 histogram: the upper edge of the bucket reached. */
        int64_t q50 = (a->rows + 1) / 2, q90 = (int64_t)ceil(0.9 * a->rows), acc = 0;
        int got50 = 0;
        for (int k = 0; k <= 32; k++) {
            acc += out->log2_hist[k];
            int64_t edge = k == 0 ? 0 : ((int64_t)1 << k) - 1;
            if (!got50 && acc >= q50) {
                out->row_q50 = edge < out->row_max ? edge : out->row_max;
                got50 = 1;
            }
            if (acc >= q90) {
                out->row_q90 = edge < out->row_max ? edge : out->row_max;
                break;
            }
        }
    }
    if (a->nnz > 0) {
        out->rho_sell32 = (double)sell32 / (double)a->nnz;
        int64_t nb[5], dense = 0;
        block_counts(a, nb, &dense);
        for (int lb = 1; lb <= 4; lb++)
            out->rho_bsr[lb] = (double)nb[lb] * (double)(1 << (2 * lb)) / (double)a->nnz;
        out->rho_tiles_dense = (double)dense / (double)a->nnz;
    }
    out->ndiag = count_diagonals(a, 64);
    out->colc_ok0 = sdi_fmt_colc_fits(a, 0);
    out->colc_ok5 = sdi_fmt_colc_fits(a, 5);
    return SD_OK;
}
