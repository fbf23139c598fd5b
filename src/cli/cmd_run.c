/* src/cli/cmd_run.c: `sparseditto run FILE --op spmv|spmm|spgemm [-K n] [--iters N] [--json]`:
 * executes the kernel a previous `compile` cached for this matrix and operator, with no
 * search (SD_ERR_CACHE, exit 3, when there is none): seeded random operands, the first
 * output validated against the CPU reference (the rule of docs/ARCHITECTURE.md
 * "Validation"), then --iters executions
 * back to back between two CUDA events. What a user runs to check that a cached kernel
 * still works on this machine and what it costs per call. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "core/json_parse.h"
#include "gen/gen.h"
#include "runtime/runtime.h"
#include "plan/plan.h"
#include "tune/tune.h"

SDI_HIDDEN sd_status sdi_compile_cached(sd_context *ctx, const sd_csr *a, const sd_csr *b, sd_op op, int k,
                                        const sd_compile_options *opts, sd_kernel **out);

static const sdc_option run_options[] = {
    {"op", 0, true, "operator: spmv, spmm or spgemm (required)"},
    {"K", 'K', true, "SpMM dense width (default 32)"},
    {"iters", 0, true, "timed executions, back to back (default 100)"},
    {"gen", 0, true, "use a generated matrix SPEC instead of FILE"},
    {"b", 0, true, "SpGEMM: the second matrix FILE2 of a C = A*B kernel"},
    {"no-vendor", 0, false, "the entry compiled with --no-vendor"},
    {"deterministic", 0, false, "the entry compiled with --deterministic"},
    {"device", 0, true, "CUDA device ordinal (default 0)"},
    {"json", 0, false, "print one JSON object on stdout"},
};
#define R_NOPTS ((int)(sizeof run_options / sizeof run_options[0]))
enum { R_OP, R_K, R_ITERS, R_GEN, R_B, R_NOVENDOR, R_DET, R_DEVICE, R_JSON };

typedef struct {
    const char *src;
    sd_op op;
    int k, iters;
    char family[64], config[SDI_PLAN_TEXT];
    double us;          /* mean over the timed executions */
    sdi_validation val; /* the first execution's output */
    int64_t nnz_c;      /* SpGEMM */
} run_result;

/* The cached kernel's family and configuration, from its description. */
static void describe(sd_kernel *kern, run_result *r)
{
    size_t cap = 1u << 22;
    char *json = malloc(cap);
    sdi_jvalue v;
    snprintf(r->family, sizeof r->family, "?");
    if (json != NULL && sd_kernel_describe(kern, json, cap) == SD_OK && sdi_json_parse(json, -1, &v) == SD_OK) {
        const sdi_jvalue *plan = sdi_jget(&v, "plan");
        snprintf(r->family, sizeof r->family, "%s", sdi_jget_string(plan, "family", "?"));
        snprintf(r->config, sizeof r->config, "%s", sdi_jget_string(plan, "config", ""));
        sdi_jvalue_free(&v);
    }
    sdi_error_clear();
    free(json);
}

/* SpMV / SpMM: operands in device memory, one validated execution, then the timed ones. */
static sd_status run_dense(sd_context *ctx, sd_kernel *kern, const sd_csr *a, run_result *r)
{
    const int width = r->op == SD_OP_SPMM ? r->k : 1;
    const size_t nin = (size_t)a->cols * (size_t)width, nout = (size_t)a->rows * (size_t)width;
    float *h_in = NULL, *d_in = NULL, *d_out = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    sdi_reference ref;
    memset(&ref, 0, sizeof ref);
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(h_in);                                                                    \
        sdi_device_free(d_in);                                                             \
        sdi_device_free(d_out);                                                            \
        if (e0 != NULL)                                                                    \
            cudaEventDestroy(e0);                                                          \
        if (e1 != NULL)                                                                    \
            cudaEventDestroy(e1);                                                          \
        sdi_reference_free(&ref);                                                          \
    } while (0)
    h_in = sdi_malloc_array(nin + 1, sizeof *h_in);
    SD_CHECK_ALLOC(h_in, "the input operand");
    sdi_gen_dense(h_in, (int64_t)nin, SDI_VALUES_UNIFORM, 7);
    SD_TRY(sdi_reference_dense(a, r->op, h_in, width, 0, &ref));
    SD_TRY(sdi_device_upload(ctx, (void **)&d_in, h_in, (nin + 1) * sizeof *h_in, "the input operand"));
    SD_TRY(sdi_device_malloc(ctx, (void **)&d_out, (nout + 1) * sizeof *d_out, "the output"));
    /* Poison the output: an entry the kernel never writes fails validation. */
    SD_TRY(sdi_cuda_status(ctx, cudaMemsetAsync(d_out, 0xff, (nout + 1) * sizeof *d_out, ctx->stream),
                           "poisoning the output", NULL));
    cudaStream_t st = ctx->stream;
    SD_TRY(r->op == SD_OP_SPMV ? sd_spmv(kern, d_in, d_out, st) : sd_spmm(kern, d_in, d_out, st));
    SD_TRY(sdi_stream_sync(ctx, "the first execution", NULL));
    if (a->rows > 0)
        SD_TRY(sdi_check_dense_output(ctx, &ref, d_out, &r->val));
    else
        r->val.ok = true;
    SD_TRY(sdi_cuda_status(ctx, cudaEventCreate(&e0), "cudaEventCreate", NULL));
    SD_TRY(sdi_cuda_status(ctx, cudaEventCreate(&e1), "cudaEventCreate", NULL));
    SD_TRY(sdi_cuda_status(ctx, cudaEventRecord(e0, st), "cudaEventRecord", NULL));
    for (int i = 0; i < r->iters; i++)
        SD_TRY(r->op == SD_OP_SPMV ? sd_spmv(kern, d_in, d_out, st) : sd_spmm(kern, d_in, d_out, st));
    SD_TRY(sdi_cuda_status(ctx, cudaEventRecord(e1, st), "cudaEventRecord", NULL));
    SD_TRY(sdi_stream_sync(ctx, "the timed executions", NULL));
    float ms = 0;
    SD_TRY(sdi_cuda_status(ctx, cudaEventElapsedTime(&ms, e0, e1), "cudaEventElapsedTime", NULL));
    r->us = 1e3 * (double)ms / r->iters;
    SD_FREE_ALL;
    return SD_OK;
