/* tests/cpu/test_features.c: the 36 structural features: the table, hand-computed values
 * on small matrices, brute-force references on seeded random matrices, edge cases (0×0,
 * empty, 1×1, tall), SpGEMM work (exact and sampled), input checks and allocation
 * failures. */
#include <omp.h>

#include "analysis/analysis.h"
#include "sdt.h"

/* ------------------------------------------------------------------ helpers */

static uint64_t rng_state;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* CSR from a list of (row, col) pairs (any order, duplicates merged). */
static sd_status from_pairs(int32_t rows, int32_t cols, const int *pairs, int n, sd_csr *out)
{
    sdi_coo c;
    sd_status s = sdi_coo_init(&c, rows, cols, n);
    for (int k = 0; s == SD_OK && k < n; k++)
        s = sdi_coo_push(&c, pairs[2 * k], pairs[2 * k + 1], 1.0f);
    if (s == SD_OK)
        s = sdi_coo_to_csr(&c, out, NULL);
    sdi_coo_free(&c);
    return s;
}

static int close_to(double got, double want)
{
    return fabs(got - want) <= 1e-12 * (fabs(want) > 1 ? fabs(want) : 1.0);
}

#define CHECK_F(f, idx, want)                                                              \
    SDT_CHECK(close_to((f).values[idx], (want)), "%s = %.15g, want %.15g",                 \
              sd_feature_name(idx), (f).values[idx], (double)(want))

static void check_finite(const sd_features *f, const char *what)
{
    for (int i = 0; i < SD_NUM_FEATURES; i++)
        SDT_CHECK(isfinite(f->values[i]) && f->values[i] >= 0.0, "%s: %s = %g", what,
                  sd_feature_name(i), f->values[i]);
}

/* ------------------------------------------------------------------ the table */

static void test_table(void)
{
    const char *want = "rows cols nnz density row_mean row_max row_cv row_q25 row_q50 row_q75 "
                       "empty_row_frac col_max col_cv row_span col_gap diag_frac "
                       "dense_tile_frac dense_tile_nnz_frac rho_ell rho_sell16 rho_sell32 "
                       "rho_sell512 rho_bsr4 rho_bsr8 rho_bsr16 rho_bell16 u_total u_max "
                       "u_p95 u_cv ut_total ut_cv fit_512 fit_4k fit_32k gamma";
    char got[1024] = "";
    for (int i = 0; i < SD_NUM_FEATURES; i++) {
        SDT_CHECK(sd_feature_name(i) != NULL && sd_feature_description(i) != NULL &&
                      strlen(sd_feature_description(i)) > 10,
                  "feature %d", i);
        if (i > 0)
            strcat(got, " ");
        strcat(got, sd_feature_name(i));
        SDT_CHECK(sdi_feature_index(sd_feature_name(i)) == i, "index of %s", sd_feature_name(i));
        SDT_CHECK(strchr(sd_feature_description(i), '\n') == NULL, "one line: %d", i);
    }
    SDT_CHECK(strcmp(got, want) == 0, "order:\n got %s\nwant %s", got, want);
    SDT_CHECK(sd_feature_name(-1) == NULL && sd_feature_name(36) == NULL, "out of range");
    SDT_CHECK(sd_feature_description(36) == NULL, "out of range");
    /* Groups: 18 intrinsic, 8 representation-induced, 10 operator-induced. */
    int n[3] = {0, 0, 0};
    for (int i = 0; i < SD_NUM_FEATURES; i++)
        n[sdi_feature_get(i)->group]++;
    SDT_CHECK(n[0] == 18 && n[1] == 8 && n[2] == 10, "groups %d %d %d", n[0], n[1], n[2]);
    SDT_CHECK(strcmp(sd_shape_class_name(SD_SHAPE_POWER_LAW), "power-law") == 0, "name");
    SDT_CHECK(strcmp(sd_shape_class_name((sd_shape_class)9), "unknown") == 0, "unknown");
}

/* ------------------------------------------------------------------ hand-computed values */

