/* bench/bench_spmm.c: the SpMM mechanism library against the best cuSPARSE variant.
 * For every matrix of a set and K ∈ {8, 32, 128, 256}: every template at its best θ_H
 * from a small sweep, ParamSpMM at its best ⟨W, F, V, S⟩, the best cuSPARSE variant
 * (every SpMM algorithm and format, validated), and the oracle best of ours; per
 * execution (mean of 10 event-timed runs) and pipelined (10 back-to-back runs / 10).
 * Every candidate is validated (the bound of docs/ARCHITECTURE.md "Validation") on its
 * first warm-up run before it
 * is timed; a candidate that fails is reported and never counted. A candidate whose
 * first (validated) run is 8× slower than the task's best so far keeps that single time
 * instead of the full protocol ("screened" in the JSON): it cannot be the oracle.
 *
 *   bench_spmm [--out DIR] [--set paper60|real|quick|LIST] [--k 8,32,128,256]
 *              [--max-nnz N] [--min-nnz N] [--time-limit S] [--level 0|1|2] [--pcsr-full]
 *              [--templates csr_row,...] [--matrices N] [--dir MATRICES_DIR] [--seed S]
 *
 * Sets: paper60 = the twins of the 60 rows of paper60.tsv (generated, full size);
 *       real = every matrix of DIR/suitesparse; quick = 8 generated matrices + 6 real;
 *       LIST = both sets, comma separated ("paper60,real").
 * Defaults: --set paper60,real --max-nnz 3e6 --time-limit 200 --level 1 (a run of about
 * four minutes on an H200); tasks outside --min-nnz (default 0) .. --max-nnz are recorded
 * as skipped, tasks not started before the time limit as not run.
 * Writes DIR/bench_spmm.json (every task: baseline, each template's best, ParamSpMM's
 * best, oracle) and DIR/bench_spmm.md (per-K geometric means with 95 % bootstrap
 * intervals, tasks below 1.0×, the per-task table). Default DIR: bench/results.
 * Exit 0 when every timed candidate validated, 1 when one failed, 3 without a device. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cuda_runtime_api.h>

#include "gen/gen.h"
#include "plan/families/spmm_shared.h"
#include "runtime/executable.h"
#include "runtime/runtime.h"
#include "plan/spmm.h"
#include "vendor/baseline.h"

/* ------------------------------------------------------------------ one configuration
 * Lowered through its family, instantiated as the runtime's executable. */
static sd_status lower_cfg(const sd_csr *a, const sdi_spmm_config *c, sdi_lowered *l)
{
    sdi_spmm_stats st;
    sdi_spmm_stats_compute(a, &st);
    return sdi_spmm_lower_config(a, &st, c, l);
}

#define NT SDI_SPMM_NTEMPLATES
#define MAX_K 8

typedef struct {
    char desc[160];
    double mean_us, pipe_us;
    int valid;
} best_t;

typedef struct {
    char matrix[128];
    char source[8];
    int32_t rows, cols;
    int64_t nnz;
    int k;
    const char *status; /* ok, skipped, not run, error */
    char detail[256];
    char bl_name[48];
    double bl_mean, bl_pipe; /* best mean; best pipelined (possibly another variant) */
    best_t best[NT];         /* per template: best by mean (pipe = that config's pipelined) */
    double best_pipe[NT];    /* per template: best pipelined */
    best_t oracle;
    double oracle_pipe;
    int ncand, nfail, nscreened;
    double roofline_us;
    double seconds;
} task_t;

typedef struct {
    const char *out_dir, *set, *ks, *templates, *dir;
    double max_nnz, min_nnz, time_limit;
    int level, pcsr_full, max_matrices;
    uint64_t seed;
} opts_t;

typedef struct {
    char name[128];
    char source[8];
    char spec[512]; /* generator spec or file path */
    int generated;
} mat_t;

static int nfail_total;

/* ------------------------------------------------------------------ helpers */

static bool in_list(const char *list, const char *name)
{
    if (list == NULL)
        return true;
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *c = strchr(p, ',');
        size_t len = c ? (size_t)(c - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0)
            return true;
        if (c == NULL)
            break;
        p = c + 1;
    }
    return false;
}

