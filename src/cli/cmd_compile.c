/* src/cli/cmd_compile.c: `sparseditto compile FILE --op spmv|spmm|spgemm [-K n] [--b FILE2]
 * [--budget N] [--json]`: the whole pipeline through sd_compile, with progress on a TTY; without a
 * GPU it stops after lowering and NVRTC compilation and says so (exit 3). Also
 * `sparseditto plan`: the candidate plans of the first round with their static bounds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/gpu.h"
#include "cli.h"
#include "core/io.h"
#include "core/json_parse.h"
#include "gen/gen.h"
#include "runtime/runtime.h"
#include "lower/agent/agent.h"
#include "tune/tune.h"

SDI_HIDDEN sd_status sdi_compile_ex(sd_context *ctx, const sd_csr *a, sd_op op, int k,
                                    const sd_compile_options *opts, sdi_tune_progress_fn progress,
                                    void *progress_arg, sd_kernel **out);
SDI_HIDDEN sd_status sdi_compile_spgemm_ex(sd_context *ctx, const sd_csr *a, const sd_csr *b,
                                           const sd_compile_options *opts,
                                           sdi_tune_progress_fn progress, void *progress_arg,
                                           sd_kernel **out);

static const sdc_option compile_options[] = {
    {"op", 0, true, "operator: spmv, spmm or spgemm (A*A square, A*At rectangular)"},
    {"K", 'K', true, "SpMM dense width (default 32)"},
    {"budget", 0, true, "candidates to measure (default 25: 3 branches x 5 + 2 x 5)"},
    {"no-cache", 0, false, "neither read nor write the kernel cache"},
    {"no-vendor", 0, false, "cuSPARSE may not win (it is still measured for the report)"},
    {"deterministic", 0, false, "only plans without floating-point atomics"},
    {"report", 0, true, "write the plan and search record as JSON to this file"},
    {"gen", 0, true, "use a generated matrix SPEC instead of FILE"},
    {"gpu", 0, true, "profile for planning when no GPU is usable (default H200)"},
    {"device", 0, true, "CUDA device ordinal (default 0)"},
    {"json", 0, false, "print sd_kernel_describe's JSON on stdout"},
    {"b", 0, true, "SpGEMM: a second matrix FILE2 for C = A*B"},
    {"lowering", 0, true, "builtin (default) or agent: an LLM writes kernels (SPARSEDITTO_AGENT_*)"},
    {"agent-budget", 0, true, "model calls of the agent lowering (default 4)"},
    {"progress", 0, false, "print every measured candidate on stderr with the time since the start, TTY or not"},
};
#define C_NOPTS ((int)(sizeof compile_options / sizeof compile_options[0]))
enum { O_OP, O_K, O_BUDGET, O_NOCACHE, O_NOVENDOR, O_DET, O_REPORT, O_GEN, O_GPU, O_DEVICE, O_JSON, O_B, O_LOWERING, O_AGENT_BUDGET, O_PROGRESS };

int sdc_parse_op(const char *s, sd_op *op)
{
    if (s == NULL)
        return sdc_usage_error("--op is required (spmv, spmm or spgemm)");
    if (strcmp(s, "spmv") == 0)
        *op = SD_OP_SPMV;
    else if (strcmp(s, "spmm") == 0)
        *op = SD_OP_SPMM;
    else if (strcmp(s, "spgemm") == 0)
        *op = SD_OP_SPGEMM;
    else
        return sdc_usage_error("--op: '%s' is not spmv, spmm or spgemm", s);
    return SDC_EXIT_OK;
}

/* Reads FILE (pattern files get seeded values) or generates --gen SPEC. */
int sdc_load_matrix(const sdc_args *args, int gen_index, sd_csr *a, const char **src)
{
    sd_status s;
    if (args->present[gen_index]) {
        *src = args->value[gen_index];
        s = sdc_gen(*src, 1, a);
    } else {
        if (args->npos < 1)
            return sdc_usage_error("a matrix FILE (or --gen SPEC) is required");
        *src = args->pos[0];
        sdi_mtx_info info;
        s = sdi_csr_read_info(*src, a, &info);
        if (s == SD_OK && info.field == SDI_MTX_PATTERN)
            sdi_gen_values(a, SDI_VALUES_UNIFORM, 1);
    }
    return s == SD_OK ? SDC_EXIT_OK : sdc_fail(s);
}

