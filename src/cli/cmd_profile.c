/* src/cli/cmd_profile.c: `sparseditto profile FILE --op spmv|spmm|spgemm [-K n] [--json]`:
 * the memory-hierarchy comparison of the paper's Table 1 for one task. Compiles the task
 * (sd_compile, through the kernel cache), then profiles the compiled winner and the best
 * cuSPARSE variant of its search with Nsight Compute: the command re-executes itself
 * under `ncu --csv --clock-control none --cache-control all|none --profile-from-start off
 * --metrics ...` (--warm: none) in a
 * hidden mode (--exec ours|cusparse) that loads the same kernel from the cache, runs one
 * implementation once unprofiled and then --runs times between cudaProfilerStart/Stop,
 * so only those launches are counted. isolate/worker_ncu.c parses the CSV. Counters
 * are pooled over every launch and reported per execution; the stall reasons (what the
 * warps wait on) are weighted over launches by their instructions. */
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "core/io.h"
#include "core/json_parse.h"
#include "gen/gen.h"
#include "runtime/runtime.h"
#include "isolate/worker.h"

static const sdc_option pf_options[] = {
    {"op", 0, true, "operator: spmv, spmm or spgemm (required)"},
    {"K", 'K', true, "SpMM dense width (default 32)"},
    {"json", 0, false, "print one JSON object on stdout instead of the table"},
    {"gen", 0, true, "use a generated matrix SPEC instead of FILE (see sparseditto gen)"},
    {"runs", 0, true, "profiled executions of each implementation (default 3)"},
    {"cache", 0, true, "kernel cache directory (default $SPARSEDITTO_CACHE or the user cache)"},
    {"timeout", 0, true, "seconds allowed to each ncu run (default 600)"},
    {"keep", 0, true, "keep ncu's raw CSV and log of each run in DIR (created if missing)"},
    {"no-vendor", 0, false, "our own best plan even where cuSPARSE won (the entry compiled with --no-vendor)"},
    {"warm", 0, false, "keep the caches between profiled launches (ncu --cache-control none): "
                       "latency-bound launches as a run sees them; DRAM counts then miss what L2 kept"},
    /* Hidden (the last two, left out of --help): the mode ncu runs. */
    {"exec", 0, true, "ours or cusparse"},
    {"variant", 0, true, "the cuSPARSE variant to run"},
};
#define PF_NOPTS ((int)(sizeof pf_options / sizeof pf_options[0]))
#define PF_HIDDEN 2
enum { O_OP, O_K, O_JSON, O_GEN, O_RUNS, O_CACHE, O_TIMEOUT, O_KEEP, O_NO_VENDOR, O_WARM, O_EXEC, O_VARIANT };

typedef struct {
    sd_op op;
    int k, runs;
    bool no_vendor; /* --no-vendor: cuSPARSE may not win, so "ours" is our own best plan */
    bool warm;      /* --warm: ncu keeps the caches between launches (default: flushes them) */
    const char *file, *gen, *cache;
} pf_task;

/* One implementation's counters, per execution. */
typedef struct {
    const char *who; /* "ours", "cusparse" */
    char label[200]; /* family and configuration / variant */
    sdi_ncu_memory m;
} pf_result;

static const char *op_label(sd_op op)
{
    return op == SD_OP_SPMV ? "spmv" : op == SD_OP_SPMM ? "spmm" : "spgemm";
}

/* A; pattern files get seeded values (as sparseditto baseline). */
static sd_status load_matrix(const pf_task *t, sd_csr *a)
{
    memset(a, 0, sizeof *a);
    if (t->gen != NULL)
        return sdc_gen(t->gen, 1, a);
    sdi_mtx_info info;
    sd_status s = sdi_csr_read_info(t->file, a, &info);
    if (s == SD_OK && info.field == SDI_MTX_PATTERN)
        sdi_gen_values(a, SDI_VALUES_UNIFORM, 1);
    return s;
}

/* ---------------------------------------------------------------- the mode ncu runs */

static sd_status cuda_ok(cudaError_t e, const char *what)
{
    return e == cudaSuccess ? SD_OK : SDI_ERR(SD_ERR_CUDA, "profile: %s: %s", what, cudaGetErrorString(e));
}

