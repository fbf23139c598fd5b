/* bench/bench_spmv.c: the SpMV mechanism library against cuSPARSE. Per matrix: every
 * template family at its best θ_H from a small sweep (validated before timing), the best
 * cuSPARSE variant, the oracle-best template (per execution and pipelined), the fraction
 * of the memory roofline and the physical ceiling = best cuSPARSE time / max(event-timed
 * empty launch, CSR streaming limit). Per set: geometric means with 95 % bootstrap
 * intervals, the ceiling geomean, the count below 1.0×, and the roofline fraction of the
 * matrices whose working set exceeds 4× L2.
 *
 *   bench_spmv --out DIR [--set real|paper60|all|quick] [--max-nnz N] [--time-limit S]
 *              [--level 0|1|2] [--big-nnz N] [--families a,b] [--filter SUBSTR]
 *              [--seed S] [--dir MATRICES_DIR]
 *
 *   real     every matrix of MATRICES_DIR/suitesparse/INDEX.tsv (complex ones skipped)
 *   paper60  twins of the 60 rows of MATRICES_DIR/paper60.tsv at their real sizes
 *   all      real, then paper60 (default)       quick  a few generated matrices
 * --max-nnz skips larger matrices (default 3e7; 0 = none), --time-limit stops starting
 * new matrices after S seconds (default 210; 0 = none), --level is the θ_H sweep
 * (default 1), reduced to the defaults of the padded formats above --big-nnz (default
 * 4e6) where building them dominates. Writes DIR/bench_spmv.json (every family of every
 * matrix) and DIR/bench_spmv.md; progress on stderr. Exit 0 when every validated run
 * passed, 1 when any candidate failed validation or errored, 3 without a device. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gen/gen.h"
#include "plan/family.h"
#include "runtime/executable.h"
#include "runtime/runtime.h"
#include "vendor/baseline.h"

#define NF SDI_SPMV_NFAMILIES

typedef struct {
    int tried, valid, refused, failed;
    int ok;
    sdi_spmv_config cfg;      /* best by mean */
    sdi_timing t;
    sdi_spmv_config cfg_pipe; /* best by pipelined time */
    double pipe_us;
    double m_rep;             /* bytes of the best config's format */
    double build_ms;
    char detail[256];         /* first failure */
} fam_result;

typedef struct {
    char name[160];
    char set[8];
    int32_t rows, cols;
    int64_t nnz;
    const char *status; /* "ok", "skipped", "not run", "error" */
    char detail[320];
    sdi_baseline base;
    fam_result fam[NF];
    int best, best_pipe;       /* family indices, -1 when none */
    double roof_us;            /* CSR streaming limit */
    double ws_bytes;           /* roofline bytes = working set */
    double ceiling;            /* cuSPARSE / max(launch, roof) */
    double speedup, speedup_pipe;
    double roof_frac;          /* roof_us / oracle mean */
    double seconds;
} mat_result;

typedef struct {
    const char *out_dir, *set, *families, *filter, *dir;
    double max_nnz, big_nnz, time_limit;
    int level;
    uint64_t seed;
} opts_t;

static int g_bad_runs;

static int fam_selected(const opts_t *o, int f)
{
    if (o->families == NULL)
        return 1;
    const char *name = sdi_spmv_family_name(f);
    size_t n = strlen(name);
    for (const char *p = o->families; *p;) {
        const char *c = strchr(p, ',');
        size_t len = c ? (size_t)(c - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0)
            return 1;
        if (c == NULL)
            break;
        p = c + 1;
    }
    return 0;
}

/* Families whose format build is cheap relative to a run keep the sweep on big inputs. */
static int cheap_family(int f)
{
    return f == SDI_SPMV_CSR_VEC || f == SDI_SPMV_MERGE || f == SDI_SPMV_CSR_ADAPTIVE;
}