/* --b FILE2 (SpGEMM only; pattern files get seeded values). */
int sdc_load_b(const sdc_args *args, int b_index, sd_op op, sd_csr *b, bool *have)
{
    *have = false;
    if (!args->present[b_index])
        return SDC_EXIT_OK;
    if (op != SD_OP_SPGEMM)
        return sdc_usage_error("--b is for --op spgemm");
    sdi_mtx_info info;
    sd_status s = sdi_csr_read_info(args->value[b_index], b, &info);
    if (s != SD_OK)
        return sdc_fail(s);
    if (info.field == SDI_MTX_PATTERN)
        sdi_gen_values(b, SDI_VALUES_UNIFORM, 2);
    *have = true;
    return SDC_EXIT_OK;
}

/* arg: the start time (sdi_now) of the compile. */
static void progress(void *arg, const char *stage, const sdi_trial *tr, double best_us)
{
    const double t = sdi_now() - *(const double *)arg;
    char how[48] = "";
    if (tr->measured == SDI_MEASURED_SCREENED)
        snprintf(how, sizeof how, "  (screened: one execution)");
    else if (tr->measured == SDI_MEASURED_BRIEF) {
        int n = 0; /* the brief protocol's samples (2 or SDI_BRIEF_RUNS) */
        while (n < SDI_TIMED_RUNS && tr->t.runs_us[n] > 0)
            n++;
        snprintf(how, sizeof how, "  (brief: %d executions)", n);
    }
    if (tr->status == SD_OK)
        /* the whole configuration: its tail (split mode, stream, xs) tells members apart */
        fprintf(stderr, "  %7.2f s [%-10s] %-20s %9.2f us   best %9.2f us  %s%s\n", t, stage, tr->family,
                tr->t.mean_us, best_us, tr->config, how);
    else
        fprintf(stderr, "  %7.2f s [%-10s] %-20s %s: %.60s  %s\n", t, stage, tr->family,
                sd_status_string(tr->status), tr->detail, tr->config);
}

/* The first round without a device, to f (stdout; stderr when stdout is for JSON). */
static void print_offline(FILE *f, const char *src, const sdi_gpu_props *gpu, const sdi_tune_result *r)
{
    fprintf(f, "%s: %d candidate plans of the first round for %s (ranking %s):\n", src, r->ntrials,
            gpu->name, r->ranking.model);
    for (int i = 0; i < r->ranking.n && i < 4; i++)
        fprintf(f, "  rank %d: %-8s energy %6.2f  (%s: %s)\n", i + 1, r->ranking.e[i].label,
                r->ranking.e[i].energy,
                r->ranking.e[i].nreasons ? r->ranking.e[i].reasons[0].feature : "-",
                r->ranking.e[i].nreasons ? r->ranking.e[i].reasons[0].why : "-");
    for (int i = 0; i < r->ntrials; i++) {
        const sdi_trial *t = &r->trials[i];
        fprintf(f, "  %-20s %-48s %s", t->family, t->config,
                t->status == SD_ERR_NO_DEVICE ? "lowered" : sd_status_string(t->status));
        /* What NVRTC did for this plan, as counted (plan itself compiles nothing). */
        if (r->offline_compiled && t->status == SD_ERR_NO_DEVICE) {
            if (t->cubins_compiled > 0)
                fprintf(f, ", NVRTC %.0f ms", t->compile_ms);
            if (t->cubins_cached > 0)
                fprintf(f, ", %d cubin%s from the JIT cache", t->cubins_cached,
                        t->cubins_cached > 1 ? "s" : "");
            if (t->cubins_compiled == 0 && t->cubins_cached == 0)
                fprintf(f, ", cubins shared with an earlier plan");
        }
        if (t->status != SD_ERR_NO_DEVICE)
            fprintf(f, " (%s)", t->detail);
        fprintf(f, "\n");
    }
    fprintf(f, "stages: analysis %.1f ms, ranking %.2f ms, synthesis + lowering %.1f ms, ",
            r->ms_analysis, r->ms_rank, r->ms_synthesis);
    if (!r->offline_compiled)
        fprintf(f, "no cubin compiled (plan stops after lowering)\n");
    else
        fprintf(f, "NVRTC %.1f ms (%d cubin%s compiled, %d from the JIT cache%s)\n", r->ms_compile,
                r->cubins_compiled, r->cubins_compiled == 1 ? "" : "s", r->cubins_cached,
                r->cubins_compiled == 0 && r->cubins_cached > 0
                    ? "; SPARSEDITTO_JIT_CACHE=0 compiles them again" : "");
}