/* M1 (4×4): row 0 = {0,1,3}, row 1 = {1}, row 2 = {}, row 3 = {0,2,3}; nnz 7. */
static void test_hand_square(void)
{
    int p[] = {0, 0, 0, 1, 0, 3, 1, 1, 3, 0, 3, 2, 3, 3};
    sd_csr a;
    SDT_OK(from_pairs(4, 4, p, 7, &a));
    sd_features f;
    SDT_OK(sd_analyze(&a, SD_OP_SPGEMM, &f));
    CHECK_F(f, SDI_F_ROWS, 4);
    CHECK_F(f, SDI_F_COLS, 4);
    CHECK_F(f, SDI_F_NNZ, 7);
    CHECK_F(f, SDI_F_DENSITY, 7.0 / 16);          /* 7 / (4·4) */
    CHECK_F(f, SDI_F_ROW_MEAN, 1.75);             /* r = 3,1,0,3 */
    CHECK_F(f, SDI_F_ROW_MAX, 3);
    /* deviations 1.25, −0.75, −1.75, 1.25 → Σ² = 6.75, /4 = 1.6875, √ = 1.299038 */
    CHECK_F(f, SDI_F_ROW_CV, sqrt(1.6875) / 1.75);
    CHECK_F(f, SDI_F_ROW_Q25, 0.0);               /* sorted 0,1,3,3: rank 1 → 0 */
    CHECK_F(f, SDI_F_ROW_Q50, 1.0 / 1.75);        /* rank 2 → 1 */
    CHECK_F(f, SDI_F_ROW_Q75, 3.0 / 1.75);        /* rank 3 → 3 */
    CHECK_F(f, SDI_F_EMPTY_ROW_FRAC, 0.25);       /* 1 of 4 */
    CHECK_F(f, SDI_F_COL_MAX, 2.0 / 1.75);        /* c = 2,2,1,2, mean 7/4 */
    CHECK_F(f, SDI_F_COL_CV, sqrt(0.75 / 4) / 1.75); /* .25² ·3 + .75² = .75 */
    /* spans (4/4 + 1/4 + 4/4) / 3 non-empty rows */
    CHECK_F(f, SDI_F_ROW_SPAN, 2.25 / 3);
    CHECK_F(f, SDI_F_COL_GAP, 6.0 / 4);           /* gaps 1,2 and 2,1 */
    CHECK_F(f, SDI_F_DIAG_FRAC, 3.0 / 4);         /* (0,0),(1,1),(3,3) */
    CHECK_F(f, SDI_F_DENSE_TILE_FRAC, 0.0);       /* one tile, 7 < 32 entries */
    CHECK_F(f, SDI_F_DENSE_TILE_NNZ_FRAC, 0.0);
    CHECK_F(f, SDI_F_RHO_ELL, 12.0 / 7);          /* 4 rows · 3 / 7 */
    CHECK_F(f, SDI_F_RHO_SELL16, 12.0 / 7);       /* one slice of 4 rows, max 3 */
    CHECK_F(f, SDI_F_RHO_SELL32, 12.0 / 7);
    CHECK_F(f, SDI_F_RHO_SELL512, 12.0 / 7);
    CHECK_F(f, SDI_F_RHO_BSR4, 16.0 / 7);         /* one 4×4 block */
    CHECK_F(f, SDI_F_RHO_BSR8, 64.0 / 7);
    CHECK_F(f, SDI_F_RHO_BSR16, 256.0 / 7);
    CHECK_F(f, SDI_F_RHO_BELL16, 256.0 / 7);      /* ⌈4/16⌉ · 1 · 256 / 7 */
    /* A·A: u = r0+r1+r3, r1, 0, r0+r2+r3 = 7, 1, 0, 6 */
    CHECK_F(f, SDI_F_U_TOTAL, 14);
    CHECK_F(f, SDI_F_U_MAX, 7);
    CHECK_F(f, SDI_F_U_P95, 7);                   /* rank ⌈3.8⌉ = 4 of 0,1,6,7 */
    CHECK_F(f, SDI_F_U_CV, sqrt(37.0 / 4) / 3.5); /* 3.5² + 2.5² + 3.5² + 2.5² = 37 */
    /* A·Aᵀ: u_T = c0+c1+c3, c1, 0, c0+c2+c3 = 6, 2, 0, 5 */
    CHECK_F(f, SDI_F_UT_TOTAL, 13);
    CHECK_F(f, SDI_F_UT_CV, sqrt(22.75 / 4) / 3.25); /* 2.75² + 1.25² + 3.25² + 1.75² */
    CHECK_F(f, SDI_F_FIT_512, 1);
    CHECK_F(f, SDI_F_FIT_4K, 1);
    CHECK_F(f, SDI_F_FIT_32K, 1);
    /* nnz(A·A): row 0 = {0,1,3}∪{1}∪{0,2,3} = 4, row 1 = 1, row 2 = 0, row 3 = 4 → 9 */
    CHECK_F(f, SDI_F_GAMMA, 14.0 / 9);
    /* SpMV: the ten operator features are 0, the rest unchanged. */
    sd_features g;
    SDT_OK(sd_analyze(&a, SD_OP_SPMV, &g));
    for (int i = 0; i < SD_NUM_FEATURES; i++)
        SDT_CHECK(g.values[i] == (i >= SDI_F_U_TOTAL ? 0.0 : f.values[i]), "spmv %s",
                  sd_feature_name(i));
    SDT_CHECK(g.op == SD_OP_SPMV && f.op == SD_OP_SPGEMM, "op recorded");
    sd_csr_free(&a);
}

/* M2 (20×40): rows 0–15 hold columns 0–3 (a 16×4 block: one dense tile of 64), row 17
 * holds {16, 17, 35}, row 19 holds {39}; rows 16 and 18 are empty. nnz = 68. */