static void run_family(sd_context *ctx, const opts_t *o, const sd_csr *a, const sdi_spmv_stats *st,
                       const sdi_reference *ref, const float *d_x, float *d_y, int f,
                       fam_result *fr)
{
    memset(fr, 0, sizeof *fr);
    int level = o->level;
    if (a->nnz > o->big_nnz && !cheap_family(f))
        level = 0;
    const sdi_family *fam = sdi_family_at(sdi_family_of(SD_OP_SPMV, f));
    const sdi_task task = {.op = SD_OP_SPMV, .k = 1, .a = a, .gpu = &ctx->props, .spmv = st};
    sdi_plan_list v = {0};
    if (fam->sweep(&task, level, &v) != SD_OK) {
        snprintf(fr->detail, sizeof fr->detail, "enumerate: %s", sd_last_error());
        fr->failed++;
        sdi_plan_list_free(&v);
        return;
    }
    for (int i = 0; i < v.n; i++) {
        const sdi_spmv_config *c = &v.v[i].p.spmv;
        char line[256];
        sdi_spmv_config_describe(c, line, sizeof line);
        fr->tried++;
        sdi_lowered p;
        sd_status s = fam->lower(&task, &v.v[i], &p);
        if (s == SD_ERR_UNSUPPORTED) {
            fr->refused++;
            if (fr->detail[0] == '\0' && fr->valid == 0)
                snprintf(fr->detail, sizeof fr->detail, "refused: %s", sd_last_error());
            continue;
        }
        const double m_rep = (double)(p.bytes_value + p.bytes_meta), build_ms = p.build_ms;
        sdi_executable e;
        memset(&e, 0, sizeof e);
        /* A graph issues in 1.3 us what a plain launch issues in 3.5 (runtime.h). */
        if (s == SD_OK)
            s = sdi_exe_create_program(ctx, &p, sdi_config_get()->graphs, &e);
        sdi_validation val;
        sdi_timing t;
        memset(&t, 0, sizeof t);
        if (s == SD_OK)
            s = sdi_exe_measure(ctx, &e, d_x, d_y, ref, &val, line, &t);
        if (s != SD_OK) {
            fr->failed++;
            g_bad_runs++;
            fprintf(stderr, "    FAILED [%s]: %s\n", line, sd_last_error());
            if (fr->failed == 1)
                snprintf(fr->detail, sizeof fr->detail, "[%.100s] %.140s", line, sd_last_error());
        } else {
            fr->valid++;
            if (!fr->ok || t.mean_us < fr->t.mean_us) {
                fr->ok = 1;
                fr->cfg = *c;
                fr->t = t;
                fr->m_rep = m_rep;
                fr->build_ms = build_ms;
            }
            if (fr->pipe_us == 0 || t.pipelined_us < fr->pipe_us) {
                fr->pipe_us = t.pipelined_us;
                fr->cfg_pipe = *c;
            }
        }
        sdi_exe_free(&e);
        if (ctx->broken) /* a sticky CUDA error: nothing more can run */
            break;
    }
    sdi_plan_list_free(&v);
    if (fr->ok && fr->failed == 0)
        fr->detail[0] = '\0'; /* refusals of some sweep points are no news */
}