static uint32_t template_mask(const char *list)
{
    uint32_t m = 0;
    for (int t = 0; t < NT; t++)
        if (in_list(list, sdi_spmm_template_name(t)))
            m |= 1u << t;
    return m;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Geometric mean of x[0..n) with a 95 % bootstrap interval (20 000 resamples). */
static void geomean_ci(const double *x, int n, uint64_t seed, double *gm, double *lo, double *hi)
{
    *gm = *lo = *hi = 0;
    if (n == 0)
        return;
    double s = 0;
    for (int i = 0; i < n; i++)
        s += log(x[i]);
    *gm = exp(s / n);
    const int R = 20000;
    double *m = malloc(R * sizeof *m);
    if (m == NULL)
        return;
    uint64_t st = seed * 2654435761u + 1;
    for (int r = 0; r < R; r++) {
        double t = 0;
        for (int i = 0; i < n; i++) {
            st = st * 6364136223846793005ULL + 1442695040888963407ULL;
            t += log(x[(st >> 33) % (uint64_t)n]);
        }
        m[r] = t / n;
    }
    qsort(m, R, sizeof *m, cmp_double);
    *lo = exp(m[(int)(0.025 * R)]);
    *hi = exp(m[(int)(0.975 * R)]);
    free(m);
}

/* ------------------------------------------------------------------ matrices */

static int add_mat(mat_t **v, int *n, int *cap, const char *name, const char *source,
                   const char *spec, int generated)
{
    if (*n == *cap) {
        int c = *cap ? 2 * *cap : 64;
        mat_t *x = realloc(*v, (size_t)c * sizeof *x);
        if (x == NULL)
            return -1;
        *v = x;
        *cap = c;
    }
    mat_t *m = &(*v)[(*n)++];
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "%s", name);
    snprintf(m->source, sizeof m->source, "%s", source);
    snprintf(m->spec, sizeof m->spec, "%s", spec);
    m->generated = generated;
    return 0;
}

static int list_matrices(const opts_t *o, mat_t **out)
{
    mat_t *v = NULL;
    int n = 0, cap = 0;
    char tsv[600], dir[600], path[1200];
    snprintf(tsv, sizeof tsv, "%s/paper60.tsv", o->dir);
    snprintf(dir, sizeof dir, "%s/suitesparse", o->dir);
    if (in_list(o->set, "quick")) {
        static const char *g[] = {"stencil2d:n=300",         "banded:n=200000,bw=4",
                                  "blockdiag:n=65536,b=16",   "uniform:rows=100000,deg=8",
                                  "powerlaw:rows=100000,deg=8", "rmat:scale=16,ef=16",
                                  "knn:n=100000,k=8",         "bimodal:rows=60000,long=256"};
        for (int i = 0; i < 8; i++)
            add_mat(&v, &n, &cap, g[i], "gen", g[i], 1);
        static const char *r[] = {"bcsstk13", "dblp-2010", "wiki-Vote", "Chem97Zt", "lp1",
                                  "f855_mat9_I"};
        for (int i = 0; i < 6; i++) {
            snprintf(path, sizeof path, "%s/%s.mtx.gz", dir, r[i]);
            add_mat(&v, &n, &cap, r[i], "real", path, 0);
        }
    }
    if (in_list(o->set, "paper60")) {
        sdi_twin_target *t = NULL;
        int nt = 0;
        if (sdi_twin_read_table(tsv, &t, &nt) != SD_OK) {
            fprintf(stderr, "bench_spmm: %s\n", sd_last_error());
        } else {
            for (int i = 0; i < nt; i++) {
                char spec[512];
                snprintf(spec, sizeof spec, "twin:name=%.100s,file=%.380s", t[i].name, tsv);
                if (add_mat(&v, &n, &cap, t[i].name, "twin", spec, 1) != 0)
                    break;
                /* the declared nnz decides --max-nnz before generating */
                if ((double)t[i].nnz > o->max_nnz || (double)t[i].nnz < o->min_nnz)
                    v[n - 1].generated = -1; /* marks "outside --min-nnz..--max-nnz" */
            }
            sdi_free(t);
        }
    }
    if (in_list(o->set, "real")) {
        DIR *d = opendir(dir);
        if (d == NULL) {
            fprintf(stderr, "bench_spmm: cannot open %s\n", dir);
        } else {
            char names[512][128];
            int nn = 0;
            struct dirent *e;
            while ((e = readdir(d)) != NULL && nn < 512) {
                size_t l = strlen(e->d_name);
                if (l > 7 && strcmp(e->d_name + l - 7, ".mtx.gz") == 0 && l - 7 < 128) {
                    memcpy(names[nn], e->d_name, l - 7);
                    names[nn][l - 7] = '\0';
                    nn++;
                }
            }
            closedir(d);
            qsort(names, (size_t)nn, sizeof names[0], cmp_str);
            for (int i = 0; i < nn; i++) {
                snprintf(path, sizeof path, "%.600s/%.127s.mtx.gz", dir, names[i]);
                add_mat(&v, &n, &cap, names[i], "real", path, 0);
            }
        }
    }
    if (o->max_matrices > 0 && n > o->max_matrices)
        n = o->max_matrices;
    *out = v;
    return n;
}

/* ------------------------------------------------------------------ precompile */

