/* src/model/energy.h: the learned additive energy model (docs/ARCHITECTURE.md "Energy model"):
 * inputs, inference with per-feature contributions and loading the weights (energy_io.c).
 * Initialisation, the ranking loss with its analytic gradient and saving
 * (tools/train/energy_loss.h), training on a corpus and the evaluation metrics
 * (tools/train/energy_train.h) are a tool.
 *
 * Input x (SDI_EM_NIN = 45 values, each its own "feature j"):
 *   x[0..35]  the 36 features in canonical order; the size features (rows, cols, nnz,
 *             row_max, col_max, u_total, u_max, u_p95, ut_total: heavy-tailed counts or
 *             count ratios) are log1p-ed first; then all 36 are standardised with the
 *             mean / std of the training corpus (stored with the weights); the ten
 *             operator-induced features count as 0 unless op is spgemm (sd_analyze's
 *             convention), whatever the corpus line holds;
 *   x[36..40] one-hot shape class (uniform, moderate, skewed, power-law, bimodal);
 *   x[41..43] one-hot operator (spmv, spmm, spgemm);
 *   x[44]     log2 K standardised (K = 1 for spmv and spgemm).
 * h_j(x_j) = tanh(x_j·w1_j + b1_j) ∈ R^H (H = 16 by default), shared across operators;
 * E_o(s|x) = β_{o,s} + Σ_j h_j(x_j)ᵀ w2_{o,j,s}; lower energy ranks higher.
 * Templates of all operators are numbered globally: template s of op o is
 * toff[o] + s, s indexing sdi_vocabulary(o). Everything is double.
 * A model may be a seed ensemble of M members (same H and standardisation, trained
 * alone with different seeds): E_o = (1/M) Σ_m E_o^m, which is again an additive
 * energy of the same form (the members' contributions h_j^mᵀ w2^m / M add up per
 * feature j), so per-feature explanations keep their meaning.
 *
 * SpMM K heads (option k_heads; a departure, documented in docs/ARCHITECTURE.md "Energy
 * model", from a head index that is the operator alone): SpMM gets one head per K bucket, β_{(spmm,b),s} and
 * w2_{(spmm,b),j,s}, b the bucket of {8, 32, 128, 256} nearest to K in log2 K (K outside
 * maps to the nearest end; a tie — K = 16, K = 64 — goes to the larger bucket). With one
 * head per operator K can only shift the energies additively through the log2_k input;
 * which SpMM template wins depends on K jointly with the row lengths. The h_j layer stays
 * shared and the energy stays additive per feature (the contributions of the chosen head
 * still sum to E − β); only the head is chosen by (operator, K bucket). SpMV and SpGEMM
 * are unchanged. The parameters are laid out by "rows", one per (head, template):
 * row0[o][b] + s is the row of template s of op o in K bucket b (all b equal when the
 * op has one head); without K heads row0[o][b] = toff[o], so rows = global templates. */
#ifndef SDI_ENERGY_H
#define SDI_ENERGY_H

#include "../core/core.h"
#include "../core/json_parse.h"
#include "model_files.h"
#include "rank.h"

#define SDI_EM_NFEAT SD_NUM_FEATURES
#define SDI_EM_NSHAPE 5
#define SDI_EM_NOP 3
#define SDI_EM_NIN (SDI_EM_NFEAT + SDI_EM_NSHAPE + SDI_EM_NOP + 1)
#define SDI_EM_HIDDEN 16
#define SDI_EM_FORMAT_VERSION 3 /* 2: "members"; 3: "spmm_k_heads" (written only by models
                                   with K heads: others are still written as version 2);
                                   versions 1 and 2 still load */
#define SDI_EM_MAX_MEMBERS 16
#define SDI_EM_NKB 4 /* SpMM K buckets of the K heads: K = 8, 32, 128, 256 */

typedef struct {
    int hidden;             /* H */
    int ntemp[SDI_EM_NOP];  /* |V_o| */
    int toff[SDI_EM_NOP];   /* first global template index of op o */
    int ntotal;             /* Σ |V_o| */
    /* Standardisation (of log1p-ed sizes; std 1 where the corpus had no spread). */
    double mean[SDI_EM_NFEAT], std[SDI_EM_NFEAT];
    double log2k_mean, log2k_std;
    /* Head layout: k_heads 1 = SpMM has one head per K bucket; nrows (head, template)
     * rows (ntotal without K heads, ntotal + (NKB − 1)·|V_spmm| with them); row0 above. */
    int k_heads;
    int nrows;
    int row0[SDI_EM_NOP][SDI_EM_NKB];
    /* Parameters of one member, one block: w1[j*H+h], b1[j*H+h], w2[((r*NIN)+j)*H+h],
     * beta[r] (r a row); nparams per member. theta holds the members one after the other
     * (members · nparams values); w1, b1, w2, beta view member 0. */
    int members;
    long nparams;
    double *theta;
    double *w1, *b1, *w2, *beta; /* views into theta (member 0) */
    /* How it was trained (informational, saved with the weights). */
    unsigned long long seed;
    int epochs, batch, cosine;
    double lambda[SDI_EM_NOP], temperature, lr, weight_decay;
    /* Operators with at least one measured task in the training corpus (bit o); the
     * library ranks only those with the model (others fall back to rules-v1). Weights
     * files without "trained_ops" count as trained on every operator. */
    unsigned trained_ops;
} sdi_energy_model;

