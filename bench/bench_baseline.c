/* bench/bench_baseline.c: the cuSPARSE baseline table: for the real matrices of
 * SD_MATRICES_DIR/suitesparse and a generated set covering every generator family from
 * 10^3 to 10^8 nonzeros, the best cuSPARSE variant per task (SpMV; SpMM at K = 8, 32,
 * 128, 256; SpGEMM), its time and its fraction of the memory roofline.
 *
 *   bench_baseline --out DIR [--set quick|full] [--source real,gen] [--ops spmv,spmm,spgemm]
 *                  [--k 8,32,128,256] [--families a,b,...] [--max-nnz N] [--matrices N]
 *                  [--time-limit S] [--seed S] [--dir MATRICES_DIR]
 *
 * Sets (sizes are the targeted nonzeros of generated matrices; every family at each):
 *   quick  SpMV 1e3..1e7, SpMM 1e3..1e6, SpGEMM 1e3..1e5; real: every matrix.
 *   full   SpMV 1e3..1e8, SpMM 1e3..1e7, SpGEMM 1e3..1e6; real: every matrix.
 * SpMM sizes are further capped so that nnz·K ≤ 5e8 (and B, C fit); SpGEMM tasks whose
 * products Σu exceed 3e8 are recorded as skipped. --time-limit stops starting new tasks
 * after S seconds (default 270 for quick, 0 = none; with both sources the real matrices
 * get the first half) and records the rest as not run.
 * Writes DIR/bench_baseline.json (every variant of every task) and DIR/bench_baseline.md
 * (the winners); progress on stderr. Exit 0 when every attempted task has a valid winner,
 * 1 otherwise, 3 without a device. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/io.h"
#include "gen/gen.h"
#include "runtime/runtime.h"
#include "vendor/baseline.h"

typedef struct {
    char name[160];
    char source[8]; /* "real" or "gen" */
    char family[24];
    sd_op op;
    int k;
    int64_t target_nnz;
    int aat;
    const char *status; /* "ok", "no winner", "skipped", "not run", "error" */
    char detail[320];
    sdi_baseline b;
    double seconds;
} task_t;

typedef struct {
    const char *out_dir;
    const char *set;
    const char *sources;
    const char *ops;
    const char *ks;
    const char *families;
    double max_nnz;
    int max_matrices;
    double time_limit;
    uint64_t seed;
    const char *dir;
} opts_t;

static const char *all_families[] = {"stencil2d", "stencil3d7", "stencil3d27", "banded",
                                     "blockdiag", "uniform", "powerlaw", "rmat",
                                     "knn", "bimodal", "twin"};
#define NFAMILIES ((int)(sizeof all_families / sizeof all_families[0]))

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

static const char *op_name(sd_op op)
{
    return op == SD_OP_SPMV ? "spmv" : op == SD_OP_SPMM ? "spmm" : "spgemm";
}

/* A generator spec for `family` with about `nnz` entries (values uniform). */
static bool family_spec(const char *family, double nnz, const char *tsv, char *spec,
                        size_t cap)
{
    if (strcmp(family, "stencil2d") == 0)
        snprintf(spec, cap, "stencil2d:n=%d", (int)fmax(4, round(sqrt(nnz / 5))));
    else if (strcmp(family, "stencil3d7") == 0)
        snprintf(spec, cap, "stencil3d7:n=%d", (int)fmax(3, round(cbrt(nnz / 7))));
    else if (strcmp(family, "stencil3d27") == 0)
        snprintf(spec, cap, "stencil3d27:n=%d", (int)fmax(3, round(cbrt(nnz / 27))));
    else if (strcmp(family, "banded") == 0)
        snprintf(spec, cap, "banded:n=%lld,bw=4", (long long)fmax(16, round(nnz / 9)));
    else if (strcmp(family, "blockdiag") == 0)
        snprintf(spec, cap, "blockdiag:n=%lld,b=16",
                 (long long)fmax(16, round(nnz / 16 / 16) * 16));
    else if (strcmp(family, "uniform") == 0)
        snprintf(spec, cap, "uniform:rows=%lld,deg=8", (long long)fmax(16, round(nnz / 8)));
    else if (strcmp(family, "powerlaw") == 0)
        snprintf(spec, cap, "powerlaw:rows=%lld,deg=8", (long long)fmax(16, round(nnz / 8)));
    else if (strcmp(family, "rmat") == 0)
        snprintf(spec, cap, "rmat:scale=%d,ef=16", (int)fmax(4, round(log2(nnz / 16))));
    else if (strcmp(family, "knn") == 0)
        snprintf(spec, cap, "knn:n=%lld,k=8", (long long)fmax(32, round(nnz / 12)));
    else if (strcmp(family, "bimodal") == 0) {
        long long rows = (long long)fmax(64, round(nnz / 16.6));
        snprintf(spec, cap, "bimodal:rows=%lld,long=%lld", rows, rows < 256 ? rows : 256);
    } else if (strcmp(family, "twin") == 0) {
        /* The twin of the paper-60 row closest in nnz (scaled down when larger). */
        sdi_twin_target *t = NULL;
        int n = 0;
        if (sdi_twin_read_table(tsv, &t, &n) != SD_OK || n == 0)
            return false;
        int best = 0;
        for (int i = 1; i < n; i++)
            if (fabs(log((double)t[i].nnz / nnz)) < fabs(log((double)t[best].nnz / nnz)))
                best = i;
        double scale = (double)t[best].nnz > nnz ? nnz / (double)t[best].nnz : 1.0;
        snprintf(spec, cap, "twin:name=%s,file=%s,scale=%.6g", t[best].name, tsv, scale);
        sdi_free(t);
    } else {
        return false;
    }
    return true;
}

