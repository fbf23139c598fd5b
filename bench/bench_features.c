/* bench/bench_features.c: the analysis stage's speed and the SpGEMM estimate's accuracy.
 *
 *   bench_features [--nnz N] [--avg R] [--family uniform|powerlaw] [--threads T] [--reps n]
 *       generates a square matrix of N entries (default 1e8; rows = cols = N / R, R = 16)
 *       with its own fast seeded generator and times sd_analyze for SpMV (check + the 26
 *       structural features + shape) and for SpGEMM (all 36, the nnz(C) estimate included):
 *       minimum and mean wall time, and the process CPU time of the fastest repetition; and
 *       SpMV synthesis' block statistics (sdi_spmv_stats_compute), the minimum wall time.
 *   bench_features --gamma-error [--dir DIR] [--seeds S] [--threads T] [--max-budget P]
 *       for every matrix of DIR/suitesparse/INDEX.tsv (DIR defaults to SD_MATRICES_DIR):
 *       exact nnz(C) of the requested product (A·A, or A·Aᵀ when not square) against the
 *       stratified estimate forced at sample budgets of 0.5 %, 2 % and 10 % of the exact
 *       computation's cost (Σu + 8·nnz(A)), S seeds each (default 5); relative errors of γ
 *       per matrix and their max / median (budgets above P = 1e9 are skipped); and the
 *       default path's error (sampled only where the exact cost exceeds 2e8).
 * Prints one JSON object on stdout; progress on stderr. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis/analysis.h"
#include "analysis/plan_stats.h"

/* CPU seconds of the whole process (all threads): on a shared machine the wall time
 * includes waiting for other processes; CPU time / threads does not. */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static int cmp_i32(const void *x, const void *y)
{
    int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
    return (a > b) - (a < b);
}

/* Row i's length: uniform family avg/2 .. 3avg/2; powerlaw family a Pareto tail of
 * index 1.2 scaled to mean ≈ avg (capped at cols / 4). */
static int64_t row_len(uint64_t seed, int64_t i, int64_t avg, int powerlaw, int64_t cols)
{
    uint64_t h = mix(seed ^ mix((uint64_t)i));
    if (!powerlaw)
        return avg / 2 + (int64_t)(h % (uint64_t)(avg + 1));
    double u = ((double)(h >> 11) + 0.5) / 9007199254740992.0;
    double xm = (double)avg * 0.2 / 1.2; /* mean of a Pareto(1.2, xm) is 6·xm */
    double l = xm * pow(u, -1.0 / 1.2);
    int64_t len = (int64_t)l + 1;
    return len > cols / 4 ? cols / 4 : len;
}

/* A square matrix of about `nnz` entries: row lengths by family, sorted distinct
 * uniformly random columns; generated in parallel, deterministic by seed. */
static sd_status generate(int64_t nnz_target, int64_t avg, int powerlaw, uint64_t seed, sd_csr *a)
{
    int64_t rows = nnz_target / avg;
    if (rows < 1)
        rows = 1;
    if (rows > INT32_MAX)
        return SDI_ERR(SD_ERR_INVALID_ARG, "too many rows (%lld)", (long long)rows);
    int64_t *rp = sdi_malloc_array((size_t)rows + 1, sizeof *rp);
    if (rp == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "row pointers");
    rp[0] = 0;
    for (int64_t i = 0; i < rows; i++)
        rp[i + 1] = rp[i] + row_len(seed, i, avg, powerlaw, rows);
    sd_status s = sdi_csr_alloc(a, (int32_t)rows, (int32_t)rows, rp[rows]);
    if (s != SD_OK) {
        sdi_free(rp);
        return s;
    }
    memcpy(a->rowptr, rp, ((size_t)rows + 1) * sizeof *rp);
    sdi_free(rp);
    const int64_t cols = rows;
#pragma omp parallel for schedule(dynamic, 1024)
    for (int64_t i = 0; i < rows; i++) {
        int32_t *c = a->colind + a->rowptr[i];
        int64_t len = a->rowptr[i + 1] - a->rowptr[i];
        uint64_t st = mix(seed * 31 + (uint64_t)i);
        for (int64_t k = 0; k < len; k++) {
            st = mix(st);
            c[k] = (int32_t)(st % (uint64_t)cols);
        }
        if (len <= 32) {
            for (int64_t x = 1; x < len; x++) {
                int32_t key = c[x];
                int64_t y = x - 1;
                while (y >= 0 && c[y] > key) {
                    c[y + 1] = c[y];
                    y--;
                }
                c[y + 1] = key;
            }
        } else {
            qsort(c, (size_t)len, sizeof *c, cmp_i32);
        }
        /* Collisions are rare: push them apart, keeping the row inside [0, cols). */
        for (int64_t k = 1; k < len; k++)
            if (c[k] <= c[k - 1])
                c[k] = c[k - 1] + 1;
        if (len > 0 && c[len - 1] >= cols)
            c[len - 1] = (int32_t)(cols - 1);
        for (int64_t k = len - 2; k >= 0; k--)
            if (c[k] >= c[k + 1])
                c[k] = c[k + 1] - 1;
        for (int64_t k = 0; k < len; k++)
            a->vals[a->rowptr[i] + k] = 1.0f;
    }
    return SD_OK;
}

