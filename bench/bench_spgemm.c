/* bench/bench_spgemm.c: the SpGEMM mechanism library against cuSPARSE. Per task (a matrix
 * and its product: A·A when square, A·Aᵀ otherwise, as the paper does): every plan family
 * at its best θ_H (a sweep of candidates, each validated on its first warm-up run and
 * timed by the protocol of docs/ARCHITECTURE.md "Measurement"), the best cuSPARSE SpGEMM
 * algorithm (ALG1–3; a failure
 * such as out-of-resources is recorded), the oracle best of ours, the speed-up, and the
 * peak device memory of the oracle's plan (operands + workspaces + output).
 *
 *   bench_spgemm --out DIR [--set quick|paper60|real] [--max-nnz N] [--max-products P]
 *                [--time-limit S] [--level 0|1|2] [--families a,b] [--matrices N]
 *                [--scale-twins] [--dir MATRICES_DIR] [--no-baseline] [--only WORD,WORD]
 *
 * Sets: quick = generated tasks incl. the paper's reference points (1000×1000 with 5 per
 * row, R-MAT scale 16) and the 10^6-row banded product of 4.2·10^9 products; paper60 =
 * the twins of paper60.tsv (scaled down to --max-nnz when --scale-twins, else skipped
 * beyond it); real = every .mtx.gz of SD_MATRICES_DIR/suitesparse. Defaults: --max-nnz 5e6,
 * --max-products 5e9, --time-limit 230 (seconds; tasks not started by then are "not
 * run"), --level 1. Timing covers symbolic + numeric + compaction and C's allocation
 * (stream-ordered pool) for us; the baseline's buffers and C are allocated once.
 * Writes DIR/bench_spgemm.json and DIR/bench_spgemm.md (rewritten after every task);
 * progress on stderr. Exit 0 when every attempted task validated, 1 otherwise, 3
 * without a device. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analysis/analysis.h"
#include "core/io.h"
#include "gen/gen.h"
#include "lower/spgemm_units.h"
#include "runtime/spgemm_exec.h"
#include "vendor/baseline.h"

#define NF SDI_SPGEMM_NFAMILIES

typedef struct {
    char name[160];
    char source[12];
    char spec[1600]; /* generator spec or file path */
    int32_t rows, cols;
    int64_t nnz;
    int aat;
    int big;
    double scale;
    double u_total;
    int64_t nnz_c;
    const char *status; /* ok, invalid, skipped, not run, error */
    char detail[640];
    /* cuSPARSE */
    int bl_ran;
    int bl_ok;
    char bl_name[48];
    double bl_us;
    char bl_detail[400];
    /* ours */
    double fam_us[NF];
    char fam_cfg[NF][256];
    char fam_bins[NF][640];
    int64_t fam_peak[NF];
    double oracle_us, oracle_pipe_us;
    int oracle_family;
    int64_t oracle_peak;
    double oracle_setup_ms, oracle_compile_ms;
    int candidates, invalid;
    double speedup;
    double seconds;
} task_t;

typedef struct {
    const char *out, *set, *dir, *families, *only;
    double max_nnz, max_products, time_limit;
    int level, matrices, scale_twins, baseline;
} opts_t;

