/* tools/bench/bench_suite.h: the compiler benchmark suite (the headline benchmark), shared
 * by `sparseditto bench` (cmd_bench.c) and bench/bench_compile.c so that both run the same
 * code: every task of a matrix set compiled through sd_compile, the numbers of the search
 * (sd_kernel_describe) against the best cuSPARSE variant, aggregates with bootstrap
 * intervals, written as DIR/bench_compile.json and DIR/bench_compile.md. */
#ifndef SDC_BENCH_SUITE_H
#define SDC_BENCH_SUITE_H

#include <stdbool.h>
#include <stdio.h>

typedef struct {
    const char *out;   /* directory of bench_compile.{json,md} (must exist) */
    const char *set;   /* quick, real, paper60, a comma list of them, or a list file */
    const char *ops;   /* comma list of spmv, spmm8, spmm32, spmm128, spmm256, spgemm */
    const char *dir;   /* the shared matrices (suitesparse/, paper60.tsv) */
    double max_nnz;    /* matrices above it are skipped */
    double time_limit; /* seconds; the remaining tasks are skipped past it */
    int budget;        /* sd_compile budget; 0 = the default (25) */
    int from;          /* first matrix of the set (continues an earlier run) */
    int deterministic; /* also compile each task with deterministic = 1 (the cost of
                          reproducibility: only plans without floating-point atomics, cuSPARSE
                          limited to its bit-reproducible variants), side by side */
    const char *prog;  /* prefix of messages: "bench_compile", "sparseditto" */
    FILE *progress;    /* one line per compiled task (NULL = none) */
} sdb_options;

/* bench_compile's defaults: out bench/results, set quick, every task, max nnz 2e7, 240 s,
 * the given matrices directory, progress on stdout. */
sdb_options sdb_options_default(const char *prog, const char *matrices_dir);

/* The task names of --ops, in their order ("spmv", ..., "spgemm"), NULL past the end. */
const char *sdb_task_name(int i);
/* The set names of --set ("quick", "real", "paper60"), NULL past the end. */
const char *sdb_set_name(int i);
/* Whether --set names a list file rather than a comma list of set names: any item that
 * is not a set name makes the whole value a path (read by sdi_corpus_list_read: one
 * matrix a line, generator spec, .mtx/.mtx.gz/.sdm path or shared name, "nnz=N" hint). */
bool sdb_set_is_list_file(const char *set);

/* Runs the suite. Returns 0 when every attempted task compiled, 1 when one failed or the
 * results could not be written, 3 without a device (the cause printed on stderr). */
int sdb_run(const sdb_options *o);

#endif /* SDC_BENCH_SUITE_H */
