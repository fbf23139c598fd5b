/* tools/bench/bench_suite.c: the compiler end to end through the public API (sd_compile) —
 * the headline benchmark, run by `sparseditto bench` and bench/bench_compile.
 * For every matrix of a set and every task (SpMV, SpMM at K = 8/32/128/256, SpGEMM: A·A
 * square / A·Aᵀ rectangular): the compile (cache miss: the full search, cuSPARSE measured
 * alongside), the compiled kernel's time against the best valid cuSPARSE variant (per
 * execution and pipelined; both measured side by side in the same search), the share of
 * tasks our own plan wins, the compile time by stage, and a second compile of the same
 * pattern (a cache hit), whose kernel is then run as a caller would (three executions back
 * to back, SpGEMM's C freed at once each time, one synchronisation at the end): a kernel
 * that faults only outside the search fails the task (such as a cached cuSPARSE SpGEMM
 * kernel whose C is freed under its own copies). Every number comes from the search
 * record that sd_kernel_describe returns; nothing unvalidated is counted. SpGEMM also
 * records the winner's peak device memory; a product cuSPARSE could not do (out of
 * resources) that we completed is reported separately and kept out of the geomeans. A task
 * our plan wins is "outside V_o" when that plan instantiates no label of the template
 * vocabulary as it stands (sdi_candidate_vo_label: another representation, a balanced
 * decomposition, compression).
 *
 * With `deterministic`, every task is compiled a second time with deterministic = 1 in the
 * same run (its own search and cache entry); the cost of reproducibility is that kernel's
 * time over the default kernel's time (geomean per task, > 1 = slower).
 *
 * The physical ceiling of a task is how much faster than the best cuSPARSE variant any
 * kernel could be: its time over max(event-timed empty launch, streaming limit), at least
 * 1. The streaming limit is the CSR streaming bytes (sdi_roofline_bytes; docs/ARCHITECTURE.md
 * "Benchmarks, roofline and aggregates") over the
 * calibrated copy bandwidth; for SpGEMM (no roofline there) reading A and B once and
 * writing C once (CSR, 64-bit row pointers for C). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_common.h"
#include "bench_suite.h"
#include "core/io.h"
#include "core/json_parse.h"
#include "gen/gen.h"
#include "runtime/runtime.h"
#include "corpus/corpus_build.h"
#include "plan/plan.h"

typedef struct {
    char matrix[96];
    char task[16];
    int32_t rows, cols;
    int64_t nnz;
    const char *status; /* ok, failed, skipped */
    char detail[200];
    char family[48], config[SDI_PLAN_TEXT], vendor_best[32];
    char vo_label[16]; /* the V_o label the winner instantiates; "" outside V_o or cuSPARSE */
    double features[SD_NUM_FEATURES]; /* the search's 36 features (NaN when absent) */
    char shape[16];
    int vendor_won, vendor_graph; /* cuSPARSE's fallback won; it runs replayed as a graph */
    double ours_us, ours_pipe_us, vendor_us, vendor_pipe_us, win_us, win_pipe_us;
    double speedup, speedup_pipe, speedup_ours, speedup_ours_pipe;
    /* cuSPARSE's best replayed as a CUDA graph, as a caller could capture it (timed
     * through the fallback's executor; SpMV/SpMM; NaN when not measured) and the compiled
     * kernel's speed-up over it */
    double vendor_graph_us, vendor_graph_pipe_us, speedup_graph, speedup_graph_pipe;
    double roofline;
    double compile_s, hit_s;
    char hit_run[120]; /* the cached kernel run three times: "ok", else the cause */
    double peak_mib;     /* SpGEMM: the winner's peak device memory */
    int cusparse_failed; /* SpGEMM: no cuSPARSE algorithm completed (speed-ups NaN) */
    double ms_analysis, ms_synthesis, ms_nvrtc, ms_measure, ms_cusparse, ms_search;
    int ntrials;
    int64_t nnz_c;  /* SpGEMM: entries of C (-1 when unknown) */
    double ceiling; /* best cuSPARSE time / the physical limit (>= 1); NaN when unknown */
    /* deterministic mode (when asked): the winner, its time, cost = det_us / win_us */
    char det_family[48];
    double det_us, det_cost;
} record;

static const char *quick_gen[] = {
    "stencil2d:n=300",
    "stencil3d27:n=40",
    "banded:n=200000,bw=8",
    "uniform:rows=100000,deg=16",
    "powerlaw:rows=200000,deg=12,alpha=1.9,max=20000",
    "rmat:scale=16,ef=16",
    "knn:n=100000,k=8,dim=2",
    "bimodal:rows=50000,cols=50000,short=4,long=600,frac=0.01",
};
static const char *quick_real[] = {"bcsstk13", "wiki-Vote", "cage8", "bcsstk33", "dblp-2010", "Chem97Zt"};

static const struct {
    const char *name;
    sd_op op;
    int k;
} all_tasks[] = {{"spmv", SD_OP_SPMV, 1},     {"spmm8", SD_OP_SPMM, 8},     {"spmm32", SD_OP_SPMM, 32},
                 {"spmm128", SD_OP_SPMM, 128}, {"spmm256", SD_OP_SPMM, 256},
                 {"spgemm", SD_OP_SPGEMM, 1}};
#define NTASKS 6

/* A JSON number, or null when not finite (a task cuSPARSE could not do). */
static const char *jnum(char *buf, double v)
{
    if (!isfinite(v))
        return "null";
    snprintf(buf, 32, "%.4f", v);
    return buf;
}

static double num(const sdi_jvalue *v, const char *path1, const char *path2, const char *key)
{
    const sdi_jvalue *o = v;
    if (path1)
        o = sdi_jget(o, path1);
    if (path2)
        o = sdi_jget(o, path2);
    return sdi_jget_number(o, key, NAN);
}