static void test_hand_tiles_rectangular(void)
{
    int p[2 * 68];
    int n = 0;
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < 4; j++) {
            p[2 * n] = i;
            p[2 * n + 1] = j;
            n++;
        }
    int extra[] = {17, 16, 17, 17, 17, 35, 19, 39};
    for (int k = 0; k < 4; k++, n++) {
        p[2 * n] = extra[2 * k];
        p[2 * n + 1] = extra[2 * k + 1];
    }
    sd_csr a;
    SDT_OK(from_pairs(20, 40, p, n, &a));
    sd_features f;
    SDT_OK(sd_analyze(&a, SD_OP_SPGEMM, &f));
    CHECK_F(f, SDI_F_NNZ, 68);
    CHECK_F(f, SDI_F_DENSITY, 68.0 / 800);
    CHECK_F(f, SDI_F_ROW_MEAN, 3.4);
    CHECK_F(f, SDI_F_ROW_MAX, 4);
    /* r: 16 × 4, 0, 3, 0, 1: Σ(r − 3.4)² = 16·.36 + 2·11.56 + .16 + 5.76 = 34.8 */
    CHECK_F(f, SDI_F_ROW_CV, sqrt(34.8 / 20) / 3.4);
    /* sorted 0,0,1,3,4,…: ranks 5, 10, 15 all hold 4 */
    CHECK_F(f, SDI_F_ROW_Q25, 4 / 3.4);
    CHECK_F(f, SDI_F_ROW_Q50, 4 / 3.4);
    CHECK_F(f, SDI_F_ROW_Q75, 4 / 3.4);
    CHECK_F(f, SDI_F_EMPTY_ROW_FRAC, 0.1);
    /* c: 4 × 16, 4 × 1, 32 × 0; mean 1.7; Σ(c − 1.7)² = 4·204.49 + 4·.49 + 32·2.89 = 912.4 */
    CHECK_F(f, SDI_F_COL_MAX, 16 / 1.7);
    CHECK_F(f, SDI_F_COL_CV, sqrt(912.4 / 40) / 1.7);
    /* spans: 16 × 4/40, 20/40, 1/40 over 18 non-empty rows */
    CHECK_F(f, SDI_F_ROW_SPAN, (16 * 0.1 + 0.5 + 0.025) / 18);
    CHECK_F(f, SDI_F_COL_GAP, 67.0 / 50);  /* 48 gaps of 1, then 1 + 18 over 50 pairs */
    CHECK_F(f, SDI_F_DIAG_FRAC, 5.0 / 20); /* (0,0)…(3,3) and (17,17) */
    CHECK_F(f, SDI_F_DENSE_TILE_FRAC, 1.0 / 3); /* tiles (0,0):64, (1,1):2, (1,2):2 */
    CHECK_F(f, SDI_F_DENSE_TILE_NNZ_FRAC, 64.0 / 68);
    CHECK_F(f, SDI_F_RHO_ELL, 80.0 / 68);  /* 20 · 4 */
    CHECK_F(f, SDI_F_RHO_SELL16, 76.0 / 68); /* 16·4 + 4·3 (last slice of 4 rows) */
    CHECK_F(f, SDI_F_RHO_SELL32, 80.0 / 68); /* one slice of 20 rows, max 4 */
    CHECK_F(f, SDI_F_RHO_SELL512, 80.0 / 68);
    /* 4×4 blocks: 4 for the 16×4 block, (4,4), (4,8), (4,9) → 7 */
    CHECK_F(f, SDI_F_RHO_BSR4, 16.0 * 7 / 68);
    /* 8×8 blocks: (0,0), (1,0), (2,2), (2,4) (cols 35 and 39 share block col 4) → 4 */
    CHECK_F(f, SDI_F_RHO_BSR8, 64.0 * 4 / 68);
    CHECK_F(f, SDI_F_RHO_BSR16, 256.0 * 3 / 68);
    CHECK_F(f, SDI_F_RHO_BELL16, 2.0 * 2 * 256 / 68); /* 2 block rows, at most 2 blocks */
    /* Not square: the product is A·Aᵀ, u(i) = Σ c_k: 16 × 64, 0, 3, 0, 1 */
    CHECK_F(f, SDI_F_U_TOTAL, 1028);
    CHECK_F(f, SDI_F_U_MAX, 64);
    CHECK_F(f, SDI_F_U_P95, 64); /* rank 19 of 0,0,1,3,64… */
    /* Σ(u − 51.4)² = 16·158.76 + 2·2641.96 + 2540.16 + 2342.56 = 12706.8 */
    CHECK_F(f, SDI_F_U_CV, sqrt(12706.8 / 20) / 51.4);
    CHECK_F(f, SDI_F_UT_TOTAL, 1028);
    CHECK_F(f, SDI_F_UT_CV, sqrt(12706.8 / 20) / 51.4);
    CHECK_F(f, SDI_F_FIT_512, 1);
    CHECK_F(f, SDI_F_FIT_4K, 1);
    CHECK_F(f, SDI_F_FIT_32K, 1);
    /* nnz(A·Aᵀ): rows 0–15 all meet each other (16 × 16), rows 17 and 19 only themselves */
    CHECK_F(f, SDI_F_GAMMA, 1028.0 / 258);
    sd_csr_free(&a);
}

/* fit_h and p95 with rows of u above the thresholds: A (3×600) row 0 = 600 columns,
 * rows 1, 2 = {0}; A·Aᵀ: u_0 = Σ c_k = 599·1 + 3 = 602, u_1 = u_2 = c_0 = 3. */
static void test_hand_fit(void)
{
    int p[2 * 602];
    int n = 0;
    for (int j = 0; j < 600; j++, n++) {
        p[2 * n] = 0;
        p[2 * n + 1] = j;
    }
    p[2 * n] = 1, p[2 * n + 1] = 0, n++;
    p[2 * n] = 2, p[2 * n + 1] = 0, n++;
    sd_csr a;
    SDT_OK(from_pairs(3, 600, p, n, &a));
    sd_features f;
    SDT_OK(sd_analyze(&a, SD_OP_SPGEMM, &f));
    CHECK_F(f, SDI_F_U_TOTAL, 608);
    CHECK_F(f, SDI_F_U_MAX, 602);
    CHECK_F(f, SDI_F_U_P95, 602); /* rank ⌈2.85⌉ = 3 */
    CHECK_F(f, SDI_F_FIT_512, 2.0 / 3);
    CHECK_F(f, SDI_F_FIT_4K, 1);
    /* C = A·Aᵀ is 3×3 and full (every row meets row 0 in column 0) */
    CHECK_F(f, SDI_F_GAMMA, 608.0 / 9);
    CHECK_F(f, SDI_F_ROW_Q25, 1 / (602.0 / 3)); /* sorted 1,1,600: rank 1 */
    CHECK_F(f, SDI_F_ROW_Q75, 600 / (602.0 / 3)); /* rank ⌈9/4⌉ = 3 */
    CHECK_F(f, SDI_F_DIAG_FRAC, 1.0 / 3);
    sd_csr_free(&a);
}

/* ------------------------------------------------------------------ brute-force reference */