#undef SD_FREE_ALL
}

/* SpGEMM: C produced, checked (structure exactly, values by the rule), freed; then timed. */
static sd_status run_spgemm(sd_context *ctx, sd_kernel *kern, const sd_csr *a, const sd_csr *b, run_result *r)
{
    sd_csr at;
    memset(&at, 0, sizeof at);
    sd_device_csr c;
    memset(&c, 0, sizeof c);
    sdi_reference ref;
    memset(&ref, 0, sizeof ref);
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sd_device_csr_free(&c);                                                            \
        sdi_reference_free(&ref);                                                          \
        sd_csr_free(&at);                                                                  \
    } while (0)
    const sd_csr *bb = NULL;
    int aat = -1; /* as sd_compile: A·Aᵀ for a rectangular A */
    SD_TRY(sdi_spgemm_second_operand(a, b, &aat, &at, &bb));
    SD_TRY(sdi_reference_spgemm(a, bb, &ref));
    cudaStream_t st = ctx->stream;
    SD_TRY(sd_spgemm(kern, &c, st));
    SD_TRY(sdi_stream_sync(ctx, "the first product", NULL));
    r->nnz_c = c.nnz;
    SD_TRY(sdi_check_spgemm_output(ctx, &ref, c.rows, c.cols, c.nnz, c.rowptr, 8, c.colind, c.vals, &r->val));
    sd_device_csr_free(&c);
    /* Each product allocates and frees its C, as a caller's loop would. */
    double t0 = sdi_now();
    for (int i = 0; i < r->iters; i++) {
        SD_TRY(sd_spgemm(kern, &c, st));
        sd_device_csr_free(&c);
    }
    SD_TRY(sdi_stream_sync(ctx, "the timed products", NULL));
    r->us = (sdi_now() - t0) * 1e6 / r->iters;
    SD_FREE_ALL;
    return SD_OK;
#undef SD_FREE_ALL
}

static void print_result(const run_result *r, bool json)
{
    const char *opname = r->op == SD_OP_SPMV ? "spmv" : r->op == SD_OP_SPMM ? "spmm" : "spgemm";
    if (json) {
        sdi_json j;
        sdi_json_init(&j, 0);
        sdi_json_begin_object(&j);
        sdi_json_key(&j, "matrix");
        sdi_json_string(&j, r->src);
        sdi_json_key(&j, "op");
        sdi_json_string(&j, opname);
        sdi_json_key(&j, "k");
        sdi_json_int(&j, r->op == SD_OP_SPMM ? r->k : 1);
        sdi_json_key(&j, "family");
        sdi_json_string(&j, r->family);
        sdi_json_key(&j, "config");
        sdi_json_string(&j, r->config);
        sdi_json_key(&j, "validated");
        sdi_json_bool(&j, r->val.ok);
        sdi_json_key(&j, "worst_error_over_bound");
        sdi_json_number(&j, r->val.ratio);
        sdi_json_key(&j, "iters");
        sdi_json_int(&j, r->iters);
        sdi_json_key(&j, r->op == SD_OP_SPGEMM ? "us_per_product" : "us_per_execution");
        sdi_json_number(&j, r->us);
        if (r->op == SD_OP_SPGEMM) {
            sdi_json_key(&j, "nnz_c");
            sdi_json_int(&j, r->nnz_c);
        }
        sdi_json_end_object(&j);
        if (sdi_json_finish(&j) == SD_OK)
            sdc_print_json(j.buf);
        sdi_json_free(&j);
        return;
    }
    printf("%s: %s", r->src, opname);
    if (r->op == SD_OP_SPMM)
        printf(" K=%d", r->k);
    printf(", the cached kernel %s (%s)\n", r->family, r->config);
    printf("  validated  %s (worst error %.3g of the bound)\n", r->val.ok ? "yes" : "NO", r->val.ratio);
    if (r->op == SD_OP_SPGEMM)
        printf("  time       %.2f us per product (nnz(C) %lld; C allocated and freed each time), %d products\n",
               r->us, (long long)r->nnz_c, r->iters);
    else
        printf("  time       %.2f us per execution (%d back to back between two CUDA events)\n", r->us,
               r->iters);
}