static void fill_from_describe(record *r, const char *json)
{
    sdi_jvalue v;
    if (sdi_json_parse(json, -1, &v) != SD_OK)
        return;
    const sdi_jvalue *s = sdi_jget(&v, "search");
    snprintf(r->family, sizeof r->family, "%s", sdi_jget_string(sdi_jget(&v, "plan"), "family", "?"));
    snprintf(r->config, sizeof r->config, "%s", sdi_jget_string(sdi_jget(&v, "plan"), "config", "?"));
    snprintf(r->vo_label, sizeof r->vo_label, "%s", sdi_jget_string(sdi_jget(&v, "plan"), "vo_label", ""));
    r->vendor_won = sdi_jget(sdi_jget(s, "winner"), "vendor") && sdi_jget(sdi_jget(s, "winner"), "vendor")->boolean;
    r->vendor_graph = sdi_jget(sdi_jget(s, "winner"), "vendor_graph") &&
                      sdi_jget(sdi_jget(s, "winner"), "vendor_graph")->boolean;
    r->win_us = num(s, "winner", "time", "mean_us");
    r->win_pipe_us = num(s, "winner", "time", "pipelined_us");
    r->roofline = num(s, "winner", NULL, "roofline_frac");
    r->ours_us = num(s, "ours_best", "time", "mean_us");
    r->ours_pipe_us = num(s, "ours_best", "time", "pipelined_us");
    r->vendor_us = num(s, "cusparse_best", "time", "mean_us");
    r->vendor_pipe_us = num(s, "cusparse_best", "time", "pipelined_us");
    snprintf(r->vendor_best, sizeof r->vendor_best, "%s",
             sdi_jget_string(sdi_jget(s, "cusparse_best"), "variant", "-"));
    r->speedup = r->vendor_us / r->win_us;
    r->speedup_pipe = r->vendor_pipe_us / r->win_pipe_us;
    r->speedup_ours = r->vendor_us / r->ours_us;
    r->speedup_ours_pipe = r->vendor_pipe_us / r->ours_pipe_us;
    r->vendor_graph_us = num(s, "cusparse_best", "graph_time", "mean_us");
    r->vendor_graph_pipe_us = num(s, "cusparse_best", "graph_time", "pipelined_us");
    r->speedup_graph = r->vendor_graph_us / r->win_us;
    r->speedup_graph_pipe = r->vendor_graph_pipe_us / r->win_pipe_us;
    const sdi_jvalue *ct = sdi_jget(s, "compile_ms");
    r->ms_analysis = sdi_jget_number(ct, "analysis", 0);
    r->ms_synthesis = sdi_jget_number(ct, "synthesis", 0);
    r->ms_nvrtc = sdi_jget_number(ct, "nvrtc", 0);
    r->ms_measure = sdi_jget_number(ct, "measure", 0);
    r->ms_cusparse = sdi_jget_number(ct, "cusparse", 0);
    r->ms_search = sdi_jget_number(ct, "total", 0); /* the tuner's wall time: the rest of
                                                       compile_s is sd_compile around it */
    r->peak_mib = num(s, "winner", NULL, "peak_bytes") / 1048576.0;
    r->cusparse_failed = sdi_jget(s, "cusparse_best") == NULL &&
                         sdi_jget_string(s, "cusparse_failure", "")[0] != '\0';
    r->nnz_c = (int64_t)sdi_jget_number(s, "nnz_c", -1);
    const sdi_jvalue *fe = sdi_jget(s, "features");
    for (int i = 0; i < SD_NUM_FEATURES; i++)
        r->features[i] = sdi_jget_number(fe, sd_feature_name(i), NAN);
    snprintf(r->shape, sizeof r->shape, "%s", sdi_jget_string(s, "shape_class", ""));
    const sdi_jvalue *tr = sdi_jget(s, "trials");
    r->ntrials = tr ? tr->n : 0;
    sdi_jvalue_free(&v);
}

static const char *const set_names[] = {"quick", "real", "paper60"};

const char *sdb_task_name(int i)
{
    return i >= 0 && i < NTASKS ? all_tasks[i].name : NULL;
}

const char *sdb_set_name(int i)
{
    return i >= 0 && i < (int)(sizeof set_names / sizeof *set_names) ? set_names[i] : NULL;
}

bool sdb_set_is_list_file(const char *set)
{
    char buf[256];
    if (set == NULL || set[0] == '\0' || strlen(set) >= sizeof buf)
        return set != NULL && set[0] != '\0'; /* too long for names: only a path can be */
    snprintf(buf, sizeof buf, "%s", set);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        bool known = false;
        for (int i = 0; sdb_set_name(i) != NULL; i++)
            known = known || strcmp(tok, sdb_set_name(i)) == 0;
        if (!known)
            return true;
    }
    return false;
}

sdb_options sdb_options_default(const char *prog, const char *matrices_dir)
{
    sdb_options o = {.out = "bench/results",
                     .set = "quick",
                     .ops = "spmv,spmm8,spmm32,spmm128,spmm256,spgemm",
                     .dir = matrices_dir,
                     .max_nnz = 2e7,
                     .time_limit = 240,
                     .prog = prog,
                     .progress = stdout};
    return o;
}

/* The streaming limit of a compiled task in µs (see the header comment); 0 when unknown. */
static double limit_us(const record *r, double copy_bw)
{
    if (!(copy_bw > 0))
        return 0;
    double bytes;
    if (!strcmp(r->task, "spgemm")) {
        if (r->nnz_c < 0)
            return 0;
        int64_t brows = r->rows == r->cols ? r->rows : r->cols; /* B = A, or Aᵀ */
        bytes = (double)r->nnz * 8 * 2 + (double)(r->rows + 1) * 4 + (double)(brows + 1) * 4 +
                (double)r->nnz_c * 8 + (double)(r->rows + 1) * 8;
    } else {
        int k = 1;
        for (int t = 0; t < NTASKS; t++)
            if (!strcmp(r->task, all_tasks[t].name))
                k = all_tasks[t].k;
        bytes = sdi_roofline_bytes(!strcmp(r->task, "spmv") ? SD_OP_SPMV : SD_OP_SPMM, r->rows, r->cols, r->nnz, k);
    }
    return bytes / copy_bw * 1e6;
}