/* Runs the implementation once unprofiled, then t->runs times profiled. */
static sd_status exec_runs(const pf_task *t, sd_kernel *kern, sdi_vendor *v, sdi_vendor_spgemm *vg,
                           const float *in, float *out)
{
    for (int r = 0; r <= t->runs; r++) {
        if (r == 1) {
            sd_status s = cuda_ok(cudaDeviceSynchronize(), "synchronise");
            if (s == SD_OK)
                s = cuda_ok(cudaProfilerStart(), "cudaProfilerStart");
            if (s != SD_OK)
                return s;
        }
        sd_status s;
        if (t->op == SD_OP_SPGEMM) {
            sd_device_csr c;
            memset(&c, 0, sizeof c);
            s = vg ? sdi_vendor_spgemm_run(vg, NULL, &c) : sd_spgemm(kern, &c, NULL);
            sd_device_csr_free(&c);
        } else if (v != NULL) {
            s = sdi_vendor_run(v, in, out, NULL);
        } else {
            s = t->op == SD_OP_SPMV ? sd_spmv(kern, in, out, NULL) : sd_spmm(kern, in, out, NULL);
        }
        if (s != SD_OK)
            return s;
    }
    sd_status s = cuda_ok(cudaDeviceSynchronize(), "synchronise");
    cudaProfilerStop();
    return s;
}

static int exec_mode(const pf_task *t, const char *who, const char *variant)
{
    bool vendor = strcmp(who, "cusparse") == 0;
    if (!vendor && strcmp(who, "ours") != 0)
        return sdc_usage_error("profile: --exec '%s' is not ours or cusparse", who);
    if (vendor && variant == NULL)
        return sdc_usage_error("profile: --exec cusparse needs --variant");
    sd_csr a;
    sd_context *ctx = NULL;
    sd_kernel *kern = NULL;
    sdi_vendor *v = NULL;
    sdi_vendor_spgemm *vg = NULL;
    float *host = NULL, *in = NULL, *out = NULL;
    sd_status s = load_matrix(t, &a);
    sd_context_options co = {.cache_dir = t->cache};
    if (s == SD_OK)
        s = sd_context_create(&co, &ctx);
    if (s == SD_OK && !vendor) {
        sd_compile_options o = sd_compile_options_default(); /* the parent's search, from the cache */
        o.allow_vendor = !t->no_vendor;
        s = sd_compile(ctx, &a, t->op, t->k, &o, &kern);
    }
    if (s == SD_OK && vendor)
        s = t->op == SD_OP_SPGEMM ? sdi_vendor_spgemm_create(ctx, &a, NULL, -1, variant, &vg)
                                  : sdi_vendor_create(ctx, &a, t->op, t->k, variant, &v);
    if (s == SD_OK && t->op != SD_OP_SPGEMM) {
        size_t nin = (size_t)a.cols * (size_t)t->k, nout = (size_t)a.rows * (size_t)t->k;
        host = malloc((nin > 0 ? nin : 1) * sizeof *host);
        if (host == NULL)
            s = SDI_ERR(SD_ERR_OUT_OF_MEMORY, "profile: out of host memory for the dense operand");
        if (s == SD_OK)
            s = cuda_ok(cudaMalloc((void **)&in, (nin > 0 ? nin : 1) * sizeof *in), "cudaMalloc");
        if (s == SD_OK)
            s = cuda_ok(cudaMalloc((void **)&out, (nout > 0 ? nout : 1) * sizeof *out), "cudaMalloc");
        if (s == SD_OK) {
            sdi_gen_dense(host, (int64_t)nin, SDI_VALUES_UNIFORM, 2);
            s = cuda_ok(cudaMemcpy(in, host, nin * sizeof *host, cudaMemcpyHostToDevice), "cudaMemcpy");
        }
    }
    if (s == SD_OK)
        s = exec_runs(t, kern, v, vg, in, out);
    int rc = s == SD_OK ? SDC_EXIT_OK : sdc_fail(s);
    cudaFree(in);
    cudaFree(out);
    free(host);
    sdi_vendor_destroy(v);
    sdi_vendor_spgemm_destroy(vg);
    sd_kernel_destroy(kern);
    sd_context_destroy(ctx);
    sd_csr_free(&a);
    return rc;
}

