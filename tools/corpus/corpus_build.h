/* tools/corpus/corpus_build.h: the corpus builder behind `sparseditto corpus`: for each
 * matrix of a list and each requested task (spmv, spmm at K, spgemm), the 36 features
 * and shape class, every template of V_o (src/model/rank.h) at its best θ_H from a small
 * sweep of the families behind the label, each validated and timed (docs/ARCHITECTURE.md
 * "Measurement"), and the
 * fastest valid cuSPARSE variant. One JSON line per finished (matrix, task) is appended
 * and fsync'ed to the output (the corpus format of tools/corpus/corpus.h plus the members
 * below), so a crash or a time limit loses no finished task; a restart skips the tasks
 * the file already holds and drops a torn last line.
 *
 * Line (one per (matrix, task)):
 *   {"matrix", "op", "k", "source", "rows", "cols", "nnz", "gpu", "seconds",
 *    "features": {36}, "shape_class",
 *    "tasks": [{"op", "k", "baseline_us", "templates": {label: µs | null}}],
 *    "baseline_variant": "csr_alg2",
 *    "templates_detail": {label: {"family", "config", "us", "pipelined_us", "tried",
 *                                 "invalid"}},
 *    "pcsr": {"features": [18 ParamSpMM features], "configs": [{"w", "f", "v", "s",
 *             "group", "us"}]}            -- spmm only: every PCSR configuration measured
 *   }
 * or, when the task could not be measured (no valid cuSPARSE variant, nothing valid,
 * too many SpGEMM products, a broken CUDA context):
 *   {"matrix", "op", "k", "source", "error": "why"}   -- skipped by the corpus reader.
 *
 * The label → families map follows the search (the families' rank hooks, src/plan/families): spmv csr = tiny (nnz ≤ 2·10⁵),
 * csr_vec, csr_adaptive, merge, dia (1..32 diagonals); coo = coo; sellC = SELL with slice
 * height C; bsrB = BSR(B); tiles16 = tiles16. spmm csr = csr_split (row_cv > 1),
 * csr_row, pcsr, csr_window, col_window; coo = csr_split; bsrB = BSR(B); bellB =
 * blocked-ELL(B); tc = bsr_tc (b×8 tiles on tensor cores, 3×TF32, where tiles are
 * dense). spgemm csr_hash, smem_tiled_hash, hybrid = the families of src/plan/spgemm.h. Each family: its default θ_H plus up to
 * `sweep` configurations of the small sweep (enumerate level 1, level 2 when level 1
 * has none matching the label). */
#ifndef SDI_CORPUS_BUILD_H
#define SDI_CORPUS_BUILD_H

#include <stdbool.h>
#include <stdio.h>

#include "core/core.h"
#include "runtime/runtime.h"

/* ------------------------------------------------------------------ the list */
typedef enum {
    SDI_CENTRY_GEN = 0, /* a generator spec (`sparseditto gen` syntax): has ':' */
    SDI_CENTRY_FILE,    /* a path to .mtx / .mtx.gz / .sdm: has '/' or such an ending */
    SDI_CENTRY_SHARED   /* a bare name: <matrices>/suitesparse/NAME.mtx.gz */
} sdi_centry_kind;

typedef struct {
    sdi_centry_kind kind;
    char text[512];  /* the spec, or the resolved path */
    char name[96];   /* the corpus's matrix name: the spec, the file's base name, the name */
    double nnz_hint; /* "nnz=N" after the entry (0 = unknown): --max-nnz / --min-nnz skip it unread */
    int line;        /* 1-based line in the list */
} sdi_corpus_entry;

/* Parses a list: one entry a line, optionally followed by whitespace and "nnz=N"; '#'
 * starts a comment line; blank lines are skipped. matrices_dir resolves shared names and
 * gives a twin spec without file= its paper60.tsv.
 * SD_ERR_PARSE names the line (an entry or name too long, a bad nnz= hint), as does
 * SD_ERR_INVALID_ARG for a generator spec sdi_gen_check rejects. *out is
 * allocated (sdi_free) with *n entries; NULL and 0 on failure. */
