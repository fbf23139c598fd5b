/* src/model/forest.h: random forests (CART regression / classification trees on
 * bootstrap samples with per-split feature subsampling, deterministic in a seed) and
 * ParamSpMM's decider built on them: four classifiers predicting ⟨W, F, V, S⟩ from
 * ParamSpMM's features of the matrix (sdi_paramspmm_features). */
#ifndef SDI_FOREST_H
#define SDI_FOREST_H

#include "../core/core.h"
#include "../core/json_parse.h"

#define SDI_FOREST_MAX_CLASSES 32

typedef struct {
    int feature;      /* split feature, -1 at a leaf */
    double threshold; /* x[feature] <= threshold goes left */
    int left, right;  /* child node indices (> this node's), -1 at a leaf */
    double value;     /* leaf: mean (regression) or majority class (classification) */
} sdi_tree_node;

typedef struct {
    int nnodes;
    sdi_tree_node *nodes; /* node 0 is the root */
} sdi_tree;

typedef struct {
    int nfeat;
    int nclass; /* 0: regression; ≥ 2: classes 0..nclass-1 */
    int ntrees;
    sdi_tree *trees;
} sdi_forest;

typedef struct {
    int ntrees;      /* default 64 */
    int max_depth;   /* default 16 */
    int min_leaf;    /* samples at least in each child (default 1) */
    int mtry;        /* features tried per split; 0 = ⌈p/3⌉ (regression) or ⌈√p⌉ */
    int bootstrap;   /* 1 (default): each tree sees n draws with replacement */
    unsigned long long seed;
} sdi_forest_opts;

SDI_HIDDEN sdi_forest_opts sdi_forest_opts_default(void);
/* Regression: mean of the trees; classification: the majority vote (lowest class on ties). */
SDI_HIDDEN double sdi_forest_predict(const sdi_forest *f, const double *x);
SDI_HIDDEN void sdi_forest_free(sdi_forest *f);
/* {"nfeat", "nclass", "trees": [{"feature": [...], "threshold": [...], "left": [...],
 * "right": [...], "value": [...]}]}, numbers to 17 digits (bit-exact round trip). */
SDI_HIDDEN void sdi_forest_json(const sdi_forest *f, sdi_json *j);
/* SD_ERR_PARSE names what is wrong (bad sizes, indices, non-finite numbers). */
SDI_HIDDEN sd_status sdi_forest_from_json(const sdi_jvalue *v, sdi_forest *out);

/* ------------------------------------------------------------------ ParamSpMM decider
 * Features of A (r_i: entries of row i; non-empty rows have r_i ≥ 1; a ratio whose
 * denominator is 0 is 0):
 *   0 n        rows
 *   1 n̂        non-empty rows
 *   2 nnz      entries
 *   3 δ        density nnz / (rows·cols)
 *   4 d        mean degree nnz / n
 *   5 d̂        mean degree of non-empty rows nnz / n̂
 *   6 d_max    longest row
 *   7 CV       population std / mean of r_i over all rows
 *   8 ĈV       the same over non-empty rows
 *   9–12 SR_1..SR_4  shares of non-empty rows with r_i in [1,4], [5,32], [33,256], ≥ 257
 *            (the row-length regimes of W warps per row block and V-wide vectors)
 *  13 ρ        column locality: share of consecutive in-row column pairs with
 *              c[k+1] − c[k] ≤ 8 (their rows of B share cache lines / sectors)
 *  14 b        mean entries per non-empty panel of 32 consecutive rows (a CTA's work
 *              without balancing)
 *  15 b_max    entries of the heaviest panel (what balancing S evens out)
 *  16 PR_1     share of nnz in the ⌈1 %·n⌉ longest rows
 *  17 PR_2     share of nnz in the ⌈10 %·n⌉ longest rows */
#define SDI_PSPMM_NFEAT 18

typedef struct {
    int w, f, v, s; /* warps per block, coarsening factor, vector size, balancing 0/1 */
} sdi_paramspmm_params;

typedef struct {
    sdi_forest forest[4]; /* classifiers of W, F, V, S over the value sets below */
} sdi_paramspmm_decider;

/* Value sets of the parameters (ParamSpMM's space, as src/plan/spmm.h): W ∈ {1,2,4,8},
 * F ∈ {1,2,4}, V ∈ {1,2}, S ∈ {0,1}. */
SDI_HIDDEN const int *sdi_paramspmm_values(int param, int *n);
SDI_HIDDEN const char *sdi_paramspmm_feature_name(int i);
/* "W", "F", "V", "S": the parameters' keys in the decider files. */
SDI_HIDDEN extern const char *const sdi_paramspmm_param_names[4];
SDI_HIDDEN sd_status sdi_paramspmm_features(const sd_csr *a, double out[SDI_PSPMM_NFEAT]);
SDI_HIDDEN void sdi_paramspmm_decide(const sdi_paramspmm_decider *d,
                                     const double x[SDI_PSPMM_NFEAT], sdi_paramspmm_params *out);
SDI_HIDDEN void sdi_paramspmm_decider_free(sdi_paramspmm_decider *d);
SDI_HIDDEN sd_status sdi_paramspmm_decider_load(const char *path, sdi_paramspmm_decider *out);

/* ------------------------------------------------------------------ the shipped decider
 * One decider per K of the corpus (`sparseditto train --forest`). K is not one of
 * ParamSpMM's features: trained on every K together, the decider picked for about half
 * the held-out tasks a configuration that is another K's optimum and was never measured
 * for theirs (strict regret on the 100-matrix hold-out 1.30 pooled, 1.02 per K, 1.05 for
 * the PCSR default: `sparseditto evalmodel models/corpus/corpus.jsonl --holdout 100
 * --pcsr`, after gunzip). */
#define SDI_PSPMM_MAX_KS 8
typedef struct {
    int n;                                     /* members, 1..SDI_PSPMM_MAX_KS */
    int k[SDI_PSPMM_MAX_KS];                   /* each member's K, ascending; 0 = every K */
    sdi_paramspmm_decider d[SDI_PSPMM_MAX_KS];
} sdi_paramspmm_deciders;
/* The member for K: the one trained on that K (or on every K), else the nearest in
 * log2 K (ties to the smaller K). */
SDI_HIDDEN const sdi_paramspmm_decider *sdi_paramspmm_deciders_for(const sdi_paramspmm_deciders *d,
                                                                   int k);
SDI_HIDDEN void sdi_paramspmm_deciders_free(sdi_paramspmm_deciders *d);
/* Version 1: {"format": "sparseditto-paramspmm", "version": 1, "features": [18 names],
 *  "values": {"W": [...], ...}, "forests": {"W": forest, "F": ..., "V": ..., "S": ...}}.
 * Version 2: {"format": "sparseditto-paramspmm", "version": 2, "features", "values",
 *  "members": [{"k": K, "forests": {"W": ..., "F": ..., "V": ..., "S": ...}}, ...]}. Load
 * also reads a version-1 file as one member for every K (k 0). SD_ERR_PARSE names what is
 * wrong (members out of order or repeated, a missing forest, other features). Fitting and
 * writing: tools/train/forest_fit.h. */
SDI_HIDDEN sd_status sdi_paramspmm_deciders_load(const char *path, sdi_paramspmm_deciders *out);

#endif /* SDI_FOREST_H */