/* The candidate configurations of a task. */
static sd_status candidates(const opts_t *o, const sd_csr *a, int k, sdi_spmm_config **out,
                            int *n)
{
    uint32_t mask = o->templates ? template_mask(o->templates) : 0xffffffffu;
    sdi_spmm_config *c = NULL, *p = NULL;
    int nc = 0, np = 0;
    sd_status s = sdi_spmm_enumerate(a, k, mask & ~(1u << SDI_SPMM_PCSR), o->level, 0, &c, &nc);
    if (s == SD_OK && (mask & (1u << SDI_SPMM_PCSR))) {
        if (o->pcsr_full) {
            s = sdi_spmm_enumerate_pcsr(a, k, k < 32, &p, &np);
        } else {
            s = sdi_spmm_enumerate(a, k, 1u << SDI_SPMM_PCSR, o->level, 0, &p, &np);
        }
    }
    if (s != SD_OK) {
        sdi_free(c);
        sdi_free(p);
        return s;
    }
    sdi_spmm_config *all = sdi_malloc_array((size_t)(nc + np + 1), sizeof *all);
    if (all == NULL) {
        sdi_free(c);
        sdi_free(p);
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "candidates");
    }
    if (nc)
        memcpy(all, c, (size_t)nc * sizeof *all);
    if (np)
        memcpy(all + nc, p, (size_t)np * sizeof *all);
    sdi_free(c);
    sdi_free(p);
    *out = all;
    *n = nc + np;
    return SD_OK;
}

/* Compiles the kernels of the candidate sets of two representative matrices at every K
 * in parallel, so that tasks mostly hit the memo. */
static void precompile(sd_context *ctx, const opts_t *o, const int *ks, int nk)
{
    const char *reps[] = {"bimodal:rows=4096,short=4,long=600,frac=0.05",
                          "blockdiag:n=4096,b=16", "uniform:rows=4096,deg=3"};
    int cap = 8192, n = 0;
    sdi_lowered *ls = sdi_calloc((size_t)cap, sizeof *ls);
    const sdi_lowered **ptr = sdi_calloc((size_t)cap, sizeof *ptr);
    if (!ls || !ptr) {
        sdi_free(ls);
        sdi_free(ptr);
        return;
    }
    for (int r = 0; r < 3; r++) {
        sd_csr a;
        if (sdi_gen(reps[r], 1, &a) != SD_OK)
            continue;
        for (int q = 0; q < nk; q++) {
            sdi_spmm_config *c = NULL;
            int nc = 0;
            if (candidates(o, &a, ks[q], &c, &nc) != SD_OK)
                continue;
            for (int i = 0; i < nc && n < cap; i++) {
                sdi_lowered l;
                if (lower_cfg(&a, &c[i], &l) != SD_OK)
                    continue;
                bool dup = false;
                for (int j = 0; j < n && !dup; j++)
                    dup = strcmp(ls[j].kname[0], l.kname[0]) == 0;
                for (int j = 0; j < l.narrays; j++) { /* the description is enough */
                    if (l.arr[j].owned)
                        sdi_free(l.arr[j].host);
                    sdi_free(l.arr[j].src);
                }
                l.narrays = 0;
                if (!dup) {
                    ls[n] = l;
                    ptr[n] = &ls[n];
                    n++;
                }
            }
            sdi_free(c);
        }
        sd_csr_free(&a);
    }
    int failed = 0;
    double wall = 0;
    sdi_lowered_precompile(ctx, ptr, n, &failed, &wall);
    fprintf(stderr, "precompiled %d kernels in %.1f s (%d failed)\n", n, wall, failed);
    sdi_free(ls);
    sdi_free(ptr);
}

/* ------------------------------------------------------------------ one task */

/* One execution between two events (C is left for validation). */
static sd_status screen_run(sd_context *ctx, sdi_executable *ld, const float *d_b, float *d_c,
                            double *us)
{
    cudaEvent_t e0 = NULL, e1 = NULL;
    sd_status s = sdi_cuda_status(ctx, cudaEventCreate(&e0), "event", NULL);
    if (s == SD_OK)
        s = sdi_cuda_status(ctx, cudaEventCreate(&e1), "event", NULL);
    if (s == SD_OK)
        s = sdi_cuda_status(ctx, cudaEventRecord(e0, ctx->stream), "event", NULL);
    if (s == SD_OK)
        s = sdi_exe_run(ctx, ld, d_b, d_c, ctx->stream);
    if (s == SD_OK)
        s = sdi_cuda_status(ctx, cudaEventRecord(e1, ctx->stream), "event", NULL);
    if (s == SD_OK)
        s = sdi_cuda_status(ctx, cudaEventSynchronize(e1), "screening run", NULL);
    float ms = 0;
    if (s == SD_OK)
        s = sdi_cuda_status(ctx, cudaEventElapsedTime(&ms, e0, e1), "event", NULL);
    *us = ms * 1e3;
    if (e0)
        cudaEventDestroy(e0);
    if (e1)
        cudaEventDestroy(e1);
    return s;
}