static void run_matrix(sd_context *ctx, const opts_t *o, mat_result *m, sd_csr *a)
{
    double t0 = sdi_now();
    m->rows = a->rows;
    m->cols = a->cols;
    m->nnz = a->nnz;
    m->best = m->best_pipe = -1;
    m->base.best = -1;
    float *x = NULL, *d_x = NULL, *d_y = NULL;
    sdi_reference ref;
    memset(&ref, 0, sizeof ref);
    sdi_spmv_stats st;
    sd_status s = sdi_spmv_stats_compute(a, &st);
    x = malloc(((size_t)a->cols + 1) * sizeof *x);
    if (s == SD_OK && x == NULL)
        s = SDI_ERR(SD_ERR_OUT_OF_MEMORY, "host x");
    if (s == SD_OK) {
        sdi_gen_dense(x, a->cols, SDI_VALUES_UNIFORM, o->seed + 1);
        s = sdi_reference_dense(a, SD_OP_SPMV, x, 1, 0, &ref);
    }
    if (s == SD_OK) {
        sdi_baseline_options bo;
        memset(&bo, 0, sizeof bo);
        bo.k = 1;
        bo.aat = -1;
        s = sdi_cusparse_baseline(ctx, a, SD_OP_SPMV, x, &bo, &m->base);
    }
    if (s == SD_OK)
        s = sdi_device_upload(ctx, (void **)&d_x, x, (size_t)a->cols * sizeof *x, "x");
    if (s == SD_OK)
        s = sdi_device_malloc(ctx, (void **)&d_y, (size_t)a->rows * sizeof(float), "y");
    if (s != SD_OK) {
        m->status = "error";
        snprintf(m->detail, sizeof m->detail, "%s", sd_last_error());
        g_bad_runs++;
    } else {
        for (int f = 0; f < NF; f++) {
            if (!fam_selected(o, f))
                continue;
            run_family(ctx, o, a, &st, &ref, d_x, d_y, f, &m->fam[f]);
            if (m->fam[f].ok && (m->best < 0 || m->fam[f].t.mean_us < m->fam[m->best].t.mean_us))
                m->best = f;
            if (m->fam[f].ok &&
                (m->best_pipe < 0 || m->fam[f].pipe_us < m->fam[m->best_pipe].pipe_us))
                m->best_pipe = f;
        }
        m->status = "ok";
    }
    m->ws_bytes = sdi_roofline_bytes(SD_OP_SPMV, a->rows, a->cols, a->nnz, 1);
    m->roof_us = ctx->copy_bw > 0 ? 1e6 * m->ws_bytes / ctx->copy_bw : 0;
    if (m->best >= 0 && m->base.best >= 0) {
        const sdi_timing *bt = &m->base.v[m->base.best].timing;
        double floor_us = fmax(ctx->launch_us_mean, m->roof_us);
        m->ceiling = bt->mean_us / floor_us;
        m->speedup = bt->mean_us / m->fam[m->best].t.mean_us;
        /* cuSPARSE's best pipelined time over its valid variants. */
        double bp = 0;
        for (int v = 0; v < m->base.nvariants; v++)
            if (m->base.v[v].status == SDI_VARIANT_OK &&
                (bp == 0 || m->base.v[v].timing.pipelined_us < bp))
                bp = m->base.v[v].timing.pipelined_us;
        m->speedup_pipe = bp / m->fam[m->best_pipe].pipe_us;
        m->roof_frac = m->roof_us / m->fam[m->best].t.mean_us;
    }
    sdi_device_free(d_x);
    sdi_device_free(d_y);
    sdi_reference_free(&ref);
    free(x);
    m->seconds = sdi_now() - t0;
    char bline[256] = "-";
    if (m->best >= 0)
        sdi_spmv_config_describe(&m->fam[m->best].cfg, bline, sizeof bline);
    fprintf(stderr, "  %-36s nnz %-10lld cuSPARSE %-9s %9.2f us | best %9.2f us (%s) | %5.2fx "
            "(pipe %5.2fx) ceiling %5.2fx roof %5.1f%% (%.1f s)\n",
            m->name, (long long)m->nnz,
            m->base.best >= 0 ? m->base.v[m->base.best].name : "none",
            m->base.best >= 0 ? m->base.v[m->base.best].timing.mean_us : 0.0,
            m->best >= 0 ? m->fam[m->best].t.mean_us : 0.0, bline, m->speedup, m->speedup_pipe,
            m->ceiling, 100 * m->roof_frac, m->seconds);
}

/* ------------------------------------------------------------------ aggregates */
typedef struct {
    int n;
    double geo, lo, hi, min;
    int below1;
} agg;

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Geometric mean with a 95 % bootstrap interval (20 000 resamples of the logs). */
static agg aggregate(const double *v, int n)
{
    agg g = {.n = n, .min = n > 0 ? v[0] : 0};
    if (n == 0)
        return g;
    double sum = 0;
    for (int i = 0; i < n; i++) {
        sum += log(v[i]);
        g.min = v[i] < g.min ? v[i] : g.min;
        g.below1 += v[i] < 1.0;
    }
    g.geo = exp(sum / n);
    enum { R = 20000 };
    double *means = malloc(R * sizeof *means);
    if (means == NULL) {
        g.lo = g.hi = g.geo;
        return g;
    }
    uint64_t s = 12345;
    for (int r = 0; r < R; r++) {
        double t = 0;
        for (int i = 0; i < n; i++)
            t += log(v[rng_next(&s) % (uint64_t)n]);
        means[r] = t / n;
    }
    qsort(means, R, sizeof *means, cmp_d);
    g.lo = exp(means[(int)(0.025 * R)]);
    g.hi = exp(means[(int)(0.975 * R) - 1]);
    free(means);
    return g;
}

typedef struct {
    agg exec, pipe, ceil;
    double frac; /* geomean speedup / geomean ceiling */
    int n_big;
    agg roof_big; /* roofline fraction of matrices with working set > 4 × L2 */
} set_summary;

