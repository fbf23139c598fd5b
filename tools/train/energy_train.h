/* tools/train/energy_train.h: training of the energy model (src/model/energy.h) on a
 * corpus (tools/corpus/corpus.h): options, AdamW over the ranking loss, evaluation
 * metrics and grouped cross-validation; behind `sparseditto train` and `evalmodel`. */
#ifndef SDI_ENERGY_TRAIN_H
#define SDI_ENERGY_TRAIN_H

#include "corpus/corpus.h"
#include "energy_loss.h"

typedef struct {
    unsigned long long seed; /* initialisation and shuffling */
    int epochs;              /* passes over the examples (default 60) */
    int batch;               /* examples per Adam step (default 32) */
    double lr;               /* Adam step (default 0.01) */
    double lambda[SDI_EM_NOP]; /* margin weight λ_o (default 0.1, 0.1, 3 by sd_op) */
    double temperature;      /* T of q = softmax(t/T) (default 0.15) */
    int hidden;              /* H, 1..64 (default 16) */
    double weight_decay;     /* decoupled (AdamW) decay of w1, w2 per step, scaled by lr
                                (default 0.1); not part of the ranking loss: a regulariser,
                                needed with 16 K parameters and a few hundred matrices */
    int ensemble;            /* members M of the seed ensemble, 1..SDI_EM_MAX_MEMBERS
                                (default 1); member i: initialisation and order streams of
                                index i, so member 0 is the model trained alone with seed */
    int cosine;              /* 1 (default): learning rate lr·(1 + cos(π·step/steps))/2 */
    int k_heads;             /* 1: one SpMM head per K bucket (energy.h; default 0) */
    int verbose;             /* 1: one line per epoch on stdout */
} sdi_energy_train_opts;

typedef struct {
    int ntasks;        /* tasks with at least one measured template */
    double top1;       /* share whose lowest-energy measured template is the fastest */
    double regret;     /* geomean of time(top choice) / time(fastest measured) */
    double capture;    /* Σ log speedup realised / Σ log oracle speedup over the baseline */
    double cliff;      /* share whose top choice is > 2× slower than csr (when csr measured) */
    double top3;       /* share whose fastest is among the 3 lowest-energy measured templates:
                          the search's first round measures 3 branches */
    double regret3;    /* geomean of time(fastest of those 3) / time(fastest measured) */
    double loss;       /* mean loss */
} sdi_energy_metrics;

/* Of the entries with us[s] > 0 (measured), the fastest among the k with the lowest score
 * E (ties by index); -1 when none is measured. */
SDI_HIDDEN int sdi_best_of_top(const double *E, const double *us, int n, int k);

/* Fits mean / std of the (log1p-ed) features and log2 K over the corpus's tasks. */
SDI_HIDDEN void sdi_energy_fit_standardization(sdi_energy_model *m, const sdi_corpus *c);
/* One Adam step with decoupled weight decay (AdamW) on theta[0..n) from grad: mom and
 * vel are the moment estimates (zeroed before the first step), step the 1-based step
 * count; the decay wd applies to the parameters in [lo0, hi0) and [lo1, hi1) only (the
 * weight matrices of the energy model and the MLP, not their biases). */
SDI_HIDDEN void sdi_adamw_step(double *theta, const double *grad, double *mom, double *vel,
                               long n, long step, double lr, double wd, long lo0, long hi0,
                               long lo1, long hi1);
SDI_HIDDEN sdi_energy_train_opts sdi_energy_train_opts_default(void);
/* Fits standardisation on c, then trains opts->ensemble members with AdamW, member i
 * initialised and shuffled from (opts->seed, index i); m must be unallocated (zeroed)
 * and is owned by the caller on success. */
SDI_HIDDEN sd_status sdi_energy_train(const sdi_corpus *c, const sdi_energy_train_opts *opts,
                                      sdi_energy_model *m);
/* Mean loss of the model on the corpus (λ, T of the model). */
SDI_HIDDEN double sdi_energy_corpus_loss(const sdi_energy_model *m, const sdi_corpus *c);
SDI_HIDDEN void sdi_energy_evaluate(const sdi_energy_model *m, const sdi_corpus *c,
                                    sdi_energy_metrics *out);
/* k-fold cross-validation grouped by matrix (sdi_corpus_folds, split seed split_seed),
 * each fold trained with nseeds seeds (opts->seed, +1, ...): mean and population std of
 * the held-out metrics over the folds × seeds runs. per_run (may be NULL) receives
 * folds·nseeds metrics, fold-major. */
SDI_HIDDEN sd_status sdi_energy_cross_validate(const sdi_corpus *c,
                                               const sdi_energy_train_opts *opts, int folds,
                                               int nseeds, unsigned long long split_seed,
                                               sdi_energy_metrics *mean, sdi_energy_metrics *sd,
                                               sdi_energy_metrics *per_run);

#endif /* SDI_ENERGY_TRAIN_H */
