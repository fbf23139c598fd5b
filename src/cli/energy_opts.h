/* src/cli/energy_opts.h: the energy model's training options, shared by `sparseditto
 * train` and `sparseditto evalmodel` (one table, one parser, the same defaults). */
#ifndef SDC_ENERGY_OPTS_H
#define SDC_ENERGY_OPTS_H

#include "cli.h"
#include "train/energy_train.h"

/* The option entries, to be placed in a command's table at index first: parse with
 * sdc_energy_opts_parse(args, first, ...). Defaults in the help text are those of
 * sdi_energy_train_opts_default. */
#define SDC_ENERGY_OPTIONS                                                                 \
    {"seed", 0, true, "initialisation and shuffling seed (default 1)"},                   \
    {"epochs", 0, true, "passes over the corpus, 0..100000 (default 60)"},                 \
    {"lambda", 0, true, "margin weight λ: one value for every operator, or spmv,spmm,spgemm " \
                        "(default 0.1,0.1,3)"},                                                  \
    {"temperature", 0, true, "T of the target q = softmax(t/T), > 0 (default 0.15)"},      \
    {"hidden", 0, true, "width H of each per-feature tanh layer, 1..64 (default 16)"},     \
    {"lr", 0, true, "Adam step size, > 0 (default 0.01)"},                                 \
    {"weight-decay", 0, true, "decoupled weight decay of w1, w2, >= 0 (default 0.1)"},     \
    {"batch", 0, true, "examples per Adam step, 1..100000 (default 32)"},                  \
    {"ensemble", 0, true, "seed-ensemble members (mean energy), 1..16 (default 1)"},        \
    {"cosine", 0, true, "1: cosine learning-rate decay to 0, 0: constant (default 1)"},   \
    {"spmm-k-heads", 0, true, "1: one SpMM head per K bucket (8, 32, 128, 256), 0: one "  \
                              "head per operator (default 0)"}
enum { SDC_EOPT_SEED, SDC_EOPT_EPOCHS, SDC_EOPT_LAMBDA, SDC_EOPT_T, SDC_EOPT_HIDDEN,
       SDC_EOPT_LR, SDC_EOPT_WD, SDC_EOPT_BATCH, SDC_EOPT_ENSEMBLE, SDC_EOPT_COSINE,
       SDC_EOPT_KHEADS, SDC_ENERGY_NOPTS };

/* Applies the energy options present in args (table entries from index first) to *o;
 * SDC_EXIT_OK, or a usage error naming cmd and the option. */
int sdc_energy_opts_parse(const sdc_args *args, int first, const char *cmd,
                          sdi_energy_train_opts *o);

#endif /* SDC_ENERGY_OPTS_H */