static set_summary summarize(const mat_result *m, int n, const char *set, double l2)
{
    set_summary s;
    memset(&s, 0, sizeof s);
    double *a = malloc(((size_t)n + 1) * sizeof *a), *b = malloc(((size_t)n + 1) * sizeof *b),
           *c = malloc(((size_t)n + 1) * sizeof *c), *r = malloc(((size_t)n + 1) * sizeof *r);
    int k = 0, kr = 0;
    for (int i = 0; a && b && c && r && i < n; i++) {
        if (strcmp(m[i].set, set) != 0 || m[i].speedup <= 0 || m[i].ceiling <= 0)
            continue;
        a[k] = m[i].speedup;
        b[k] = m[i].speedup_pipe;
        c[k] = m[i].ceiling;
        k++;
        if (m[i].ws_bytes > 4 * l2)
            r[kr++] = m[i].roof_frac;
    }
    s.exec = aggregate(a, k);
    s.pipe = aggregate(b, k);
    s.ceil = aggregate(c, k);
    s.frac = s.ceil.geo > 0 ? s.exec.geo / s.ceil.geo : 0;
    s.n_big = kr;
    s.roof_big = aggregate(r, kr);
    free(a);
    free(b);
    free(c);
    free(r);
    return s;
}

/* ------------------------------------------------------------------ output */
static void timing_json(sdi_json *j, const char *key, const sdi_timing *t)
{
    sdi_json_key(j, key);
    sdi_timing_json(j, t);
}

static void agg_json(sdi_json *j, const char *key, const agg *g)
{
    sdi_json_key(j, key);
    sdi_json_begin_object(j);
    sdi_json_key(j, "n");
    sdi_json_int(j, g->n);
    sdi_json_key(j, "geomean");
    sdi_json_number(j, g->geo);
    sdi_json_key(j, "ci95");
    sdi_json_begin_array(j);
    sdi_json_number(j, g->lo);
    sdi_json_number(j, g->hi);
    sdi_json_end_array(j);
    sdi_json_key(j, "min");
    sdi_json_number(j, g->min);
    sdi_json_key(j, "below_1");
    sdi_json_int(j, g->below1);
    sdi_json_end_object(j);
}

static void matrix_json(sdi_json *j, const mat_result *m)
{
    sdi_json_begin_object(j);
    sdi_json_key(j, "matrix");
    sdi_json_string(j, m->name);
    sdi_json_key(j, "set");
    sdi_json_string(j, m->set);
    sdi_json_key(j, "rows");
    sdi_json_int(j, m->rows);
    sdi_json_key(j, "cols");
    sdi_json_int(j, m->cols);
    sdi_json_key(j, "nnz");
    sdi_json_int(j, m->nnz);
    sdi_json_key(j, "status");
    sdi_json_string(j, m->status);
    sdi_json_key(j, "detail");
    sdi_json_string(j, m->detail);
    sdi_json_key(j, "seconds");
    sdi_json_number(j, m->seconds);
    sdi_json_key(j, "roofline_us");
    sdi_json_number(j, m->roof_us);
    sdi_json_key(j, "working_set_bytes");
    sdi_json_number(j, m->ws_bytes);
    sdi_json_key(j, "ceiling");
    sdi_json_number(j, m->ceiling);
    sdi_json_key(j, "speedup");
    sdi_json_number(j, m->speedup);
    sdi_json_key(j, "speedup_pipelined");
    sdi_json_number(j, m->speedup_pipe);
    sdi_json_key(j, "roofline_frac");
    sdi_json_number(j, m->roof_frac);
    sdi_json_key(j, "oracle");
    sdi_json_string(j, m->best >= 0 ? sdi_spmv_family_name(m->best) : "");
    sdi_json_key(j, "oracle_pipelined");
    sdi_json_string(j, m->best_pipe >= 0 ? sdi_spmv_family_name(m->best_pipe) : "");
    sdi_json_key(j, "families");
    sdi_json_begin_object(j);
    for (int f = 0; f < NF; f++) {
        const fam_result *r = &m->fam[f];
        if (r->tried == 0)
            continue;
        sdi_json_key(j, sdi_spmv_family_name(f));
        sdi_json_begin_object(j);
        sdi_json_key(j, "tried");
        sdi_json_int(j, r->tried);
        sdi_json_key(j, "valid");
        sdi_json_int(j, r->valid);
        sdi_json_key(j, "refused");
        sdi_json_int(j, r->refused);
        sdi_json_key(j, "failed");
        sdi_json_int(j, r->failed);
        if (r->ok) {
            sdi_json_key(j, "best");
            sdi_spmv_config_json(&r->cfg, j);
            timing_json(j, "timing", &r->t);
            sdi_json_key(j, "best_pipelined");
            sdi_spmv_config_json(&r->cfg_pipe, j);
            sdi_json_key(j, "pipelined_us");
            sdi_json_number(j, r->pipe_us);
            sdi_json_key(j, "m_rep_bytes");
            sdi_json_number(j, r->m_rep);
            sdi_json_key(j, "build_ms");
            sdi_json_number(j, r->build_ms);
        }
        if (r->detail[0]) {
            sdi_json_key(j, "detail");
            sdi_json_string(j, r->detail);
        }
        sdi_json_end_object(j);
    }
    sdi_json_end_object(j);
    if (m->base.nvariants > 0) {
        sdi_json_key(j, "cusparse");
        sdi_baseline_json(&m->base, j);
    }
    sdi_json_end_object(j);
}