/* ---------------------------------------------------------------- the parent */

static int read_text(const char *path, char **out)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    long size = -1;
    if (f != NULL && fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0)
        *out = malloc((size_t)size + 1);
    if (*out != NULL) {
        size_t n = fread(*out, 1, (size_t)size, f);
        (*out)[n] = '\0';
    }
    if (f != NULL)
        fclose(f);
    return *out != NULL ? 0 : -1;
}

/* Runs `ncu ... <self> profile ... --exec who` and parses its CSV into r. Returns an exit
 * code (SDC_EXIT_ENV with a message when ncu fails or reads no counters). */
static int profile_one(const char *ncu, const pf_task *t, const char *who, const char *variant, double timeout,
                       const char *dir, pf_result *r)
{
    char self[1024], csv[1100], log[1100], kbuf[16], rbuf[16];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        fprintf(stderr, "sparseditto: profile: cannot find its own executable\n");
        return SDC_EXIT_ENV;
    }
    self[n] = '\0';
    snprintf(csv, sizeof csv, "%s/%s.csv", dir, who);
    snprintf(log, sizeof log, "%s/%s.log", dir, who);
    snprintf(kbuf, sizeof kbuf, "%d", t->k);
    snprintf(rbuf, sizeof rbuf, "%d", t->runs);
    const char *metrics = sdi_ncu_memory_metrics();
    const char *argv[40];
    int a = 0;
    /* ncu flushes every cache before each launch by default: a latency-bound launch then
     * waits on DRAM for what a real run finds in L2 (a small SpGEMM product's launches
     * sum to 2.3x its measured time: `sparseditto profile FILE --op spgemm` with and
     * without --warm). --warm keeps them. */
    const char *head[] = {ncu,       "--csv",      "--clock-control", "none",  "--cache-control",
                          t->warm ? "none" : "all", "--profile-from-start", "off",
                          "--metrics", metrics,    "--log-file",      csv,     self,                   "profile",
                          "--op",      op_label(t->op), "-K",         kbuf,    "--runs",               rbuf,
                          "--exec",    who};
    for (size_t i = 0; i < sizeof head / sizeof *head; i++)
        argv[a++] = head[i];
    if (variant != NULL)
        argv[a++] = "--variant", argv[a++] = variant;
    if (t->cache != NULL)
        argv[a++] = "--cache", argv[a++] = t->cache;
    if (t->no_vendor)
        argv[a++] = "--no-vendor";
    if (t->gen != NULL)
        argv[a++] = "--gen", argv[a++] = t->gen;
    else
        argv[a++] = "--", argv[a++] = t->file; /* a file named like an option stays a file */
    argv[a] = NULL;
    int code = -1;
    if (sdi_subprocess_run((char *const *)argv, log, timeout, &code) != SD_OK) {
        fprintf(stderr, "sparseditto: profile: Nsight Compute could not be started: %s\n", sd_last_error());
        return SDC_EXIT_ENV;
    }
    char *text = NULL;
    read_text(csv, &text);
    sd_status s = text != NULL ? sdi_ncu_parse_memory(text, t->runs, &r->m) : SD_ERR_IO;
    if (code != 0 || s != SD_OK) {
        char tail[400] = "";
        sdi_file_tail(csv, 300, tail, sizeof tail);
        if (tail[0] == '\0' || code != 0) {
            size_t l = strlen(tail);
            sdi_file_tail(log, 300, tail + l, sizeof tail - l);
        }
        fprintf(stderr,
                "sparseditto: profile: ncu %s for %s (%s); its output ends with:\n%s\n"
                "(ERR_NVGPUCTRPERM means the counters need admin rights: run as root or set the driver's "
                "NVreg_RestrictProfilingToAdminUsers=0)\n",
                code < 0 ? "timed out" : code != 0 ? "failed" : "reported none of the counters", who,
                code > 0 ? "exit status" : "no counters", tail);
        free(text);
        sdi_error_clear();
        return SDC_EXIT_ENV;
    }
    free(text);
    return SDC_EXIT_OK;
}

