/* src/cli/cmd_bench.c: `sparseditto bench --set NAME|LIST --ops LIST [--out DIR] ...`: the
 * compiler benchmark suite (bench_suite.c, the same run as bench/bench_compile): every
 * task compiled through sd_compile against the best cuSPARSE variant, written as
 * DIR/bench_compile.{json,md}. This file parses and checks the options only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/bench_suite.h"
#include "cli.h"

static const sdc_option bench_options[] = {
    {"set", 0, true, "quick, real, paper60, a comma list of them, or a list file (one matrix a "
                     "line: generator spec, .mtx/.mtx.gz/.sdm path or shared name, optional "
                     "nnz=N; default quick)"},
    {"ops", 0, true, "comma list of spmv,spmm8,spmm32,spmm128,spmm256,spgemm (default all)"},
    {"out", 0, true, "directory of bench_compile.json and .md (default .; created)"},
    {"time-limit", 0, true, "seconds; later tasks are recorded as skipped (default 240)"},
    {"budget", 0, true, "candidates per search (default 25)"},
    {"from", 0, true, "start at the I-th matrix of the set (continue a run; default 0)"},
    {"max-nnz", 0, true, "skip matrices with more entries (default 20000000, or 2e7)"},
    {"dir", 0, true, "the shared matrices directory (suitesparse/, paper60.tsv)"},
    {"json", 0, false, "print bench_compile.json on stdout (progress goes to stderr)"},
    {"deterministic", 0, false, "also compile each task in deterministic mode and report its cost"},
};
#define BENCH_NOPTS ((int)(sizeof bench_options / sizeof bench_options[0]))
enum { O_SET, O_OPS, O_OUT, O_TIME, O_BUDGET, O_FROM, O_MAXNNZ, O_DIR, O_JSON, O_DET };

/* Every comma-separated item of list is one of name(0), name(1), ... */
static int check_list(const char *opt, const char *list, const char *(*name)(int))
{
    char buf[256];
    if (list[0] == '\0' || strlen(list) >= sizeof buf)
        return sdc_usage_error("bench: %s '%s' is empty or too long", opt, list);
    snprintf(buf, sizeof buf, "%s", list);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int found = 0;
        for (int i = 0; name(i) != NULL; i++)
            found |= strcmp(tok, name(i)) == 0;
        if (!found) {
            char known[160] = "";
            for (int i = 0; name(i) != NULL; i++)
                snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", i ? ", " : "", name(i));
            return sdc_usage_error("bench: %s: unknown item '%s' (known: %s)", opt, tok, known);
        }
    }
    return SDC_EXIT_OK;
}

static int print_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "sparseditto: cannot read '%s'\n", path);
        return SDC_EXIT_INPUT;
    }
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
        fwrite(buf, 1, n, stdout);
        sdc_json_printed();
    }
    fclose(f);
    return SDC_EXIT_OK;
}

int cmd_bench(int argc, char **argv)
{
    sdc_args args;
    int rc = sdc_parse(argc, argv, bench_options, BENCH_NOPTS, 0, 0, &args);
    if (rc != SDC_EXIT_OK)
        return rc;
    if (args.help) {
        sdc_print_help("bench [--set NAME|LIST] [--ops LIST] [--out DIR] [--json] [--deterministic]",
                       "Compiles every task of a matrix set with sd_compile (a fresh cache, so each\n"
                       "compile is a full search, then a second compile is timed as a cache hit),\n"
                       "and compares the compiled kernel with the best valid cuSPARSE variant, both\n"
                       "measured in the same search. Writes DIR/bench_compile.json (one record per\n"
                       "task: plan, winner, times, roofline fraction, physical ceiling, compile time\n"
                       "by stage, SpGEMM peak memory) and DIR/bench_compile.md (geomean speed-ups\n"
                       "per task with 95% bootstrap intervals, share won, ceilings). The same run\n"
                       "as bench/bench_compile. --set also takes a list file of your own matrices\n"
                       "(the syntax of `sparseditto corpus --set`), checked before the GPU is used.\n"
                       "Needs a GPU (exit 3 without one).",
                       bench_options, BENCH_NOPTS);
        return SDC_EXIT_OK;
    }
    sdb_options o = sdb_options_default("sparseditto", SD_MATRICES_DIR);
    o.out = ".";
    long long v;
    if (args.present[O_SET]) {
        /* A value that is not a list of set names is a list file (read by the run). */
        if (sdb_set_is_list_file(args.value[O_SET]) && access(args.value[O_SET], R_OK) != 0) {
            if (strchr(args.value[O_SET], '/') == NULL && strchr(args.value[O_SET], '.') == NULL)
                (void)check_list("--set", args.value[O_SET], sdb_set_name); /* names the item */
            else
                sdc_usage_error("bench: --set %s: no such list file (or not readable)",
                                args.value[O_SET]);
            return SDC_EXIT_USAGE;
        }
        o.set = args.value[O_SET];
    }
    if (args.present[O_OPS]) {
        if (check_list("--ops", args.value[O_OPS], sdb_task_name) != SDC_EXIT_OK)
            return SDC_EXIT_USAGE;
        o.ops = args.value[O_OPS];
    }
    if (args.present[O_OUT])
        o.out = args.value[O_OUT];
    if (args.present[O_DIR])
        o.dir = args.value[O_DIR];
    if (args.present[O_TIME]) {
        if (sdc_parse_int(args.value[O_TIME], "--time-limit", 1, 30LL * 24 * 3600, &v) != SDC_EXIT_OK)
            return SDC_EXIT_USAGE;
        o.time_limit = (double)v;
    }
    if (args.present[O_BUDGET]) {
        if (sdc_parse_int(args.value[O_BUDGET], "--budget", 1, 10000, &v) != SDC_EXIT_OK)
            return SDC_EXIT_USAGE;
        o.budget = (int)v;
    }
    if (args.present[O_FROM]) {
        if (sdc_parse_int(args.value[O_FROM], "--from", 0, 100000, &v) != SDC_EXIT_OK)
            return SDC_EXIT_USAGE;
        o.from = (int)v;
    }
    o.deterministic = args.present[O_DET];
    if (args.present[O_MAXNNZ]) {
        if (sdc_parse_int(args.value[O_MAXNNZ], "--max-nnz", 1, (long long)1 << 40, &v) != SDC_EXIT_OK)
            return SDC_EXIT_USAGE;
        o.max_nnz = (double)v;
    }
    bool json = args.present[O_JSON];
    o.progress = json ? stderr : stdout;
    char path[1100];
    snprintf(path, sizeof path, "%s/bench_compile.json", o.out);
    if (json)
        unlink(path); /* never print an earlier run's file */
    rc = sdb_run(&o);
    if (json && rc != SDC_EXIT_ENV) {
        int prc = print_file(path);
        if (rc == SDC_EXIT_OK)
            rc = prc;
    }
    return rc;
}