static const char *const g_sets[] = {"real", "paper60", "quick"};

static int write_outputs(const opts_t *o, sd_context *ctx, const mat_result *m, int n,
                         double total_s)
{
    char path[2048];
    const double l2 = (double)ctx->props.l2_bytes;
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
    sdi_json_key(&j, "l2_bytes");
    sdi_json_int(&j, ctx->props.l2_bytes);
    sdi_json_key(&j, "set");
    sdi_json_string(&j, o->set);
    sdi_json_key(&j, "level");
    sdi_json_int(&j, o->level);
    sdi_json_key(&j, "max_nnz");
    sdi_json_number(&j, o->max_nnz);
    sdi_json_key(&j, "seconds");
    sdi_json_number(&j, total_s);
    sdi_json_key(&j, "summary");
    sdi_json_begin_object(&j);
    for (int si = 0; si < 3; si++) {
        set_summary s = summarize(m, n, g_sets[si], l2);
        if (s.exec.n == 0)
            continue;
        sdi_json_key(&j, g_sets[si]);
        sdi_json_begin_object(&j);
        agg_json(&j, "speedup", &s.exec);
        agg_json(&j, "speedup_pipelined", &s.pipe);
        agg_json(&j, "ceiling", &s.ceil);
        sdi_json_key(&j, "fraction_of_ceiling");
        sdi_json_number(&j, s.frac);
        agg_json(&j, "roofline_frac_big", &s.roof_big);
        sdi_json_end_object(&j);
    }
    sdi_json_end_object(&j);
    sdi_json_key(&j, "matrices");
    sdi_json_begin_array(&j);
    for (int i = 0; i < n; i++)
        matrix_json(&j, &m[i]);
    sdi_json_end_array(&j);
    sdi_json_end_object(&j);
    if (sdi_json_finish(&j) != SD_OK) {
        fprintf(stderr, "bench_spmv: out of memory writing JSON\n");
        sdi_json_free(&j);
        return 4;
    }
    snprintf(path, sizeof path, "%s/bench_spmv.json", o->out_dir);
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        fprintf(stderr, "bench_spmv: cannot write %s: %s\n", path, strerror(errno));
        sdi_json_free(&j);
        return 3;
    }
    fputs(j.buf, f);
    fputc('\n', f);
    fclose(f);
    sdi_json_free(&j);

    snprintf(path, sizeof path, "%s/bench_spmv.md", o->out_dir);
    f = fopen(path, "w");
    if (f == NULL) {
        fprintf(stderr, "bench_spmv: cannot write %s: %s\n", path, strerror(errno));
        return 3;
    }
    fprintf(f, "# SpMV mechanism library vs cuSPARSE (%s set)\n\n", o->set);
    fprintf(f,
            "Device %s (%s): copy bandwidth %.0f GB/s, empty launch %.2f us, L2 %.0f MB. "
            "Each family at its best θ_H of a level-%d sweep (padded formats at their "
            "defaults above %.0f nnz), every candidate validated against the CPU reference "
            "before timing; mean of 10 event-timed runs after 5 warm-ups; pipelined = 10 "
            "back-to-back runs / 10. Speed-up = best cuSPARSE variant / oracle-best "
            "family. Ceiling = best cuSPARSE / max(empty launch, CSR streaming limit). "
            "Roofline = CSR streaming limit / time (formats storing fewer index bytes "
            "can exceed 100 %%). %d matrices in %.0f s; max nnz %.3g.\n\n",
            ctx->props.name, ctx->arch, ctx->copy_bw * 1e-9, ctx->launch_us_mean, l2 * 1e-6,
            o->level, o->big_nnz, n, total_s, o->max_nnz);
    fprintf(f, "| set | matrices | speed-up geomean (95%% CI) | ceiling geomean | fraction of "
               "ceiling | pipelined geomean (95%% CI) | min | below 1.0x | roofline on WS > 4 L2 "
               "(n) |\n|---|---:|---|---:|---:|---|---:|---:|---|\n");
    for (int si = 0; si < 3; si++) {
        set_summary s = summarize(m, n, g_sets[si], l2);
        if (s.exec.n == 0)
            continue;
        char rb[64] = "-";
        if (s.n_big > 0)
            snprintf(rb, sizeof rb, "%.1f%% geomean, min %.1f%% (%d)", 100 * s.roof_big.geo,
                     100 * s.roof_big.min, s.n_big);
        fprintf(f, "| %s | %d | %.2fx (%.2f–%.2f) | %.2fx | %.1f%% | %.2fx (%.2f–%.2f) | %.2fx | "
                   "%d | %s |\n",
                g_sets[si], s.exec.n, s.exec.geo, s.exec.lo, s.exec.hi, s.ceil.geo, 100 * s.frac,
                s.pipe.geo, s.pipe.lo, s.pipe.hi, s.exec.min, s.exec.below1, rb);
    }
    for (int si = 0; si < 3; si++) {
        int any = 0;
        for (int i = 0; i < n; i++)
            any |= strcmp(m[i].set, g_sets[si]) == 0;
        if (!any)
            continue;
        fprintf(f, "\n## %s\n\n| matrix | rows | cols | nnz | cuSPARSE | us | oracle | us | "
                   "speed-up | pipelined | ceiling | roofline |",
                g_sets[si]);
        for (int fa = 0; fa < NF; fa++)
            if (fam_selected(o, fa))
                fprintf(f, " %s |", sdi_spmv_family_name(fa));
        fprintf(f, "\n|---|---:|---:|---:|---|---:|---|---:|---:|---:|---:|---:|");
        for (int fa = 0; fa < NF; fa++)
            if (fam_selected(o, fa))
                fprintf(f, "---:|");
        fprintf(f, "\n");
        for (int i = 0; i < n; i++) {
            const mat_result *r = &m[i];
            if (strcmp(r->set, g_sets[si]) != 0)
                continue;
            if (r->best < 0 || r->base.best < 0) {
                fprintf(f, "| %s | %d | %d | %lld | %s: %.100s |\n", r->name, r->rows, r->cols,
                        (long long)r->nnz, r->status, r->detail);
                continue;
            }
            char bl[200];
            sdi_spmv_config_describe(&r->fam[r->best].cfg, bl, sizeof bl);
            fprintf(f, "| %s | %d | %d | %lld | %s | %.2f | %s | %.2f | %.2fx | %.2fx | %.2fx | "
                       "%.1f%% |",
                    r->name, r->rows, r->cols, (long long)r->nnz, r->base.v[r->base.best].name,
                    r->base.v[r->base.best].timing.mean_us, bl, r->fam[r->best].t.mean_us,
                    r->speedup, r->speedup_pipe, r->ceiling, 100 * r->roof_frac);
            for (int fa = 0; fa < NF; fa++) {
                if (!fam_selected(o, fa))
                    continue;
                if (r->fam[fa].ok)
                    fprintf(f, " %.2f |", r->fam[fa].t.mean_us);
                else
                    fprintf(f, " %s |", r->fam[fa].failed ? "FAIL" : "-");
            }
            fprintf(f, "\n");
        }
    }
    fclose(f);
    return 0;
}