/* Σ_i Σ_{k ∈ A[i,:]} nnz(B[k,:]): the products of C = A·B. */
static double products(const sd_csr *a, const sd_csr *b)
{
    double p = 0;
    for (int64_t e = 0; e < a->nnz; e++) {
        int32_t k = a->colind[e];
        p += (double)(b->rowptr[k + 1] - b->rowptr[k]);
    }
    return p;
}

/* Runs the baseline of one task on A (owned by the caller). */
static void run_task(sd_context *ctx, task_t *t, const sd_csr *a, uint64_t seed)
{
    double t0 = sdi_now();
    float *xb = NULL;
    if (t->op != SD_OP_SPGEMM) {
        size_t n = (size_t)a->cols * (size_t)(t->op == SD_OP_SPMM ? t->k : 1);
        xb = malloc((n ? n : 1) * sizeof *xb);
        if (xb == NULL) {
            t->status = "error";
            snprintf(t->detail, sizeof t->detail, "out of host memory for x / B");
            return;
        }
        sdi_gen_dense(xb, (int64_t)n, SDI_VALUES_UNIFORM, seed + 1);
    } else {
        sd_csr at;
        memset(&at, 0, sizeof at);
        const sd_csr *b = a;
        if (a->rows != a->cols) {
            if (sdi_csr_transpose(a, &at) != SD_OK) {
                t->status = "error";
                snprintf(t->detail, sizeof t->detail, "%s", sd_last_error());
                return;
            }
            b = &at;
        }
        double p = products(a, b);
        sd_csr_free(&at);
        if (p > 3e8) {
            t->status = "skipped";
            snprintf(t->detail, sizeof t->detail,
                     "%.3g products: beyond the benchmark's 3e8 (CPU reference time)", p);
            return;
        }
    }
    sdi_baseline_options o = {.k = t->k, .aat = -1};
    sd_status s = sdi_cusparse_baseline(ctx, a, t->op, xb, &o, &t->b);
    free(xb);
    t->seconds = sdi_now() - t0;
    if (s != SD_OK) {
        t->status = "error";
        snprintf(t->detail, sizeof t->detail, "%s", sd_last_error());
    } else {
        t->status = t->b.best >= 0 ? "ok" : "no winner";
    }
    const sdi_variant_result *w = t->b.best >= 0 ? &t->b.v[t->b.best] : NULL;
    fprintf(stderr, "  %-44s %-6s K=%-3d nnz %-10lld %-12s %9.2f us %6.1f%% roofline (%.1f s)\n",
            t->name, op_name(t->op), t->k, (long long)a->nnz, w ? w->name : t->status,
            w ? w->timing.mean_us : 0.0, w ? 100 * w->roofline_frac : 0.0, t->seconds);
}

/* ------------------------------------------------------------------ output */