/* ------------------------------------------------------------------ task lists */
static const struct {
    const char *name, *spec;
    int aat;
    int big; /* exempt from --max-nnz (still bounded by --max-products) */
} quick_tasks[] = {
    {"uniform-1e3x1e3-5", "uniform:rows=1000,cols=1000,deg=5", 0, 0},
    {"rmat-s16", "rmat:scale=16,ef=16", 0, 0},
    {"stencil2d-512", "stencil2d:n=512", 0, 0},
    {"stencil3d27-40", "stencil3d27:n=40", 0, 0},
    {"banded-1e5-bw8", "banded:n=100000,bw=8", 0, 0},
    {"powerlaw-1e5", "powerlaw:rows=100000,deg=8", 0, 0},
    {"knn-1e5", "knn:n=100000,k=8", 0, 0},
    {"bimodal-1e5", "bimodal:rows=100000", 0, 0},
    {"blockdiag-64k-b32", "blockdiag:n=65536,b=32", 0, 0},
    {"uniform-2e5x5e4-AAt", "uniform:rows=200000,cols=50000,deg=6", 1, 0},
    {"powerlaw-1e5x2e4-AAt", "powerlaw:rows=100000,cols=20000,deg=10", 1, 0},
    {"banded-1e6-bw32 (4.2e9 products)", "banded:n=1000000,bw=32", 0, 1},
};

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int build_tasks(const opts_t *o, task_t **out, int *n)
{
    task_t *t = NULL;
    int cnt = 0, cap = 0;
#define ADD()                                                                              \
    do {                                                                                   \
        if (cnt == cap) {                                                                  \
            cap = cap ? 2 * cap : 64;                                                      \
            t = realloc(t, (size_t)cap * sizeof *t);                                       \
            if (t == NULL)                                                                 \
                return 0;                                                                  \
        }                                                                                  \
        memset(&t[cnt], 0, sizeof t[cnt]);                                                 \
        t[cnt].status = "not run";                                                         \
        t[cnt].scale = 1.0;                                                                \
        t[cnt].oracle_family = -1;                                                         \
        cnt++;                                                                             \
    } while (0)
    if (strcmp(o->set, "quick") == 0) {
        for (size_t q = 0; q < sizeof quick_tasks / sizeof quick_tasks[0]; q++) {
            ADD();
            snprintf(t[cnt - 1].name, sizeof t[0].name, "%s", quick_tasks[q].name);
            snprintf(t[cnt - 1].source, sizeof t[0].source, "gen");
            snprintf(t[cnt - 1].spec, sizeof t[0].spec, "%s", quick_tasks[q].spec);
            t[cnt - 1].aat = quick_tasks[q].aat;
            t[cnt - 1].big = quick_tasks[q].big;
        }
    } else if (strcmp(o->set, "paper60") == 0) {
        char path[1024];
        snprintf(path, sizeof path, "%s/paper60.tsv", o->dir);
        sdi_twin_target *tab = NULL;
        int nt = 0;
        if (sdi_twin_read_table(path, &tab, &nt) != SD_OK) {
            fprintf(stderr, "bench_spgemm: %s\n", sd_last_error());
            return 0;
        }
        for (int q = 0; q < nt; q++) {
            ADD();
            task_t *x = &t[cnt - 1];
            snprintf(x->name, sizeof x->name, "%s", tab[q].name);
            snprintf(x->source, sizeof x->source, "twin");
            double scale = 1.0;
            if ((double)tab[q].nnz > o->max_nnz && o->scale_twins)
                scale = o->max_nnz / (double)tab[q].nnz;
            x->scale = scale;
            x->nnz = tab[q].nnz;
            snprintf(x->spec, sizeof x->spec, "twin:name=%s,file=%s,scale=%.6g", tab[q].name, path,
                     scale);
            x->aat = tab[q].rows != tab[q].cols;
        }
        sdi_free(tab);
    } else if (strcmp(o->set, "real") == 0) {
        char dir[1024];
        snprintf(dir, sizeof dir, "%s/suitesparse", o->dir);
        DIR *d = opendir(dir);
        if (d == NULL) {
            fprintf(stderr, "bench_spgemm: cannot open %s\n", dir);
            return 0;
        }
        char **names = NULL;
        int nn = 0, nc = 0;
        struct dirent *de;
        while ((de = readdir(d)) != NULL) {
            size_t l = strlen(de->d_name);
            if (l > 7 && strcmp(de->d_name + l - 7, ".mtx.gz") == 0) {
                if (nn == nc) {
                    nc = nc ? 2 * nc : 64;
                    names = realloc(names, (size_t)nc * sizeof *names);
                }
                names[nn++] = strdup(de->d_name);
            }
        }
        closedir(d);
        qsort(names, (size_t)nn, sizeof *names, cmp_str);
        for (int q = 0; q < nn; q++) {
            ADD();
            task_t *x = &t[cnt - 1];
            snprintf(x->name, sizeof x->name, "%.*s", (int)(strlen(names[q]) - 7), names[q]);
            snprintf(x->source, sizeof x->source, "real");
            snprintf(x->spec, sizeof x->spec, "%s/%s", dir, names[q]);
            x->aat = -1;
            free(names[q]);
        }
        free(names);
    } else {
        fprintf(stderr, "bench_spgemm: unknown set '%s' (quick, paper60, real)\n", o->set);
        return 0;
    }
#undef ADD
    if (o->matrices > 0 && cnt > o->matrices)
        cnt = o->matrices;
    *out = t;
    *n = cnt;
    return 1;
}

