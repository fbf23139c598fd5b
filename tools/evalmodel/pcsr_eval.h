/* tools/evalmodel/pcsr_eval.h: the held-out evaluation of ParamSpMM's ⟨W, F, V, S⟩ decider
 * (forest.h) on a measured corpus, against ParamSpMM's fixed default configuration and
 * the best fixed configuration of the training matrices (`sparseditto evalmodel --pcsr`).
 *
 * Split: exactly `sparseditto evalmodel`'s (sdi_model_evaluate): a hold-out of
 * opts.holdout matrices stratified by shape class (sdi_corpus_holdout), then
 * opts.folds folds of the rest grouped by matrix and stratified by shape class
 * (sdi_corpus_folds_stratified), both from split_seed; every split is trained with
 * opts.seeds seeds (forest.seed, forest.seed + 1, ...).
 *
 * Methods (rows of the report):
 *   decider      the four forests trained on the tasks of every K together (K is not
 *                one of its features);
 *   decider-k    one decider per K, trained on the tasks of that K (what `train --forest`
 *                ships, sdi_paramspmm_deciders; `--forest-k K` gives one of them);
 *   default      the library's PCSR default (sdi_spmm_config_default) for the task;
 *   best-fixed   per K, the configuration with the lowest geomean regret on the
 *                training tasks of that K (among those measured on at least one).
 * Per task: regret = time(choice) / time(fastest measured configuration of ParamSpMM's
 * space). A choice that was not measured for the task is timed as the nearest measured
 * configuration in ⟨W, F, V, S⟩ order (|Δlog2 W| first, then |Δlog2 F|, |ΔV|, |ΔS|;
 * ties to the slower one), is counted as "unmeasured" and is never a hit; the "strict"
 * figures time it as the task's slowest measured configuration instead. */
#ifndef SDI_PCSR_EVAL_H
#define SDI_PCSR_EVAL_H

#include "corpus/corpus.h"
#include "corpus/pcsr_data.h"

enum { SDI_PE_DECIDER = 0, SDI_PE_DECIDER_K, SDI_PE_DEFAULT, SDI_PE_FIXED, SDI_PE_N };
#define SDI_PE_MAXK 16 /* distinct K at most */

typedef struct {
    int folds;                     /* default 5 */
    int seeds;                     /* default 5 */
    int holdout;                   /* matrices, default 100 (evalmodel's); 0 = none */
    unsigned long long split_seed; /* default 1 */
    sdi_forest_opts forest;        /* the decider's forests (sdi_forest_opts_default) */
} sdi_pcsr_eval_opts;

/* Sums over the (task, run) pairs of one method and K. */
typedef struct {
    int n, hits, within5, unmeasured;
    double log_regret, log_speedup; /* Σ log regret, Σ log(time(default) / time(choice)) */
    /* The same with an unmeasured choice timed as the task's slowest measured
     * configuration instead (the pessimistic bound of the nearest rule). */
    int within5_strict;
    double log_regret_strict;
} sdi_pcsr_cell;

typedef struct {
    int runs;
    sdi_pcsr_cell cell[SDI_PE_N][SDI_PE_MAXK + 1]; /* [method][K position; nk = every K] */
} sdi_pcsr_split;

typedef struct {
    int nmatrices, ntasks;            /* with PCSR measurements */
    int holdout_matrices, cv_matrices;
    int nk, ks[SDI_PE_MAXK];          /* distinct K, ascending */
    double configs_per_task;          /* mean measured configurations of the 48 */
    sdi_pcsr_split cv, test;
    int fixed[SDI_PE_MAXK];           /* best fixed per K chosen on every non-hold-out
                                         matrix (config index; -1: no training task) */
    int default_common[SDI_PE_MAXK];  /* the default most tasks of the K get */
    double train_s[2];                /* mean seconds to train decider / every decider-k */
    double decide_us;                 /* mean µs of one decision of the decider */
} sdi_pcsr_eval_result;

SDI_HIDDEN sdi_pcsr_eval_opts sdi_pcsr_eval_opts_default(void);
/* Time of configuration c (sdi_paramspmm_config_index) on task t: its own when measured,
 * else the nearest measured configuration's (the rule above); *measured says which. */
SDI_HIDDEN double sdi_pcsr_time_of(const sdi_pcsr_task *t, int c, int *measured);
/* The split of the n tasks T read from corpus c (the same file): role[i] = -1 when
 * T[i]'s matrix is in the hold-out, else its fold (every task of a matrix alike). */
SDI_HIDDEN sd_status sdi_pcsr_split_roles(const sdi_corpus *c, const sdi_pcsr_task *T, int n,
                                          const sdi_pcsr_eval_opts *o, int *role);
/* Runs the evaluation on the corpus file path. A corpus without spmm tasks with measured
 * PCSR configurations is SD_ERR_INVALID_ARG (saying so); a split without training tasks
 * too. progress (may be NULL) gets a line per finished split. */
SDI_HIDDEN sd_status sdi_pcsr_evaluate(const char *path, const sdi_pcsr_eval_opts *opts,
                                       void (*progress)(const char *line),
                                       sdi_pcsr_eval_result *out);
/* Geomean regret, share within 5 %, hit share, geomean speed-up over the default of a
 * cell (NaN when it is empty); strict: the regret and share of the strict rule. */
SDI_HIDDEN void sdi_pcsr_cell_metrics(const sdi_pcsr_cell *c, double *regret, double *within5,
                                      double *hit, double *speedup);
SDI_HIDDEN void sdi_pcsr_cell_strict(const sdi_pcsr_cell *c, double *regret, double *within5);
SDI_HIDDEN const char *sdi_pcsr_method_name(int m);
/* The report: markdown (a header with the corpus size, date and command, the hold-out
 * and cross-validation tables) into *md (sdi_free), and JSON into j. */
SDI_HIDDEN sd_status sdi_pcsr_eval_markdown(const sdi_pcsr_eval_result *r,
                                            const sdi_pcsr_eval_opts *o, const char *command,
                                            char **md);
SDI_HIDDEN void sdi_pcsr_eval_json(const sdi_pcsr_eval_result *r, const sdi_pcsr_eval_opts *o,
                                   const char *command, sdi_json *j);

#endif /* SDI_PCSR_EVAL_H */