static int run_speed(int64_t nnz, int64_t avg, int powerlaw, int reps)
{
    sd_csr a;
    double t0 = sdi_now();
    if (generate(nnz, avg, powerlaw, 2026, &a) != SD_OK) {
        fprintf(stderr, "bench_features: %s\n", sd_last_error());
        return 1;
    }
    double t_gen = sdi_now() - t0;
    fprintf(stderr, "generated %d x %d, %lld entries in %.2f s\n", a.rows, a.cols,
            (long long)a.nnz, t_gen);
    double check_min = 1e30, spmv_min = 1e30, spmv_sum = 0, sg_min = 1e30, sg_sum = 0;
    double struct_s = 0, spgemm_s = 0, spmv_cpu_min = 1e30, sg_cpu_min = 1e30, stats_min = 1e30;
    sd_features f;
    sdi_spmv_stats st;
    sdi_analyze_info info;
    memset(&info, 0, sizeof info);
    for (int r = 0; r < reps; r++) {
        t0 = sdi_now();
        sd_status s = sdi_analysis_check(&a);
        double t = sdi_now() - t0;
        check_min = t < check_min ? t : check_min;
        t0 = sdi_now();
        double c0 = cpu_now();
        if (s == SD_OK)
            s = sd_analyze(&a, SD_OP_SPMV, &f);
        t = sdi_now() - t0;
        double c = cpu_now() - c0;
        spmv_cpu_min = c < spmv_cpu_min ? c : spmv_cpu_min;
        spmv_min = t < spmv_min ? t : spmv_min;
        spmv_sum += t;
        t0 = sdi_now();
        c0 = cpu_now();
        if (s == SD_OK)
            s = sd_analyze(&a, SD_OP_SPGEMM, &f);
        t = sdi_now() - t0;
        c = cpu_now() - c0;
        sg_cpu_min = c < sg_cpu_min ? c : sg_cpu_min;
        sg_min = t < sg_min ? t : sg_min;
        sg_sum += t;
        if (s == SD_OK) /* the split of the SpGEMM time, from the internal driver */
            s = sdi_features_compute(&a, SD_OP_SPGEMM, NULL, &f, &info);
        t0 = sdi_now();
        if (s == SD_OK)
            s = sdi_spmv_stats_compute(&a, &st);
        t = sdi_now() - t0;
        stats_min = t < stats_min ? t : stats_min;
        if (s != SD_OK) {
            fprintf(stderr, "bench_features: %s\n", sd_last_error());
            sd_csr_free(&a);
            return 1;
        }
        struct_s = info.seconds_structure;
        spgemm_s = info.seconds_spgemm;
        fprintf(stderr, "rep %d: spmv %.3f s, spgemm %.3f s (structure %.3f, spgemm part %.3f), "
                "spmv block statistics %.3f s\n", r, spmv_min, sg_min, struct_s, spgemm_s, t);
    }
    printf("{\n  \"bench\": \"features\",\n  \"threads\": %d,\n", omp_get_max_threads());
    printf("  \"matrix\": {\"family\": \"%s\", \"rows\": %d, \"cols\": %d, \"nnz\": %lld, "
           "\"avg_row\": %lld, \"generate_seconds\": %.3f},\n",
           powerlaw ? "powerlaw" : "uniform", a.rows, a.cols, (long long)a.nnz, (long long)avg,
           t_gen);
    printf("  \"reps\": %d,\n  \"check_seconds_min\": %.4f,\n", reps, check_min);
    printf("  \"spmv_seconds\": {\"min\": %.4f, \"mean\": %.4f, \"cpu_min\": %.4f},\n",
           spmv_min, spmv_sum / reps, spmv_cpu_min);
    printf("  \"spgemm_seconds\": {\"min\": %.4f, \"mean\": %.4f, \"cpu_min\": %.4f, "
           "\"structure\": %.4f, \"operator\": %.4f},\n",
           sg_min, sg_sum / reps, sg_cpu_min, struct_s, spgemm_s);
    printf("  \"spmv_stats_seconds_min\": %.4f,\n", stats_min);
    printf("  \"spgemm\": {\"u_total\": %.0f, \"nnz_c\": %.0f, \"nnz_c_se\": %.0f, \"exact\": %s, "
           "\"rows_computed\": %lld, \"products_computed\": %.0f, \"gamma\": %.6f},\n",
           info.spgemm.u_total, info.spgemm.nnz_c, info.spgemm.nnz_c_se,
           info.spgemm.exact ? "true" : "false", (long long)info.spgemm.rows_computed,
           info.spgemm.products_computed, info.spgemm.gamma);
    printf("  \"shape_class\": \"%s\",\n  \"features\": {", sd_shape_class_name(f.shape_class));
    for (int i = 0; i < SD_NUM_FEATURES; i++)
        printf("%s\"%s\": %.10g", i ? ", " : "", sd_feature_name(i), f.values[i]);
    printf("}\n}\n");
    sd_csr_free(&a);
    return 0;
}

