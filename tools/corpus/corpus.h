/* tools/corpus/corpus.h: the training corpus of the energy model: measured template times
 * per task, read from JSONL, and a synthetic corpus generator for tests.
 *
 * Format (JSON Lines, UTF-8): one object per line; blank lines are skipped.
 *   {"matrix": "name",                      -- any string (groups tasks for CV)
 *    "features": {"rows": 1000, ..., "gamma": 0},  -- all 36 canonical names, finite
 *    "shape_class": "uniform",              -- sd_shape_class_name of the row lengths
 *    "tasks": [                             -- one or more
 *      {"op": "spmv",                       -- spmv | spmm | spgemm
 *       "k": 1,                             -- dense width (spmm), optional (1) otherwise
 *       "baseline_us": 12.5,                -- fastest valid cuSPARSE variant, > 0
 *       "templates": {"csr": 10.1, "sell32": 8.7, ...}}]}  -- times in µs, > 0; keys
 *                                              are labels of V_o (sdi_vocabulary); a
 *                                              template not measured is absent or null
 * Other members are ignored (the corpus builder adds "op", "k", "source", "gpu",
 * "templates_detail", "baseline_variant", "pcsr": tools/corpus/corpus_build.h). A line with
 * an "error" member is no example and is skipped (the builder's record of a task it
 * could not measure). The same matrix may span several lines (one per task).
 * The features are sd_analyze's; a line with spgemm tasks holds the SpGEMM analysis (its
 * ten operator-induced features); the model reads those for spgemm tasks only and counts
 * them as 0 for spmv and spmm, as sd_analyze does. Times are mean event times
 * (docs/ARCHITECTURE.md "Measurement")
 * (µs), baseline_us the fastest valid cuSPARSE variant of the same task. */
#ifndef SDI_CORPUS_H
#define SDI_CORPUS_H

#include "core/core.h"
#include "model/model_files.h"
#include "model/rank.h"

typedef struct {
    char matrix[96];
    double features[SD_NUM_FEATURES];
    sd_shape_class shape;
} sdi_corpus_record;

typedef struct {
    int record;       /* index into records */
    sd_op op;
    int k;
    double baseline_us;
    double us[SDI_RANK_MAX_TEMPLATES]; /* by vocabulary index; 0 = not measured */
} sdi_corpus_task;

typedef struct {
    int nrecords, ntasks;
    sdi_corpus_record *records;
    sdi_corpus_task *tasks;
} sdi_corpus;

/* Reads path; SD_ERR_IO when unreadable, SD_ERR_PARSE naming the 1-based line and what
 * is wrong. *out zeroed on failure. */
SDI_HIDDEN sd_status sdi_corpus_read(const char *path, sdi_corpus *out);
/* Parses JSONL text[0..len). */
SDI_HIDDEN sd_status sdi_corpus_parse(const char *text, size_t len, sdi_corpus *out);
/* Writes c as JSONL (one line per record). */
SDI_HIDDEN sd_status sdi_corpus_write(const sdi_corpus *c, const char *path);
SDI_HIDDEN void sdi_corpus_free(sdi_corpus *c);
/* Cross-validation folds grouped by matrix: fold[r] ∈ [0, folds) for every record, the
 * same for records of the same matrix name; matrices are dealt round-robin in an order
 * shuffled by seed, so fold sizes differ by at most one matrix. fold has nrecords slots. */
SDI_HIDDEN sd_status sdi_corpus_folds(const sdi_corpus *c, int folds, unsigned long long seed,
                                      int *fold);
/* As sdi_corpus_folds, stratified by shape class as well: matrices of each class are
 * shuffled by seed and dealt round-robin in an order interleaving the classes in
 * proportion, so every fold holds each class's share (± 1 matrix). */
SDI_HIDDEN sd_status sdi_corpus_folds_stratified(const sdi_corpus *c, int folds,
                                                 unsigned long long seed, int *fold);
/* A held-out test set of nhold matrices (every record of a chosen matrix), stratified by
 * shape class like the folds: held[r] = 1 for records of held-out matrices. nhold must
 * leave at least one matrix. */
SDI_HIDDEN sd_status sdi_corpus_holdout(const sdi_corpus *c, int nhold, unsigned long long seed,
                                        int *held);
/* Distinct matrix names among the records r with keep[r] != 0 (keep NULL: all). A record
 * is one matrix's line for one task, so a matrix usually has several. */
SDI_HIDDEN int sdi_corpus_count_matrices(const sdi_corpus *c, const int *keep);
/* The records r with keep[r] != 0 and their tasks (record indices renumbered). */
SDI_HIDDEN sd_status sdi_corpus_subset(const sdi_corpus *c, const int *keep, sdi_corpus *out);

/* Synthetic corpus of nrecords matrices (deterministic in seed), each with an spmv task,
 * an spmm task (K ∈ {8, 32, 128}) and an spgemm task. Features are drawn in separated
 * regions and the fastest template is a known function of the region
 * (sdi_corpus_synthetic_best); the other templates are 1.25–3× slower, some left
 * unmeasured; the remaining features are nuisance noise. */
SDI_HIDDEN sd_status sdi_corpus_synthetic(unsigned long long seed, int nrecords, sdi_corpus *out);
/* The vocabulary index of the template the synthetic rules make fastest for a task. */
SDI_HIDDEN int sdi_corpus_synthetic_best(const double *features, sd_op op, int k);

#endif /* SDI_CORPUS_H */