/* ------------------------------------------------------------------ measurement */
/* One product of an executor (the library's sdi_spgemm_measure frees, checks and times). */
static sd_status produce(void *e, cudaStream_t st, sd_device_csr *c)
{
    return sdi_spgemm_exec_run(e, st, SDI_SG_ALLOC_ASYNC, c);
}

static double now(void) { return sdi_now(); }

/* The executor of cfg on op: scheduled under the device's limits and lowered on the host
 * (sdi_spgemm_lower_config), then adopted (the schedule moves in, the units are read);
 * what remains of the lowering is freed here. *lower_ms: the host scheduling and
 * lowering, which the executor's setup_ms (from the adoption on) leaves out. */
static sd_status make_exec(sd_context *ctx, sdi_spgemm_operands *op,
                           const sdi_spgemm_config *cfg, sdi_spgemm_exec **e, double *lower_ms)
{
    *e = NULL;
    const double t0 = now();
    sdi_sg_limits lim;
    sdi_sg_limits_from_props(&ctx->props, &lim);
    sdi_lowered low;
    sd_status s = sdi_spgemm_lower_config(&lim, sdi_spgemm_operands_rowinfo(op), cfg, &low);
    *lower_ms = (now() - t0) * 1e3;
    if (s == SD_OK)
        s = sdi_spgemm_exec_adopt(ctx, op, &low.sg, &low.sg_units, e);
    sdi_lowered_free(&low);
    return s;
}

static int family_enabled(const opts_t *o, int f)
{
    if (o->families == NULL)
        return 1;
    const char *name = sdi_spgemm_family_name(f);
    const char *p = strstr(o->families, name);
    return p != NULL && (p[strlen(name)] == ',' || p[strlen(name)] == '\0');
}

static double g_run_t0; /* the run's start: progress lines show the time since */