static int cmp_i64_t(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

static double cv_of(const int64_t *v, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += (double)v[i];
    if (n == 0 || s == 0)
        return 0;
    double m = s / n, q = 0;
    for (int i = 0; i < n; i++)
        q += ((double)v[i] - m) * ((double)v[i] - m);
    return sqrt(q / n) / m;
}

static int64_t rank_of(int64_t *v, int n, int num, int den)
{
    if (n == 0)
        return 0;
    qsort(v, (size_t)n, sizeof *v, cmp_i64_t);
    int64_t k = ((int64_t)n * num + den - 1) / den;
    return v[(k < 1 ? 1 : k) - 1];
}

/* Occupied b×b blocks counted on a full block grid. */
static void block_counts(const unsigned char *d, int rows, int cols, int b, int64_t *occ,
                         int64_t *dense, int64_t *dense_nnz, int64_t *row_max)
{
    int br = (rows + b - 1) / b, bc = (cols + b - 1) / b;
    *occ = *dense = *dense_nnz = *row_max = 0;
    for (int I = 0; I < br; I++) {
        int64_t in_row = 0;
        for (int J = 0; J < bc; J++) {
            int64_t c = 0;
            for (int i = I * b; i < (I + 1) * b && i < rows; i++)
                for (int j = J * b; j < (J + 1) * b && j < cols; j++)
                    c += d[(size_t)i * cols + j];
            if (c > 0) {
                (*occ)++;
                in_row++;
            }
            if (c >= 32) {
                (*dense)++;
                *dense_nnz += c;
            }
        }
        if (in_row > *row_max)
            *row_max = in_row;
    }
}

static double rdiv(double a, double b) { return b != 0 ? a / b : 0; }

/* Every feature from the definitions, on a dense copy (small matrices only). */
static void reference_features(const sd_csr *a, double *v)
{
    int rows = a->rows, cols = a->cols;
    memset(v, 0, SD_NUM_FEATURES * sizeof *v);
    unsigned char *d = calloc((size_t)rows * cols + 1, 1);
    int64_t *r = calloc((size_t)rows + 1, sizeof *r), *c = calloc((size_t)cols + 1, sizeof *c);
    int64_t *tmp = calloc((size_t)rows + 1, sizeof *tmp);
    for (int i = 0; i < rows; i++)
        for (int64_t k = a->rowptr[i]; k < a->rowptr[i + 1]; k++)
            d[(size_t)i * cols + a->colind[k]] = 1;
    int64_t nnz = 0, nonempty = 0, span = 0, gaps = 0, pairs = 0, diag = 0;
    for (int i = 0; i < rows; i++) {
        int first = -1, last = -1, prev = -1;
        for (int j = 0; j < cols; j++) {
            if (!d[(size_t)i * cols + j])
                continue;
            r[i]++;
            c[j]++;
            nnz++;
            if (i == j)
                diag++;
            if (first < 0)
                first = j;
            if (prev >= 0) {
                gaps += j - prev;
                pairs++;
            }
            prev = last = j;
        }
        if (first >= 0) {
            nonempty++;
            span += last - first + 1;
        }
    }
    double mr = rdiv((double)nnz, rows), mc = rdiv((double)nnz, cols);
    int64_t rmax = 0, cmax = 0;
    for (int i = 0; i < rows; i++)
        rmax = r[i] > rmax ? r[i] : rmax;
    for (int j = 0; j < cols; j++)
        cmax = c[j] > cmax ? c[j] : cmax;
    v[SDI_F_ROWS] = rows;
    v[SDI_F_COLS] = cols;
    v[SDI_F_NNZ] = (double)nnz;
    v[SDI_F_DENSITY] = rdiv((double)nnz, (double)rows * cols);
    v[SDI_F_ROW_MEAN] = mr;
    v[SDI_F_ROW_MAX] = (double)rmax;
    v[SDI_F_ROW_CV] = cv_of(r, rows);
    int qn[3] = {1, 1, 3}, qd[3] = {4, 2, 4};
    for (int q = 0; q < 3; q++) {
        memcpy(tmp, r, (size_t)rows * sizeof *r);
        v[SDI_F_ROW_Q25 + q] = rdiv((double)rank_of(tmp, rows, qn[q], qd[q]), mr);
    }
    v[SDI_F_EMPTY_ROW_FRAC] = rdiv((double)(rows - nonempty), rows);
    v[SDI_F_COL_MAX] = rdiv((double)cmax, mc);
    v[SDI_F_COL_CV] = cv_of(c, cols);
    v[SDI_F_ROW_SPAN] = rdiv(rdiv((double)span, (double)nonempty), cols);
    v[SDI_F_COL_GAP] = rdiv((double)gaps, (double)pairs);
    v[SDI_F_DIAG_FRAC] = rdiv((double)diag, rows < cols ? rows : cols);
    int64_t occ, dense, dnnz, bmax;
    block_counts(d, rows, cols, 16, &occ, &dense, &dnnz, &bmax);
    v[SDI_F_DENSE_TILE_FRAC] = rdiv((double)dense, (double)occ);
    v[SDI_F_DENSE_TILE_NNZ_FRAC] = rdiv((double)dnnz, (double)nnz);
    v[SDI_F_RHO_BSR16] = rdiv(256.0 * occ, (double)nnz);
    v[SDI_F_RHO_BELL16] = rdiv((double)((rows + 15) / 16) * bmax * 256.0, (double)nnz);
    block_counts(d, rows, cols, 8, &occ, &dense, &dnnz, &bmax);
    v[SDI_F_RHO_BSR8] = rdiv(64.0 * occ, (double)nnz);
    block_counts(d, rows, cols, 4, &occ, &dense, &dnnz, &bmax);
    v[SDI_F_RHO_BSR4] = rdiv(16.0 * occ, (double)nnz);
    v[SDI_F_RHO_ELL] = rdiv((double)rows * rmax, (double)nnz);
    int sc[3] = {16, 32, 512};
    for (int q = 0; q < 3; q++) {
        double slots = 0;
        for (int s0 = 0; s0 < rows; s0 += sc[q]) {
            int64_t mx = 0;
            int s1 = s0 + sc[q] < rows ? s0 + sc[q] : rows;
            for (int i = s0; i < s1; i++)
                mx = r[i] > mx ? r[i] : mx;
            slots += (double)(s1 - s0) * mx;
        }
        v[SDI_F_RHO_SELL16 + q] = rdiv(slots, (double)nnz);
    }
    free(d);
    free(r);
    free(c);
    free(tmp);
}

/* u(i) by explicit loops and nnz(C) by a dense boolean product, for C = A·B (B given as
 * a dense 0/1 matrix brows × bcols). */
static void reference_spgemm(const sd_csr *a, const unsigned char *b, int bcols, int64_t *u,
                             int64_t *nnz_c)
{
    *nnz_c = 0;
    unsigned char *row = malloc((size_t)bcols + 1);
    for (int i = 0; i < a->rows; i++) {
        u[i] = 0;
        memset(row, 0, (size_t)bcols);
        for (int64_t k = a->rowptr[i]; k < a->rowptr[i + 1]; k++)
            for (int j = 0; j < bcols; j++)
                if (b[(size_t)a->colind[k] * bcols + j]) {
                    u[i]++;
                    row[j] = 1;
                }
        for (int j = 0; j < bcols; j++)
            *nnz_c += row[j];
    }
    free(row);
}

static void reference_operator(const sd_csr *a, double *v)
{
    int rows = a->rows, cols = a->cols;
    /* B = A when square, Aᵀ otherwise; Bt = Aᵀ always (for ut). */
    unsigned char *A = calloc((size_t)rows * cols + 1, 1), *T = calloc((size_t)rows * cols + 1, 1);
    for (int i = 0; i < rows; i++)
        for (int64_t k = a->rowptr[i]; k < a->rowptr[i + 1]; k++) {
            A[(size_t)i * cols + a->colind[k]] = 1;
            T[(size_t)a->colind[k] * rows + i] = 1;
        }
    int64_t *u = calloc((size_t)rows + 1, sizeof *u), *ut = calloc((size_t)rows + 1, sizeof *ut);
    int64_t nc = 0, nct = 0;
    if (rows == cols)
        reference_spgemm(a, A, cols, u, &nc);
    else
        reference_spgemm(a, T, rows, u, &nc);
    reference_spgemm(a, T, rows, ut, &nct);
    double tot = 0, tott = 0;
    int64_t mx = 0, f[3] = {0, 0, 0};
    for (int i = 0; i < rows; i++) {
        tot += (double)u[i];
        tott += (double)ut[i];
        mx = u[i] > mx ? u[i] : mx;
        f[0] += u[i] <= 512;
        f[1] += u[i] <= 4096;
        f[2] += u[i] <= 32768;
    }
    v[SDI_F_U_TOTAL] = tot;
    v[SDI_F_U_MAX] = (double)mx;
    v[SDI_F_U_CV] = cv_of(u, rows);
    v[SDI_F_UT_TOTAL] = tott;
    v[SDI_F_UT_CV] = cv_of(ut, rows);
    for (int q = 0; q < 3; q++)
        v[SDI_F_FIT_512 + q] = rdiv((double)f[q], rows);
    v[SDI_F_GAMMA] = rdiv(tot, (double)nc);
    v[SDI_F_U_P95] = (double)rank_of(u, rows, 95, 100);
    free(A);
    free(T);
    free(u);
    free(ut);
}

/* Random matrix: a background density, optional dense blocks, optional long row. */
static sd_status random_matrix(int rows, int cols, double density, int blocks, int long_row,
                               sd_csr *out)
{
    sdi_coo c;
    sd_status s = sdi_coo_init(&c, rows, cols, 0);
    for (int i = 0; s == SD_OK && i < rows; i++) {
        if (rnd() % 5 == 0)
            continue; /* empty rows */
        for (int j = 0; s == SD_OK && j < cols; j++)
            if ((double)(rnd() % 1000000) < density * 1e6)
                s = sdi_coo_push(&c, i, j, 1.0f);
    }
    for (int b = 0; s == SD_OK && b < blocks && rows > 0 && cols > 0; b++) {
        int i0 = (int)(rnd() % (uint64_t)rows), j0 = (int)(rnd() % (uint64_t)cols);
        int h = 1 + (int)(rnd() % 24), w = 1 + (int)(rnd() % 24);
        for (int i = i0; s == SD_OK && i < i0 + h && i < rows; i++)
            for (int j = j0; s == SD_OK && j < j0 + w && j < cols; j++)
                s = sdi_coo_push(&c, i, j, 2.0f);
    }
    if (s == SD_OK && long_row && rows > 0) {
        int i = (int)(rnd() % (uint64_t)rows);
        for (int j = 0; s == SD_OK && j < cols; j++)
            s = sdi_coo_push(&c, i, j, 1.0f);
    }
    if (s == SD_OK)
        s = sdi_coo_to_csr(&c, out, NULL);
    sdi_coo_free(&c);
    return s;
}

static void compare_all(const sd_csr *a, const char *what)
{
    double want[SD_NUM_FEATURES];
    reference_features(a, want);
    reference_operator(a, want);
    sd_features f;
    SDT_OK(sd_analyze(a, SD_OP_SPGEMM, &f));
    for (int i = 0; i < SD_NUM_FEATURES; i++)
        SDT_CHECK(fabs(f.values[i] - want[i]) <= 1e-9 * (fabs(want[i]) > 1 ? fabs(want[i]) : 1),
                  "%s (%dx%d, nnz %lld): %s = %.15g, reference %.15g", what, a->rows, a->cols,
                  (long long)a->nnz, sd_feature_name(i), f.values[i], want[i]);
    check_finite(&f, what);
}

static void test_brute_force_random(void)
{
    rng_state = sdt_seed * 0x9e3779b97f4a7c15ULL + 1;
    /* rows, cols, density, dense blocks, long row */
    struct { int r, c; double d; int b, l; } cases[] = {
        {50, 50, 0.05, 0, 0},    {64, 64, 0.02, 6, 0},  {17, 130, 0.1, 2, 1},
        {300, 40, 0.05, 3, 0},   {40, 300, 0.03, 3, 1}, {1, 200, 0.3, 0, 0},
        {200, 1, 0.5, 0, 0},     {129, 129, 0.01, 10, 1}, {33, 33, 0.9, 0, 0},
        {257, 520, 0.004, 8, 1}, {520, 257, 0.004, 8, 1}, {16, 16, 1.0, 0, 0},
    };
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
        for (int rep = 0; rep < 3; rep++) {
            sd_csr a;
            SDT_OK(random_matrix(cases[t].r, cases[t].c, cases[t].d, cases[t].b, cases[t].l, &a));
            char what[64];
            snprintf(what, sizeof what, "case %zu rep %d", t, rep);
            compare_all(&a, what);
            sd_csr_free(&a);
        }
    }
}