static void run_task(sd_context *ctx, const opts_t *o, task_t *t, const sd_csr *a)
{
    double t0 = sdi_now();
    int k = t->k;
    size_t nb = (size_t)a->cols * (size_t)k, nc = (size_t)a->rows * (size_t)k;
    float *b = malloc((nb ? nb : 1) * sizeof *b);
    float *d_b = NULL, *d_c = NULL;
    sdi_reference ref;
    memset(&ref, 0, sizeof ref);
    sdi_baseline *bl = calloc(1, sizeof *bl);
    sdi_spmm_config *cands = NULL;
    int ncand = 0;
    t->status = "error";
    if (b == NULL || bl == NULL) {
        snprintf(t->detail, sizeof t->detail, "out of host memory");
        goto done;
    }
    sdi_gen_dense(b, (int64_t)nb, SDI_VALUES_UNIFORM, o->seed + (uint64_t)k);
    /* cuSPARSE: every SpMM variant, validated, timed; the fastest valid is the baseline. */
    sdi_baseline_options bo = {.k = k, .aat = -1};
    sd_status s = sdi_cusparse_baseline(ctx, a, SD_OP_SPMM, b, &bo, bl);
    if (s != SD_OK) {
        snprintf(t->detail, sizeof t->detail, "baseline: %s", sd_last_error());
        goto done;
    }
    if (bl->best < 0) {
        snprintf(t->detail, sizeof t->detail, "no valid cuSPARSE variant");
        goto done;
    }
    snprintf(t->bl_name, sizeof t->bl_name, "%s", bl->v[bl->best].name);
    t->bl_mean = bl->v[bl->best].timing.mean_us;
    t->bl_pipe = INFINITY;
    for (int i = 0; i < bl->nvariants; i++)
        if (bl->v[i].status == SDI_VARIANT_OK && bl->v[i].timing.pipelined_us < t->bl_pipe)
            t->bl_pipe = bl->v[i].timing.pipelined_us;
    t->roofline_us = bl->roofline_us;
    s = sdi_reference_dense(a, SD_OP_SPMM, b, k, 0, &ref);
    if (s == SD_OK)
        s = sdi_device_upload(ctx, (void **)&d_b, b, nb * 4, "B");
    if (s == SD_OK)
        s = sdi_device_malloc(ctx, (void **)&d_c, nc * 4, "C");
    if (s == SD_OK)
        s = candidates(o, a, k, &cands, &ncand);
    if (s != SD_OK) {
        snprintf(t->detail, sizeof t->detail, "setup: %s", sd_last_error());
        goto done;
    }
    for (int i = 0; i < NT; i++) {
        t->best[i].mean_us = t->best[i].pipe_us = t->best_pipe[i] = INFINITY;
    }
    t->oracle.mean_us = t->oracle_pipe = INFINITY;
    for (int i = 0; i < ncand; i++) {
        const sdi_spmm_config *c = &cands[i];
        char desc[160];
        sdi_spmm_config_describe(c, desc, sizeof desc);
        sdi_lowered l;
        sdi_executable ld;
        memset(&ld, 0, sizeof ld);
        s = lower_cfg(a, c, &l);
        if (s == SD_ERR_UNSUPPORTED) {
            sdi_error_clear();
            continue;
        }
        if (s == SD_OK)
            s = sdi_exe_create_program(ctx, &l, true, &ld);
        if (s == SD_OK && nc > 0)
            s = sdi_cuda_status(ctx, cudaMemsetAsync(d_c, 0xff, nc * 4, ctx->stream), "poison",
                                NULL);
        sdi_validation val;
        memset(&val, 0, sizeof val);
        sdi_timing tm;
        memset(&tm, 0, sizeof tm);
        bool screened = false;
        if (s == SD_OK && isfinite(t->oracle.mean_us)) {
            /* Screening: one validated, event-timed run; a candidate 8× slower than the
             * best so far keeps that time and skips the full protocol (rows of 10^5
             * entries in a template that does not split them take milliseconds). */
            double us = 0;
            s = screen_run(ctx, &ld, d_b, d_c, &us);
            if (s == SD_OK && us > 8.0 * t->oracle.mean_us) {
                s = sdi_check_dense_output(ctx, &ref, d_c, &val);
                tm.mean_us = tm.min_us = tm.median_us = tm.pipelined_us = us;
                screened = true;
                t->nscreened++;
            }
            if (s == SD_OK && !screened && nc > 0)
                s = sdi_cuda_status(ctx, cudaMemsetAsync(d_c, 0xff, nc * 4, ctx->stream),
                                    "poison", NULL);
        }
        if (s == SD_OK && !screened)
            s = sdi_exe_measure(ctx, &ld, d_b, d_c, &ref, &val, desc, &tm);
        sdi_exe_free(&ld);
        sdi_lowered_free(&l);
        t->ncand++;
        if (s != SD_OK) {
            t->nfail++;
            nfail_total++;
            fprintf(stderr, "  FAILED %s on %s K=%d: %s\n", desc, t->matrix, k,
                    val.reason[0] ? val.reason : sd_last_error());
            if (ctx->broken) {
                snprintf(t->detail, sizeof t->detail, "CUDA context broken: %.200s",
                         ctx->broken_reason);
                goto done;
            }
            continue;
        }
        best_t *bt = &t->best[c->tmpl];
        if (tm.mean_us < bt->mean_us) {
            snprintf(bt->desc, sizeof bt->desc, "%s", desc);
            bt->mean_us = tm.mean_us;
            bt->pipe_us = tm.pipelined_us;
            bt->valid = 1;
        }
        if (tm.pipelined_us < t->best_pipe[c->tmpl])
            t->best_pipe[c->tmpl] = tm.pipelined_us;
        if (tm.mean_us < t->oracle.mean_us) {
            snprintf(t->oracle.desc, sizeof t->oracle.desc, "%s", desc);
            t->oracle.mean_us = tm.mean_us;
            t->oracle.pipe_us = tm.pipelined_us;
            t->oracle.valid = 1;
        }
        if (tm.pipelined_us < t->oracle_pipe)
            t->oracle_pipe = tm.pipelined_us;
    }
    t->status = t->oracle.valid ? "ok" : "error";
    if (!t->oracle.valid)
        snprintf(t->detail, sizeof t->detail, "no valid candidate");
done:
    t->seconds = sdi_now() - t0;
    if (strcmp(t->status, "ok") == 0)
        fprintf(stderr,
                "  %-32s K=%-3d nnz %-9lld cuSPARSE %-10s %8.2f us | ours %8.2f us (%.2fx, "
                "pipelined %.2fx) pcsr %.2fx  %s (%.1f s)\n",
                t->matrix, k, (long long)a->nnz, t->bl_name, t->bl_mean, t->oracle.mean_us,
                t->bl_mean / t->oracle.mean_us, t->bl_pipe / t->oracle_pipe,
                t->best[SDI_SPMM_PCSR].valid ? t->bl_mean / t->best[SDI_SPMM_PCSR].mean_us : 0,
                t->oracle.desc, t->seconds);
    else
        fprintf(stderr, "  %-32s K=%-3d %s: %s\n", t->matrix, k, t->status, t->detail);
    sdi_free(cands);
    free(b);
    free(bl);
    sdi_device_free(d_b);
    sdi_device_free(d_c);
    sdi_reference_free(&ref);
}

