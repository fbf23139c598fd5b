/* bench/bench_twins.c: generates the twin of every paper60.tsv row and reports target
 * vs achieved rows, cols, nnz, max row length and row-length CV with relative errors
 * (table on stdout; optional Markdown and JSON reports). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/core.h"
#include "core/io.h"
#include "gen/gen.h"

#define NSTAT 5
static const char *stat_name[NSTAT] = {"rows", "cols", "nnz", "max_row", "cv_row"};

typedef struct {
    int32_t rows, cols;
    int64_t nnz, max_row;
    double cv_row;
} achieved_t;

typedef struct {
    sdi_twin_target target;
    achieved_t got;
    double err[NSTAT];
    double seconds;
    sd_status status;
    char message[256];
} row_result;

static double rel_err(double got, double want)
{
    if (want == 0.0)
        return fabs(got);
    return fabs(got - want) / fabs(want);
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static void usage(void)
{
    printf("usage: bench_twins [--scale S] [--table paper60.tsv] [--seed N] [--only NAME]\n"
           "                   [--md FILE] [--json FILE] [--date TEXT] [--machine TEXT]\n"
           "Generates every twin and compares its statistics with the table.\n");
}

int main(int argc, char **argv)
{
    double scale = 1.0;
    const char *table = SD_MATRICES_DIR "/paper60.tsv", *md = NULL, *json = NULL,
               *only = NULL, *date = NULL, *machine = "unspecified";
    unsigned long long seed = 1;
    for (int a = 1; a < argc; a++) {
        const char *v = a + 1 < argc ? argv[a + 1] : NULL;
        if (strcmp(argv[a], "--help") == 0) {
            usage();
            return 0;
        } else if (v == NULL) {
            fprintf(stderr, "bench_twins: option %s needs a value\n", argv[a]);
            return 2;
        } else if (strcmp(argv[a], "--scale") == 0)
            scale = atof(v);
        else if (strcmp(argv[a], "--table") == 0)
            table = v;
        else if (strcmp(argv[a], "--seed") == 0)
            seed = strtoull(v, NULL, 10);
        else if (strcmp(argv[a], "--only") == 0)
            only = v;
        else if (strcmp(argv[a], "--md") == 0)
            md = v;
        else if (strcmp(argv[a], "--json") == 0)
            json = v;
        else if (strcmp(argv[a], "--date") == 0)
            date = v;
        else if (strcmp(argv[a], "--machine") == 0)
            machine = v;
        else {
            fprintf(stderr, "bench_twins: unknown option %s\n", argv[a]);
            return 2;
        }
        a++;
    }
    char today[32];
    if (date == NULL) {
        time_t now = time(NULL);
        strftime(today, sizeof today, "%Y-%m-%d", localtime(&now));
        date = today;
    }
    sdi_twin_target *tab = NULL;
    int n = 0;
    sd_status s = sdi_twin_read_table(table, &tab, &n);
    if (s != SD_OK) {
        fprintf(stderr, "bench_twins: %s\n", sd_last_error());
        return 1;
    }
    row_result *res = calloc((size_t)n, sizeof *res);
    int nres = 0, failed = 0;
    printf("%-30s %9s %9s %10s %6s %6s | %9s %10s %6s %6s | %7s %7s %7s %6s\n", "name", "rows",
           "cols", "nnz", "max", "cv", "rows", "nnz", "max", "cv", "e_nnz%", "e_max%", "e_cv%",
           "sec");
    for (int k = 0; k < n; k++) {
        if (only != NULL && strcmp(only, tab[k].name) != 0)
            continue;
        row_result *r = &res[nres++];
        if (sdi_twin_scale(&tab[k], scale, &r->target) != SD_OK) {
            fprintf(stderr, "bench_twins: %s\n", sd_last_error());
            return 2;
        }
        char spec[1024];
        snprintf(spec, sizeof spec, "twin:name=%s,file=%s,scale=%.17g", tab[k].name, table,
                 scale);
        sd_csr m;
        double t0 = sdi_now();
        r->status = sdi_gen(spec, seed, &m);
        r->seconds = sdi_now() - t0;
        if (r->status != SD_OK) {
            snprintf(r->message, sizeof r->message, "%s", sd_last_error());
            printf("%-30s FAILED: %s\n", tab[k].name, r->message);
            failed++;
            continue;
        }
        if (sd_csr_check(&m) != SD_OK) {
            r->status = SD_ERR_INTERNAL;
            snprintf(r->message, sizeof r->message, "not canonical: %s", sd_last_error());
            printf("%-30s FAILED: %s\n", tab[k].name, r->message);
            failed++;
            sd_csr_free(&m);
            continue;
        }
        sdi_row_stats rs;
        sdi_csr_row_stats(&m, &rs);
        r->got = (achieved_t){m.rows, m.cols, m.nnz, rs.max, rs.cv};
        sd_csr_free(&m);
        const sdi_twin_target *t = &r->target;
        double want[NSTAT] = {t->rows, t->cols, (double)t->nnz, (double)t->max_row, t->cv_row};
        double got[NSTAT] = {r->got.rows, r->got.cols, (double)r->got.nnz,
                             (double)r->got.max_row, r->got.cv_row};
        for (int q = 0; q < NSTAT; q++)
            r->err[q] = rel_err(got[q], want[q]);
        printf("%-30s %9d %9d %10lld %6lld %6.2f | %9d %10lld %6lld %6.3f | %7.3f %7.3f %7.2f "
               "%6.2f\n",
               t->name, t->rows, t->cols, (long long)t->nnz, (long long)t->max_row, t->cv_row,
               r->got.rows, (long long)r->got.nnz, (long long)r->got.max_row, r->got.cv_row,
               100 * r->err[2], 100 * r->err[3], 100 * r->err[4], r->seconds);
        fflush(stdout);
    }

    /* Max and median of each relative error over the successful rows. */
    double emax[NSTAT] = {0}, emed[NSTAT] = {0};
    int ok = 0, cv_within = 0, nnz_within = 0, max_exact = 0;
    double *col = malloc(sizeof(double) * (size_t)(nres > 0 ? nres : 1));
    for (int q = 0; q < NSTAT; q++) {
        int m = 0;
        for (int k = 0; k < nres; k++)
            if (res[k].status == SD_OK)
                col[m++] = res[k].err[q];
        ok = m;
        if (m == 0)
            continue;
        qsort(col, (size_t)m, sizeof *col, cmp_double);
        emax[q] = col[m - 1];
        emed[q] = m % 2 ? col[m / 2] : 0.5 * (col[m / 2 - 1] + col[m / 2]);
    }
    free(col);
    double total_s = 0;
    for (int k = 0; k < nres; k++) {
        total_s += res[k].seconds;
        if (res[k].status != SD_OK)
            continue;
        cv_within += res[k].err[4] <= 0.10 || fabs(res[k].got.cv_row - res[k].target.cv_row) <= 0.005;
        nnz_within += res[k].err[2] <= 0.01;
        max_exact += res[k].err[3] == 0.0;
    }
    printf("\n%d twins generated (%d failed) in %.1f s at scale %g\n", ok, failed, total_s, scale);
    printf("%-8s %12s %12s\n", "stat", "max err %", "median err %");
    for (int q = 0; q < NSTAT; q++)
        printf("%-8s %12.4f %12.4f\n", stat_name[q], 100 * emax[q], 100 * emed[q]);
    printf("nnz within 1%%: %d/%d, max exact: %d/%d, CV within 10%% (or 0.005 absolute): %d/%d\n",
           nnz_within, ok, max_exact, ok, cv_within, ok);

    if (md != NULL) {
        FILE *f = fopen(md, "w");
        if (f == NULL) {
            fprintf(stderr, "bench_twins: cannot write %s\n", md);
            return 1;
        }
        fprintf(f, "# Twin generator accuracy (paper60.tsv)\n\n");
        fprintf(f, "Date: %s. Machine: %s. Scale: %g, seed %llu. Produced by "
                   "`bench_twins --scale %g --seed %llu` (bench/bench_twins.c).\n\n",
                date, machine, scale, seed, scale, seed);
        fprintf(f, "Each twin (`sparseditto gen twin:name=NAME`) targets the row's rows, cols "
                   "and nnz exactly, its longest row exactly and the population CV of the "
                   "row lengths approximately (src/gen/twin.c describes the method). Errors "
                   "are relative: |achieved - target| / target (absolute when the target "
                   "is 0).\n\n");
        fprintf(f, "## Summary\n\n| statistic | max error | median error |\n| --- | ---: | ---: |\n");
        for (int q = 0; q < NSTAT; q++)
            fprintf(f, "| %s | %.4f %% | %.4f %% |\n", stat_name[q], 100 * emax[q], 100 * emed[q]);
        fprintf(f, "\n%d twins generated, %d failed, %.1f s in total. nnz within 1 %%: %d/%d; "
                   "max row exact: %d/%d; CV within 10 %% (or 0.005 absolute): %d/%d.\n\n",
                ok, failed, total_s, nnz_within, ok, max_exact, ok, cv_within, ok);
        fprintf(f, "## Per matrix\n\n| name | rows | cols | nnz | max | cv target | cv achieved "
                   "| nnz err | max err | cv err | seconds |\n"
                   "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
        for (int k = 0; k < nres; k++) {
            const row_result *r = &res[k];
            if (r->status != SD_OK) {
                fprintf(f, "| %s | failed: %s |||||||||| \n", r->target.name, r->message);
                continue;
            }
            fprintf(f, "| %s | %d | %d | %lld | %lld | %.2f | %.3f | %.3f %% | %.3f %% | %.2f %% | %.2f |\n",
                    r->target.name, r->got.rows, r->got.cols, (long long)r->got.nnz,
                    (long long)r->got.max_row, r->target.cv_row, r->got.cv_row, 100 * r->err[2],
                    100 * r->err[3], 100 * r->err[4], r->seconds);
        }
        fclose(f);
    }
    if (json != NULL) {
        sdi_json j;
        sdi_json_init(&j, 1);
        sdi_json_begin_object(&j);
        sdi_json_key(&j, "date");
        sdi_json_string(&j, date);
        sdi_json_key(&j, "machine");
        sdi_json_string(&j, machine);
        sdi_json_key(&j, "scale");
        sdi_json_number(&j, scale);
        sdi_json_key(&j, "seed");
        sdi_json_int(&j, (long long)seed);
        sdi_json_key(&j, "summary");
        sdi_json_begin_object(&j);
        for (int q = 0; q < NSTAT; q++) {
            sdi_json_key(&j, stat_name[q]);
            sdi_json_begin_object(&j);
            sdi_json_key(&j, "max_rel_err");
            sdi_json_number(&j, emax[q]);
            sdi_json_key(&j, "median_rel_err");
            sdi_json_number(&j, emed[q]);
            sdi_json_end_object(&j);
        }
        sdi_json_key(&j, "generated");
        sdi_json_int(&j, ok);
        sdi_json_key(&j, "failed");
        sdi_json_int(&j, failed);
        sdi_json_key(&j, "seconds");
        sdi_json_number(&j, total_s);
        sdi_json_end_object(&j);
        sdi_json_key(&j, "twins");
        sdi_json_begin_array(&j);
        for (int k = 0; k < nres; k++) {
            const row_result *r = &res[k];
            sdi_json_begin_object(&j);
            sdi_json_key(&j, "name");
            sdi_json_string(&j, r->target.name);
            sdi_json_key(&j, "status");
            sdi_json_string(&j, sd_status_string(r->status));
            if (r->status == SD_OK) {
                sdi_json_key(&j, "target");
                sdi_json_begin_object(&j);
                sdi_json_key(&j, "rows");
                sdi_json_int(&j, r->target.rows);
                sdi_json_key(&j, "cols");
                sdi_json_int(&j, r->target.cols);
                sdi_json_key(&j, "nnz");
                sdi_json_int(&j, r->target.nnz);
                sdi_json_key(&j, "max_row");
                sdi_json_int(&j, r->target.max_row);
                sdi_json_key(&j, "cv_row");
                sdi_json_number(&j, r->target.cv_row);
                sdi_json_end_object(&j);
                sdi_json_key(&j, "achieved");
                sdi_json_begin_object(&j);
                sdi_json_key(&j, "rows");
                sdi_json_int(&j, r->got.rows);
                sdi_json_key(&j, "cols");
                sdi_json_int(&j, r->got.cols);
                sdi_json_key(&j, "nnz");
                sdi_json_int(&j, r->got.nnz);
                sdi_json_key(&j, "max_row");
                sdi_json_int(&j, r->got.max_row);
                sdi_json_key(&j, "cv_row");
                sdi_json_number(&j, r->got.cv_row);
                sdi_json_end_object(&j);
                sdi_json_key(&j, "rel_err");
                sdi_json_begin_object(&j);
                for (int q = 0; q < NSTAT; q++) {
                    sdi_json_key(&j, stat_name[q]);
                    sdi_json_number(&j, r->err[q]);
                }
                sdi_json_end_object(&j);
                sdi_json_key(&j, "seconds");
                sdi_json_number(&j, r->seconds);
            } else {
                sdi_json_key(&j, "message");
                sdi_json_string(&j, r->message);
            }
            sdi_json_end_object(&j);
        }
        sdi_json_end_array(&j);
        sdi_json_end_object(&j);
        if (sdi_json_finish(&j) != SD_OK) {
            fprintf(stderr, "bench_twins: %s\n", sd_last_error());
            return 1;
        }
        FILE *f = fopen(json, "w");
        if (f == NULL) {
            fprintf(stderr, "bench_twins: cannot write %s\n", json);
            return 1;
        }
        fprintf(f, "%s\n", j.buf);
        fclose(f);
        sdi_json_free(&j);
    }
    free(res);
    sdi_free(tab);
    return failed == 0 ? 0 : 1;
}