/* Best cuSPARSE time / max(empty launch, streaming limit), at least 1; NaN without a
 * cuSPARSE time or a calibration. */
static double ceiling(const record *r, const sd_context *ctx)
{
    double lim = fmax(ctx->launch_us_mean, limit_us(r, ctx->copy_bw));
    if (!isfinite(r->vendor_us) || !(r->vendor_us > 0) || !(lim > 0))
        return NAN;
    return fmax(1.0, r->vendor_us / lim);
}

/* The host CPU, model and online cores: NVRTC runs there, so compile times depend on it
 * (`sparseditto bench --set quick` takes 156 s on one H200 host and 192-202 s on others).
 * The model is made JSON-safe (quotes, backslashes and control characters become spaces). */
static void host_cpu(char *model, size_t cap, int *cores)
{
    snprintf(model, cap, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f != NULL) {
        char line[512];
        while (fgets(line, sizeof line, f) != NULL) {
            const char *p = strchr(line, ':');
            if (strncmp(line, "model name", 10) != 0 || p == NULL)
                continue;
            for (p++; *p == ' ' || *p == '\t'; p++)
                ;
            snprintf(model, cap, "%s", p);
            size_t n = strlen(model);
            while (n > 0 && (model[n - 1] == '\n' || model[n - 1] == ' '))
                model[--n] = '\0';
            for (char *q = model; *q; q++)
                if (*q == '"' || *q == '\\' || (unsigned char)*q < 32)
                    *q = ' ';
            break;
        }
        fclose(f);
    }
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    *cores = n > 0 ? (int)n : 0;
}

/* Writes DIR/bench_compile.{md,json} from the records so far: after every matrix, so a run
 * killed from outside (a device time limit) keeps every finished task, and once at the end
 * (final: the closing progress line). Each file is written under a temporary name and
 * renamed (core/io.h's output files), so a kill during the write leaves the previous
 * complete report. Returns 1 on a failure recorded or a write error. */