/* ------------------------------------------------------------------ output */

static void summary_line(FILE *md, const char *label, double *x, int n, uint64_t seed,
                         double goal)
{
    double gm, lo, hi;
    geomean_ci(x, n, seed, &gm, &lo, &hi);
    int below = 0;
    for (int i = 0; i < n; i++)
        below += x[i] < 1.0;
    fprintf(md, "| %s | %d | %.2f× | [%.2f, %.2f] | %s | %d |\n", label, n, gm, lo, hi,
            goal > 0 ? (gm >= goal ? "met" : "not met") : "–", below);
}

static int write_outputs(const opts_t *o, sd_context *ctx, task_t *tasks, int n, const int *ks,
                         int nk, double total_s)
{
    char path[1024];
    mkdir(o->out_dir, 0755);
    /* JSON */
    sdi_json j;
    sdi_json_init(&j, 1);
    sdi_json_begin_object(&j);
    sdi_json_key(&j, "device");
    sdi_json_string(&j, ctx->props.name);
    sdi_json_key(&j, "copy_bw_GBs");
    sdi_json_number(&j, ctx->copy_bw * 1e-9);
    sdi_json_key(&j, "launch_us");
    sdi_json_number(&j, ctx->launch_us_mean);
    sdi_json_key(&j, "set");
    sdi_json_string(&j, o->set);
    sdi_json_key(&j, "level");
    sdi_json_int(&j, o->level);
    sdi_json_key(&j, "pcsr_full");
    sdi_json_bool(&j, o->pcsr_full != 0);
    sdi_json_key(&j, "seconds");
    sdi_json_number(&j, total_s);
    sdi_json_key(&j, "tasks");
    sdi_json_begin_array(&j);
    for (int i = 0; i < n; i++) {
        const task_t *t = &tasks[i];
        sdi_json_begin_object(&j);
        sdi_json_key(&j, "matrix");
        sdi_json_string(&j, t->matrix);
        sdi_json_key(&j, "source");
        sdi_json_string(&j, t->source);
        sdi_json_key(&j, "rows");
        sdi_json_int(&j, t->rows);
        sdi_json_key(&j, "cols");
        sdi_json_int(&j, t->cols);
        sdi_json_key(&j, "nnz");
        sdi_json_int(&j, t->nnz);
        sdi_json_key(&j, "k");
        sdi_json_int(&j, t->k);
        sdi_json_key(&j, "status");
        sdi_json_string(&j, t->status);
        if (t->detail[0]) {
            sdi_json_key(&j, "detail");
            sdi_json_string(&j, t->detail);
        }
        if (strcmp(t->status, "ok") == 0) {
            sdi_json_key(&j, "cusparse");
            sdi_json_begin_object(&j);
            sdi_json_key(&j, "best");
            sdi_json_string(&j, t->bl_name);
            sdi_json_key(&j, "mean_us");
            sdi_json_number(&j, t->bl_mean);
            sdi_json_key(&j, "pipelined_us");
            sdi_json_number(&j, t->bl_pipe);
            sdi_json_end_object(&j);
            sdi_json_key(&j, "templates");
            sdi_json_begin_object(&j);
            for (int q = 0; q < NT; q++) {
                if (!t->best[q].valid)
                    continue;
                sdi_json_key(&j, sdi_spmm_template_name(q));
                sdi_json_begin_object(&j);
                sdi_json_key(&j, "config");
                sdi_json_string(&j, t->best[q].desc);
                sdi_json_key(&j, "mean_us");
                sdi_json_number(&j, t->best[q].mean_us);
                sdi_json_key(&j, "pipelined_us");
                sdi_json_number(&j, t->best_pipe[q]);
                sdi_json_key(&j, "speedup");
                sdi_json_number(&j, t->bl_mean / t->best[q].mean_us);
                sdi_json_end_object(&j);
            }
            sdi_json_end_object(&j);
            sdi_json_key(&j, "oracle");
            sdi_json_begin_object(&j);
            sdi_json_key(&j, "config");
            sdi_json_string(&j, t->oracle.desc);
            sdi_json_key(&j, "mean_us");
            sdi_json_number(&j, t->oracle.mean_us);
            sdi_json_key(&j, "pipelined_us");
            sdi_json_number(&j, t->oracle_pipe);
            sdi_json_key(&j, "speedup");
            sdi_json_number(&j, t->bl_mean / t->oracle.mean_us);
            sdi_json_key(&j, "speedup_pipelined");
            sdi_json_number(&j, t->bl_pipe / t->oracle_pipe);
            sdi_json_key(&j, "roofline_frac");
            sdi_json_number(&j, t->roofline_us / t->oracle.mean_us);
            sdi_json_end_object(&j);
            sdi_json_key(&j, "candidates");
            sdi_json_int(&j, t->ncand);
            sdi_json_key(&j, "failed");
            sdi_json_int(&j, t->nfail);
            sdi_json_key(&j, "screened");
            sdi_json_int(&j, t->nscreened);
        }
        sdi_json_key(&j, "seconds");
        sdi_json_number(&j, t->seconds);
        sdi_json_end_object(&j);
    }
    sdi_json_end_array(&j);
    sdi_json_end_object(&j);
    int rc = 0;
    if (sdi_json_finish(&j) == SD_OK) {
        snprintf(path, sizeof path, "%s/bench_spmm.json", o->out_dir);
        FILE *f = fopen(path, "w");
        if (f) {
            fputs(j.buf, f);
            fputc('\n', f);
            fclose(f);
        } else {
            rc = 1;
        }
    }
    sdi_json_free(&j);
    /* Markdown */
    snprintf(path, sizeof path, "%s/bench_spmm.md", o->out_dir);
    FILE *md = fopen(path, "w");
    if (md == NULL)
        return 1;
    fprintf(md, "# SpMM mechanism library vs the best cuSPARSE variant\n\n");
    fprintf(md, "%s, copy bandwidth %.0f GB/s, empty launch %.1f µs; set `%s`, sweep level %d%s, "
                "max nnz %.3g; %.0f s.\n\n",
            ctx->props.name, ctx->copy_bw * 1e-9, ctx->launch_us_mean, o->set, o->level,
            o->pcsr_full ? ", ParamSpMM full space" : "", o->max_nnz, total_s);
    static const double goals[] = {4.2, 2.8, 2.0, 1.9};
    static const int goal_k[] = {8, 32, 128, 256};
    double *x = malloc((size_t)(n + 1) * sizeof *x);
    for (int q = 0; q < nk && x; q++) {
        int k = ks[q];
        double goal = 0;
        for (int g = 0; g < 4; g++)
            if (goal_k[g] == k)
                goal = goals[g];
        fprintf(md, "## K = %d\n\n| speed-up over best cuSPARSE | tasks | geomean | 95 %% CI | "
                    "goal (%.1f×) | tasks < 1.0× |\n| --- | --- | --- | --- | --- | --- |\n",
                k, goal);
        int m = 0;
        for (int i = 0; i < n; i++)
            if (tasks[i].k == k && strcmp(tasks[i].status, "ok") == 0)
                x[m++] = tasks[i].bl_mean / tasks[i].oracle.mean_us;
        summary_line(md, "oracle best, per execution", x, m, o->seed, goal);
        m = 0;
        for (int i = 0; i < n; i++)
            if (tasks[i].k == k && strcmp(tasks[i].status, "ok") == 0)
                x[m++] = tasks[i].bl_pipe / tasks[i].oracle_pipe;
        summary_line(md, "oracle best, pipelined", x, m, o->seed, goal);
        for (int tp = 0; tp < NT; tp++) {
            m = 0;
            for (int i = 0; i < n; i++)
                if (tasks[i].k == k && strcmp(tasks[i].status, "ok") == 0 &&
                    tasks[i].best[tp].valid)
                    x[m++] = tasks[i].bl_mean / tasks[i].best[tp].mean_us;
            char label[64];
            snprintf(label, sizeof label, "%s best θ_H%s", sdi_spmm_template_name(tp),
                     tp == SDI_SPMM_PCSR ? " (ParamSpMM, goal 1.9×)" : "");
            summary_line(md, label, x, m, o->seed, tp == SDI_SPMM_PCSR ? 1.9 : 0);
        }
        /* the oracle's template mix */
        int wins[NT] = {0};
        for (int i = 0; i < n; i++)
            if (tasks[i].k == k && strcmp(tasks[i].status, "ok") == 0)
                for (int tp = 0; tp < NT; tp++)
                    if (tasks[i].best[tp].valid &&
                        tasks[i].best[tp].mean_us == tasks[i].oracle.mean_us) {
                        wins[tp]++;
                        break;
                    }
        fprintf(md, "\nOracle wins by template:");
        for (int tp = 0; tp < NT; tp++)
            fprintf(md, " %s %d;", sdi_spmm_template_name(tp), wins[tp]);
        fprintf(md, "\n\n");
    }
    free(x);
    fprintf(md, "## Tasks\n\n| matrix | K | nnz | cuSPARSE | µs | ours µs | × | pipelined × | "
                "pcsr × | roofline | best plan |\n| --- | --- | --- | --- | --- | --- | --- | --- "
                "| --- | --- | --- |\n");
    for (int i = 0; i < n; i++) {
        const task_t *t = &tasks[i];
        if (strcmp(t->status, "ok") != 0) {
            fprintf(md, "| %s | %d | %lld | %s | | | | | | | %s |\n", t->matrix, t->k,
                    (long long)t->nnz, t->status, t->detail);
            continue;
        }
        fprintf(md, "| %s | %d | %lld | %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.0f%% | %s |\n",
                t->matrix, t->k, (long long)t->nnz, t->bl_name, t->bl_mean, t->oracle.mean_us,
                t->bl_mean / t->oracle.mean_us, t->bl_pipe / t->oracle_pipe,
                t->best[SDI_SPMM_PCSR].valid ? t->bl_mean / t->best[SDI_SPMM_PCSR].mean_us : 0,
                100 * t->roofline_us / t->oracle.mean_us, t->oracle.desc);
    }
    fclose(md);
    return rc;
}