/* ------------------------------------------------------------------ matrix lists */
typedef struct {
    mat_result *v;
    int n, cap;
} mat_list;

static mat_result *add_mat(mat_list *l, const char *name, const char *set)
{
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 64;
        mat_result *v = realloc(l->v, (size_t)cap * sizeof *v);
        if (v == NULL)
            return NULL;
        l->v = v;
        l->cap = cap;
    }
    mat_result *m = &l->v[l->n++];
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "%s", name);
    snprintf(m->set, sizeof m->set, "%s", set);
    m->status = "not run";
    m->best = m->best_pipe = m->base.best = -1;
    return m;
}

static int passes_filter(const opts_t *o, const char *name)
{
    return o->filter == NULL || strstr(name, o->filter) != NULL;
}

/* Loads (real) or generates (twin, quick) one matrix and runs it, honouring limits. */
static void do_matrix(sd_context *ctx, const opts_t *o, mat_list *l, const char *name,
                      const char *set, const char *path, const char *spec, int64_t nnz_hint,
                      double deadline)
{
    if (!passes_filter(o, name))
        return;
    mat_result *m = add_mat(l, name, set);
    if (m == NULL)
        return;
    if (o->max_nnz > 0 && nnz_hint > o->max_nnz) {
        m->status = "skipped";
        snprintf(m->detail, sizeof m->detail, "%lld nnz > --max-nnz %.3g", (long long)nnz_hint,
                 o->max_nnz);
        m->nnz = nnz_hint;
        return;
    }
    if (deadline > 0 && sdi_now() > deadline) {
        snprintf(m->detail, sizeof m->detail, "time limit reached");
        m->nnz = nnz_hint;
        return;
    }
    sd_csr a;
    sd_status s = path != NULL ? sd_csr_read(path, &a) : sdi_gen(spec, o->seed, &a);
    if (s != SD_OK) {
        m->status = s == SD_ERR_UNSUPPORTED ? "skipped" : "error";
        snprintf(m->detail, sizeof m->detail, "%s", sd_last_error());
        if (s != SD_ERR_UNSUPPORTED)
            g_bad_runs++;
        return;
    }
    if (o->max_nnz > 0 && a.nnz > o->max_nnz) {
        m->status = "skipped";
        snprintf(m->detail, sizeof m->detail, "%lld nnz > --max-nnz %.3g", (long long)a.nnz,
                 o->max_nnz);
        m->nnz = a.nnz;
        sd_csr_free(&a);
        return;
    }
    run_matrix(ctx, o, m, &a);
    sd_csr_free(&a);
}