static void task_json(const task_t *t, sdi_json *j)
{
    sdi_json_begin_object(j);
    sdi_json_key(j, "matrix");
    sdi_json_string(j, t->name);
    sdi_json_key(j, "source");
    sdi_json_string(j, t->source);
    if (t->family[0]) {
        sdi_json_key(j, "family");
        sdi_json_string(j, t->family);
        sdi_json_key(j, "target_nnz");
        sdi_json_number(j, (double)t->target_nnz);
    }
    sdi_json_key(j, "op");
    sdi_json_string(j, op_name(t->op));
    sdi_json_key(j, "k");
    sdi_json_int(j, t->op == SD_OP_SPMM ? t->k : 0);
    sdi_json_key(j, "status");
    sdi_json_string(j, t->status);
    sdi_json_key(j, "detail");
    sdi_json_string(j, t->detail);
    sdi_json_key(j, "seconds");
    sdi_json_number(j, t->seconds);
    if (t->b.nvariants > 0) {
        sdi_json_key(j, "baseline");
        sdi_baseline_json(&t->b, j);
    }
    sdi_json_end_object(j);
}

static int write_outputs(const opts_t *o, sd_context *ctx, task_t *tasks, int n,
                         double total_s)
{
    char path[2048];
    sdi_json j;
    sdi_json_init(&j, 1);
    sdi_json_begin_object(&j);
    sdi_json_key(&j, "device");
    sdi_json_string(&j, ctx->props.name);
    sdi_json_key(&j, "arch");
    sdi_json_string(&j, ctx->arch);
    sdi_json_key(&j, "copy_bandwidth_gbs");
    sdi_json_number(&j, ctx->copy_bw * 1e-9);
    sdi_json_key(&j, "empty_launch_us");
    sdi_json_number(&j, ctx->launch_us_mean);
    sdi_json_key(&j, "set");
    sdi_json_string(&j, o->set);
    sdi_json_key(&j, "seconds");
    sdi_json_number(&j, total_s);
    sdi_json_key(&j, "tasks");
    sdi_json_begin_array(&j);
    for (int i = 0; i < n; i++)
        task_json(&tasks[i], &j);
    sdi_json_end_array(&j);
    sdi_json_end_object(&j);
    if (sdi_json_finish(&j) != SD_OK) {
        fprintf(stderr, "bench_baseline: out of memory writing JSON\n");
        sdi_json_free(&j);
        return 4;
    }
    snprintf(path, sizeof path, "%s/bench_baseline.json", o->out_dir);
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        fprintf(stderr, "bench_baseline: cannot write %s: %s\n", path, strerror(errno));
        sdi_json_free(&j);
        return 3;
    }
    fputs(j.buf, f);
    fputc('\n', f);
    fclose(f);
    sdi_json_free(&j);

    snprintf(path, sizeof path, "%s/bench_baseline.md", o->out_dir);
    f = fopen(path, "w");
    if (f == NULL) {
        fprintf(stderr, "bench_baseline: cannot write %s: %s\n", path, strerror(errno));
        return 3;
    }
    fprintf(f, "# cuSPARSE baseline (%s set)\n\n", o->set);
    fprintf(f, "Device %s (%s): copy bandwidth %.0f GB/s (read + written), empty launch "
               "%.2f us. Times are the mean of 10 event-timed runs after 5 warm-ups; "
               "pipelined = 10 back-to-back runs / 10. Roofline = the CSR streaming limit "
               "(docs/ARCHITECTURE.md \"Benchmarks, roofline and aggregates\") over the "
               "measured copy bandwidth; SpGEMM has none. %d tasks in "
               "%.0f s.\n",
            ctx->props.name, ctx->arch, ctx->copy_bw * 1e-9, ctx->launch_us_mean, n, total_s);
    const sd_op ops[3] = {SD_OP_SPMV, SD_OP_SPMM, SD_OP_SPGEMM};
    for (int oi = 0; oi < 3; oi++) {
        int count = 0;
        for (int i = 0; i < n; i++)
            count += tasks[i].op == ops[oi];
        if (count == 0)
            continue;
        fprintf(f, "\n## %s\n\n", op_name(ops[oi]));
        bool spmm = ops[oi] == SD_OP_SPMM, spgemm = ops[oi] == SD_OP_SPGEMM;
        fprintf(f, "| matrix | %srows | cols | nnz | %sbest | mean us | pipelined us | "
                   "roofline | valid / tried | status |\n",
                spmm ? "K | " : spgemm ? "product | " : "", spgemm ? "nnz(C) | " : "");
        fprintf(f, "|---|%s---:|---:|---:|%s---|---:|---:|---:|---:|---|\n",
                spmm || spgemm ? "---:|" : "", spgemm ? "---:|" : "");
        for (int i = 0; i < n; i++) {
            const task_t *t = &tasks[i];
            if (t->op != ops[oi])
                continue;
            const sdi_baseline *b = &t->b;
            int valid = 0;
            for (int v = 0; v < b->nvariants; v++)
                valid += b->v[v].status == SDI_VARIANT_OK;
            char kcol[24] = "", ccol[32] = "";
            if (spmm)
                snprintf(kcol, sizeof kcol, "%d | ", t->k);
            if (spgemm) {
                snprintf(kcol, sizeof kcol, "%s | ", b->aat ? "A*At" : "A*A");
                snprintf(ccol, sizeof ccol, "%lld | ", (long long)b->nnz_c);
            }
            if (b->best >= 0) {
                const sdi_variant_result *w = &b->v[b->best];
                char roof[16] = "-";
                if (w->roofline_frac > 0)
                    snprintf(roof, sizeof roof, "%.1f%%", 100 * w->roofline_frac);
                fprintf(f, "| %s | %s%d | %d | %lld | %s%s | %.2f | %.2f | %s | %d / %d | ok |\n",
                        t->name, kcol, b->rows, b->cols, (long long)b->nnz, ccol, w->name,
                        w->timing.mean_us, w->timing.pipelined_us, roof, valid, b->nvariants);
            } else {
                fprintf(f, "| %s | %s%d | %d | %lld | %s- | - | - | - | %d / %d | %s: %.120s |\n",
                        t->name, kcol, b->rows, b->cols, (long long)b->nnz, ccol, valid,
                        b->nvariants, t->status, t->detail);
            }
        }
    }
    fclose(f);
    return 0;
}