static void print_table(const pf_task *t, const char *src, const pf_result *r, int nr, double ours_us,
                        double vendor_us, bool winner_vendor)
{
    printf("Nsight Compute, %s", op_label(t->op));
    if (t->op == SD_OP_SPMM)
        printf(" K=%d", t->k);
    printf(", on %s: counters per execution, pooled over %d profiled execution(s), caches %s\n", src,
           t->runs, t->warm ? "kept between launches (--warm)" : "flushed before each launch");
    printf("ours: %s (search: %.2f us)%s\n", r[0].label, ours_us,
           winner_vendor ? "  [the compiled kernel runs cuSPARSE: it won the search]" : "");
    if (nr > 1)
        printf("cuSPARSE: %s (search: %.2f us)\n", r[1].label, vendor_us);
    else
        printf("cuSPARSE: no valid variant in the search (nothing to compare)\n");
    printf("%-28s %16s %16s\n", "metric", "ours", nr > 1 ? "cuSPARSE" : "");
    struct {
        const char *name, *fmt;
        double scale;
        size_t off;
    } rows[] = {
        {"kernel launches", "%16.0f", 1, offsetof(sdi_ncu_memory, launches)},
        {"kernel time (us, ncu)", "%16.2f", 1, offsetof(sdi_ncu_memory, gpu_us)},
        {"L1 hit rate (%)", "%16.1f", 1, offsetof(sdi_ncu_memory, l1_hit_pct)},
        {"L1 requests", "%16.0f", 1, offsetof(sdi_ncu_memory, l1_requests)},
        {"L2 hit rate (%)", "%16.1f", 1, offsetof(sdi_ncu_memory, l2_hit_pct)},
        {"L2 requests", "%16.0f", 1, offsetof(sdi_ncu_memory, l2_requests)},
        {"DRAM read (MB)", "%16.3f", 1e-6, offsetof(sdi_ncu_memory, dram_read)},
        {"DRAM written (MB)", "%16.3f", 1e-6, offsetof(sdi_ncu_memory, dram_write)},
        {"achieved occupancy (%)", "%16.1f", 1, offsetof(sdi_ncu_memory, occupancy_pct)},
        {"DRAM bandwidth (GB/s)", "%16.1f", 1e-9, offsetof(sdi_ncu_memory, dram_bw)},
        {"warp instructions (M)", "%16.3f", 1e-6, offsetof(sdi_ncu_memory, inst_executed)},
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        printf("%-28s", rows[i].name);
        for (int j = 0; j < nr; j++) {
            double v = i == 0 ? (double)r[j].m.launches : *(const double *)((const char *)&r[j].m + rows[i].off);
            if (isnan(v))
                printf(" %16s", "-");
            else {
                printf(" ");
                printf(rows[i].fmt, v * rows[i].scale);
            }
        }
        printf("\n");
    }
    /* What the warps wait on: cycles stalled per issued instruction, by reason. */
    for (int i = 0; i < sdi_ncu_stall_count(); i++) {
        char name[48];
        snprintf(name, sizeof name, "stall %s", sdi_ncu_stall_reason(i));
        printf("%-28s", name);
        for (int j = 0; j < nr; j++)
            if (isnan(r[j].m.stall[i]))
                printf(" %16s", "-");
            else
                printf(" %16.2f", r[j].m.stall[i]);
        printf("\n");
    }
}