static void run_task(sd_context *ctx, const opts_t *o, task_t *t, double deadline)
{
    sd_csr a, at;
    memset(&a, 0, sizeof a);
    memset(&at, 0, sizeof at);
    sdi_reference ref;
    memset(&ref, 0, sizeof ref);
    sdi_spgemm_operands *op = NULL;
    sdi_spgemm_config *cands = NULL;
    int64_t *u = NULL;
    const double t0 = now();
    sd_status s;
    if (strcmp(t->source, "real") == 0) {
        s = sd_csr_read(t->spec, &a);
    } else {
        s = sdi_gen(t->spec, 42, &a);
        if (s == SD_OK)
            sdi_gen_values(&a, SDI_VALUES_UNIFORM, 43);
    }
    if (s != SD_OK) {
        /* a matrix the library does not take (complex values) is skipped, not failed */
        t->status = s == SD_ERR_UNSUPPORTED ? "skipped" : "error";
        snprintf(t->detail, sizeof t->detail, "input: %s", sd_last_error());
        goto done;
    }
    if (t->aat < 0)
        t->aat = a.rows != a.cols;
    t->rows = a.rows;
    t->cols = a.cols;
    t->nnz = a.nnz;
    if ((double)a.nnz > o->max_nnz && t->scale >= 1.0 && !t->big) {
        t->status = "skipped";
        snprintf(t->detail, sizeof t->detail, "nnz %lld > --max-nnz", (long long)a.nnz);
        goto done;
    }
    /* Σu on the host before anything expensive */
    const sd_csr *b = &a;
    if (t->aat) {
        if (sdi_csr_transpose(&a, &at) != SD_OK) {
            t->status = "error";
            snprintf(t->detail, sizeof t->detail, "transpose: %s", sd_last_error());
            goto done;
        }
        b = &at;
    }
    u = malloc((size_t)(a.rows > 0 ? a.rows : 1) * sizeof *u);
    t->u_total = u ? sdi_spgemm_row_work(&a, b->rowptr, u) : 0;
    if (t->u_total > o->max_products) {
        t->status = "skipped";
        snprintf(t->detail, sizeof t->detail, "%.3g products > --max-products", t->u_total);
        goto done;
    }
    fprintf(stderr, "[%6.1f s] %s: %dx%d nnz %lld %s, %.3g products\n", now() - g_run_t0,
            t->name, a.rows, a.cols, (long long)a.nnz, t->aat ? "A*At" : "A*A", t->u_total);
    s = sdi_reference_spgemm(&a, b, &ref);
    if (s != SD_OK) {
        t->status = "error";
        snprintf(t->detail, sizeof t->detail, "reference: %s", sd_last_error());
        goto done;
    }
    t->nnz_c = ref.c.nnz;
    /* cuSPARSE */
    if (o->baseline) {
        sdi_baseline bl;
        sdi_baseline_options bo = {.aat = t->aat};
        s = sdi_cusparse_baseline(ctx, &a, SD_OP_SPGEMM, NULL, &bo, &bl);
        t->bl_ran = 1;
        if (s != SD_OK) {
            snprintf(t->bl_detail, sizeof t->bl_detail, "baseline error: %s", sd_last_error());
        } else if (bl.best >= 0) {
            t->bl_ok = 1;
            snprintf(t->bl_name, sizeof t->bl_name, "%s", bl.v[bl.best].name);
            t->bl_us = bl.v[bl.best].timing.mean_us;
        } else {
            size_t off = 0;
            for (int q = 0; q < bl.nvariants && off + 8 < sizeof t->bl_detail; q++)
                off += (size_t)snprintf(t->bl_detail + off, sizeof t->bl_detail - off, "%s%s: %s (%.80s)",
                                        q ? "; " : "", bl.v[q].name,
                                        sdi_variant_status_name(bl.v[q].status), bl.v[q].detail);
        }
    }
    /* ours */
    s = sdi_spgemm_operands_create(ctx, &a, NULL, t->aat, &op);
    if (s != SD_OK) {
        t->status = "error";
        snprintf(t->detail, sizeof t->detail, "operands: %s", sd_last_error());
        goto done;
    }
    sdi_sg_summary sm;
    sdi_sg_summarize(sdi_spgemm_operands_rowinfo(op), &sm);
    uint32_t mask = 0;
    for (int f = 0; f < NF; f++)
        if (family_enabled(o, f))
            mask |= 1u << f;
    const int level = t->u_total > 5e8 ? 0 : o->level;
    int n = 0;
    s = sdi_spgemm_enumerate(&sm, mask, level, 64, &cands, &n);
    if (s != SD_OK || n == 0) {
        t->status = "error";
        snprintf(t->detail, sizeof t->detail, "enumerate: %s", sd_last_error());
        goto done;
    }
    const double tc = now();
    (void)sdi_spgemm_precompile(ctx, sdi_spgemm_operands_rowinfo(op), cands, n);
    fprintf(stderr, "    %d candidates compiled in %.1f s\n", n, now() - tc);
    for (int f = 0; f < NF; f++)
        t->fam_us[f] = -1;
    t->oracle_us = -1;
    for (int q = 0; q < n; q++) {
        if (q > 0 && now() > deadline + 60) /* keep the tail bounded */
            break;
        t->candidates++;
        sdi_spgemm_exec *e = NULL;
        char cfg[256];
        sdi_spgemm_config_describe(&cands[q], cfg, sizeof cfg);
        double lower_ms = 0;
        s = make_exec(ctx, op, &cands[q], &e, &lower_ms);
        if (s != SD_OK) {
            t->invalid++;
            fprintf(stderr, "    %s: %s\n", cfg, sd_last_error());
            if (ctx->broken)
                break;
            continue;
        }
        sdi_timing tm;
        s = sdi_spgemm_measure(ctx, cfg, produce, e, &ref, &tm, NULL, NULL, NULL, NULL);
        const sdi_spgemm_exec_info *in = sdi_spgemm_exec_get_info(e);
        if (s != SD_OK) {
            t->invalid++;
            fprintf(stderr, "    INVALID %s: %s | %s\n", cfg, sd_last_error(), in->bins);
        } else {
            const int f = cands[q].family;
            if (t->fam_us[f] < 0 || tm.mean_us < t->fam_us[f]) {
                t->fam_us[f] = tm.mean_us;
                snprintf(t->fam_cfg[f], sizeof t->fam_cfg[f], "%s", cfg);
                snprintf(t->fam_bins[f], sizeof t->fam_bins[f], "%s", in->bins);
                t->fam_peak[f] = in->peak_bytes;
            }
            if (t->oracle_us < 0 || tm.mean_us < t->oracle_us) {
                t->oracle_us = tm.mean_us;
                t->oracle_pipe_us = tm.pipelined_us;
                t->oracle_family = f;
                t->oracle_peak = in->peak_bytes;
                t->oracle_setup_ms = lower_ms + in->setup_ms + sdi_spgemm_operands_setup_ms(op);
                t->oracle_compile_ms = in->compile_ms;
            }
        }
        sdi_spgemm_exec_destroy(e);
        if (ctx->broken)
            break;
    }
    if (t->oracle_us < 0) {
        t->status = "invalid";
        snprintf(t->detail, sizeof t->detail, "no candidate validated (%d tried)", t->candidates);
    } else {
        t->status = t->invalid > 0 ? "ok (some candidates invalid)" : "ok";
        if (t->bl_ok)
            t->speedup = t->bl_us / t->oracle_us;
    }
    fprintf(stderr, "    cuSPARSE %s %.1f us | ours %.1f us (%s) | speed-up %.2f\n",
            t->bl_ok ? t->bl_name : "failed", t->bl_us, t->oracle_us,
            t->oracle_family >= 0 ? sdi_spgemm_family_name(t->oracle_family) : "-", t->speedup);
done:
    t->seconds = now() - t0;
    sdi_free(cands);
    free(u);
    sdi_spgemm_operands_destroy(op);
    sdi_reference_free(&ref);
    sd_csr_free(&a);
    sd_csr_free(&at);
}