/* ------------------------------------------------------------------ main */

static int parse_ks(const char *s, int *ks, int max)
{
    int n = 0;
    for (const char *p = s; *p && n < max;) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 1 || v > 65536)
            return -1;
        ks[n++] = (int)v;
        p = *end == ',' ? end + 1 : end;
        if (*end != ',' && *end != '\0')
            return -1;
    }
    return n;
}

static void usage(void)
{
    fprintf(stderr, "usage: bench_spmm [--out DIR] [--set paper60|real|quick|LIST] [--k LIST]\n"
                    "                  [--max-nnz N] [--min-nnz N] [--time-limit S] [--level 0|1|2] "
                    "[--pcsr-full]\n"
                    "                  [--templates LIST] [--matrices N] [--dir DIR] [--seed S]\n");
}

int main(int argc, char **argv)
{
    opts_t o = {.out_dir = "bench/results", .set = "paper60,real", .ks = "8,32,128,256",
                .dir = SD_MATRICES_DIR, .max_nnz = 3e6, .time_limit = 200, .level = 1,
                .seed = 2024};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define OPT(name) (strcmp(a, name) == 0 && v != NULL && (i++, 1))
        if (OPT("--out")) o.out_dir = v;
        else if (OPT("--set")) o.set = v;
        else if (OPT("--k")) o.ks = v;
        else if (OPT("--max-nnz")) o.max_nnz = atof(v);
        else if (OPT("--min-nnz")) o.min_nnz = atof(v);
        else if (OPT("--time-limit")) o.time_limit = atof(v);
        else if (OPT("--level")) o.level = atoi(v);
        else if (OPT("--templates")) o.templates = v;
        else if (OPT("--matrices")) o.max_matrices = atoi(v);
        else if (OPT("--dir")) o.dir = v;
        else if (OPT("--seed")) o.seed = strtoull(v, NULL, 10);
        else if (strcmp(a, "--pcsr-full") == 0) o.pcsr_full = 1;
        else {
            usage();
            return 2;
        }
#undef OPT
    }
    int ks[MAX_K];
    int nk = parse_ks(o.ks, ks, MAX_K);
    if (nk <= 0 || o.level < 0 || o.level > 2) {
        usage();
        return 2;
    }
    sd_context *ctx = NULL;
    sd_status s = sd_context_create(NULL, &ctx);
    if (s != SD_OK) {
        fprintf(stderr, "bench_spmm: %s\n", sd_last_error());
        return 3;
    }
    s = sdi_device_calibrate(ctx);
    if (s != SD_OK) {
        fprintf(stderr, "bench_spmm: calibration: %s\n", sd_last_error());
        sd_context_destroy(ctx);
        return 3;
    }
    fprintf(stderr, "%s: copy %.0f GB/s, empty launch %.1f us; set %s, level %d, time limit %.0f s\n",
            ctx->props.name, ctx->copy_bw * 1e-9, ctx->launch_us_mean, o.set, o.level,
            o.time_limit);
    double t0 = sdi_now();
    precompile(ctx, &o, ks, nk);
    mat_t *mats = NULL;
    int nm = list_matrices(&o, &mats);
    task_t *tasks = calloc((size_t)(nm > 0 ? nm : 1) * (size_t)nk, sizeof *tasks);
    int nt = 0;
    for (int m = 0; m < nm && tasks; m++) {
        sd_csr a;
        memset(&a, 0, sizeof a);
        bool over_time = o.time_limit > 0 && sdi_now() - t0 > o.time_limit;
        bool outside_nnz = mats[m].generated < 0; /* beyond --min-nnz .. --max-nnz */
        sd_status ls = SD_OK;
        if (!over_time && !outside_nnz) {
            if (mats[m].generated)
                ls = sdi_gen(mats[m].spec, o.seed, &a);
            else
                ls = sd_csr_read(mats[m].spec, &a);
            if (ls == SD_OK) {
                if ((double)a.nnz > o.max_nnz || (double)a.nnz < o.min_nnz)
                    outside_nnz = true;
                else if (mats[m].generated)
                    sdi_gen_values(&a, SDI_VALUES_UNIFORM, o.seed);
            }
        }
        for (int q = 0; q < nk; q++) {
            task_t *t = &tasks[nt++];
            snprintf(t->matrix, sizeof t->matrix, "%s", mats[m].name);
            snprintf(t->source, sizeof t->source, "%s", mats[m].source);
            t->k = ks[q];
            t->rows = a.rows;
            t->cols = a.cols;
            t->nnz = a.nnz;
            if (over_time || (o.time_limit > 0 && sdi_now() - t0 > o.time_limit)) {
                t->status = "not run";
                snprintf(t->detail, sizeof t->detail, "time limit");
                continue;
            }
            if (outside_nnz) {
                t->status = "skipped";
                snprintf(t->detail, sizeof t->detail, "nnz outside --min-nnz %.3g .. --max-nnz %.3g",
                         o.min_nnz, o.max_nnz);
                continue;
            }
            if (ls != SD_OK) {
                t->status = "error";
                snprintf(t->detail, sizeof t->detail, "%s", sd_last_error());
                continue;
            }
            /* What a task holds: on the host the FP64 reference (want + absum, rows·K·16 B)
             * and B; on the device B, C and the reference mirror (rows·K·8 B). The
             * reference costs nnz·K FMAs on the host, once per task. */
            const double kk = ks[q];
            const double host_b = (double)a.rows * kk * 16 + (double)a.cols * kk * 4;
            const double dev_b = (double)a.cols * kk * 4 + (double)a.rows * kk * 12;
            const double host_avail = (double)sdi_host_mem_available();
            const double dev_total = (double)ctx->props.global_mem_bytes;
            const char *why = NULL;
            if ((double)a.nnz * kk > 3e10)
                why = "nnz·K above 3e10 (host reference time)";
            else if (host_avail > 0 && host_b > 0.7 * host_avail)
                why = "host memory (reference and B) above 70 % of MemAvailable";
            else if (dev_total > 0 && dev_b > 0.8 * dev_total)
                why = "device memory (B, C, reference mirror) above 80 % of the GPU's";
            if (why != NULL) {
                t->status = "skipped";
                snprintf(t->detail, sizeof t->detail, "%s: host %.1f GB, device %.1f GB", why,
                         host_b * 1e-9, dev_b * 1e-9);
                continue;
            }
            run_task(ctx, &o, t, &a);
            if (ctx->broken)
                break;
        }
        sd_csr_free(&a);
        if (ctx->broken)
            break;
    }
    double total = sdi_now() - t0;
    int rc = tasks ? write_outputs(&o, ctx, tasks, nt, ks, nk, total) : 1;
    fprintf(stderr, "wrote %s/bench_spmm.{json,md} (%d tasks, %.0f s, %d failed candidates)\n",
            o.out_dir, nt, total, nfail_total);
    free(tasks);
    free(mats);
    sd_context_destroy(ctx);
    return rc != 0 || nfail_total > 0 ? 1 : 0;
}