static int write_reports(const sdb_options *o, record *rec, int nr, int failures, sd_context *ctx,
                         double t_start, bool final)
{
    const char *out = o->out, *set = o->set;
    double max_nnz = o->max_nnz;
    int budget = o->budget;
    FILE *progress = o->progress;
    /* The ceilings need the calibration (done by the searches; measured here otherwise). */
    if (!ctx->broken && sdi_device_calibrate(ctx) != SD_OK)
        fprintf(stderr, "%s: no calibration, no ceilings: %s\n", o->prog, sd_last_error());
    for (int i = 0; i < nr; i++)
        if (!strcmp(rec[i].status, "ok"))
            rec[i].ceiling = ceiling(&rec[i], ctx);
    /* Aggregates per task and overall. */
    char md_path[512], js_path[512];
    snprintf(md_path, sizeof md_path, "%s/bench_compile.md", out);
    snprintf(js_path, sizeof js_path, "%s/bench_compile.json", out);
    sdi_atomic_file md_file, js_file; /* each renamed into place only when complete */
    FILE *md = NULL, *js = NULL;
    if (sdi_atomic_begin(&md_file, md_path) == SD_OK)
        md = sdi_atomic_stream(&md_file);
    if (sdi_atomic_begin(&js_file, js_path) == SD_OK)
        js = sdi_atomic_stream(&js_file);
    double *x = calloc((size_t)nr + 1, sizeof *x), *y = calloc((size_t)nr + 1, sizeof *y),
           *z = calloc((size_t)nr + 1, sizeof *z), *w = calloc((size_t)nr + 1, sizeof *w),
           *cs = calloc((size_t)nr + 1, sizeof *cs), *hs = calloc((size_t)nr + 1, sizeof *hs),
           *rf = calloc((size_t)nr + 1, sizeof *rf), *ce = calloc((size_t)nr + 1, sizeof *ce),
           *dc = calloc((size_t)nr + 1, sizeof *dc);
    int rc = failures ? 1 : 0;
    if (md == NULL || js == NULL) {
        fprintf(stderr, "%s: cannot write into %s: %s\n", o->prog, out, sd_last_error());
        rc = 1;
        goto done;
    }
    if (!x || !y || !z || !w || !cs || !hs || !rf || !ce || !dc) {
        fprintf(stderr, "%s: out of host memory\n", o->prog);
        rc = 1;
        goto done;
    }
    time_t now = time(NULL);
    char date[32];
    strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
    fprintf(md, "# bench_compile: sd_compile end to end against the best cuSPARSE variant\n\n");
    fprintf(md, "Date %s; GPU %s (%s, %d SMs); copy bandwidth %.0f GB/s, empty launch %.2f us; set `%s`; "
                "budget %d; max nnz %.0f.\n\n",
            date, ctx->props.name, ctx->arch, ctx->props.sm_count, ctx->copy_bw * 1e-9, ctx->launch_us_mean, set,
            budget ? budget : 25, max_nnz);
    char cpu[160];
    int cores = 0;
    host_cpu(cpu, sizeof cpu, &cores);
    const double wall_s = sdi_now() - t_start;
    fprintf(md, "Host CPU %s, %d cores online (NVRTC compiles there: compile times depend on it); "
                "wall time %.0f s%s.\n\n",
            cpu, cores, wall_s, final ? "" : " so far");
    fprintf(md, "Speed-up = best valid cuSPARSE time / compiled kernel time, both measured in the same search "
                "(per execution: mean of 10 event-timed runs; pipelined: 10 back-to-back runs / 10). "
                "'ours' = our best plan whether or not it won; the compiled kernel runs cuSPARSE where cuSPARSE "
                "is faster (its calls replayed as a CUDA graph unless SPARSEDITTO_GRAPHS=0, "
                "and timed that way: JSON vendor_graph). Geomeans with 95 %% bootstrap intervals (20 000 resamples). 'Won outside V_o' = "
                "tasks won by a plan of ours that instantiates no label of the template vocabulary as it "
                "stands (another representation, a balanced decomposition or index compression).\n\n");
    fprintf(md, "Roofline = the winner's share of the CSR streaming limit (median over the tasks that have "
                "one; SpGEMM has none). Ceiling = best cuSPARSE time / max(empty launch, streaming limit), "
                "at least 1: the largest speed-up any kernel could reach (SpGEMM: reading A and B and "
                "writing C once). The empty launch is timed the way our programs launch (a CUDA graph "
                "unless SPARSEDITTO_GRAPHS=0; cuSPARSE's calls are plain launches).\n\n");
    if (o->deterministic)
        fprintf(md, "Deterministic cost = time of the kernel compiled with deterministic = 1 (only plans without "
                    "floating-point atomics; cuSPARSE limited to its bit-reproducible variants) / time of the "
                    "default kernel, both compiled in this run (> 1: reproducibility costs that much).\n\n");
    fprintf(md, "| task | tasks | geomean (CI) | pipelined | ours alone | ours alone pipelined | won by ours | "
                "won outside V_o | compile median / max s | cache hit median s | roofline median | ceiling geomean |%s\n"
                "|---|---|---|---|---|---|---|---|---|---|---|---|%s\n",
            o->deterministic ? " deterministic cost geomean |" : "", o->deterministic ? "---|" : "");
    fprintf(js, "{\"date\":\"%s\",\"gpu\":\"%s\",\"set\":\"%s\",\"budget\":%d,\"copy_bw_gbs\":%.1f,\"launch_us\":%.3f,"
                "\"host_cpu\":\"%s\",\"host_cores\":%d,\"wall_s\":%.1f,\"summary\":[",
            date, ctx->props.name, set, budget ? budget : 25, ctx->copy_bw * 1e-9, ctx->launch_us_mean, cpu, cores,
            wall_s);
    int nsum = 0; /* summary objects written (tasks without records write none) */
    for (int t = 0; t <= NTASKS; t++) {
        const char *tn = t < NTASKS ? all_tasks[t].name : "all";
        int n = 0, won = 0, nrf = 0, nce = 0, ndet = 0, won_out = 0;
        double cmax = 0;
        for (int i = 0; i < nr; i++) {
            if (strcmp(rec[i].status, "ok") || (t < NTASKS && strcmp(rec[i].task, tn)) ||
                !(rec[i].speedup > 0) || !(rec[i].speedup_ours > 0))
                continue;
            x[n] = rec[i].speedup, y[n] = rec[i].speedup_pipe, z[n] = rec[i].speedup_ours;
            w[n] = rec[i].speedup_ours_pipe, cs[n] = rec[i].compile_s, hs[n] = rec[i].hit_s;
            won += !rec[i].vendor_won;
            won_out += !rec[i].vendor_won && rec[i].vo_label[0] == '\0';
            if (rec[i].compile_s > cmax)
                cmax = rec[i].compile_s;
            if (rec[i].roofline > 0)
                rf[nrf++] = rec[i].roofline;
            if (isfinite(rec[i].ceiling))
                ce[nce++] = rec[i].ceiling;
            if (rec[i].det_cost > 0 && isfinite(rec[i].det_cost))
                dc[ndet++] = rec[i].det_cost;
            n++;
        }
        if (n == 0)
            continue;
        double lo, hi, l2, h2;
        double g = bench_geomean_ci(x, n, &lo, &hi), gp = bench_geomean_ci(y, n, &l2, &h2);
        double go = bench_geomean_ci(z, n, &l2, &h2), gop = bench_geomean_ci(w, n, &l2, &h2);
        double gce = nce ? bench_geomean_ci(ce, nce, &l2, &h2) : NAN, mrf = nrf ? bench_median(rf, nrf) : NAN;
        char b1[32], b2[32], b3[64] = "";
        double gdc = NAN, dlo = NAN, dhi = NAN;
        if (o->deterministic) {
            gdc = ndet ? bench_geomean_ci(dc, ndet, &dlo, &dhi) : NAN;
            if (ndet)
                snprintf(b3, sizeof b3, " %.3fx (%.3f-%.3f), %d tasks |", gdc, dlo, dhi, ndet);
            else
                snprintf(b3, sizeof b3, " - |");
        }
        fprintf(md, "| %s | %d | %.2fx (%.2f-%.2f) | %.2fx | %.2fx | %.2fx | %d of %d | %d of %d | %.1f / %.1f | %.2f | %s | %s |%s\n",
                tn, n, g, lo, hi, gp, go, gop, won, n, won_out, won, bench_median(cs, n), cmax, bench_median(hs, n),
                nrf ? (snprintf(b1, sizeof b1, "%.0f%%", 100 * mrf), b1) : "-",
                nce ? (snprintf(b2, sizeof b2, "%.2fx", gce), b2) : "-", b3);
        fprintf(js, "%s{\"task\":\"%s\",\"n\":%d,\"geomean\":%.4f,\"ci\":[%.4f,%.4f],\"geomean_pipelined\":%.4f,"
                    "\"geomean_ours\":%.4f,\"geomean_ours_pipelined\":%.4f,\"won_by_ours\":%d,\"won_outside_vo\":%d,"
                    "\"compile_median_s\":%.3f,\"compile_max_s\":%.3f,\"cache_hit_median_s\":%.4f",
                nsum++ ? "," : "", tn, n, g, lo, hi, gp, go, gop, won, won_out, bench_median(cs, n), cmax,
                bench_median(hs, n));
        fprintf(js, ",\"roofline_median\":%s,\"geomean_ceiling\":%s,\"n_ceiling\":%d", jnum(b1, mrf), jnum(b2, gce),
                nce);
        if (o->deterministic) {
            char c1[32], c2[32];
            fprintf(js, ",\"deterministic_cost_geomean\":%s,\"deterministic_cost_ci\":[%s,%s],\"n_deterministic\":%d",
                    jnum(b1, gdc), jnum(c1, dlo), jnum(c2, dhi), ndet);
        }
        fprintf(js, "}");
    }
    /* The second baseline: cuSPARSE replayed as a graph, as its caller could (SpMV/SpMM). */
    int ngr_all = 0;
    for (int i = 0; i < nr; i++)
        ngr_all += !strcmp(rec[i].status, "ok") && rec[i].speedup_graph > 0;
    if (ngr_all > 0) {
        fprintf(md, "\nAgainst cuSPARSE's best variant captured into a CUDA graph by its caller (what a "
                    "user of cuSPARSE can do; our programs replay graphs themselves): speed-up = that "
                    "graph's time / the compiled kernel's, the graph validated and timed in the same "
                    "search. It separates the launch path from the kernel.\n\n"
                    "| task | tasks | geomean (CI) | pipelined | below 1.0x | below 1.0x pipelined |\n"
                    "|---|---|---|---|---|---|\n");
        fprintf(js, "%s{\"task\":\"vs_cusparse_graph\",\"rows\":[", nsum++ ? "," : "");
        int nrow = 0;
        for (int t = 0; t <= NTASKS; t++) {
            const char *tn = t < NTASKS ? all_tasks[t].name : "all";
            int n = 0, below = 0, below_p = 0;
            for (int i = 0; i < nr; i++) {
                if (strcmp(rec[i].status, "ok") || (t < NTASKS && strcmp(rec[i].task, tn)) ||
                    !(rec[i].speedup_graph > 0) || !(rec[i].speedup_graph_pipe > 0))
                    continue;
                x[n] = rec[i].speedup_graph, y[n] = rec[i].speedup_graph_pipe;
                below += x[n] < 1.0;
                below_p += y[n] < 1.0;
                n++;
            }
            if (n == 0)
                continue;
            double lo, hi, l2, h2;
            double g = bench_geomean_ci(x, n, &lo, &hi), gp = bench_geomean_ci(y, n, &l2, &h2);
            fprintf(md, "| %s | %d | %.2fx (%.2f-%.2f) | %.2fx | %d | %d |\n", tn, n, g, lo, hi, gp, below,
                    below_p);
            fprintf(js, "%s{\"task\":\"%s\",\"n\":%d,\"geomean\":%.4f,\"ci\":[%.4f,%.4f],"
                        "\"geomean_pipelined\":%.4f,\"below\":%d,\"below_pipelined\":%d}",
                    nrow++ ? "," : "", tn, n, g, lo, hi, gp, below, below_p);
        }
        fprintf(js, "]}");
    }
    /* SpGEMM: products cuSPARSE could not do (kept out of the geomeans) and peak memory. */
    int sg_failed = 0, sg_ok = 0;
    for (int i = 0; i < nr; i++)
        if (!strcmp(rec[i].task, "spgemm") && !strcmp(rec[i].status, "ok")) {
            sg_ok++;
            sg_failed += rec[i].cusparse_failed;
        }
    if (sg_ok > 0) {
        fprintf(md, "\nSpGEMM: %d products compiled; %d of them cuSPARSE could not do (every algorithm "
                    "failed, e.g. out of resources) and our kernel completed and validated (not in the "
                    "geomean). Peak device memory of each winner (operands + workspaces + C) in the "
                    "last column.\n",
                sg_ok, sg_failed);
        fprintf(js, "%s{\"task\":\"spgemm_cusparse_failed\",\"n\":%d,\"completed_by_us\":%d}",
                nsum++ ? "," : "", sg_ok, sg_failed);
    }
    fprintf(md, "\n| matrix | task | rows | nnz | winner | cuSPARSE best | ours us | cuSPARSE us | speed-up | "
                "ours alone | pipelined | roofline | compile s | hit s | peak MiB | ceiling |%s\n"
                "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|%s\n",
            o->deterministic ? " deterministic winner | cost |" : "", o->deterministic ? "---|---|" : "");
    fprintf(js, "],\"tasks\":[");
    for (int i = 0; i < nr; i++) {
        record *r = &rec[i];
        char dcol[96] = "";
        if (o->deterministic && strcmp(r->status, "ok") == 0)
            snprintf(dcol, sizeof dcol, " %s | %s |", r->det_family[0] ? r->det_family : "-",
                     isfinite(r->det_cost) ? jnum((char[32]){0}, r->det_cost) : "-");
        else if (o->deterministic)
            snprintf(dcol, sizeof dcol, " | |");
        if (strcmp(r->status, "ok") == 0)
            fprintf(md, "| %s | %s | %d | %lld | %s | %s | %.2f | %.2f | %.2fx | %.2fx | %.2fx | %.0f%% | %.1f | %.2f | %s | %s |%s\n",
                    r->matrix, r->task, r->rows, (long long)r->nnz, r->family,
                    r->cusparse_failed ? "failed" : r->vendor_best, r->ours_us, r->vendor_us, r->speedup,
                    r->speedup_ours, r->speedup_pipe, 100 * r->roofline, r->compile_s, r->hit_s,
                    r->peak_mib > 0 ? jnum((char[32]){0}, r->peak_mib) : "",
                    isfinite(r->ceiling) ? jnum((char[32]){0}, r->ceiling) : "", dcol);
        else
            fprintf(md, "| %s | %s | %d | %lld | %s: %s | | | | | | | | | | | |%s\n", r->matrix, r->task, r->rows,
                    (long long)r->nnz, r->status, r->detail, dcol);
        fprintf(js, "%s{\"matrix\":\"%s\",\"task\":\"%s\",\"rows\":%d,\"cols\":%d,\"nnz\":%lld,\"status\":\"%s\"",
                i ? "," : "", r->matrix, r->task, r->rows, r->cols, (long long)r->nnz, r->status);
        char b1[32], b2[32], b3[32], b4[32], b5[32];
        if (strcmp(r->status, "ok") == 0 && !strcmp(r->task, "spgemm"))
            fprintf(js, ",\"peak_mib\":%s,\"cusparse_failed\":%s", jnum(b1, r->peak_mib),
                    r->cusparse_failed ? "true" : "false");
        if (strcmp(r->status, "ok") == 0) {
            fprintf(js, ",\"vo_label\":%s%s%s", r->vo_label[0] ? "\"" : "", r->vo_label[0] ? r->vo_label : "null",
                    r->vo_label[0] ? "\"" : "");
            fprintf(js, ",\"winner\":\"%s\",\"config\":\"%s\",\"vendor_won\":%s,\"vendor_graph\":%s,\"cusparse_best\":\"%s\","
                        "\"ours_us\":%.4f,\"ours_pipelined_us\":%.4f,\"cusparse_us\":%s,\"cusparse_pipelined_us\":%s,"
                        "\"speedup\":%s,\"speedup_pipelined\":%s,\"speedup_ours\":%s,\"roofline\":%.4f,"
                        "\"compile_s\":%.3f,\"cache_hit_s\":%.4f,\"trials\":%d,\"ms\":{\"analysis\":%.1f,"
                        "\"synthesis\":%.1f,\"nvrtc\":%.1f,\"measure\":%.1f,\"cusparse\":%.1f,\"search\":%.1f}",
                    r->family, r->config, r->vendor_won ? "true" : "false", r->vendor_graph ? "true" : "false",
                    r->vendor_best, r->ours_us,
                    r->ours_pipe_us, jnum(b1, r->vendor_us), jnum(b2, r->vendor_pipe_us), jnum(b3, r->speedup),
                    jnum(b4, r->speedup_pipe), jnum(b5, r->speedup_ours), r->roofline, r->compile_s, r->hit_s,
                    r->ntrials, r->ms_analysis, r->ms_synthesis, r->ms_nvrtc, r->ms_measure, r->ms_cusparse,
                    r->ms_search);
            fprintf(js, ",\"limit_us\":%s,\"ceiling\":%s", jnum(b1, limit_us(r, ctx->copy_bw)), jnum(b2, r->ceiling));
            if (r->speedup_graph > 0)
                fprintf(js, ",\"cusparse_graph_us\":%s,\"cusparse_graph_pipelined_us\":%s,\"speedup_vs_graph\":%s,"
                            "\"speedup_vs_graph_pipelined\":%s",
                        jnum(b1, r->vendor_graph_us), jnum(b2, r->vendor_graph_pipe_us), jnum(b3, r->speedup_graph),
                        jnum(b4, r->speedup_graph_pipe));
            fprintf(js, ",\"shape_class\":\"%s\",\"features\":{", r->shape);
            for (int f = 0; f < SD_NUM_FEATURES; f++) {
                char fb[32];
                /* %.6g: features span 1e-9 (densities) to 1e9 (products) */
                if (isfinite(r->features[f]))
                    snprintf(fb, sizeof fb, "%.6g", r->features[f]);
                else
                    snprintf(fb, sizeof fb, "null");
                fprintf(js, "%s\"%s\":%s", f ? "," : "", sd_feature_name(f), fb);
            }
            fprintf(js, "}");
            if (o->deterministic)
                fprintf(js, ",\"deterministic\":{\"winner\":\"%s\",\"us\":%s,\"cost\":%s}", r->det_family,
                        jnum(b3, r->det_us), jnum(b4, r->det_cost));
        } else {
            for (char *c = r->detail; *c; c++) /* keep the JSON string valid */
                if (*c == '"' || *c == '\\' || (unsigned char)*c < 0x20)
                    *c = '\'';
            fprintf(js, ",\"detail\":\"%s\"", r->detail);
        }
        fprintf(js, "}");
    }
    fprintf(js, "]}\n");
    /* The commit reports a write error of either stream (and releases the file). */
    sd_status ws = sdi_atomic_commit(&md_file);
    if (ws == SD_OK)
        ws = sdi_atomic_commit(&js_file);
    if (ws != SD_OK) {
        fprintf(stderr, "%s: %s\n", o->prog, sd_last_error());
        rc = 1;
    } else if (progress != NULL && final) {
        fprintf(progress, "%s: %d tasks (%d failed) in %.0f s; wrote %s/bench_compile.{md,json}\n", o->prog, nr,
                failures, sdi_now() - t_start, out);
    }
done:
    sdi_atomic_abort(&md_file); /* nothing left to do after a commit */
    sdi_atomic_abort(&js_file);
    free(x), free(y), free(z), free(w), free(cs), free(hs), free(rf), free(ce), free(dc);
    return rc;
}