/* ------------------------------------------------------------------ reports */
static uint64_t xs(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct {
    int n, below1, bl_failed, bl_failed_done;
    double geomean, lo, hi, min, max;
} summary_t;

static void summarize(const task_t *t, int n, summary_t *sm)
{
    memset(sm, 0, sizeof *sm);
    double *logs = malloc((size_t)(n > 0 ? n : 1) * sizeof *logs);
    if (logs == NULL)
        return;
    double sum = 0;
    sm->min = INFINITY;
    sm->max = 0;
    for (int i = 0; i < n; i++) {
        if (t[i].bl_ran && !t[i].bl_ok && t[i].rows > 0 && strcmp(t[i].status, "skipped") != 0 &&
            strcmp(t[i].status, "not run") != 0) {
            sm->bl_failed++;
            if (t[i].oracle_us > 0)
                sm->bl_failed_done++;
        }
        if (t[i].speedup <= 0)
            continue;
        logs[sm->n++] = log(t[i].speedup);
        sum += log(t[i].speedup);
        sm->below1 += t[i].speedup < 1.0;
        if (t[i].speedup < sm->min)
            sm->min = t[i].speedup;
        if (t[i].speedup > sm->max)
            sm->max = t[i].speedup;
    }
    if (sm->n > 0) {
        sm->geomean = exp(sum / sm->n);
        enum { R = 20000 };
        double *means = malloc(R * sizeof *means);
        uint64_t seed = 0x5eed5eedull;
        if (means != NULL) {
            for (int r = 0; r < R; r++) {
                double s = 0;
                for (int k = 0; k < sm->n; k++)
                    s += logs[xs(&seed) % (uint64_t)sm->n];
                means[r] = s / sm->n;
            }
            qsort(means, R, sizeof *means, cmp_d);
            sm->lo = exp(means[(int)(0.025 * R)]);
            sm->hi = exp(means[(int)(0.975 * R) - 1]);
            free(means);
        }
    }
    free(logs);
}

static void write_reports(const opts_t *o, const task_t *t, int n, sd_context *ctx)
{
    summary_t sm;
    summarize(t, n, &sm);
    char path[1200];
    mkdir(o->out, 0755);
    sdi_json j;
    sdi_json_init(&j, 1);
    sdi_json_begin_object(&j);
    sdi_json_key(&j, "benchmark");
    sdi_json_string(&j, "bench_spgemm");
    sdi_json_key(&j, "set");
    sdi_json_string(&j, o->set);
    sdi_json_key(&j, "device");
    sdi_json_string(&j, ctx->props.name);
    sdi_json_key(&j, "summary");
    sdi_json_begin_object(&j);
    sdi_json_key(&j, "tasks_with_speedup");
    sdi_json_int(&j, sm.n);
    sdi_json_key(&j, "geomean_speedup");
    sdi_json_number(&j, sm.geomean);
    sdi_json_key(&j, "ci95");
    sdi_json_begin_array(&j);
    sdi_json_number(&j, sm.lo);
    sdi_json_number(&j, sm.hi);
    sdi_json_end_array(&j);
    sdi_json_key(&j, "min_speedup");
    sdi_json_number(&j, sm.n ? sm.min : 0);
    sdi_json_key(&j, "max_speedup");
    sdi_json_number(&j, sm.max);
    sdi_json_key(&j, "tasks_below_1");
    sdi_json_int(&j, sm.below1);
    sdi_json_key(&j, "cusparse_failed");
    sdi_json_int(&j, sm.bl_failed);
    sdi_json_key(&j, "cusparse_failed_completed_by_us");
    sdi_json_int(&j, sm.bl_failed_done);
    sdi_json_end_object(&j);
    sdi_json_key(&j, "tasks");
    sdi_json_begin_array(&j);
    for (int i = 0; i < n; i++) {
        const task_t *x = &t[i];
        sdi_json_begin_object(&j);
        sdi_json_key(&j, "name");
        sdi_json_string(&j, x->name);
        sdi_json_key(&j, "source");
        sdi_json_string(&j, x->source);
        sdi_json_key(&j, "spec");
        sdi_json_string(&j, x->spec);
        sdi_json_key(&j, "status");
        sdi_json_string(&j, x->status);
        sdi_json_key(&j, "detail");
        sdi_json_string(&j, x->detail);
        sdi_json_key(&j, "product");
        sdi_json_string(&j, x->aat ? "A*At" : "A*A");
        sdi_json_key(&j, "rows");
        sdi_json_int(&j, x->rows);
        sdi_json_key(&j, "cols");
        sdi_json_int(&j, x->cols);
        sdi_json_key(&j, "nnz");
        sdi_json_int(&j, x->nnz);
        sdi_json_key(&j, "scale");
        sdi_json_number(&j, x->scale);
        sdi_json_key(&j, "products");
        sdi_json_number(&j, x->u_total);
        sdi_json_key(&j, "nnz_c");
        sdi_json_int(&j, x->nnz_c);
        sdi_json_key(&j, "cusparse");
        sdi_json_begin_object(&j);
        sdi_json_key(&j, "ran");
        sdi_json_bool(&j, x->bl_ran);
        sdi_json_key(&j, "best");
        sdi_json_string(&j, x->bl_ok ? x->bl_name : "");
        sdi_json_key(&j, "mean_us");
        sdi_json_number(&j, x->bl_ok ? x->bl_us : NAN);
        sdi_json_key(&j, "failure");
        sdi_json_string(&j, x->bl_detail);
        sdi_json_end_object(&j);
        sdi_json_key(&j, "families");
        sdi_json_begin_object(&j);
        for (int f = 0; f < NF; f++) {
            sdi_json_key(&j, sdi_spgemm_family_name(f));
            sdi_json_begin_object(&j);
            sdi_json_key(&j, "mean_us");
            sdi_json_number(&j, x->fam_us[f] > 0 ? x->fam_us[f] : NAN);
            sdi_json_key(&j, "config");
            sdi_json_string(&j, x->fam_cfg[f]);
            sdi_json_key(&j, "bins");
            sdi_json_string(&j, x->fam_bins[f]);
            sdi_json_key(&j, "peak_bytes");
            sdi_json_int(&j, x->fam_peak[f]);
            sdi_json_end_object(&j);
        }
        sdi_json_end_object(&j);
        sdi_json_key(&j, "oracle");
        sdi_json_begin_object(&j);
        sdi_json_key(&j, "family");
        sdi_json_string(&j, x->oracle_family >= 0 ? sdi_spgemm_family_name(x->oracle_family) : "");
        sdi_json_key(&j, "mean_us");
        sdi_json_number(&j, x->oracle_us > 0 ? x->oracle_us : NAN);
        sdi_json_key(&j, "pipelined_us");
        sdi_json_number(&j, x->oracle_us > 0 ? x->oracle_pipe_us : NAN);
        sdi_json_key(&j, "peak_bytes");
        sdi_json_int(&j, x->oracle_peak);
        sdi_json_key(&j, "setup_ms");
        sdi_json_number(&j, x->oracle_setup_ms);
        sdi_json_key(&j, "compile_ms");
        sdi_json_number(&j, x->oracle_compile_ms);
        sdi_json_end_object(&j);
        sdi_json_key(&j, "speedup");
        sdi_json_number(&j, x->speedup > 0 ? x->speedup : NAN);
        sdi_json_key(&j, "candidates");
        sdi_json_int(&j, x->candidates);
        sdi_json_key(&j, "invalid_candidates");
        sdi_json_int(&j, x->invalid);
        sdi_json_key(&j, "seconds");
        sdi_json_number(&j, x->seconds);
        sdi_json_end_object(&j);
    }
    sdi_json_end_array(&j);
    sdi_json_end_object(&j);
    if (sdi_json_finish(&j) == SD_OK) {
        snprintf(path, sizeof path, "%s/bench_spgemm.json", o->out);
        FILE *f = fopen(path, "w");
        if (f != NULL) {
            fputs(j.buf, f);
            fputc('\n', f);
            fclose(f);
        }
    }
    sdi_json_free(&j);

    snprintf(path, sizeof path, "%s/bench_spgemm.md", o->out);
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return;
    fprintf(f, "# SpGEMM: mechanism library vs cuSPARSE (%s, set %s)\n\n", ctx->props.name, o->set);
    fprintf(f, "Geomean speed-up of the oracle best over the best cuSPARSE algorithm: **%.2f×** "
               "(95%% bootstrap CI %.2f–%.2f) over %d tasks; min %.2f×, max %.2f×; %d tasks below "
               "1.0×. cuSPARSE failed on %d tasks, %d of them completed and validated by us.\n\n",
            sm.geomean, sm.lo, sm.hi, sm.n, sm.n ? sm.min : 0, sm.max, sm.below1, sm.bl_failed,
            sm.bl_failed_done);
    fprintf(f, "Times in µs (mean of 10 event-timed runs after 5 warm-ups; symbolic + numeric + "
               "compaction + C's allocation for us).\n\n");
    fprintf(f, "| task | product | rows | nnz | products | nnz(C) | cuSPARSE best | ");
    for (int q = 0; q < NF; q++)
        fprintf(f, "%s | ", sdi_spgemm_family_name(q));
    fprintf(f, "oracle | speed-up | peak MiB | status |\n|");
    for (int q = 0; q < 11 + NF; q++)
        fprintf(f, " --- |");
    fprintf(f, "\n");
    for (int i = 0; i < n; i++) {
        const task_t *x = &t[i];
        fprintf(f, "| %s%s | %s | %d | %lld | %.3g | %lld | ", x->name,
                x->scale < 1.0 ? " (scaled)" : "", x->aat ? "A·Aᵀ" : "A·A", x->rows,
                (long long)x->nnz, x->u_total, (long long)x->nnz_c);
        if (x->bl_ok)
            fprintf(f, "%.1f (%s) | ", x->bl_us, x->bl_name);
        else
            fprintf(f, "%s | ", x->bl_ran ? "failed" : "-");
        for (int q = 0; q < NF; q++) {
            if (x->fam_us[q] > 0)
                fprintf(f, "%.1f | ", x->fam_us[q]);
            else
                fprintf(f, "- | ");
        }
        if (x->oracle_us > 0)
            fprintf(f, "%.1f | ", x->oracle_us);
        else
            fprintf(f, "- | ");
        if (x->speedup > 0)
            fprintf(f, "%.2f× | ", x->speedup);
        else
            fprintf(f, "- | ");
        fprintf(f, "%.1f | %s%s%s |\n", (double)x->oracle_peak / 1048576.0, x->status,
                x->detail[0] ? ": " : "", x->detail);
    }
    fprintf(f, "\n## Oracle plans\n\n");
    for (int i = 0; i < n; i++) {
        const task_t *x = &t[i];
        if (x->oracle_family < 0)
            continue;
        fprintf(f, "- %s: %s — %s\n", x->name, x->fam_cfg[x->oracle_family],
                x->fam_bins[x->oracle_family]);
    }
    fprintf(f, "\n## cuSPARSE failures\n\n");
    for (int i = 0; i < n; i++)
        if (t[i].bl_ran && !t[i].bl_ok)
            fprintf(f, "- %s: %s\n", t[i].name, t[i].bl_detail);
    fclose(f);
}

/* ------------------------------------------------------------------ main */
/* --only a,b,...: tasks whose names contain one of the words. */
static int name_selected(const char *only, const char *name)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", only);
    for (char *w = strtok(buf, ","); w != NULL; w = strtok(NULL, ","))
        if (strstr(name, w) != NULL)
            return 1;
    return 0;
}