int cmd_compile(int argc, char **argv)
{
    sdc_args args;
    int rc = sdc_parse(argc, argv, compile_options, C_NOPTS, 0, 1, &args);
    if (rc != SDC_EXIT_OK)
        return rc;
    if (args.help) {
        sdc_print_help("compile FILE --op spmv|spmm|spgemm [-K n] [--b FILE2] [--budget N] [--json]",
                       "Builds the kernel that fits FILE: analysis, ranking, synthesis, lowering,\n"
                       "NVRTC compilation, validation against the CPU reference, measurement\n"
                       "against every cuSPARSE variant, refinement; or a cache hit. Prints the\n"
                       "winning plan, its time, the cuSPARSE baseline, the speed-up and the\n"
                       "compile time by stage. Without a GPU it stops after lowering and NVRTC\n"
                       "compilation, says so and exits 3.",
                       compile_options, C_NOPTS);
        return SDC_EXIT_OK;
    }
    sd_op op = SD_OP_SPMV;
    if ((rc = sdc_parse_op(args.value[O_OP], &op)) != SDC_EXIT_OK)
        return rc;
    long long k = 32, budget = 0, device = 0;
    if (args.present[O_K] && (rc = sdc_parse_int(args.value[O_K], "-K", 1, 65536, &k)) != SDC_EXIT_OK)
        return rc;
    if (args.present[O_BUDGET] &&
        (rc = sdc_parse_int(args.value[O_BUDGET], "--budget", 1, SDI_TUNE_MAX_TRIALS, &budget)) != SDC_EXIT_OK)
        return rc;
    if (args.present[O_DEVICE] &&
        (rc = sdc_parse_int(args.value[O_DEVICE], "--device", 0, 1024, &device)) != SDC_EXIT_OK)
        return rc;
    sd_csr a;
    memset(&a, 0, sizeof a);
    const char *src = NULL;
    if ((rc = sdc_load_matrix(&args, O_GEN, &a, &src)) != SDC_EXIT_OK)
        return rc;
    sd_csr b;
    memset(&b, 0, sizeof b);
    bool have_b = false;
    if ((rc = sdc_load_b(&args, O_B, op, &b, &have_b)) != SDC_EXIT_OK) {
        sd_csr_free(&a);
        return rc;
    }
    if (have_b && a.cols != b.rows) {
        sd_status bad = SDI_ERR(SD_ERR_INVALID_ARG, "A is %dx%d and B is %dx%d: inner sizes differ",
                                a.rows, a.cols, b.rows, b.cols);
        sd_csr_free(&a);
        sd_csr_free(&b);
        return sdc_fail(bad);
    }

    sd_context *ctx = NULL;
    sd_context_options co = {(int)device, NULL, 0};
    sd_status s = sd_context_create(&co, &ctx);
    if (s == SD_ERR_NO_DEVICE) {
        /* Everything up to measurement, then say why it stops. */
        char why[512];
        snprintf(why, sizeof why, "%s", sd_last_error());
        sdi_gpu_props gpu;
        s = sdi_gpu_profile(args.present[O_GPU] ? args.value[O_GPU] : "H200", &gpu);
        sdi_tune_result *r = s == SD_OK ? calloc(1, sizeof *r) : NULL;
        if (s == SD_OK && r == NULL)
            s = SD_ERR_OUT_OF_MEMORY;
        if (s == SD_OK && op == SD_OP_SPGEMM)
            s = sdi_tune_spgemm_offline(&a, have_b ? &b : NULL, -1, &gpu, 0, 1, r, NULL);
        else if (s == SD_OK)
            s = sdi_tune_offline(&a, op, (int)k, &gpu, 0, 1, r, NULL);
        if (s == SD_OK)
            print_offline(args.present[O_JSON] ? stderr : stdout, src, &gpu, r);
        free(r);
        sd_csr_free(&a);
        sd_csr_free(&b);
        if (s != SD_OK)
            return sdc_fail(s);
        return sdc_fail(SDI_ERR(SD_ERR_NO_DEVICE,
                                "no usable GPU (%s): stopped after lowering and NVRTC compilation; "
                                "validation and measurement need a GPU",
                                why));
    }
    if (s != SD_OK) {
        sd_csr_free(&a);
        sd_csr_free(&b);
        return sdc_fail(s);
    }
    sd_compile_options o = sd_compile_options_default();
    o.budget = (int)budget;
    o.use_cache = !args.present[O_NOCACHE];
    o.allow_vendor = !args.present[O_NOVENDOR];
    o.deterministic = args.present[O_DET];
    o.report_path = args.value[O_REPORT];
    /* --lowering agent reaches the tuner through the environment (tune/agent_round.c), so
     * the public options stay as they are. The built-in search runs first and its winner
     * is not read from the cache: the agent round needs its plan and time. */
    const char *lowering = args.present[O_LOWERING] ? args.value[O_LOWERING] : "builtin";
    if (strcmp(lowering, "builtin") != 0 && strcmp(lowering, "agent") != 0) {
        rc = sdc_usage_error("--lowering: '%s' is not builtin or agent", lowering);
        sd_context_destroy(ctx);
        sd_csr_free(&a);
        sd_csr_free(&b);
        return rc;
    }
    if (strcmp(lowering, "agent") == 0) {
        long long calls = 0;
        if (args.present[O_AGENT_BUDGET] &&
            (rc = sdc_parse_int(args.value[O_AGENT_BUDGET], "--agent-budget", 1, 1000, &calls)) != SDC_EXIT_OK) {
            sd_context_destroy(ctx);
            sd_csr_free(&a);
            sd_csr_free(&b);
            return rc;
        }
        if (calls > 0) {
            char buf[32];
            snprintf(buf, sizeof buf, "%lld", calls);
            setenv("SPARSEDITTO_AGENT_BUDGET", buf, 1);
            sdi_config_reload();
        }
        sdi_agent_config probe;
        if (sdi_agent_config_from_env(&probe) != SD_OK) {
            fprintf(stderr, "sparseditto: agent lowering unavailable (%s): using the built-in backend\n",
                    sd_last_error());
        } else {
            setenv("SPARSEDITTO_LOWERING", "agent", 1);
            sdi_config_reload();
            o.use_cache = 0;
            memset(probe.key, 0, sizeof probe.key);
        }
    }
    bool tty = args.present[O_PROGRESS] || (isatty(STDERR_FILENO) && !args.present[O_JSON]);
    if (tty)
        fprintf(stderr, "compiling %s for %s on %s ...\n", src, args.value[O_OP], ctx->props.name);
    sd_kernel *kern = NULL;
    double t_start = sdi_now();
    if (op == SD_OP_SPGEMM)
        s = sdi_compile_spgemm_ex(ctx, &a, have_b ? &b : NULL, &o, tty ? progress : NULL, &t_start,
                                  &kern);
    else
        s = sdi_compile_ex(ctx, &a, op, (int)k, &o, tty ? progress : NULL, &t_start, &kern);
    if (s != SD_OK) {
        rc = sdc_fail(s);
        sd_csr_free(&a);
        sd_csr_free(&b);
        sd_context_destroy(ctx);
        return rc;
    }
    size_t cap = 1 << 20;
    char *json = malloc(cap);
    s = json ? sd_kernel_describe(kern, json, cap) : SD_ERR_OUT_OF_MEMORY;
    if (s == SD_ERR_INVALID_ARG) { /* the message names the size needed: grow once */
        cap = 64u << 20;
        free(json);
        json = malloc(cap);
        s = json ? sd_kernel_describe(kern, json, cap) : SD_ERR_OUT_OF_MEMORY;
    }
    if (s == SD_OK && args.present[O_JSON]) {
        sdc_print_json(json);
    } else if (s == SD_OK) {
        sdi_jvalue v;
        if (sdi_json_parse(json, -1, &v) == SD_OK) {
            const sdi_jvalue *plan = sdi_jget(&v, "plan"), *search = sdi_jget(&v, "search");
            const sdi_jvalue *win = sdi_jget(search, "winner"), *cs = sdi_jget(search, "cusparse_best");
            const sdi_jvalue *ct = sdi_jget(search, "compile_ms");
            printf("%s: %s%s\n", src, sdi_jget_string(plan, "family", "?"),
                   (sdi_jget(&v, "from_cache") && sdi_jget(&v, "from_cache")->boolean)
                       ? " (from the kernel cache)" : "");
            printf("  plan      %s\n", sdi_jget_string(plan, "config", "?"));
            const sdi_jvalue *vendor = sdi_jget(plan, "vendor"), *vgraph = sdi_jget(win, "vendor_graph");
            if (vendor && vendor->boolean)
                printf("  runs      cuSPARSE's own kernels%s\n",
                       vgraph && vgraph->boolean ? ", replayed as a CUDA graph (timed that way)"
                       : sdi_jget(cs, "graph_time") ? ", called plainly (a graph replay was slower in "
                                                     "one of the two times)"
                                                   : "");
            if (!(vendor && vendor->boolean) && strcmp(sdi_jget_string(plan, "family", ""), "agent") != 0) {
                const char *vo = sdi_jget_string(plan, "vo_label", "");
                if (vo[0])
                    printf("  V_o       instantiates the vocabulary's '%s' as it stands\n", vo);
                else
                    printf("  V_o       outside the vocabulary (a combination no label names)\n");
            }
            if (op == SD_OP_SPGEMM)
                printf("  time      %.2f us per product (%s, %.3g products, nnz(C) %.0f), peak "
                       "device memory %.1f MiB\n",
                       sdi_jget_number(sdi_jget(win, "time"), "mean_us", 0),
                       sdi_jget_string(search, "product", "?"),
                       sdi_jget_number(search, "products", 0), sdi_jget_number(search, "nnz_c", 0),
                       sdi_jget_number(win, "peak_bytes", 0) / 1048576.0);
            else
                printf("  time      %.2f us per execution, %.2f us pipelined (%.0f%% of the memory roofline)\n",
                       sdi_jget_number(sdi_jget(win, "time"), "mean_us", 0),
                       sdi_jget_number(sdi_jget(win, "time"), "pipelined_us", 0),
                       100 * sdi_jget_number(win, "roofline_frac", 0));
            const char *csf = sdi_jget_string(search, "cusparse_failure", "");
            if (cs == NULL && csf[0])
                printf("  cuSPARSE  failed: %s\n", csf);
            if (cs != NULL)
                printf("  cuSPARSE  %s %.2f us; speed-up of the compiled kernel %.2fx (ours alone %.2fx)\n",
                       sdi_jget_string(cs, "variant", "?"), sdi_jget_number(sdi_jget(cs, "time"), "mean_us", 0),
                       sdi_jget_number(search, "speedup", 0), sdi_jget_number(search, "speedup_ours", 0));
            if (ct != NULL)
                printf("  compile   %.2f s: analysis %.0f ms, ranking %.2f ms, synthesis %.0f ms, NVRTC %.0f ms, "
                       "measurement %.0f ms, cuSPARSE %.0f ms\n",
                       sdi_jget_number(&v, "ready_ms", 0) / 1e3, sdi_jget_number(ct, "analysis", 0),
                       sdi_jget_number(ct, "rank", 0), sdi_jget_number(ct, "synthesis", 0),
                       sdi_jget_number(ct, "nvrtc", 0), sdi_jget_number(ct, "measure", 0),
                       sdi_jget_number(ct, "cusparse", 0));
            else
                printf("  ready in  %.2f s\n", sdi_jget_number(&v, "ready_ms", 0) / 1e3);
            const char *d = sdi_jget_string(search, "diagnosis", "");
            if (d[0])
                printf("  diagnosis %s\n", d);
            sdi_jvalue_free(&v);
        }
    }
    free(json);
    rc = s == SD_OK ? SDC_EXIT_OK : sdc_fail(s);
    sd_kernel_destroy(kern);
    sd_context_destroy(ctx);
    sd_csr_free(&a);
    sd_csr_free(&b);
    return rc;
}