/* The cached kernel run as a caller would: three executions back to back (SpGEMM: each C
 * freed at once, its nnz checked against the search's), then one synchronisation. Inputs
 * are zeros: this checks that the kernel runs and leaves the context sound, not its values
 * (the search validated them). */
static sd_status run_cached(sd_context *ctx, sd_kernel *kern, sd_op op, int k, const sd_csr *a, int64_t nnz_c)
{
    float *in = NULL, *out = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_device_free(in);                                                               \
        sdi_device_free(out);                                                              \
    } while (0)
    for (int i = 0; i < 3; i++) {
        if (op == SD_OP_SPGEMM) {
            sd_device_csr c;
            SD_TRY(sd_spgemm(kern, &c, ctx->stream));
            const int64_t got = c.nnz;
            sd_device_csr_free(&c);
            if (nnz_c >= 0 && got != nnz_c) {
                SD_FREE_ALL;
                return SDI_ERR(SD_ERR_VALIDATION, "the cached kernel's C has %lld entries, the search's %lld",
                               (long long)got, (long long)nnz_c);
            }
            continue;
        }
        if (in == NULL) {
            const size_t nin = (size_t)a->cols * (size_t)k, nout = (size_t)a->rows * (size_t)k;
            SD_TRY(sdi_device_malloc(ctx, (void **)&in, (nin > 0 ? nin : 1) * sizeof *in, "x / B"));
            SD_TRY(sdi_device_malloc(ctx, (void **)&out, (nout > 0 ? nout : 1) * sizeof *out, "y / C"));
            SD_TRY(sdi_cuda_status(ctx, cudaMemsetAsync(in, 0, (nin > 0 ? nin : 1) * sizeof *in, ctx->stream),
                                   "clearing", "x / B"));
        }
        SD_TRY(op == SD_OP_SPMV ? sd_spmv(kern, in, out, ctx->stream) : sd_spmm(kern, in, out, ctx->stream));
    }
    sd_status s = sdi_stream_sync(ctx, "the cached kernel's executions", NULL);
    SD_FREE_ALL;
    return s;