/* A general A·B (not A·A): u and nnz(C) against the dense reference, exact path. */
static void test_general_product(void)
{
    rng_state = sdt_seed * 31 + 7;
    for (int rep = 0; rep < 4; rep++) {
        sd_csr a, b;
        SDT_OK(random_matrix(60 + rep, 45, 0.08, 2, rep & 1, &a));
        SDT_OK(random_matrix(45, 70 - rep, 0.06, 3, 0, &b));
        unsigned char *B = calloc((size_t)b.rows * b.cols + 1, 1);
        for (int i = 0; i < b.rows; i++)
            for (int64_t k = b.rowptr[i]; k < b.rowptr[i + 1]; k++)
                B[(size_t)i * b.cols + b.colind[k]] = 1;
        int64_t *u = calloc((size_t)a.rows, sizeof *u), nc = 0;
        reference_spgemm(&a, B, b.cols, u, &nc);
        double tot = 0;
        for (int i = 0; i < a.rows; i++)
            tot += (double)u[i];
        sdi_spgemm_stats st;
        SDT_OK(sdi_spgemm_work(&a, &b, NULL, &st));
        SDT_CHECK(st.exact && st.u_total == tot && st.nnz_c == (double)nc,
                  "A·B: total %g vs %g, nnz(C) %g vs %lld", st.u_total, tot, st.nnz_c,
                  (long long)nc);
        SDT_CHECK(close_to(st.u_cv, cv_of(u, a.rows)), "cv");
        /* Sampling with a budget covering everything is exact too. */
        sdi_spgemm_opts o = sdi_spgemm_opts_default();
        o.force_sampling = 1;
        SDT_OK(sdi_spgemm_work(&a, &b, &o, &st));
        SDT_CHECK(st.exact && st.nnz_c == (double)nc, "full sample %g vs %lld", st.nnz_c,
                  (long long)nc);
        free(B);
        free(u);
        sd_csr_free(&a);
        sd_csr_free(&b);
    }
    sd_csr a, b;
    SDT_OK(random_matrix(5, 6, 0.5, 0, 0, &a));
    SDT_OK(random_matrix(5, 6, 0.5, 0, 0, &b));
    sdi_spgemm_stats st;
    SDT_STATUS(sdi_spgemm_work(&a, &b, NULL, &st), SD_ERR_INVALID_ARG);
    SDT_CHECK(strstr(sd_last_error(), "inner sizes") != NULL, "message %s", sd_last_error());
    sd_csr_free(&a);
    sd_csr_free(&b);
}