static const sdc_option plan_options[] = {
    {"op", 0, true, "operator: spmv, spmm or spgemm"},
    {"K", 'K', true, "SpMM dense width (default 32)"},
    {"branches", 0, true, "families of the first round (default 3)"},
    {"gpu", 0, true, "target GPU profile (default: the device, else H200)"},
    {"gen", 0, true, "use a generated matrix SPEC instead of FILE"},
    {"json", 0, false, "print the plans (lowering + static bounds) as JSON"},
    {"b", 0, true, "SpGEMM: a second matrix FILE2 for C = A*B"},
};
#define P_NOPTS ((int)(sizeof plan_options / sizeof plan_options[0]))
enum { P_OP, P_K, P_BRANCHES, P_GPU, P_GEN, P_JSON, P_B };

int cmd_plan(int argc, char **argv)
{
    sdc_args args;
    int rc = sdc_parse(argc, argv, plan_options, P_NOPTS, 0, 1, &args);
    if (rc != SDC_EXIT_OK)
        return rc;
    if (args.help) {
        sdc_print_help("plan FILE --op spmv|spmm|spgemm [-K n] [--b FILE2] [--gpu NAME] [--json]",
                       "The first-round candidate plans for FILE (the ranked families' default\n"
                       "theta_H), each lowered on the host with its representation, launches and\n"
                       "static bounds (M_rep, W, M_R, M_T, q_R, q_T, work per SM). Needs no GPU.",
                       plan_options, P_NOPTS);
        return SDC_EXIT_OK;
    }
    sd_op op = SD_OP_SPMV;
    if ((rc = sdc_parse_op(args.value[P_OP], &op)) != SDC_EXIT_OK)
        return rc;
    long long k = 32, branches = 3;
    if (args.present[P_K] && (rc = sdc_parse_int(args.value[P_K], "-K", 1, 65536, &k)) != SDC_EXIT_OK)
        return rc;
    if (args.present[P_BRANCHES] &&
        (rc = sdc_parse_int(args.value[P_BRANCHES], "--branches", 1, 16, &branches)) != SDC_EXIT_OK)
        return rc;
    sdi_gpu_props gpu;
    sd_status s = SD_ERR_NO_DEVICE;
    if (!args.present[P_GPU])
        s = sdi_runtime_gpu_props(0, &gpu);
    if (s != SD_OK)
        s = sdi_gpu_profile(args.present[P_GPU] ? args.value[P_GPU] : "H200", &gpu);
    if (s != SD_OK)
        return sdc_fail(s);
    sd_csr a;
    memset(&a, 0, sizeof a);
    const char *src = NULL;
    if ((rc = sdc_load_matrix(&args, P_GEN, &a, &src)) != SDC_EXIT_OK)
        return rc;
    sd_csr b;
    memset(&b, 0, sizeof b);
    bool have_b = false;
    if ((rc = sdc_load_b(&args, P_B, op, &b, &have_b)) != SDC_EXIT_OK) {
        sd_csr_free(&a);
        return rc;
    }
    sdi_tune_result *r = calloc(1, sizeof *r);
    sdi_json j;
    sdi_json_init(&j, 2);
    if (r == NULL)
        s = SD_ERR_OUT_OF_MEMORY;
    else if (have_b && a.cols != b.rows)
        s = SDI_ERR(SD_ERR_INVALID_ARG, "A is %dx%d and B is %dx%d: inner sizes differ", a.rows,
                    a.cols, b.rows, b.cols);
    else if (op == SD_OP_SPGEMM)
        s = sdi_tune_spgemm_offline(&a, have_b ? &b : NULL, -1, &gpu, (int)branches, 0, r, &j);
    else
        s = sdi_tune_offline(&a, op, (int)k, &gpu, (int)branches, 0, r, &j);
    if (s == SD_OK)
        s = sdi_json_finish(&j);
    if (s == SD_OK && args.present[P_JSON]) {
        sdc_print_json(j.buf);
    } else if (s == SD_OK) {
        print_offline(stdout, src, &gpu, r);
        sdi_jvalue v;
        if (sdi_json_parse(j.buf, -1, &v) == SD_OK) {
            printf("static bounds (bytes; q = / L2 of %.0f MB):\n", gpu.l2_bytes / 1e6);
            for (int i = 0; i < v.n; i++) {
                const sdi_jvalue *b = sdi_jget(&v.items[i], "bounds");
                printf("  %-20s M_rep %12.0f  W %10.0f  M_R %12.0f  M_T %12.0f  q_R %6.2f  q_T %6.2f\n",
                       sdi_jget_string(&v.items[i], "family", "?"), sdi_jget_number(b, "M_rep", 0),
                       sdi_jget_number(b, "W", 0), sdi_jget_number(b, "M_R", 0),
                       sdi_jget_number(b, "M_T", 0), sdi_jget_number(b, "q_R", 0),
                       sdi_jget_number(b, "q_T", 0));
            }
            /* SpGEMM: each launch's residency by threads and shared memory (a fused launch
             * holds its largest segment's shared memory) */
            bool header = false;
            for (int i = 0; i < v.n; i++) {
                const sdi_jvalue *ls = sdi_jget(sdi_jget(&v.items[i], "lowering"), "launches");
                /* only lowerings that compute it (SpGEMM's); SpMV/SpMM launches have none */
                if (ls == NULL || ls->n == 0 || sdi_jget(&ls->items[0], "resident_warps") == NULL)
                    continue;
                if (!header)
                    printf("resident warps an SM, launch by launch (of %d; registers may "
                           "lower it):\n", gpu.max_threads_per_sm / 32);
                header = true;
                printf("  %-22s", sdi_jget_string(&v.items[i], "family", "?"));
                for (int l = 0; l < ls->n; l++)
                    printf(" %.0f", sdi_jget_number(&ls->items[l], "resident_warps", 0));
                printf("\n");
            }
            sdi_jvalue_free(&v);
        }
    }
    rc = s == SD_OK ? SDC_EXIT_OK : sdc_fail(s);
    sdi_json_free(&j);
    free(r);
    sd_csr_free(&a);
    sd_csr_free(&b);
    return rc;
}