#undef SD_FREE_ALL
}

/* The matrices of a table (first word of each line, the header "name" skipped), appended
 * from index nm on (at most 512 in all): the real set's suitesparse/INDEX.tsv (files), or
 * paper60.tsv (twins, generated). Returns the new count; a missing table adds none. */
static int add_listed(const char *dir, bool twins, char (*names)[96], char (*specs)[640], int nm)
{
    char p[512];
    snprintf(p, sizeof p, twins ? "%s/paper60.tsv" : "%s/suitesparse/INDEX.tsv", dir);
    FILE *f = fopen(p, "r");
    char line[2048];
    while (f && fgets(line, sizeof line, f) && nm < 512) {
        char name[96];
        if (sscanf(line, "%95s", name) != 1 || !strcmp(name, "name"))
            continue;
        if (twins) {
            snprintf(names[nm], 96, "twin:%.88s", name);
            snprintf(specs[nm], 640, "gen:twin:name=%s,file=%s", name, p);
        } else {
            snprintf(names[nm], 96, "%s", name);
            snprintf(specs[nm], 640, "file:%s/suitesparse/%s.mtx.gz", dir, name);
        }
        nm++;
    }
    if (f)
        fclose(f);
    return nm;
}

int sdb_run(const sdb_options *o)
{
    const char *set = o->set, *ops = o->ops, *dir = o->dir;
    double max_nnz = o->max_nnz, time_limit = o->time_limit;
    int budget = o->budget, from = o->from;
    FILE *progress = o->progress;
    /* The reports are rewritten after every task: a folder that cannot be made stops the
     * run before the first compile, not after it. */
    if (mkdir(o->out, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "%s: cannot create '%s' (%s)\n", o->prog, o->out, strerror(errno));
        return 1;
    }
    /* A set given as a list file (`sparseditto corpus`'s syntax: generator specs, matrix
     * files, shared names, optional "nnz=N" hints) is read and checked before the device is
     * touched: a bad line stops the run at once, naming it. */
    sdi_corpus_entry *listed = NULL;
    int nlisted = 0;
    const bool named = !sdb_set_is_list_file(set);
    if (!named) {
        sd_status ls = sdi_corpus_list_read(set, dir, &listed, &nlisted);
        if (ls == SD_OK && nlisted > 512) {
            sdi_free(listed);
            ls = SDI_ERR(SD_ERR_INVALID_ARG, "%d matrices (at most 512 a run)", nlisted);
        }
        if (ls != SD_OK) {
            fprintf(stderr, "%s: --set %s: %s\n", o->prog, set, sd_last_error());
            return 1;
        }
    }
    char cache_dir[256];
    snprintf(cache_dir, sizeof cache_dir, "/tmp/sd-bench-compile-%ld", (long)getpid());
    sd_context *ctx = NULL;
    sd_context_options co = {0, cache_dir, 0};
    sd_status s = sd_context_create(&co, &ctx);
    if (s != SD_OK) {
        fprintf(stderr, "%s: %s\n", o->prog, sd_last_error());
        sdi_free(listed);
        return s == SD_ERR_NO_DEVICE ? 3 : 1;
    }
    /* The matrices: names, how to get each, and the nnz a list announces (0 = unknown). */
    char (*names)[96] = calloc(512, sizeof *names);
    char (*specs)[640] = calloc(512, sizeof *specs);
    double *hint = calloc(512, sizeof *hint);
    if (names == NULL || specs == NULL || hint == NULL) {
        fprintf(stderr, "%s: out of host memory\n", o->prog);
        free(names), free(specs), free(hint);
        sdi_free(listed);
        sd_context_destroy(ctx);
        return 1;
    }
    int nm = 0;
    for (int i = 0; i < nlisted; i++, nm++) {
        snprintf(names[nm], 96, "%s", listed[i].name);
        for (char *c = names[nm]; *c; c++) /* the name goes into JSON and markdown as is */
            if (*c == '"' || *c == '\\' || *c == '|' || (unsigned char)*c < 0x20)
                *c = '_';
        snprintf(specs[nm], 640, "%s:%s", listed[i].kind == SDI_CENTRY_GEN ? "gen" : "file",
                 listed[i].text);
        hint[nm] = listed[i].nnz_hint;
    }
    sdi_free(listed);
    if (named && strstr(set, "quick")) {
        for (size_t i = 0; i < sizeof quick_gen / sizeof *quick_gen; i++, nm++) {
            snprintf(names[nm], 96, "%s", quick_gen[i]);
            snprintf(specs[nm], 640, "gen:%s", quick_gen[i]);
        }
        for (size_t i = 0; i < sizeof quick_real / sizeof *quick_real; i++, nm++) {
            snprintf(names[nm], 96, "%s", quick_real[i]);
            snprintf(specs[nm], 640, "file:%s/suitesparse/%s.mtx.gz", dir, quick_real[i]);
        }
    }
    if (named && strstr(set, "real"))
        nm = add_listed(dir, false, names, specs, nm);
    if (named && strstr(set, "paper60"))
        nm = add_listed(dir, true, names, specs, nm);
    record *rec = calloc((size_t)nm * NTASKS + 1, sizeof *rec);
    if (rec == NULL) {
        fprintf(stderr, "%s: out of host memory\n", o->prog);
        free(names), free(specs), free(hint);
        sd_context_destroy(ctx);
        return 1;
    }
    int nr = 0, failures = 0;
    double t_start = sdi_now();
    for (int m = from; m < nm; m++) {
        if (sdi_now() - t_start > time_limit)
            break;
        sd_csr a;
        memset(&a, 0, sizeof a);
        /* A list's nnz= hint above --max-nnz skips the matrix unread (as the corpus does). */
        const bool too_big = hint[m] > max_nnz;
        if (too_big) {
            s = SD_OK;
            a.nnz = (int64_t)hint[m];
        } else if (!strncmp(specs[m], "gen:", 4)) {
            s = sdi_gen(specs[m] + 4, 1, &a);
        } else {
            sdi_mtx_info info;
            s = sdi_csr_read_info(specs[m] + 5, &a, &info);
            if (s == SD_OK && info.field == SDI_MTX_PATTERN)
                sdi_gen_values(&a, SDI_VALUES_UNIFORM, 1);
        }
        for (int t = 0; t < NTASKS; t++) {
            if (!strstr(ops, all_tasks[t].name))
                continue;
            /* "spmm8" also matches inside "spmm128": compare whole items. */
            char list[256], *save = NULL;
            int wanted = 0;
            snprintf(list, sizeof list, "%s", ops);
            for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
                wanted |= !strcmp(tok, all_tasks[t].name);
            if (!wanted)
                continue;
            record *r = &rec[nr++];
            snprintf(r->matrix, sizeof r->matrix, "%s", names[m]);
            snprintf(r->task, sizeof r->task, "%s", all_tasks[t].name);
            r->rows = a.rows, r->cols = a.cols, r->nnz = a.nnz;
            r->nnz_c = -1;
            r->ceiling = NAN;
            if (s != SD_OK) {
                r->status = "skipped";
                snprintf(r->detail, sizeof r->detail, "%.190s", sd_last_error());
                continue;
            }
            if ((double)a.nnz > max_nnz || sdi_now() - t_start > time_limit) {
                r->status = "skipped";
                snprintf(r->detail, sizeof r->detail, (double)a.nnz > max_nnz ? "nnz above --max-nnz" : "time limit");
                continue;
            }
            sd_compile_options co2 = sd_compile_options_default();
            co2.budget = budget;
            sd_kernel *kern = NULL;
            double t0 = sdi_now();
            /* SpGEMM through sd_compile: A·A for square A, A·Aᵀ otherwise. */
            sd_status cs = sd_compile(ctx, &a, all_tasks[t].op, all_tasks[t].k, &co2, &kern);
            r->compile_s = sdi_now() - t0;
            if (cs != SD_OK) {
                r->status = "failed";
                snprintf(r->detail, sizeof r->detail, "%.190s", sd_last_error());
                failures++;
                fprintf(stderr, "  %-28s %-8s FAILED: %s\n", r->matrix, r->task, r->detail);
                if (ctx->broken)
                    break;
                continue;
            }
            size_t cap = 8u << 20;
            char *json = malloc(cap);
            if (json && sd_kernel_describe(kern, json, cap) == SD_OK)
                fill_from_describe(r, json);
            free(json);
            sd_kernel_destroy(kern);
            /* The same pattern again: a cache hit. */
            t0 = sdi_now();
            cs = sd_compile(ctx, &a, all_tasks[t].op, all_tasks[t].k, &co2, &kern);
            r->hit_s = cs == SD_OK ? sdi_now() - t0 : NAN;
            if (cs == SD_OK)
                cs = run_cached(ctx, kern, all_tasks[t].op, all_tasks[t].k, &a, r->nnz_c);
            snprintf(r->hit_run, sizeof r->hit_run, "%.119s", cs == SD_OK ? "ok" : sd_last_error());
            sdi_error_clear();
            sd_kernel_destroy(kern);
            if (cs != SD_OK) {
                /* the compiled kernel does not run as the search measured it: a failure */
                r->status = "failed";
                snprintf(r->detail, sizeof r->detail, "cached kernel: %.170s", r->hit_run);
                failures++;
                fprintf(stderr, "  %-28s %-8s FAILED: %s\n", r->matrix, r->task, r->detail);
                if (ctx->broken)
                    break;
                continue;
            }
            r->status = "ok";
            r->det_us = r->det_cost = NAN;
            if (o->deterministic && !ctx->broken) {
                co2.deterministic = 1;
                kern = NULL;
                cs = sd_compile(ctx, &a, all_tasks[t].op, all_tasks[t].k, &co2, &kern);
                record d;
                memset(&d, 0, sizeof d);
                d.win_us = NAN;
                if (cs == SD_OK) {
                    json = malloc(cap);
                    if (json && sd_kernel_describe(kern, json, cap) == SD_OK)
                        fill_from_describe(&d, json);
                    free(json);
                } else {
                    snprintf(d.family, sizeof d.family, "failed");
                    fprintf(stderr, "  %-28s %-8s deterministic: %s\n", r->matrix, r->task, sd_last_error());
                }
                sd_kernel_destroy(kern);
                snprintf(r->det_family, sizeof r->det_family, "%s", d.family);
                r->det_us = d.win_us;
                r->det_cost = d.win_us / r->win_us;
            }
            if (progress != NULL) {
                fprintf(progress,
                        "  %-28s %-8s %-22s ours %9.2f us  cuSPARSE %-10s %9.2f us  x%5.2f (ours x%5.2f, pipe x%5.2f)  "
                        "compile %5.1f s  hit %5.2f s\n",
                        r->matrix, r->task, r->family, r->ours_us, r->vendor_best, r->vendor_us, r->speedup,
                        r->speedup_ours, r->speedup_pipe, r->compile_s, r->hit_s);
                fflush(progress);
            }
        }
        sd_csr_free(&a);
        (void)write_reports(o, rec, nr, failures, ctx, t_start, false);
        if (ctx->broken)
            break;
    }
    int rc = write_reports(o, rec, nr, failures, ctx, t_start, true);
    free(rec), free(names), free(specs), free(hint);
    sd_context_destroy(ctx);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", cache_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", cache_dir);
    return rc;
}