static int print_json(const pf_task *t, const char *src, const pf_result *r, int nr, double ours_us,
                      double vendor_us, bool winner_vendor)
{
    sdi_json j;
    sdi_json_init(&j, 2);
    sdi_json_begin_object(&j);
    sdi_json_key(&j, "matrix");
    sdi_json_string(&j, src);
    sdi_json_key(&j, "op");
    sdi_json_string(&j, op_label(t->op));
    sdi_json_key(&j, "k");
    sdi_json_int(&j, t->k);
    sdi_json_key(&j, "runs");
    sdi_json_int(&j, t->runs);
    sdi_json_key(&j, "cache_control"); /* ncu's: "all" flushes before each launch, "none" keeps */
    sdi_json_string(&j, t->warm ? "none" : "all");
    sdi_json_key(&j, "winner_vendor");
    sdi_json_bool(&j, winner_vendor);
    for (int i = 0; i < 2; i++) {
        sdi_json_key(&j, i == 0 ? "ours" : "cusparse");
        if (i >= nr) {
            sdi_json_null(&j);
            continue;
        }
        sdi_json_begin_object(&j);
        sdi_json_key(&j, "impl");
        sdi_json_string(&j, r[i].label);
        sdi_json_key(&j, "search_us");
        sdi_json_number(&j, i == 0 ? ours_us : vendor_us);
        sdi_json_key(&j, "launches");
        sdi_json_int(&j, r[i].m.launches);
        sdi_json_key(&j, "gpu_us");
        sdi_json_number(&j, r[i].m.gpu_us);
        sdi_json_key(&j, "l1_hit_pct");
        sdi_json_number(&j, r[i].m.l1_hit_pct);
        sdi_json_key(&j, "l1_requests");
        sdi_json_number(&j, r[i].m.l1_requests);
        sdi_json_key(&j, "l2_hit_pct");
        sdi_json_number(&j, r[i].m.l2_hit_pct);
        sdi_json_key(&j, "l2_requests");
        sdi_json_number(&j, r[i].m.l2_requests);
        sdi_json_key(&j, "dram_read_bytes");
        sdi_json_number(&j, r[i].m.dram_read);
        sdi_json_key(&j, "dram_write_bytes");
        sdi_json_number(&j, r[i].m.dram_write);
        sdi_json_key(&j, "occupancy_pct");
        sdi_json_number(&j, r[i].m.occupancy_pct);
        sdi_json_key(&j, "dram_bw_gbs");
        sdi_json_number(&j, r[i].m.dram_bw * 1e-9);
        sdi_json_key(&j, "warp_instructions");
        sdi_json_number(&j, r[i].m.inst_executed);
        sdi_json_key(&j, "stall_cycles_per_instruction");
        sdi_json_begin_object(&j);
        for (int q = 0; q < sdi_ncu_stall_count(); q++) {
            sdi_json_key(&j, sdi_ncu_stall_reason(q));
            sdi_json_number(&j, r[i].m.stall[q]);
        }
        sdi_json_end_object(&j);
        sdi_json_end_object(&j);
    }
    sdi_json_end_object(&j);
    sd_status s = sdi_json_finish(&j);
    if (s == SD_OK)
        sdc_print_json(j.buf);
    sdi_json_free(&j);
    return s == SD_OK ? SDC_EXIT_OK : sdc_fail(s);
}

/* ncu (or $SPARSEDITTO_NCU) answers --version: SDC_EXIT_OK, else a message and SDC_EXIT_ENV. */
static int check_ncu(const char *ncu)
{
    char log[64];
    snprintf(log, sizeof log, "/tmp/sd-ncu-version-%ld.log", (long)getpid());
    char *argv[] = {(char *)ncu, (char *)"--version", NULL};
    int code = -1;
    sd_status s = sdi_subprocess_run(argv, log, 60, &code);
    unlink(log);
    if (s != SD_OK || code != 0) {
        fprintf(stderr,
                "sparseditto: profile: Nsight Compute is not usable ('%s --version' %s); install it (CUDA "
                "toolkit's nsight-compute) or set SPARSEDITTO_NCU to its path\n",
                ncu, s != SD_OK ? "cannot run" : "failed");
        sdi_error_clear();
        return SDC_EXIT_ENV;
    }
    return SDC_EXIT_OK;
}