/* Sizes and template offsets for hidden width H; parameters allocated, zeroed; one
 * member (sdi_energy_model_alloc_members: M members, 1..SDI_EM_MAX_MEMBERS;
 * sdi_energy_model_alloc_layout: and K heads 0/1); one head per operator unless said. */
SDI_HIDDEN sd_status sdi_energy_model_alloc(sdi_energy_model *m, int hidden);
SDI_HIDDEN sd_status sdi_energy_model_alloc_members(sdi_energy_model *m, int hidden, int members);
SDI_HIDDEN sd_status sdi_energy_model_alloc_layout(sdi_energy_model *m, int hidden, int members,
                                                   int k_heads);
SDI_HIDDEN void sdi_energy_model_free(sdi_energy_model *m);
/* The K bucket (0..SDI_EM_NKB−1: K = 8, 32, 128, 256) of K ≥ 1: nearest in log2 K, ties
 * to the larger bucket. sdi_energy_k_bucket_value(b) is the bucket's K. */
SDI_HIDDEN int sdi_energy_k_bucket(int k);
SDI_HIDDEN int sdi_energy_k_bucket_value(int b);
/* The first row of op's templates for inputs x (the head: the K bucket comes from x's
 * log2_k input, so that the energy is a function of x alone). */
SDI_HIDDEN int sdi_energy_row0(const sdi_energy_model *m, sd_op op, const double *x);
/* β of row r (mean over the members); without K heads r is the global template. */
SDI_HIDDEN double sdi_energy_prior(const sdi_energy_model *m, int r);
/* Input names: the 36 feature names, "shape_uniform"…, "op_spmv"…, "log2_k". */
SDI_HIDDEN const char *sdi_energy_input_name(int j);
/* 1 when feature i (< 36) is log1p-ed before standardisation. */
SDI_HIDDEN int sdi_energy_is_size_feature(int i);
/* The input vector x (SDI_EM_NIN) of features f (f->op is ignored: op is given). */
SDI_HIDDEN void sdi_energy_inputs(const sdi_energy_model *m, const double *features,
                                  sd_shape_class shape, sd_op op, int k, double *x);
/* One member's parameter blocks, its hidden layer h (NIN·H values) for inputs x, and
 * the energy of row t from h (β included; contrib (NIN) may be NULL, else incremented
 * by scale × the per-input contributions): the pieces the training gradient reuses. */
typedef struct {
    const double *w1, *b1, *w2, *beta;
} sdi_energy_member_view;
SDI_HIDDEN sdi_energy_member_view sdi_energy_member_of(const sdi_energy_model *m, int i);
SDI_HIDDEN void sdi_energy_hidden(const sdi_energy_model *m, sdi_energy_member_view v,
                                  const double *x, double *h);
SDI_HIDDEN double sdi_energy_row_energy(const sdi_energy_model *m, sdi_energy_member_view v,
                                        const double *h, int t, double *contrib, double scale);
/* Energies of every template of op (out[s], s < ntemp[op]); contrib may be NULL or
 * receive ntemp[op]*SDI_EM_NIN per-input contributions h_j(x_j)ᵀ w2_{o,j,s} (β excluded).
 * Ensembles: the mean energy and the mean contributions over the members, so that
 * out[s] = sdi_energy_prior(sdi_energy_row0(m, op, x) + s) + Σ_j contrib[s·NIN + j]. */
SDI_HIDDEN void sdi_energy_eval(const sdi_energy_model *m, const double *x, sd_op op,
                                double *out, double *contrib);
/* Ranks V_o with the model: model name "energy-v1"; reasons = the largest per-input
 * contributions by magnitude (shape one-hots reported as "shape_class", operator
 * one-hots folded into "prior" with β). k is K for spmm (ignored otherwise). */
SDI_HIDDEN sd_status sdi_rank_energy(const sdi_energy_model *m, const sd_features *f, sd_op op,
                                     int k, sdi_ranking *out);

/* ---- energy_io.c: weights as JSON (format documented there). */
SDI_HIDDEN sd_status sdi_energy_to_json(const sdi_energy_model *m, sdi_json *j);
SDI_HIDDEN sd_status sdi_energy_from_json(const sdi_jvalue *v, sdi_energy_model *m);
/* SD_ERR_IO when unreadable, SD_ERR_PARSE naming what is wrong; *m zeroed on failure. */
SDI_HIDDEN sd_status sdi_energy_load(const char *path, sdi_energy_model *m);

/* ---- rank.c: The shipped energy model: the first of
 *   1. $SPARSEDITTO_MODELS/energy.json when SPARSEDITTO_MODELS is set (an empty value
 *      means "no model": rules-v1 everywhere);
 *   2. <directory of the library or program>/models/energy.json (the Python wheel);
 *   3. <directory of the library or program>/../share/sparseditto/models/energy.json
 *      (`cmake --install`);
 *   4. SD_MODELS_DIR/energy.json, compiled in: the checkout's models/ (build trees);
 * that exists, loaded once per process. A file that exists but does not load (corrupt,
 * another feature table or vocabulary) gives one warning on stderr and rules-v1 — never
 * an error. Returns the model (NULL when none is usable); path (may be NULL, cap bytes)
 * receives the file used or "", note (may be NULL) a one-line explanation. The model
 * stays valid until sdi_rank_model_reload. */
SDI_HIDDEN const sdi_energy_model *sdi_rank_model(char *path, size_t path_cap, char *note, size_t note_cap);
/* Forgets the loaded model so that the next call searches again (tests; not thread-safe
 * against concurrent rankings). */
SDI_HIDDEN void sdi_rank_model_reload(void);

#endif /* SDI_ENERGY_H */
