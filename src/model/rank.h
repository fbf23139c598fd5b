/* src/model/rank.h: ranking of the template vocabulary V_o (docs/ARCHITECTURE.md "Template
 * vocabulary V_o") for one task, with per-feature reasons. The energy comes from the
 * learned energy model when one is found (energy.h), else from a documented rule table
 * over the 36 features (rules-v1, rank.c); both fill one interface: a lower energy ranks
 * higher, and every energy is a sum of named per-feature contributions, which are the
 * explanation handed to synthesis. */
#ifndef SDI_RANK_H
#define SDI_RANK_H

#include "../core/core.h"

#define SDI_RANK_MAX_TEMPLATES 12
#define SDI_RANK_MAX_REASONS 6

typedef struct {
    char feature[24];   /* feature name, or "prior" */
    double value;       /* the feature's raw value */
    double contribution; /* added to the energy (negative = favours the template) */
    /* Room for the longest reason: rank.c's for the tensor-core template off by default
     * (173 characters); the learned model's (energy.c) are shorter. */
    char why[192];
} sdi_rank_reason;

typedef struct {
    char label[16]; /* V_o label: "csr", "sell32", "bsr8", "tc", "csr_hash", ... */
    double energy;
    int nreasons;
    sdi_rank_reason reasons[SDI_RANK_MAX_REASONS];
} sdi_rank_entry;

typedef struct {
    sd_op op;
    int k;
    char model[32]; /* the ranker used: "energy-v1" or "rules-v1" */
    char note[256]; /* where the model came from, or why the rules ranked ("" = none) */
    int n;
    sdi_rank_entry e[SDI_RANK_MAX_TEMPLATES]; /* sorted by energy, lowest first */
} sdi_ranking;

/* The vocabulary V_o of op: labels in the order of docs/ARCHITECTURE.md "Template
 * vocabulary V_o"; *n receives the count. */
SDI_HIDDEN const char *const *sdi_vocabulary(sd_op op, int *n);
/* Ranks V_o for features f (sd_analyze of the task) and dense width k (SpMM): with the
 * shipped energy model (sdi_rank_model) when one is found, loads and was trained on op,
 * else with rules-v1. out->model names the ranker and out->note says why. Thread-safe. */
SDI_HIDDEN sd_status sdi_rank(const sd_features *f, sd_op op, int k, sdi_ranking *out);
/* The rule table alone (rules-v1). */
SDI_HIDDEN sd_status sdi_rank_rules(const sd_features *f, sd_op op, int k, sdi_ranking *out);

/* The shipped energy model's search and loading: energy.h (sdi_rank_model). */
/* {"model":…, "note":…, "templates":[{"label":…, "energy":…, "reasons":[…]}, …]} */
SDI_HIDDEN void sdi_ranking_json(const sdi_ranking *r, sdi_json *j);
/* The members of a ranking report, written into an open object: "op", "k",
 * "shape_class", "model_path" (null for the rule table) and "ranking" — what
 * `sparseditto rank --json` and sd_rank print. */
SDI_HIDDEN void sdi_ranking_report_json(sdi_json *j, sd_op op, int k, sd_shape_class shape,
                                        const char *model_path, const sdi_ranking *r);

#endif /* SDI_RANK_H */