static int cmp_d(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

#define NBUDGETS 3
static const double k_budgets[NBUDGETS] = {0.005, 0.02, 0.10};

static int run_gamma_error(const char *dir, int seeds, double max_budget)
{
    char path[16384];
    snprintf(path, sizeof path, "%s/suitesparse/INDEX.tsv", dir);
    FILE *idx = fopen(path, "r");
    if (idx == NULL) {
        fprintf(stderr, "bench_features: cannot open %s\n", path);
        return 1;
    }
    char line[4096];
    double *errs[NBUDGETS];
    int nerr = 0, cap = 4096;
    for (int b = 0; b < NBUDGETS; b++)
        errs[b] = malloc((size_t)cap * sizeof(double));
    int first = 1, nmat = 0, nskipped = 0;
    printf("{\n  \"bench\": \"gamma_error\",\n  \"threads\": %d,\n  \"seeds\": %d,\n"
           "  \"budgets\": [%g, %g, %g],\n  \"matrices\": [\n",
           omp_get_max_threads(), seeds, k_budgets[0], k_budgets[1], k_budgets[2]);
    while (fgets(line, sizeof line, idx) != NULL) {
        if (strncmp(line, "name\t", 5) == 0)
            continue;
        char *tab = strchr(line, '\t');
        if (tab == NULL)
            continue;
        *tab = '\0';
        snprintf(path, sizeof path, "%s/suitesparse/%s.mtx.gz", dir, line);
        sd_csr a, at;
        memset(&at, 0, sizeof at);
        if (sd_csr_read(path, &a) != SD_OK) {
            fprintf(stderr, "skip %s: %s\n", line, sd_last_error());
            nskipped++;
            continue;
        }
        const sd_csr *b = &a;
        if (a.rows != a.cols) {
            if (sdi_pattern_transpose(&a, NULL, &at) != SD_OK) {
                fprintf(stderr, "skip %s: %s\n", line, sd_last_error());
                sd_csr_free(&a);
                nskipped++;
                continue;
            }
            b = &at;
        }
        sdi_spgemm_opts o = sdi_spgemm_opts_default();
        o.force_exact = 1;
        sdi_spgemm_stats ex, def;
        double t0 = sdi_now();
        sd_status s = sdi_spgemm_work(&a, b, &o, &ex);
        double t_exact = sdi_now() - t0;
        t0 = sdi_now();
        if (s == SD_OK)
            s = sdi_spgemm_work(&a, b, NULL, &def);
        double t_default = sdi_now() - t0;
        if (s != SD_OK) {
            fprintf(stderr, "skip %s: %s\n", line, sd_last_error());
            sd_csr_free(&a);
            sd_csr_free(&at);
            nskipped++;
            continue;
        }
        double def_err = ex.gamma > 0 ? fabs(def.gamma - ex.gamma) / ex.gamma : 0;
        printf("%s    {\"name\": \"%s\", \"rows\": %d, \"cols\": %d, \"nnz\": %lld, "
               "\"u_total\": %.0f, \"nnz_c\": %.0f, \"gamma\": %.6f, \"exact_seconds\": %.4f, "
               "\"default_path_exact\": %s, \"default_seconds\": %.4f, "
               "\"default_rel_error\": %.6f, \"default_rows_computed\": %lld, "
               "\"max_rel_error\": [",
               first ? "" : ",\n", line, a.rows, a.cols, (long long)a.nnz, ex.u_total, ex.nnz_c,
               ex.gamma, t_exact, def.exact ? "true" : "false", t_default, def_err,
               (long long)def.rows_computed);
        first = 0;
        if (nerr + seeds > cap) {
            cap *= 2;
            for (int bb = 0; bb < NBUDGETS; bb++)
                errs[bb] = realloc(errs[bb], (size_t)cap * sizeof(double));
        }
        for (int bb = 0; bb < NBUDGETS; bb++) {
            double mx = 0;
            /* The budget is a fraction of the exact computation's cost (products plus
             * entry_cost per entry of A: the unit the sampler's budget is counted in). */
            double full_cost = ex.u_total + o.entry_cost * (double)a.nnz;
            if (k_budgets[bb] * full_cost > max_budget) { /* too slow to repeat: skipped */
                printf("%snull", bb ? ", " : "");
                for (int sd = 0; sd < seeds; sd++)
                    errs[bb][nerr + sd] = -1;
                continue;
            }
            for (int sd = 0; sd < seeds; sd++) {
                sdi_spgemm_opts so = sdi_spgemm_opts_default();
                so.force_sampling = 1;
                so.sample_products = k_budgets[bb] * full_cost;
                so.seed = 1000003ULL * (uint64_t)(sd + 1);
                sdi_spgemm_stats st;
                double e = 0;
                if (sdi_spgemm_work(&a, b, &so, &st) == SD_OK && ex.gamma > 0)
                    e = fabs(st.gamma - ex.gamma) / ex.gamma;
                errs[bb][nerr + sd] = e;
                mx = e > mx ? e : mx;
            }
            printf("%s%.5f", bb ? ", " : "", mx);
        }
        nerr += seeds;
        nmat++;
        printf("]}");
        fflush(stdout);
        fprintf(stderr, "%-20s nnz %9lld  u %.3g  gamma %.3f  exact %.3f s\n", line,
                (long long)a.nnz, ex.u_total, ex.gamma, t_exact);
        sd_csr_free(&a);
        sd_csr_free(&at);
    }
    fclose(idx);
    printf("\n  ],\n  \"summary\": [\n");
    for (int bb = 0; bb < NBUDGETS; bb++) {
        qsort(errs[bb], (size_t)nerr, sizeof(double), cmp_d);
        int skipped = 0;
        while (skipped < nerr && errs[bb][skipped] < 0)
            skipped++;
        double *e = errs[bb] + skipped;
        int ne = nerr - skipped;
        double med = ne > 0 ? (ne % 2 ? e[ne / 2] : 0.5 * (e[ne / 2 - 1] + e[ne / 2])) : 0;
        double p95 = ne > 0 ? e[(int)ceil(0.95 * ne) - 1] : 0;
        printf("    {\"budget\": %g, \"runs\": %d, \"median_rel_error\": %.5f, "
               "\"p95_rel_error\": %.5f, \"max_rel_error\": %.5f}%s\n",
               k_budgets[bb], ne, med, p95, ne > 0 ? e[ne - 1] : 0,
               bb + 1 < NBUDGETS ? "," : "");
        free(errs[bb]);
    }
    printf("  ],\n  \"matrices_measured\": %d,\n  \"matrices_skipped\": %d\n}\n", nmat, nskipped);
    return 0;
}

int main(int argc, char **argv)
{
    int64_t nnz = 100000000, avg = 16;
    int powerlaw = 0, reps = 3, gamma_mode = 0, seeds = 5;
    double max_budget = 1e9;
    const char *dir = SD_MATRICES_DIR;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--gamma-error") == 0) {
            gamma_mode = 1;
        } else if (strcmp(a, "--nnz") == 0 && v) {
            nnz = (int64_t)atof(v), i++;
        } else if (strcmp(a, "--avg") == 0 && v) {
            avg = atoll(v), i++;
        } else if (strcmp(a, "--threads") == 0 && v) {
            omp_set_num_threads(atoi(v)), i++;
        } else if (strcmp(a, "--reps") == 0 && v) {
            reps = atoi(v), i++;
        } else if (strcmp(a, "--seeds") == 0 && v) {
            seeds = atoi(v), i++;
        } else if (strcmp(a, "--max-budget") == 0 && v) {
            max_budget = atof(v), i++;
        } else if (strcmp(a, "--dir") == 0 && v) {
            dir = v, i++;
        } else if (strcmp(a, "--family") == 0 && v) {
            powerlaw = strcmp(v, "powerlaw") == 0, i++;
        } else {
            fprintf(stderr,
                    "usage: bench_features [--nnz N] [--avg R] [--family uniform|powerlaw] "
                    "[--threads T] [--reps n]\n"
                    "       bench_features --gamma-error [--dir DIR] [--seeds S] [--threads T] "
                    "[--max-budget P]\n");
            return 2;
        }
    }
    if (nnz < 1 || avg < 1 || reps < 1 || seeds < 1) {
        fprintf(stderr, "bench_features: --nnz, --avg, --reps and --seeds must be >= 1\n");
        return 2;
    }
    return gamma_mode ? run_gamma_error(dir, seeds, max_budget) : run_speed(nnz, avg, powerlaw, reps);
}