int cmd_run(int argc, char **argv)
{
    sdc_args args;
    int rc = sdc_parse(argc, argv, run_options, R_NOPTS, 0, 1, &args);
    if (rc != SDC_EXIT_OK)
        return rc;
    if (args.help) {
        sdc_print_help("run FILE --op spmv|spmm|spgemm [-K n] [--iters N] [--json]",
                       "Runs the kernel `sparseditto compile` cached for FILE and the operator, with\n"
                       "no search (exit 3 when the cache has none): seeded random operands, the first\n"
                       "output validated against the CPU reference, then N executions timed back to\n"
                       "back. --no-vendor / --deterministic pick the entry compiled with them. Needs a\n"
                       "GPU (exit 3 without one).",
                       run_options, R_NOPTS);
        return SDC_EXIT_OK;
    }
    run_result r;
    memset(&r, 0, sizeof r);
    if ((rc = sdc_parse_op(args.value[R_OP], &r.op)) != SDC_EXIT_OK)
        return rc;
    long long k = 32, iters = 100, device = 0;
    if (args.present[R_K] && (rc = sdc_parse_int(args.value[R_K], "-K", 1, 65536, &k)) != SDC_EXIT_OK)
        return rc;
    if (args.present[R_K] && r.op != SD_OP_SPMM)
        return sdc_usage_error("-K applies to --op spmm only");
    if (args.present[R_ITERS] && (rc = sdc_parse_int(args.value[R_ITERS], "--iters", 1, 1000000, &iters)) != SDC_EXIT_OK)
        return rc;
    if (args.present[R_DEVICE] && (rc = sdc_parse_int(args.value[R_DEVICE], "--device", 0, 1024, &device)) != SDC_EXIT_OK)
        return rc;
    r.k = (int)k;
    r.iters = (int)iters;
    sd_csr a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    bool have_b = false;
    if ((rc = sdc_load_matrix(&args, R_GEN, &a, &r.src)) != SDC_EXIT_OK)
        return rc;
    if ((rc = sdc_load_b(&args, R_B, r.op, &b, &have_b)) != SDC_EXIT_OK) {
        sd_csr_free(&a);
        return rc;
    }
    sd_context *ctx = NULL;
    sd_kernel *kern = NULL;
    sd_context_options co = {(int)device, NULL, 0};
    sd_status s = sd_context_create(&co, &ctx);
    if (s == SD_OK) {
        sd_compile_options o = sd_compile_options_default();
        o.allow_vendor = !args.present[R_NOVENDOR];
        o.deterministic = args.present[R_DET];
        s = sdi_compile_cached(ctx, &a, have_b ? &b : NULL, r.op, r.k, &o, &kern);
    }
    if (s == SD_OK) {
        describe(kern, &r);
        s = r.op == SD_OP_SPGEMM ? run_spgemm(ctx, kern, &a, have_b ? &b : NULL, &r) : run_dense(ctx, kern, &a, &r);
    }
    if (s == SD_OK) {
        print_result(&r, args.present[R_JSON]);
        if (!r.val.ok) {
            fprintf(stderr, "sparseditto: run: the cached kernel's output FAILED validation: %s\n", r.val.reason);
            s = SD_ERR_VALIDATION;
        }
    }
    /* A validation failure was reported above; anything else names its cause here. */
    rc = s == SD_OK ? SDC_EXIT_OK : s == SD_ERR_VALIDATION && r.val.reason[0] ? sdc_exit_code(s) : sdc_fail(s);
    sd_kernel_destroy(kern);
    sd_context_destroy(ctx);
    sd_csr_free(&a);
    sd_csr_free(&b);
    return rc;
}
