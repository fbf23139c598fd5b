/* tools/evalmodel/rankers.h: the rankers compared with the energy model and the
 * evaluation protocol of `sparseditto evalmodel`:
 *   energy-v1        the additive energy model (energy.h), listwise + margin loss;
 *   energy-nomargin  the same model trained with λ = 0 (listwise term only);
 *   mlp              one hidden tanh layer over all inputs (so features interact), one
 *                    output energy per template, trained with the same listwise + margin
 *                    loss (sdi_rank_loss) and Adam; deterministic in its seed;
 *   gbt              gradient-boosted regression trees, one ensemble per template,
 *                    squared loss on y = log2(time / fastest measured time of the task)
 *                    (a pointwise objective on the time relative to the row's best),
 *                    stochastic row subsampling (80 %) drawn from the seed;
 *   forest           random forests (forest.c) on the same per-template target;
 *   rules-v1         the rule table the search falls back to (rank.c), untrained.
 * Every ranker sees the energy model's inputs: 36 standardised features (sizes
 * log1p-ed), one-hot shape class and operator, standardised log2 K (energy.h). A ranker
 * scores every template of a task's operator; the lowest score is its top choice. */
#ifndef SDI_RANKERS_H
#define SDI_RANKERS_H

#include "train/energy_train.h"
#include "train/forest_fit.h"

#define SDI_EM_MAX_TOTAL 32 /* Σ |V_o| at most (20 today) */

/* ------------------------------------------------------------------ MLP */
typedef struct {
    int nin, hidden, nout; /* SDI_EM_NIN, H, Σ |V_o| */
    long nparams;
    double *theta;         /* W1[h*nin+j], b1[h], W2[t*hidden+h], b2[t] */
    double *w1, *b1, *w2, *b2;
} sdi_mlp;

typedef struct {
    unsigned long long seed;
    int hidden;          /* default 32 */
    int epochs;          /* default 80 */
    int batch;           /* default 32 */
    double lr;           /* default 0.003 */
    double weight_decay; /* AdamW decay of W1, W2 (default 0.01) */
    double lambda[SDI_EM_NOP], temperature; /* as the energy model (0.1, 0.25) */
} sdi_mlp_opts;

SDI_HIDDEN sdi_mlp_opts sdi_mlp_opts_default(void);
SDI_HIDDEN sd_status sdi_mlp_alloc(sdi_mlp *m, int hidden);
SDI_HIDDEN void sdi_mlp_free(sdi_mlp *m);
/* Random initial weights, deterministic in seed. */
SDI_HIDDEN void sdi_mlp_init(sdi_mlp *m, unsigned long long seed);
/* Energies of the templates of op (toff, ntemp from the scaler model). */
SDI_HIDDEN void sdi_mlp_eval(const sdi_mlp *m, const double *x, int toff, int ntemp, double *E);
/* Loss of one task (as sdi_energy_task_loss); grad (nparams, may be NULL) += scale·∂/∂θ. */
SDI_HIDDEN double sdi_mlp_task_loss(const sdi_mlp *m, const double *x, int toff, int ntemp,
                                    const double *us, double baseline_us, double lambda,
                                    double temperature, double scale, double *grad);

/* Trains on the tasks of c with inputs from scaler's standardisation (sdi_energy_inputs);
 * *m allocated here, owned by the caller. */
SDI_HIDDEN sd_status sdi_mlp_train(const sdi_corpus *c, const sdi_energy_model *scaler,
                                   const sdi_mlp_opts *opts, sdi_mlp *m);

/* ------------------------------------------------------------------ gradient boosting */
typedef struct {
    int nfeat;
    double base;     /* F_0: mean target */
    double shrink;   /* learning rate ν */
    int nrounds;
    sdi_forest *trees; /* nrounds single-tree regression forests */
} sdi_gbt;

typedef struct {
    unsigned long long seed;
    int rounds;       /* default 80 */
    int max_depth;    /* default 3 */
    int min_leaf;     /* default 3 */
    double shrink;    /* default 0.1 */
    double subsample; /* rows per round, share (default 0.8; 1 = all, deterministic fit) */
} sdi_gbt_opts;

SDI_HIDDEN sdi_gbt_opts sdi_gbt_opts_default(void);
/* Squared-loss boosting on X (n × p, row-major), y (n). *out owned by the caller. */
SDI_HIDDEN sd_status sdi_gbt_fit(const double *X, const double *y, int n, int p,
                                 const sdi_gbt_opts *opts, sdi_gbt *out);
SDI_HIDDEN double sdi_gbt_predict(const sdi_gbt *g, const double *x);
SDI_HIDDEN void sdi_gbt_free(sdi_gbt *g);

/* ------------------------------------------------------------------ rankers */
typedef enum {
    SDI_RANKER_ENERGY = 0,
    SDI_RANKER_ENERGY_NOMARGIN,
    SDI_RANKER_MLP,
    SDI_RANKER_GBT,
    SDI_RANKER_FOREST,
    SDI_RANKER_RULES,
    SDI_RANKER_COUNT
} sdi_ranker_kind;