static void run_real(sd_context *ctx, const opts_t *o, mat_list *l, double deadline)
{
    char idx[2048];
    snprintf(idx, sizeof idx, "%s/suitesparse/INDEX.tsv", o->dir);
    FILE *f = fopen(idx, "r");
    if (f == NULL) {
        fprintf(stderr, "bench_spmv: %s: %s (real set skipped)\n", idx, strerror(errno));
        return;
    }
    char line[4096];
    int lineno = 0;
    while (fgets(line, sizeof line, f)) {
        if (lineno++ == 0)
            continue; /* header */
        char name[256];
        if (sscanf(line, "%255s", name) != 1)
            continue;
        char path[2400];
        snprintf(path, sizeof path, "%s/suitesparse/%s.mtx.gz", o->dir, name);
        struct stat sb;
        if (stat(path, &sb) != 0)
            continue;
        do_matrix(ctx, o, l, name, "real", path, NULL, 0, deadline);
    }
    fclose(f);
}

static void run_paper60(sd_context *ctx, const opts_t *o, mat_list *l, double deadline)
{
    char tsv[2048];
    snprintf(tsv, sizeof tsv, "%s/paper60.tsv", o->dir);
    sdi_twin_target *t = NULL;
    int n = 0;
    if (sdi_twin_read_table(tsv, &t, &n) != SD_OK) {
        fprintf(stderr, "bench_spmv: %s (paper60 set skipped)\n", sd_last_error());
        return;
    }
    for (int i = 0; i < n; i++) {
        char spec[2400];
        snprintf(spec, sizeof spec, "twin:name=%s,file=%s", t[i].name, tsv);
        do_matrix(ctx, o, l, t[i].name, "paper60", NULL, spec, t[i].nnz, deadline);
    }
    sdi_free(t);
}

static void run_quick(sd_context *ctx, const opts_t *o, mat_list *l, double deadline)
{
    static const char *const specs[] = {
        "stencil2d:n=64",       "stencil2d:n=1000",        "stencil3d27:n=60",
        "uniform:rows=300000,deg=10", "powerlaw:rows=400000,deg=10", "rmat:scale=18,ef=16",
        "bimodal:rows=200000,short=4,long=2000,frac=0.01", "blockdiag:n=100000,b=16",
        "knn:n=200000,k=10",
    };
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++)
        do_matrix(ctx, o, l, specs[i], "quick", NULL, specs[i], 0, deadline);
}

/* ------------------------------------------------------------------ main */
static void usage(void)
{
    fprintf(stderr,
            "usage: bench_spmv --out DIR [--set real|paper60|all|quick] [--max-nnz N]\n"
            "                  [--time-limit S] [--level 0|1|2] [--big-nnz N] [--families a,b]\n"
            "                  [--filter SUBSTR] [--seed S] [--dir MATRICES_DIR]\n");
}

