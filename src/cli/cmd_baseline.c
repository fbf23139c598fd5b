/* src/cli/cmd_baseline.c: `sparseditto baseline FILE --op spmv|spmm|spgemm [-K n] [--json]`:
 * every cuSPARSE variant for the operator on the matrix (status, mean / min / median /
 * pipelined µs, validation, fraction of the memory roofline) and the fastest valid one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "core/io.h"
#include "gen/gen.h"
#include "runtime/runtime.h"
#include "vendor/baseline.h"

static const sdc_option bl_options[] = {
    {"op", 0, true, "operator: spmv, spmm or spgemm (required)"},
    {"K", 'K', true, "SpMM dense width (default 32)"},
    {"json", 0, false, "print one JSON object on stdout instead of the table"},
    {"gen", 0, true, "use a generated matrix SPEC instead of FILE (see sparseditto gen)"},
    {"seed", 0, true, "seed of x / B (and of A's values for pattern files); default 1"},
    {"exact", 0, false, "small-integer values in A and x / B: exact validation"},
    {"aat", 0, false, "SpGEMM: A*At even for a square A (default: A*A when square)"},
    {"only", 0, true, "comma list of variant names to run (default: all)"},
    {"device", 0, true, "CUDA device ordinal (default 0)"},
};
#define BL_NOPTS ((int)(sizeof bl_options / sizeof bl_options[0]))
enum { O_OP, O_K, O_JSON, O_GEN, O_SEED, O_EXACT, O_AAT, O_ONLY, O_DEVICE };

static const char *op_label(sd_op op)
{
    return op == SD_OP_SPMV ? "spmv" : op == SD_OP_SPMM ? "spmm" : "spgemm";
}

static void print_table(const char *src, const sd_context *ctx, const sdi_baseline *b)
{
    printf("cuSPARSE baseline, %s", op_label(b->op));
    if (b->op == SD_OP_SPMM)
        printf(" K=%d", b->k);
    if (b->op == SD_OP_SPGEMM)
        printf(" %s (nnz(C) = %lld)", b->aat ? "A*At" : "A*A", (long long)b->nnz_c);
    printf(", on %s: %d x %d, nnz %lld\n", src, b->rows, b->cols, (long long)b->nnz);
    printf("device %s (%s): copy bandwidth %.0f GB/s, empty launch %.2f us\n", ctx->props.name,
           ctx->arch, b->copy_bw * 1e-9, b->launch_us);
    if (b->roofline_us > 0)
        printf("memory roofline (CSR streaming limit, %.0f bytes): %.2f us\n", b->roofline_bytes,
               b->roofline_us);
    printf("%-18s %-16s %10s %10s %10s %10s %9s %8s\n", "variant", "status", "mean us",
           "min us", "median us", "pipe us", "roofline", "setup ms");
    for (int i = 0; i < b->nvariants; i++) {
        const sdi_variant_result *v = &b->v[i];
        if (v->status == SDI_VARIANT_OK) {
            char roof[16] = "-";
            if (v->roofline_frac > 0)
                snprintf(roof, sizeof roof, "%.1f%%", 100 * v->roofline_frac);
            printf("%-18s %-16s %10.2f %10.2f %10.2f %10.2f %9s %8.1f%s\n", v->name, "ok (valid)",
                   v->timing.mean_us, v->timing.min_us, v->timing.median_us,
                   v->timing.pipelined_us, roof, v->setup_ms, i == b->best ? "  *" : "");
        } else {
            printf("%-18s %-16s %s\n", v->name, sdi_variant_status_name(v->status), v->detail);
        }
    }
    if (b->best >= 0) {
        const sdi_variant_result *w = &b->v[b->best];
        printf("winner: %s, %.2f us mean", w->name, w->timing.mean_us);
        if (w->roofline_frac > 0)
            printf(" (%.1f%% of the memory roofline)", 100 * w->roofline_frac);
        printf("\n");
    } else {
        printf("winner: none (no variant ran and passed validation)\n");
    }
}

static int print_json(const char *src, const sd_context *ctx, const sdi_baseline *b)
{
    sdi_json j;
    sdi_json_init(&j, 2);
    sdi_json_begin_object(&j);
    sdi_json_key(&j, "matrix");
    sdi_json_string(&j, src);
    sdi_json_key(&j, "device");
    sdi_json_string(&j, ctx->props.name);
    sdi_json_key(&j, "arch");
    sdi_json_string(&j, ctx->arch);
    sdi_json_key(&j, "baseline");
    sdi_baseline_json(b, &j);
    sdi_json_end_object(&j);
    sd_status s = sdi_json_finish(&j);
    if (s != SD_OK) {
        sdi_json_free(&j);
        return sdc_fail(s);
    }
    sdc_print_json(j.buf);
    sdi_json_free(&j);
    return SDC_EXIT_OK;
}

int cmd_baseline(int argc, char **argv)
{
    sdc_args args;
    int rc = sdc_parse(argc, argv, bl_options, BL_NOPTS, 0, 1, &args);
    if (rc != SDC_EXIT_OK)
        return rc;
    if (args.help) {
        sdc_print_help("baseline FILE --op spmv|spmm|spgemm [-K n] [--json]",
                       "Runs every applicable cuSPARSE generic-API algorithm and format for the\n"
                       "operator (SpMV: CSR ALG1/2, COO ALG1/2, SELL-32; SpMM: CSR ALG1-3, COO\n"
                       "ALG1-4, Blocked-ELL 16/32; SpGEMM: ALG1, ALG2, ALG3), validates each\n"
                       "against the CPU reference, times it (5 warm-ups, 10 timed runs, plus 10\n"
                       "pipelined) and names the fastest valid one. Refusals are listed with\n"
                       "cuSPARSE's status. SpGEMM computes A*A for a square A, else A*At.",
                       bl_options, BL_NOPTS);
        return SDC_EXIT_OK;
    }
    if ((args.npos == 1) == args.present[O_GEN])
        return sdc_usage_error("baseline: give a matrix FILE or --gen SPEC (one of them)");
    if (!args.present[O_OP])
        return sdc_usage_error("baseline: --op spmv|spmm|spgemm is required");
    sd_op op;
    const char *ops = args.value[O_OP];
    if (strcmp(ops, "spmv") == 0)
        op = SD_OP_SPMV;
    else if (strcmp(ops, "spmm") == 0)
        op = SD_OP_SPMM;
    else if (strcmp(ops, "spgemm") == 0)
        op = SD_OP_SPGEMM;
    else
        return sdc_usage_error("baseline: --op '%s' is not spmv, spmm or spgemm", ops);
    long long k = 32, seed = 1, device = 0;
    if (args.present[O_K] && sdc_parse_int(args.value[O_K], "-K", 1, 65536, &k) != SDC_EXIT_OK)
        return SDC_EXIT_USAGE;
    if (args.present[O_K] && op != SD_OP_SPMM)
        return sdc_usage_error("baseline: -K applies to --op spmm only");
    if (args.present[O_SEED] &&
        sdc_parse_int(args.value[O_SEED], "--seed", 0, (long long)1 << 62, &seed) != SDC_EXIT_OK)
        return SDC_EXIT_USAGE;
    if (args.present[O_DEVICE] &&
        sdc_parse_int(args.value[O_DEVICE], "--device", 0, 4095, &device) != SDC_EXIT_OK)
        return SDC_EXIT_USAGE;
    bool exact = args.present[O_EXACT];

    sd_csr a;
    memset(&a, 0, sizeof a);
    const char *src;
    sd_status s;
    if (args.present[O_GEN]) {
        src = args.value[O_GEN];
        s = sdc_gen(src, (uint64_t)seed, &a);
    } else {
        src = args.pos[0];
        sdi_mtx_info info;
        s = sdi_csr_read_info(src, &a, &info);
        /* Pattern matrices get seeded pseudo-random values (docs/ARCHITECTURE.md "Measurement"). */
        if (s == SD_OK && info.field == SDI_MTX_PATTERN && !exact)
            sdi_gen_values(&a, SDI_VALUES_UNIFORM, (uint64_t)seed);
    }
    if (s != SD_OK)
        return sdc_fail(s);
    if (exact)
        sdi_gen_values(&a, SDI_VALUES_SMALL_INT, (uint64_t)seed);
    float *xb = NULL;
    if (op != SD_OP_SPGEMM) {
        size_t n = (size_t)a.cols * (size_t)(op == SD_OP_SPMM ? k : 1);
        xb = malloc((n > 0 ? n : 1) * sizeof *xb);
        if (xb == NULL) {
            sd_csr_free(&a);
            fprintf(stderr, "sparseditto: out of host memory for the dense operand\n");
            return SDC_EXIT_ENV;
        }
        sdi_gen_dense(xb, (int64_t)n, exact ? SDI_VALUES_SMALL_INT : SDI_VALUES_UNIFORM,
                      (uint64_t)seed + 1);
    }
    sd_context *ctx = NULL;
    sd_context_options copts = {.device = (int)device};
    s = sd_context_create(&copts, &ctx);
    if (s == SD_OK) {
        sdi_baseline_options o = {.k = (int)k,
                                  .aat = args.present[O_AAT] ? 1 : -1,
                                  .exact = exact,
                                  .only = args.value[O_ONLY]};
        sdi_baseline b;
        s = sdi_cusparse_baseline(ctx, &a, op, xb, &o, &b);
        if (s == SD_OK) {
            if (args.present[O_JSON])
                rc = print_json(src, ctx, &b);
            else
                print_table(src, ctx, &b);
        }
    }
    if (s != SD_OK)
        rc = sdc_fail(s);
    sd_context_destroy(ctx);
    free(xb);
    sd_csr_free(&a);
    return rc;
}