/* ------------------------------------------------------------------ task list */

typedef struct {
    task_t *v;
    int n, cap;
} task_list;

static task_t *add_task(task_list *l)
{
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 64;
        task_t *v = realloc(l->v, (size_t)cap * sizeof *v);
        if (v == NULL)
            return NULL;
        l->v = v;
        l->cap = cap;
    }
    task_t *t = &l->v[l->n++];
    memset(t, 0, sizeof *t);
    t->b.best = -1;
    t->status = "not run";
    return t;
}

static int parse_ks(const char *s, int *ks, int max)
{
    int n = 0;
    while (s && *s && n < max) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v < 1 || v > 65536)
            return -1;
        ks[n++] = (int)v;
        s = *end == ',' ? end + 1 : end;
        if (*end != ',' && *end != '\0')
            return -1;
    }
    return n;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* All tasks of one matrix: SpMV, SpMM at every K (size-capped), SpGEMM. */
static void matrix_tasks(const opts_t *o, sd_context *ctx, task_list *l, const char *name,
                         const char *source, const char *family, double target,
                         const sd_csr *a, const int *ks, int nk, double deadline)
{
    bool full = strcmp(o->set, "full") == 0;
    for (int op = 0; op < 3; op++) {
        sd_op sop = (sd_op)op;
        if (!in_list(o->ops, op_name(sop)))
            continue;
        int reps = sop == SD_OP_SPMM ? nk : 1;
        for (int r = 0; r < reps; r++) {
            int k = sop == SD_OP_SPMM ? ks[r] : 1;
            /* Size caps per operator for generated matrices (real ones are all small). */
            if (strcmp(source, "gen") == 0) {
                double cap = sop == SD_OP_SPMV ? (full ? 1.5e8 : 1.5e7)
                             : sop == SD_OP_SPMM ? (full ? 1.5e7 : 1.5e6)
                                                 : (full ? 1.5e6 : 1.5e5);
                if (target > cap)
                    continue;
                if (sop == SD_OP_SPMM && target * k > 5e8)
                    continue;
            }
            task_t *t = add_task(l);
            if (t == NULL)
                return;
            snprintf(t->name, sizeof t->name, "%s", name);
            snprintf(t->source, sizeof t->source, "%s", source);
            snprintf(t->family, sizeof t->family, "%s", family ? family : "");
            t->target_nnz = (int64_t)target;
            t->op = sop;
            t->k = k;
            if (deadline > 0 && sdi_now() > deadline) {
                t->status = "not run";
                snprintf(t->detail, sizeof t->detail, "time limit reached");
                continue;
            }
            run_task(ctx, t, a, o->seed);
            if (ctx->broken) {
                fprintf(stderr, "bench_baseline: the CUDA context is broken: %s\n",
                        ctx->broken_reason);
                return;
            }
        }
    }
}