int main(int argc, char **argv)
{
    opts_t o = {.set = "all", .dir = SD_MATRICES_DIR, .max_nnz = 3e7, .big_nnz = 4e6,
                .time_limit = 210, .level = 1, .seed = 1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage();
            return 0;
        }
        if (v == NULL) {
            usage();
            return 2;
        }
        i++;
        if (strcmp(a, "--out") == 0)
            o.out_dir = v;
        else if (strcmp(a, "--set") == 0)
            o.set = v;
        else if (strcmp(a, "--max-nnz") == 0)
            o.max_nnz = atof(v);
        else if (strcmp(a, "--big-nnz") == 0)
            o.big_nnz = atof(v);
        else if (strcmp(a, "--time-limit") == 0)
            o.time_limit = atof(v);
        else if (strcmp(a, "--level") == 0)
            o.level = atoi(v);
        else if (strcmp(a, "--families") == 0)
            o.families = v;
        else if (strcmp(a, "--filter") == 0)
            o.filter = v;
        else if (strcmp(a, "--seed") == 0)
            o.seed = strtoull(v, NULL, 10);
        else if (strcmp(a, "--dir") == 0)
            o.dir = v;
        else {
            fprintf(stderr, "bench_spmv: unknown option %s\n", a);
            usage();
            return 2;
        }
    }
    if (o.out_dir == NULL || o.level < 0 || o.level > 2 ||
        (strcmp(o.set, "real") && strcmp(o.set, "paper60") && strcmp(o.set, "all") &&
         strcmp(o.set, "quick"))) {
        usage();
        return 2;
    }
    if (o.families != NULL)
        for (const char *p = o.families; *p;) {
            const char *c = strchr(p, ',');
            char nm[32];
            size_t len = c ? (size_t)(c - p) : strlen(p);
            snprintf(nm, sizeof nm, "%.*s", (int)(len < 31 ? len : 31), p);
            if (sdi_spmv_family_from_name(nm) < 0) {
                fprintf(stderr, "bench_spmv: unknown family '%s'\n", nm);
                return 2;
            }
            if (c == NULL)
                break;
            p = c + 1;
        }
    mkdir(o.out_dir, 0777);
    sd_context *ctx = NULL;
    sd_status s = sd_context_create(NULL, &ctx);
    if (s != SD_OK) {
        fprintf(stderr, "bench_spmv: %s\n", sd_last_error());
        return 3;
    }
    s = sdi_device_calibrate(ctx);
    if (s != SD_OK) {
        fprintf(stderr, "bench_spmv: calibration: %s\n", sd_last_error());
        sd_context_destroy(ctx);
        return 3;
    }
    fprintf(stderr, "bench_spmv: %s, copy %.0f GB/s, empty launch %.2f us; set %s, level %d, "
            "max nnz %.3g, time limit %.0f s\n",
            ctx->props.name, ctx->copy_bw * 1e-9, ctx->launch_us_mean, o.set, o.level, o.max_nnz,
            o.time_limit);
    double t0 = sdi_now();
    double deadline = o.time_limit > 0 ? t0 + o.time_limit : 0;
    mat_list l = {0};
    if (strcmp(o.set, "quick") == 0)
        run_quick(ctx, &o, &l, deadline);
    if (strcmp(o.set, "real") == 0 || strcmp(o.set, "all") == 0)
        run_real(ctx, &o, &l, strcmp(o.set, "all") == 0 && deadline > 0
                                  ? t0 + o.time_limit * 0.35 : deadline);
    if (strcmp(o.set, "paper60") == 0 || strcmp(o.set, "all") == 0)
        run_paper60(ctx, &o, &l, deadline);
    double total = sdi_now() - t0;
    int rc = write_outputs(&o, ctx, l.v, l.n, total);
    const double l2 = (double)ctx->props.l2_bytes;
    for (int si = 0; si < 3; si++) {
        set_summary sm = summarize(l.v, l.n, g_sets[si], l2);
        if (sm.exec.n == 0)
            continue;
        fprintf(stderr, "bench_spmv: %-7s %3d matrices: speed-up %.2fx (CI %.2f-%.2f), ceiling "
                "%.2fx, fraction %.1f%%, pipelined %.2fx, min %.2fx, %d below 1.0x; roofline on "
                "%d big: %.1f%%\n",
                g_sets[si], sm.exec.n, sm.exec.geo, sm.exec.lo, sm.exec.hi, sm.ceil.geo,
                100 * sm.frac, sm.pipe.geo, sm.exec.min, sm.exec.below1, sm.n_big,
                100 * sm.roof_big.geo);
    }
    int not_run = 0;
    for (int i = 0; i < l.n; i++)
        not_run += strcmp(l.v[i].status, "not run") == 0;
    fprintf(stderr, "bench_spmv: %d matrices (%d not run: limits), %d failed runs, %.0f s; wrote "
            "%s/bench_spmv.{json,md}\n",
            l.n, not_run, g_bad_runs, total, o.out_dir);
    free(l.v);
    sd_context_destroy(ctx);
    if (rc != 0)
        return rc;
    return g_bad_runs > 0 ? 1 : 0;
}