/* The compiled kernel's search: winner and best cuSPARSE variant. */
static void read_search(const sd_kernel *kern, char *family, char *variant, size_t cap, double *ours_us,
                        double *vendor_us, bool *winner_vendor)
{
    size_t jcap = 8u << 20;
    char *json = malloc(jcap);
    sdi_jvalue v;
    family[0] = variant[0] = '\0';
    *ours_us = *vendor_us = NAN;
    *winner_vendor = false;
    if (json != NULL && sd_kernel_describe(kern, json, jcap) == SD_OK && sdi_json_parse(json, -1, &v) == SD_OK) {
        const sdi_jvalue *s = sdi_jget(&v, "search"), *w = sdi_jget(s, "winner"), *c = sdi_jget(s, "cusparse_best");
        snprintf(family, cap, "%s %s", sdi_jget_string(w, "family", "?"), sdi_jget_string(w, "config", ""));
        snprintf(variant, cap, "%s", sdi_jget_string(c, "variant", ""));
        *ours_us = sdi_jget_number(sdi_jget(w, "time"), "mean_us", NAN);
        *vendor_us = sdi_jget_number(sdi_jget(c, "time"), "mean_us", NAN);
        *winner_vendor = sdi_jget(w, "vendor") && sdi_jget(w, "vendor")->boolean;
        sdi_jvalue_free(&v);
    }
    free(json);
}