typedef struct {
    sdi_ranker_kind kind;
    /* ENERGY*: the model; the other kinds: only its standardisation (hidden 1) */
    sdi_energy_model energy;
    sdi_mlp mlp;
    int has[SDI_EM_MAX_TOTAL];           /* GBT / FOREST: a model for global template t */
    sdi_gbt gbt[SDI_EM_MAX_TOTAL];
    sdi_forest forest[SDI_EM_MAX_TOTAL];
} sdi_ranker;

typedef struct {
    unsigned long long seed;
    sdi_energy_train_opts energy; /* ENERGY (and ENERGY_NOMARGIN with λ forced to 0) */
    sdi_mlp_opts mlp;
    sdi_gbt_opts gbt;
    sdi_forest_opts forest;       /* regression forests of the FOREST ranker */
} sdi_ranker_opts;

/* Defaults of every kind (forest: 32 trees, depth 10, min_leaf 2, mtry p/3). */
SDI_HIDDEN sdi_ranker_opts sdi_ranker_opts_default(void);
SDI_HIDDEN const char *sdi_ranker_name(sdi_ranker_kind k);
/* Kind by name; -1 when unknown. */
SDI_HIDDEN int sdi_ranker_from_name(const char *name);
/* Trains kind on c with opts (seed = opts->seed). *out owned by the caller. */
SDI_HIDDEN sd_status sdi_ranker_train(sdi_ranker_kind kind, const sdi_corpus *c,
                                      const sdi_ranker_opts *opts, sdi_ranker *out);
SDI_HIDDEN void sdi_ranker_free(sdi_ranker *r);
/* Scores of the templates of task t of c (E[s], s < |V_op|; lower ranks higher;
 * +inf where the ranker has no model of the template). */
SDI_HIDDEN void sdi_ranker_scores(const sdi_ranker *r, const sdi_corpus *c, int t, double *E);

/* Metrics per operator (index = sd_op) and over all tasks (docs/ARCHITECTURE.md "Energy model";
 * loss unused = 0):
 *   top1    share of tasks whose top choice is the fastest measured template;
 *   regret  geomean of time(top choice) / time(fastest measured);
 *   capture Σ log(baseline / time(top)) / Σ log(baseline / time(fastest)): the share of
 *           the oracle's speed-up over cuSPARSE's best that the top choice realises;
 *   cliff   share of tasks (with csr measured) whose top choice is > 2× slower than csr. */
typedef struct {
    sdi_energy_metrics op[SDI_EM_NOP];
    sdi_energy_metrics all;
} sdi_ranker_metrics;

SDI_HIDDEN void sdi_ranker_evaluate(const sdi_ranker *r, const sdi_corpus *c,
                                    sdi_ranker_metrics *out);

/* ------------------------------------------------------------------ evaluation protocol */
typedef struct {
    int folds;               /* k of the cross-validation (default 5) */
    int seeds;               /* training seeds per split (default 5) */
    int holdout;             /* matrices held out for the test set (default 100) */
    unsigned long long split_seed; /* splits (default 1) */
    unsigned kinds;          /* bit per sdi_ranker_kind (default all) */
    int cv_only;             /* 1: the hold-out is split off but never scored (choosing
                                settings by the cross-validation on the rest only) */
    sdi_ranker_opts ranker;
} sdi_model_eval_opts;

typedef struct {
    int n;                         /* runs */
    sdi_ranker_metrics mean, sd;   /* over runs (population std) */
} sdi_eval_summary;

typedef struct {
    int nmatrices, ntasks, holdout_matrices, cv_matrices;
    int ntasks_op[SDI_EM_NOP];
    struct {
        int evaluated;
        sdi_eval_summary cv;      /* folds × seeds runs, each scored on its held-out fold */
        sdi_eval_summary test;    /* seeds runs trained on every non-test matrix */
        double train_s;           /* mean training time (s) of the test-set runs (of the
                                     cross-validation runs with cv_only) */
        double rank_us;           /* mean time to score one task (µs) */
    } kind[SDI_RANKER_COUNT];
} sdi_model_eval_result;

SDI_HIDDEN sdi_model_eval_opts sdi_model_eval_opts_default(void);
/* The protocol: a stratified (shape class) held-out test set of opts->holdout matrices;
 * on the rest, opts->folds-fold cross-validation grouped by matrix and stratified by
 * shape class, each fold trained with opts->seeds seeds; then every kind trained on the
 * whole rest with each seed and scored on the test set. holdout 0 = no test set.
 * progress (may be NULL) gets one line per finished kind. */
SDI_HIDDEN sd_status sdi_model_evaluate(const sdi_corpus *c, const sdi_model_eval_opts *opts,
                                        void (*progress)(const char *line),
                                        sdi_model_eval_result *out);
/* The result as JSON: {"corpus": {...}, "protocol": {...}, "models": [{"name",
 * "cv": {"spmv": {"top1", "top1_sd", "regret", ...}, ...}, "test": {...}, "train_s",
 * "rank_us"}]}. */
SDI_HIDDEN void sdi_model_eval_json(const sdi_model_eval_result *r, const sdi_model_eval_opts *o,
                                    sdi_json *j);
/* The result as one markdown table per split (rows: models; columns: per operator
 * top-1 / regret / capture / cliff), into a malloc'ed string (sdi_free). */
SDI_HIDDEN sd_status sdi_model_eval_markdown(const sdi_model_eval_result *r,
                                             const sdi_model_eval_opts *o, char **out);

#endif /* SDI_RANKERS_H */