/* Sampled nnz(C): a power-law-like matrix where the sample must extrapolate. Hash and
 * bitmap accumulators both exercised (rows with u > 16384). */
static void test_sampling_estimate(void)
{
    rng_state = sdt_seed * 7 + 3;
    int n = 3000;
    sdi_coo c;
    SDT_OK(sdi_coo_init(&c, n, n, 0));
    for (int i = 0; i < n; i++) {
        /* lengths ~ 4000 / (i + 1) + 2: a few long rows, many short ones */
        int len = 4000 / (i + 1) + 2;
        for (int k = 0; k < len; k++)
            SDT_OK(sdi_coo_push(&c, i, (int)(rnd() % (uint64_t)n), 1.0f));
    }
    sd_csr a;
    SDT_OK(sdi_coo_to_csr(&c, &a, NULL));
    sdi_coo_free(&c);
    sdi_spgemm_stats ex, sa, sb;
    SDT_OK(sdi_spgemm_work(&a, &a, NULL, &ex));
    SDT_CHECK(ex.exact && ex.u_max > 16384, "exact path, bitmap rows (u_max %g)", ex.u_max);
    sdi_spgemm_opts o = sdi_spgemm_opts_default();
    o.force_sampling = 1;
    o.sample_products = ex.u_total * 0.05;
    o.min_per_stratum = 8;
    SDT_OK(sdi_spgemm_work(&a, &a, &o, &sa));
    SDT_CHECK(!sa.exact && sa.rows_computed < n && sa.nnz_c_se > 0, "sampled: %lld rows",
              (long long)sa.rows_computed);
    SDT_CHECK(sa.u_total == ex.u_total && sa.u_p95 == ex.u_p95, "u unaffected by sampling");
    double err = fabs(sa.nnz_c - ex.nnz_c) / ex.nnz_c;
    SDT_CHECK(err < 0.05, "estimate %g vs exact %g (error %.3f, se %g)", sa.nnz_c, ex.nnz_c,
              err, sa.nnz_c_se);
    SDT_CHECK(fabs(sa.nnz_c - ex.nnz_c) < 6 * sa.nnz_c_se + 1, "within 6 standard errors");
    /* Deterministic: same seed, same answer; any thread count, same answer. */
    int threads = omp_get_max_threads();
    omp_set_num_threads(1);
    SDT_OK(sdi_spgemm_work(&a, &a, &o, &sb));
    omp_set_num_threads(threads);
    SDT_CHECK(sb.nnz_c == sa.nnz_c && sb.rows_computed == sa.rows_computed, "deterministic");
    o.seed ^= 12345;
    SDT_OK(sdi_spgemm_work(&a, &a, &o, &sb));
    SDT_CHECK(fabs(sb.nnz_c - ex.nnz_c) / ex.nnz_c < 0.05, "another seed: %g", sb.nnz_c);
    sd_csr_free(&a);
}

/* The same features with one thread and with several. */
static void test_thread_independence(void)
{
    rng_state = sdt_seed * 5 + 11;
    sd_csr a;
    SDT_OK(random_matrix(700, 650, 0.01, 20, 1, &a));
    int threads = omp_get_max_threads();
    sd_features f1, f4;
    omp_set_num_threads(1);
    SDT_OK(sd_analyze(&a, SD_OP_SPGEMM, &f1));
    omp_set_num_threads(4);
    SDT_OK(sd_analyze(&a, SD_OP_SPGEMM, &f4));
    omp_set_num_threads(threads);
    SDT_CHECK(memcmp(f1.values, f4.values, sizeof f1.values) == 0 &&
                  f1.shape_class == f4.shape_class,
              "features differ between 1 and 4 threads");
    sd_csr_free(&a);
}