static void usage(void)
{
    fprintf(stderr,
            "usage: bench_baseline --out DIR [--set quick|full] [--source real,gen]\n"
            "         [--ops spmv,spmm,spgemm] [--k 8,32,128,256] [--families a,b,...]\n"
            "         [--max-nnz N] [--matrices N] [--time-limit S] [--seed S] [--dir D]\n");
}

int main(int argc, char **argv)
{
    opts_t o = {.set = "quick", .sources = "real,gen", .ops = "spmv,spmm,spgemm",
                .ks = "8,32,128,256", .families = NULL, .max_nnz = 0, .max_matrices = 0,
                .time_limit = -1, .seed = 1, .dir = SD_MATRICES_DIR};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define OPT(name) (strcmp(a, name) == 0 && v != NULL && (i++, 1))
        if (OPT("--out")) o.out_dir = v;
        else if (OPT("--set")) o.set = v;
        else if (OPT("--source")) o.sources = v;
        else if (OPT("--ops")) o.ops = v;
        else if (OPT("--k")) o.ks = v;
        else if (OPT("--families")) o.families = v;
        else if (OPT("--max-nnz")) o.max_nnz = atof(v);
        else if (OPT("--matrices")) o.max_matrices = atoi(v);
        else if (OPT("--time-limit")) o.time_limit = atof(v);
        else if (OPT("--seed")) o.seed = strtoull(v, NULL, 10);
        else if (OPT("--dir")) o.dir = v;
        else {
            usage();
            return 2;
        }
#undef OPT
    }
    bool full = strcmp(o.set, "full") == 0;
    if (o.out_dir == NULL || (!full && strcmp(o.set, "quick") != 0)) {
        usage();
        return 2;
    }
    if (o.time_limit < 0)
        o.time_limit = full ? 0 : 270;
    int ks[8];
    int nk = parse_ks(o.ks, ks, 8);
    if (nk <= 0) {
        fprintf(stderr, "bench_baseline: --k '%s' is not a list of widths in [1, 65536]\n", o.ks);
        return 2;
    }
    if (mkdir(o.out_dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "bench_baseline: cannot create %s: %s\n", o.out_dir, strerror(errno));
        return 3;
    }
    sd_context *ctx = NULL;
    sd_status s = sd_context_create(NULL, &ctx);
    if (s != SD_OK) {
        fprintf(stderr, "bench_baseline: %s\n", sd_last_error());
        return s == SD_ERR_NO_DEVICE ? 3 : 4;
    }
    s = sdi_device_calibrate(ctx);
    if (s != SD_OK) {
        fprintf(stderr, "bench_baseline: calibration: %s\n", sd_last_error());
        sd_context_destroy(ctx);
        return 4;
    }
    fprintf(stderr, "bench_baseline: %s, copy %.0f GB/s, empty launch %.2f us, set %s, "
                    "time limit %.0f s\n",
            ctx->props.name, ctx->copy_bw * 1e-9, ctx->launch_us_mean, o.set, o.time_limit);
    double t_start = sdi_now();
    task_list l = {NULL, 0, 0};
    /* With both sources, the real matrices get the first half of the time limit. */
    bool both = in_list(o.sources, "real") && in_list(o.sources, "gen");
    double deadline_real = o.time_limit > 0 ? t_start + (both ? 0.5 : 1.0) * o.time_limit : 0;
    double deadline_gen = o.time_limit > 0 ? t_start + o.time_limit : 0;

    /* Real matrices. */
    if (in_list(o.sources, "real")) {
        char dir[1536];
        snprintf(dir, sizeof dir, "%s/suitesparse", o.dir);
        DIR *d = opendir(dir);
        char *names[1024];
        int nn = 0;
        if (d != NULL) {
            struct dirent *e;
            while ((e = readdir(d)) != NULL && nn < 1024) {
                size_t len = strlen(e->d_name);
                if ((len > 7 && strcmp(e->d_name + len - 7, ".mtx.gz") == 0) ||
                    (len > 4 && strcmp(e->d_name + len - 4, ".mtx") == 0))
                    names[nn++] = strdup(e->d_name);
            }
            closedir(d);
        } else {
            fprintf(stderr, "bench_baseline: no real matrices (%s: %s)\n", dir, strerror(errno));
        }
        qsort(names, (size_t)nn, sizeof names[0], cmp_str);
        int used = 0;
        for (int i = 0; i < nn; i++) {
            if (o.max_matrices > 0 && used >= o.max_matrices)
                break;
            char path[2048];
            snprintf(path, sizeof path, "%s/%s", dir, names[i]);
            sd_csr a;
            sdi_mtx_info info;
            if (sdi_csr_read_info(path, &a, &info) != SD_OK) {
                fprintf(stderr, "  %-44s not read: %s\n", names[i], sd_last_error());
                continue;
            }
            if (info.field == SDI_MTX_PATTERN)
                sdi_gen_values(&a, SDI_VALUES_UNIFORM, o.seed);
            if (o.max_nnz <= 0 || (double)a.nnz <= o.max_nnz) {
                used++;
                char base[160];
                snprintf(base, sizeof base, "%s", names[i]);
                char *dot = strstr(base, ".mtx");
                if (dot != NULL)
                    *dot = '\0';
                matrix_tasks(&o, ctx, &l, base, "real", NULL, (double)a.nnz, &a, ks, nk,
                             deadline_real);
            }
            sd_csr_free(&a);
            if (ctx->broken)
                break;
        }
        for (int i = 0; i < nn; i++)
            free(names[i]);
    }

    /* Generated matrices: every family at 10^3 .. 10^8 nonzeros. */
    if (in_list(o.sources, "gen") && !ctx->broken) {
        char tsv[1536];
        snprintf(tsv, sizeof tsv, "%s/paper60.tsv", o.dir);
        double max_target = full ? 1e8 : 1e7;
        if (o.max_nnz > 0 && o.max_nnz < max_target)
            max_target = o.max_nnz;
        for (double target = 1e3; target <= max_target * 1.01 && !ctx->broken; target *= 10) {
            for (int fi = 0; fi < NFAMILIES && !ctx->broken; fi++) {
                const char *fam = all_families[fi];
                if (o.families != NULL && !in_list(o.families, fam))
                    continue;
                char spec[1800];
                if (!family_spec(fam, target, tsv, spec, sizeof spec)) {
                    fprintf(stderr, "  %s: no spec at %.0g (twin needs %s)\n", fam, target, tsv);
                    continue;
                }
                if (deadline_gen > 0 && sdi_now() > deadline_gen) {
                    task_t *t = add_task(&l);
                    if (t != NULL) {
                        snprintf(t->name, sizeof t->name, "%s@%.0e", fam, target);
                        snprintf(t->source, sizeof t->source, "gen");
                        snprintf(t->detail, sizeof t->detail, "time limit reached: %.280s", spec);
                    }
                    continue;
                }
                sd_csr a;
                double g0 = sdi_now();
                if (sdi_gen(spec, o.seed, &a) != SD_OK) {
                    fprintf(stderr, "  %s: %s\n", spec, sd_last_error());
                    continue;
                }
                char name[160];
                snprintf(name, sizeof name, "%s@%.0e", fam, target);
                fprintf(stderr, "  %s: %s -> %dx%d nnz %lld (%.1f s)\n", name, spec, a.rows,
                        a.cols, (long long)a.nnz, sdi_now() - g0);
                matrix_tasks(&o, ctx, &l, name, "gen", fam, target, &a, ks, nk, deadline_gen);
                sd_csr_free(&a);
            }
        }
    }
    double total = sdi_now() - t_start;
    int rc = write_outputs(&o, ctx, l.v, l.n, total);
    int attempted = 0, won = 0;
    for (int i = 0; i < l.n; i++) {
        if (strcmp(l.v[i].status, "not run") == 0 || strcmp(l.v[i].status, "skipped") == 0)
            continue;
        attempted++;
        won += strcmp(l.v[i].status, "ok") == 0;
    }
    fprintf(stderr, "bench_baseline: %d tasks, %d attempted, %d with a valid winner, %.0f s; "
                    "wrote %s/bench_baseline.{json,md}\n",
            l.n, attempted, won, total, o.out_dir);
    free(l.v);
    sd_context_destroy(ctx);
    if (rc != 0)
        return rc;
    return won == attempted ? 0 : 1;
}