static int usage(void)
{
    fprintf(stderr, "usage: bench_spgemm --out DIR [--set quick|paper60|real] [--max-nnz N] "
                    "[--max-products P] [--time-limit S] [--level 0|1|2] [--families a,b] "
                    "[--matrices N] [--scale-twins] [--dir DIR] [--no-baseline] [--only S]\n");
    return 2;
}

int main(int argc, char **argv)
{
    opts_t o = {.out = NULL, .set = "quick", .dir = SD_MATRICES_DIR, .max_nnz = 5e6,
                .max_products = 5e9, .time_limit = 230, .level = 1, .baseline = 1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define VAL()                                                                              \
    do {                                                                                   \
        if (v == NULL)                                                                     \
            return usage();                                                                \
        i++;                                                                               \
    } while (0)
        if (strcmp(a, "--out") == 0) { VAL(); o.out = v; }
        else if (strcmp(a, "--set") == 0) { VAL(); o.set = v; }
        else if (strcmp(a, "--dir") == 0) { VAL(); o.dir = v; }
        else if (strcmp(a, "--max-nnz") == 0) { VAL(); o.max_nnz = atof(v); }
        else if (strcmp(a, "--max-products") == 0) { VAL(); o.max_products = atof(v); }
        else if (strcmp(a, "--time-limit") == 0) { VAL(); o.time_limit = atof(v); }
        else if (strcmp(a, "--level") == 0) { VAL(); o.level = atoi(v); }
        else if (strcmp(a, "--families") == 0) { VAL(); o.families = v; }
        else if (strcmp(a, "--matrices") == 0) { VAL(); o.matrices = atoi(v); }
        else if (strcmp(a, "--only") == 0) { VAL(); o.only = v; }
        else if (strcmp(a, "--scale-twins") == 0) o.scale_twins = 1;
        else if (strcmp(a, "--no-baseline") == 0) o.baseline = 0;
        else return usage();
#undef VAL
    }
    if (o.out == NULL)
        return usage();
    task_t *tasks = NULL;
    int n = 0;
    if (!build_tasks(&o, &tasks, &n))
        return 2;
    sd_context *ctx = NULL;
    sd_context_options co = {.device = 0};
    if (sd_context_create(&co, &ctx) != SD_OK) {
        fprintf(stderr, "bench_spgemm: %s\n", sd_last_error());
        free(tasks);
        return 3;
    }
    (void)sdi_device_calibrate(ctx);
    const double t0 = now(), deadline = t0 + (o.time_limit > 0 ? o.time_limit : 1e30);
    g_run_t0 = t0;
    int bad = 0;
    for (int i = 0; i < n; i++) {
        if (o.only != NULL && !name_selected(o.only, tasks[i].name)) {
            tasks[i].status = "skipped";
            snprintf(tasks[i].detail, sizeof tasks[i].detail, "--only");
            continue;
        }
        if (now() > deadline) {
            fprintf(stderr, "bench_spgemm: time limit reached; %d tasks not run\n", n - i);
            break;
        }
        if (ctx->broken) {
            tasks[i].status = "error";
            snprintf(tasks[i].detail, sizeof tasks[i].detail, "CUDA context broken: %s",
                     ctx->broken_reason);
            bad = 1;
            continue;
        }
        run_task(ctx, &o, &tasks[i], deadline);
        if (strcmp(tasks[i].status, "invalid") == 0 || strcmp(tasks[i].status, "error") == 0)
            bad = 1;
        write_reports(&o, tasks, n, ctx);
    }
    write_reports(&o, tasks, n, ctx);
    summary_t sm;
    summarize(tasks, n, &sm);
    fprintf(stderr, "bench_spgemm: geomean %.2fx (CI %.2f-%.2f) over %d tasks, %d below 1.0x, "
                    "cuSPARSE failed on %d (we completed %d); %.0f s\n",
            sm.geomean, sm.lo, sm.hi, sm.n, sm.below1, sm.bl_failed, sm.bl_failed_done,
            now() - t0);
    free(tasks);
    sd_context_destroy(ctx);
    return bad ? 1 : 0;
}