/* ------------------------------------------------------------------ edge cases */

static void test_edge_cases(void)
{
    int64_t rp0[1] = {0};
    sd_csr z = {0, 0, 0, rp0, NULL, NULL};
    for (int op = 0; op < 3; op++) {
        sd_features f;
        SDT_OK(sd_analyze(&z, (sd_op)op, &f));
        for (int i = 0; i < SD_NUM_FEATURES; i++)
            SDT_CHECK(f.values[i] == 0.0, "0x0 op %d: %s = %g", op, sd_feature_name(i),
                      f.values[i]);
        SDT_CHECK(f.shape_class == SD_SHAPE_UNIFORM, "0x0 shape");
    }
    /* 0×5 and 5×0 */
    sd_csr z2 = {0, 5, 0, rp0, NULL, NULL};
    sd_features f;
    SDT_OK(sd_analyze(&z2, SD_OP_SPGEMM, &f));
    check_finite(&f, "0x5");
    CHECK_F(f, SDI_F_COLS, 5);
    int64_t rp5[6] = {0, 0, 0, 0, 0, 0};
    sd_csr z3 = {5, 0, 0, rp5, NULL, NULL};
    SDT_OK(sd_analyze(&z3, SD_OP_SPGEMM, &f));
    check_finite(&f, "5x0");
    CHECK_F(f, SDI_F_EMPTY_ROW_FRAC, 1.0);
    CHECK_F(f, SDI_F_FIT_512, 1.0); /* u = 0 ≤ 512 for every row */
    CHECK_F(f, SDI_F_GAMMA, 0.0);
    /* 5×5 without entries */
    sd_csr z4 = {5, 5, 0, rp5, NULL, NULL};
    SDT_OK(sd_analyze(&z4, SD_OP_SPGEMM, &f));
    check_finite(&f, "5x5 empty");
    for (int i = 0; i < SD_NUM_FEATURES; i++) {
        double want = i == SDI_F_ROWS || i == SDI_F_COLS ? 5.0
                      : (i == SDI_F_EMPTY_ROW_FRAC || i >= SDI_F_FIT_512) && i != SDI_F_GAMMA ? 1.0
                                                                                           : 0.0;
        SDT_CHECK(f.values[i] == want, "5x5 empty: %s = %g", sd_feature_name(i), f.values[i]);
    }
    /* 1×1 with its entry: u = 1, C = 1×1 full, γ = 1. */
    int64_t rp1[2] = {0, 1};
    int32_t ci1[1] = {0};
    float v1[1] = {3};
    sd_csr one = {1, 1, 1, rp1, ci1, v1};
    SDT_OK(sd_analyze(&one, SD_OP_SPGEMM, &f));
    CHECK_F(f, SDI_F_DENSITY, 1);
    CHECK_F(f, SDI_F_ROW_CV, 0);
    CHECK_F(f, SDI_F_ROW_Q50, 1);
    CHECK_F(f, SDI_F_DIAG_FRAC, 1);
    CHECK_F(f, SDI_F_ROW_SPAN, 1);
    CHECK_F(f, SDI_F_COL_GAP, 0); /* no pairs */
    CHECK_F(f, SDI_F_RHO_BSR16, 256);
    CHECK_F(f, SDI_F_RHO_BELL16, 256);
    CHECK_F(f, SDI_F_GAMMA, 1);
    SDT_CHECK(f.shape_class == SD_SHAPE_UNIFORM, "1x1 uniform");
    /* 1×1 without entry */
    int64_t rp1e[2] = {0, 0};
    sd_csr onee = {1, 1, 0, rp1e, NULL, NULL};
    SDT_OK(sd_analyze(&onee, SD_OP_SPGEMM, &f));
    check_finite(&f, "1x1 empty");
    CHECK_F(f, SDI_F_DIAG_FRAC, 0);
    /* Tall (rows ≫ cols) and a row as long as the matrix is wide. */
    rng_state = 99;
    sd_csr t;
    SDT_OK(random_matrix(1000, 3, 0.6, 0, 1, &t));
    compare_all(&t, "tall 1000x3");
    sd_csr_free(&t);
}

/* ------------------------------------------------------------------ input checks */

static void test_bad_input(void)
{
    sd_features f;
    memset(&f, 0x7f, sizeof f);
    SDT_STATUS(sd_analyze(NULL, SD_OP_SPMV, &f), SD_ERR_INVALID_ARG);
    SDT_CHECK(f.values[0] == 0 && f.values[35] == 0, "zeroed after failure");
    SDT_STATUS(sd_analyze(NULL, SD_OP_SPMV, NULL), SD_ERR_INVALID_ARG);
    int64_t rp[] = {0, 1, 3, 5};
    int32_t ci[] = {0, 1, 2, 2, 1}; /* row 2 unsorted */
    float v[] = {1, 1, 1, 1, 1};
    sd_csr a = {3, 3, 5, rp, ci, v};
    memset(&f, 0x7f, sizeof f);
    SDT_STATUS(sd_analyze(&a, SD_OP_SPMV, &f), SD_ERR_INVALID_ARG);
    SDT_CHECK(strstr(sd_last_error(), "row 2") != NULL && strstr(sd_last_error(), "sd_analyze"),
              "message '%s'", sd_last_error());
    SDT_CHECK(f.values[0] == 0 && f.shape_class == 0, "zeroed after failure");
    ci[3] = 0;
    ci[4] = 3; /* out of range */
    SDT_STATUS(sd_analyze(&a, SD_OP_SPGEMM, &f), SD_ERR_INVALID_ARG);
    SDT_CHECK(strstr(sd_last_error(), "row 2") != NULL, "message '%s'", sd_last_error());
    ci[4] = 2;
    rp[2] = 0; /* rowptr decreases at row 1 */
    SDT_STATUS(sd_analyze(&a, SD_OP_SPGEMM, &f), SD_ERR_INVALID_ARG);
    SDT_CHECK(strstr(sd_last_error(), "row 1") != NULL, "message '%s'", sd_last_error());
    rp[2] = 3;
    SDT_OK(sd_analyze(&a, SD_OP_SPMM, &f));
    SDT_STATUS(sd_analyze(&a, (sd_op)7, &f), SD_ERR_INVALID_ARG);
    rp[3] = 4; /* rowptr[rows] ≠ nnz */
    SDT_STATUS(sd_analyze(&a, SD_OP_SPMV, &f), SD_ERR_INVALID_ARG);
}

