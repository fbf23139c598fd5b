/* src/cli/cmd_corpus.c: `sparseditto corpus --set LIST --out CORPUS.jsonl [--ops ...]
 * [--time-limit S] [--sweep N] [--min-nnz N] [--max-nnz N]`: measures the training corpus of
 * the ranking models on the GPU (tools/corpus/corpus_build.h), resumably: run it again with the
 * same arguments to continue. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "corpus/corpus_build.h"

#ifndef SD_MATRICES_DIR
#define SD_MATRICES_DIR "shared/matrices"
#endif

static const sdc_option corpus_options[] = {
    {"set", 0, true, "list of matrices: generator specs, .mtx/.mtx.gz/.sdm paths or shared "
                     "names, one a line, optional \"nnz=N\" after it (required)"},
    {"out", 'o', true, "corpus to append to (JSON Lines; created if missing) (required)"},
    {"ops", 0, true, "tasks, comma list of spmv, spmmK, spgemm "
                     "(default spmv,spmm8,spmm32,spmm128,spmm256,spgemm)"},
    {"time-limit", 0, true, "seconds after which no new task starts (default none)"},
    {"sweep", 0, true, "small-sweep configurations per family beyond its default, 0..16 "
                       "(default 2)"},
    {"max-nnz", 0, true, "skip matrices with more entries (default none)"},
    {"min-nnz", 0, true, "skip matrices with fewer entries (default none): with --max-nnz, "
                         "one size band of a list (the nnz= hints decide before loading)"},
    {"max-products", 0, true, "SpGEMM: skip products with more multiplications (default 1e9)"},
    {"pcsr-space", 0, false, "spmm: measure ParamSpMM's whole <W,F,V,S> space (decider data)"},
    {"matrices", 0, true, "directory of the shared matrices (suitesparse/NAME.mtx.gz)"},
    {"device", 0, true, "CUDA device ordinal (default 0)"},
    {"quiet", 'q', false, "no progress line per task"},
};
enum { OPT_SET, OPT_OUT, OPT_OPS, OPT_TIME, OPT_SWEEP, OPT_MAXNNZ, OPT_MINNNZ, OPT_MAXPROD,
       OPT_PCSR, OPT_MATRICES, OPT_DEVICE, OPT_QUIET, NOPTS };

static int parse_real(const char *text, const char *opt, double *out)
{
    char *end = NULL;
    double v = strtod(text, &end);
    if (end == text || *end != '\0' || !isfinite(v) || v <= 0)
        return sdc_usage_error("corpus: %s '%s' is not a number > 0", opt, text);
    *out = v;
    return SDC_EXIT_OK;
}

int cmd_corpus(int argc, char **argv)
{
    sdc_args args;
    int rc = sdc_parse(argc, argv, corpus_options, NOPTS, 0, 0, &args);
    if (rc != SDC_EXIT_OK)
        return rc;
    if (args.help) {
        sdc_print_help("corpus --set LIST --out CORPUS.jsonl [--ops spmv,spmm8,spmm32,spmm128,"
                       "spmm256,spgemm] [--time-limit S] [--sweep N] [--min-nnz N] [--max-nnz N]",
                       "Measures the corpus the ranking models learn from: for every matrix of\n"
                       "LIST and every task, the 36 features and shape class, each template of\n"
                       "V_o at its best configuration of a small sweep (validated, timed) and the\n"
                       "fastest valid cuSPARSE variant; SpMM tasks also record every ParamSpMM\n"
                       "<W,F,V,S> configuration measured (`sparseditto train --forest`). One line\n"
                       "per finished (matrix, task) is appended and fsync'ed: run the same command\n"
                       "again after a crash or --time-limit to continue where it stopped. Needs a\n"
                       "GPU (exit 3 without one). Format: tools/corpus/corpus_build.h.",
                       corpus_options, NOPTS);
        return SDC_EXIT_OK;
    }
    if (args.value[OPT_SET] == NULL)
        return sdc_usage_error("corpus: --set LIST is required");
    if (args.value[OPT_OUT] == NULL)
        return sdc_usage_error("corpus: --out CORPUS.jsonl is required");
    sdi_corpus_opk ops[SDI_CORPUS_MAX_OPS];
    int nops = 0;
    sd_status s = sdi_corpus_ops_parse(args.value[OPT_OPS] != NULL ? args.value[OPT_OPS]
                                       : "spmv,spmm8,spmm32,spmm128,spmm256,spgemm", ops, &nops);
    if (s != SD_OK)
        return sdc_usage_error("corpus: %s", sd_last_error());
    sdi_corpus_build_opts o;
    memset(&o, 0, sizeof o);
    o.out_path = args.value[OPT_OUT];
    o.ops = ops;
    o.nops = nops;
    o.sweep = 2;
    o.max_products = 1e9;
    o.pcsr_space = args.present[OPT_PCSR];
    o.log = args.present[OPT_QUIET] ? NULL : stderr;
    long long v;
    if (args.value[OPT_SWEEP] != NULL) {
        if ((rc = sdc_parse_int(args.value[OPT_SWEEP], "--sweep", 0, 16, &v)) != SDC_EXIT_OK)
            return rc;
        o.sweep = (int)v;
    }
    if (args.value[OPT_TIME] != NULL &&
        (rc = parse_real(args.value[OPT_TIME], "--time-limit", &o.time_limit_s)) != SDC_EXIT_OK)
        return rc;
    if (args.value[OPT_MAXNNZ] != NULL &&
        (rc = parse_real(args.value[OPT_MAXNNZ], "--max-nnz", &o.max_nnz)) != SDC_EXIT_OK)
        return rc;
    if (args.value[OPT_MINNNZ] != NULL &&
        (rc = parse_real(args.value[OPT_MINNNZ], "--min-nnz", &o.min_nnz)) != SDC_EXIT_OK)
        return rc;
    if (o.min_nnz > 0 && o.max_nnz > 0 && o.min_nnz > o.max_nnz)
        return sdc_usage_error("corpus: --min-nnz %g is above --max-nnz %g", o.min_nnz, o.max_nnz);
    if (args.value[OPT_MAXPROD] != NULL &&
        (rc = parse_real(args.value[OPT_MAXPROD], "--max-products", &o.max_products)) != SDC_EXIT_OK)
        return rc;
    long long device = 0;
    if (args.value[OPT_DEVICE] != NULL &&
        (rc = sdc_parse_int(args.value[OPT_DEVICE], "--device", 0, 1023, &device)) != SDC_EXIT_OK)
        return rc;
    const char *mdir = args.value[OPT_MATRICES] != NULL ? args.value[OPT_MATRICES] : SD_MATRICES_DIR;

    sdi_corpus_entry *entries = NULL;
    int n = 0;
    s = sdi_corpus_list_read(args.value[OPT_SET], mdir, &entries, &n);
    if (s != SD_OK)
        return sdc_fail(s);
    if (n == 0) {
        sdi_free(entries);
        fprintf(stderr, "sparseditto: corpus: %s lists no matrix\n", args.value[OPT_SET]);
        return SDC_EXIT_INPUT;
    }
    o.entries = entries;
    o.nentries = n;

    sd_context *ctx = NULL;
    sd_context_options co = {(int)device, NULL, 0};
    s = sd_context_create(&co, &ctx);
    if (s != SD_OK) {
        sdi_free(entries);
        if (s == SD_ERR_NO_DEVICE)
            sdi_error_prefix("corpus: measuring needs a GPU");
        return sdc_fail(s);
    }
    sdi_corpus_build_summary sum;
    s = sdi_corpus_build(ctx, &o, &sum);
    sd_context_destroy(ctx);
    sdi_free(entries);
    printf("corpus %s: %d tasks measured, %d recorded as errors, %d already there, %d matrices "
           "over --max-nnz, %d under --min-nnz, %.1f s%s\n", o.out_path, sum.measured, sum.errors,
           sum.already_done, sum.too_big, sum.too_small, sum.seconds,
           sum.stopped_by_time ? "" : "; complete");
    if (sum.stopped_by_time)
        printf("time limit reached: %d tasks remain; run the same command again to continue\n",
               sum.remaining);
    return s == SD_OK ? SDC_EXIT_OK : sdc_fail(s);
}