SDI_HIDDEN sd_status sdi_corpus_list_parse(const char *text, size_t len, const char *matrices_dir,
                                           sdi_corpus_entry **out, int *n);
/* Reads and parses a list file (SD_ERR_IO when unreadable). */
SDI_HIDDEN sd_status sdi_corpus_list_read(const char *path, const char *matrices_dir,
                                          sdi_corpus_entry **out, int *n);

/* ------------------------------------------------------------------ tasks */
typedef struct {
    sd_op op;
    int k; /* 1 for spmv and spgemm */
} sdi_corpus_opk;

#define SDI_CORPUS_MAX_OPS 16
/* Parses "spmv,spmm8,spmm32,spgemm" (spmmN: 1 ≤ N ≤ 65536); duplicates dropped.
 * SD_ERR_INVALID_ARG names a bad word. */
SDI_HIDDEN sd_status sdi_corpus_ops_parse(const char *text, sdi_corpus_opk *out, int *n);
/* "spmv", "spmm32", "spgemm". */
SDI_HIDDEN void sdi_corpus_opk_name(sdi_corpus_opk t, char *buf, size_t cap);

/* ------------------------------------------------------------------ the journal */
typedef struct {
    char *path;
    int fd;          /* open for appending; -1 when closed */
    int n, cap;
    char **keys;     /* finished "matrix\top\tk" keys */
    int lines;       /* complete lines read at open */
    int bad_lines;   /* complete lines that did not parse (ignored: not finished) */
    long dropped_bytes; /* a torn last line removed at open */
} sdi_corpus_journal;

/* Opens (creating) path for appending: reads every complete line's (matrix, op, k) into
 * the finished set, and truncates a last line without its newline (a write cut short by
 * a crash) unless it parses, in which case its newline is added. */
SDI_HIDDEN sd_status sdi_corpus_journal_open(const char *path, sdi_corpus_journal *j);
SDI_HIDDEN bool sdi_corpus_journal_done(const sdi_corpus_journal *j, const char *matrix,
                                        sdi_corpus_opk t);
/* Appends line (one JSON object, no newline) + '\n' in one write, fsyncs, and marks
 * (matrix, t) finished. */
SDI_HIDDEN sd_status sdi_corpus_journal_append(sdi_corpus_journal *j, const char *matrix,
                                               sdi_corpus_opk t, const char *line);
SDI_HIDDEN void sdi_corpus_journal_close(sdi_corpus_journal *j);

/* ------------------------------------------------------------------ measuring */
typedef struct {
    const char *out_path;
    const sdi_corpus_entry *entries;
    int nentries;
    const sdi_corpus_opk *ops;
    int nops;
    double time_limit_s; /* no new task starts after this many seconds (0 = none) */
    int sweep;           /* small-sweep configurations per family beyond its default */
    double max_nnz;      /* matrices with more entries are skipped (0 = no cap) */
    double min_nnz;      /* matrices with fewer entries are skipped (0 = no floor) */
    double max_products; /* SpGEMM tasks with more products (Σ u) get an error line */
    int pcsr_space;      /* spmm: measure ParamSpMM's whole ⟨W,F,V,S⟩ space (decider data) */
    FILE *log;           /* one progress line per task (NULL = silent) */
} sdi_corpus_build_opts;

typedef struct {
    int measured;      /* tasks written with measurements */
    int errors;        /* tasks written as error lines */
    int already_done;  /* tasks the output already held */
    int too_big;       /* matrices skipped by max_nnz */
    int too_small;     /* matrices skipped by min_nnz */
    int remaining;     /* tasks not started (time limit) */
    int stopped_by_time;
    double seconds;
} sdi_corpus_build_summary;

/* Measures every (entry, task) not yet in o->out_path on ctx. Returns SD_OK also when
 * the time limit stopped it (summary says so); an error when the output cannot be
 * written, host memory runs out or the CUDA context broke (after writing the task that
 * broke it as an error line, so a restart moves on). */
SDI_HIDDEN sd_status sdi_corpus_build(sd_context *ctx, const sdi_corpus_build_opts *o,
                                      sdi_corpus_build_summary *sum);

#endif /* SDI_CORPUS_BUILD_H */