/* Every allocation of sd_analyze fails in turn: status OOM, output zeroed, no leak. */
static void test_alloc_failures(void)
{
    rng_state = 4242;
    sd_csr sq, rect;
    SDT_OK(random_matrix(90, 90, 0.05, 2, 1, &sq));
    SDT_OK(random_matrix(70, 110, 0.05, 2, 0, &rect));
    sd_csr *ms[2] = {&sq, &rect};
    for (int m = 0; m < 2; m++) {
        long long base = sdi_alloc_live_bytes();
        int ok = 0;
        for (long n = 0; n < 200 && !ok; n++) {
            sd_features f;
            sdi_alloc_fail_after(n);
            sd_status s = sd_analyze(ms[m], SD_OP_SPGEMM, &f);
            sdi_alloc_fail_after(-1);
            if (s == SD_OK) {
                ok = 1;
            } else {
                SDT_CHECK(s == SD_ERR_OUT_OF_MEMORY, "status %s", sd_status_string(s));
                SDT_CHECK(f.values[SDI_F_NNZ] == 0, "zeroed after failure at %ld", n);
            }
            SDT_CHECK(sdi_alloc_live_bytes() == base, "leak at %ld: %lld bytes", n,
                      sdi_alloc_live_bytes() - base);
        }
        SDT_CHECK(ok, "never succeeded");
    }
    sd_csr_free(&sq);
    sd_csr_free(&rect);
}

/* ------------------------------------------------------------------ GPU profiles */

static void test_gpu_profiles(void)
{
    sdi_gpu_props p;
    const char *const *names = sdi_gpu_profile_names();
    int n = 0;
    for (; names[n] != NULL; n++) {
        SDT_OK(sdi_gpu_profile(names[n], &p));
        SDT_CHECK(p.sm_count > 0 && p.l2_bytes > 0 && p.smem_per_sm >= p.smem_per_cta_optin &&
                      p.smem_per_cta_optin >= p.smem_per_cta_default &&
                      p.smem_per_cta_default == 49152 && p.regs_per_sm == 65536 &&
                      p.max_threads_per_cta == 1024 && p.mem_bandwidth > 5e11 &&
                      p.global_mem_bytes > 0 && p.from_device == 0 && p.max_ctas_per_sm >= 16 &&
                      p.warp_size == 32,
                  "profile %s", names[n]);
    }
    SDT_CHECK(n == 6, "%d profiles", n);
    SDT_OK(sdi_gpu_profile("nvidia-h200", &p));
    SDT_CHECK(p.sm_count == 132 && p.cc_major == 9 && p.smem_per_cta_optin == 227 * 1024 &&
                  p.smem_per_sm == 228 * 1024 && p.max_threads_per_sm == 2048,
              "H200");
    SDT_OK(sdi_gpu_profile("NVIDIA A100-SXM4-80GB", &p));
    SDT_CHECK(p.sm_count == 108 && p.cc_major == 8 && p.cc_minor == 0, "A100 by CUDA name");
    SDT_OK(sdi_gpu_profile("NVIDIA GeForce RTX 4090", &p));
    SDT_CHECK(p.cc_minor == 9 && p.max_threads_per_sm == 1536, "4090");
    SDT_OK(sdi_gpu_profile("rtx_pro_6000", &p));
    SDT_CHECK(p.cc_major == 12 && p.sm_count == 188, "RTX PRO 6000");
    SDT_OK(sdi_gpu_profile("  RTX   a6000 ", &p));
    SDT_CHECK(p.sm_count == 84, "A6000");
    SDT_STATUS(sdi_gpu_profile("V100", &p), SD_ERR_INVALID_ARG);
    SDT_CHECK(strstr(sd_last_error(), "H200") && strstr(sd_last_error(), "V100"), "message %s",
              sd_last_error());
    SDT_CHECK(p.sm_count == 0, "zeroed");
    /* Completing a device-read struct: facts by compute capability. */
    sdi_gpu_props d;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "NVIDIA H200");
    d.cc_major = 9;
    sdi_gpu_props_complete(&d);
    SDT_CHECK(d.max_ctas_per_sm == 32 && d.max_regs_per_thread == 255 &&
                  d.smem_reserved_per_cta == 1024 && d.warp_size == 32 && d.copy_bandwidth > 0,
              "complete H200");
    memset(&d, 0, sizeof d);
    d.cc_major = 8;
    d.cc_minor = 6;
    sdi_gpu_props_complete(&d);
    SDT_CHECK(d.max_ctas_per_sm == 16 && d.copy_bandwidth == 0, "complete sm_86");
}

int main(void)
{
    sdt_init("test_features");
    SDT_RUN(test_table);
    SDT_RUN(test_hand_square);
    SDT_RUN(test_hand_tiles_rectangular);
    SDT_RUN(test_hand_fit);
    SDT_RUN(test_brute_force_random);
    SDT_RUN(test_general_product);
    SDT_RUN(test_sampling_estimate);
    SDT_RUN(test_thread_independence);
    SDT_RUN(test_edge_cases);
    SDT_RUN(test_bad_input);
    SDT_RUN(test_alloc_failures);
    SDT_RUN(test_gpu_profiles);
    return sdt_finish();
}