int cmd_profile(int argc, char **argv)
{
    sdc_args args;
    int rc = sdc_parse(argc, argv, pf_options, PF_NOPTS, 0, 1, &args);
    if (rc != SDC_EXIT_OK)
        return rc;
    if (args.help) {
        sdc_print_help("profile FILE --op spmv|spmm|spgemm [-K n] [--json]",
                       "Compiles the task (sd_compile, through the kernel cache), then profiles the\n"
                       "compiled winner and the best cuSPARSE variant of its search with Nsight\n"
                       "Compute (ncu --clock-control none): L1 and L2 hit rates and requests, DRAM\n"
                       "bytes read and written, achieved occupancy and DRAM bandwidth, pooled over\n"
                       "every kernel launch of an execution (the paper's Table 1), then the warp\n"
                       "instructions executed and the cycles stalled per issued instruction by reason\n"
                       "(weighted over launches by their instructions). Needs a GPU and\n"
                       "ncu with access to the performance counters ($SPARSEDITTO_NCU names another\n"
                       "ncu); exit 3 without them. Where cuSPARSE won the search the compiled kernel\n"
                       "runs cuSPARSE; --no-vendor compiles (and profiles) our own best plan instead.",
                       pf_options, PF_NOPTS - PF_HIDDEN);
        return SDC_EXIT_OK;
    }
    if ((args.npos == 1) == args.present[O_GEN])
        return sdc_usage_error("profile: give a matrix FILE or --gen SPEC (one of them)");
    if (!args.present[O_OP])
        return sdc_usage_error("profile: --op spmv|spmm|spgemm is required");
    /* The ncu children read FILE again by name: a stream would reach them empty. */
    struct stat st;
    if (args.npos == 1 && (strcmp(args.pos[0], "-") == 0 || (stat(args.pos[0], &st) == 0 && !S_ISREG(st.st_mode))))
        return sdc_usage_error("profile: '%s' is not a regular file: profiling reads the matrix once per "
                               "profiled process, so save a stream to a file first",
                               args.pos[0]);
    pf_task t = {.k = 1, .runs = 3, .file = args.npos ? args.pos[0] : NULL, .gen = args.value[O_GEN],
                 .cache = args.value[O_CACHE], .no_vendor = args.present[O_NO_VENDOR],
                .warm = args.present[O_WARM]};
    const char *ops = args.value[O_OP];
    if (strcmp(ops, "spmv") == 0)
        t.op = SD_OP_SPMV;
    else if (strcmp(ops, "spmm") == 0)
        t.op = SD_OP_SPMM, t.k = 32;
    else if (strcmp(ops, "spgemm") == 0)
        t.op = SD_OP_SPGEMM;
    else
        return sdc_usage_error("profile: --op '%s' is not spmv, spmm or spgemm", ops);
    long long v;
    if (args.present[O_K]) {
        if (sdc_parse_int(args.value[O_K], "-K", 1, 65536, &v) != SDC_EXIT_OK)
            return SDC_EXIT_USAGE;
        /* The hidden mode always gets -K; only a user's -K on another operator is an error. */
        if (t.op != SD_OP_SPMM && !args.present[O_EXEC])
            return sdc_usage_error("profile: -K applies to --op spmm only");
        if (t.op == SD_OP_SPMM)
            t.k = (int)v;
    }
    if (args.present[O_RUNS]) {
        if (sdc_parse_int(args.value[O_RUNS], "--runs", 1, 100, &v) != SDC_EXIT_OK)
            return SDC_EXIT_USAGE;
        t.runs = (int)v;
    }
    double timeout = 600;
    if (args.present[O_TIMEOUT]) {
        if (sdc_parse_int(args.value[O_TIMEOUT], "--timeout", 1, 86400, &v) != SDC_EXIT_OK)
            return SDC_EXIT_USAGE;
        timeout = (double)v;
    }
    if (args.present[O_EXEC])
        return exec_mode(&t, args.value[O_EXEC], args.value[O_VARIANT]);

    const char *ncu = sdi_config_get()->ncu;
    if ((rc = check_ncu(ncu)) != SDC_EXIT_OK)
        return rc;
    const char *src = t.gen ? t.gen : t.file;
    sd_csr a;
    sd_status s = load_matrix(&t, &a);
    if (s != SD_OK)
        return sdc_fail(s);
    /* The search (or a cache hit), then the context is closed: the children profile alone. */
    sd_context *ctx = NULL;
    sd_kernel *kern = NULL;
    sd_context_options co = {.cache_dir = t.cache};
    s = sd_context_create(&co, &ctx);
    if (s == SD_OK) {
        sd_compile_options o = sd_compile_options_default();
        o.allow_vendor = !t.no_vendor;
        s = sd_compile(ctx, &a, t.op, t.k, &o, &kern);
    }
    char family[200], variant[200];
    double ours_us = NAN, vendor_us = NAN;
    bool winner_vendor = false;
    if (s == SD_OK)
        read_search(kern, family, variant, sizeof family, &ours_us, &vendor_us, &winner_vendor);
    rc = s == SD_OK ? SDC_EXIT_OK : sdc_fail(s);
    sd_kernel_destroy(kern);
    sd_context_destroy(ctx);
    sd_csr_free(&a);
    if (rc != SDC_EXIT_OK)
        return rc;

    /* ncu's CSVs go to a private temporary directory, or to --keep DIR, where they stay. */
    const char *keep = args.present[O_KEEP] ? args.value[O_KEEP] : NULL;
    char dir[1024] = "/tmp/sd-profile-XXXXXX";
    if (keep != NULL) {
        if (strlen(keep) >= sizeof dir - 16 || (mkdir(keep, 0755) != 0 && errno != EEXIST)) {
            fprintf(stderr, "sparseditto: profile: --keep '%s': cannot create the directory (%s)\n", keep,
                    strlen(keep) >= sizeof dir - 16 ? "path too long" : strerror(errno));
            return SDC_EXIT_USAGE;
        }
        snprintf(dir, sizeof dir, "%s", keep);
    } else if (mkdtemp(dir) == NULL) {
        fprintf(stderr, "sparseditto: profile: cannot create a temporary directory\n");
        return SDC_EXIT_ENV;
    }
    pf_result r[2];
    memset(r, 0, sizeof r);
    r[0].who = "ours", r[1].who = "cusparse";
    snprintf(r[0].label, sizeof r[0].label, "%s", family);
    snprintf(r[1].label, sizeof r[1].label, "%s", variant);
    int nr = variant[0] ? 2 : 1;
    for (int i = 0; i < nr && rc == SDC_EXIT_OK; i++)
        rc = profile_one(ncu, &t, r[i].who, i ? variant : NULL, timeout, dir, &r[i]);
    for (int i = 0; i < 2 && keep == NULL; i++) {
        char p[1100];
        snprintf(p, sizeof p, "%s/%s.csv", dir, r[i].who);
        unlink(p);
        snprintf(p, sizeof p, "%s/%s.log", dir, r[i].who);
        unlink(p);
    }
    if (keep == NULL)
        rmdir(dir);
    if (rc != SDC_EXIT_OK)
        return rc;
    if (args.present[O_JSON])
        return print_json(&t, src, r, nr, ours_us, vendor_us, winner_vendor);
    print_table(&t, src, r, nr, ours_us, vendor_us, winner_vendor);
    return SDC_EXIT_OK;
}
