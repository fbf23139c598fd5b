/* tools/train/energy_loss.h: the training side of the energy model (src/model/energy.h):
 * random initial weights, the ranking loss with its analytic gradient, and saving the
 * weights (format in src/model/energy_io.c). */
#ifndef SDI_ENERGY_LOSS_H
#define SDI_ENERGY_LOSS_H

#include "model/energy.h"

/* Random initial parameters (deterministic in seed; member i from the stream of index i);
 * standardisation left as is. */
SDI_HIDDEN void sdi_energy_model_init(sdi_energy_model *m, unsigned long long seed);
/* Loss of one task (inputs x, op, times us[s] per template, us ≤ 0 / non-finite = not
 * measured, baseline > 0) with λ_o and T, on the (ensemble's mean) energies; grad
 * (nparams, may be NULL) is incremented by scale × ∂loss/∂θ — single-member models
 * only (members are trained alone): with members > 1 and grad != NULL it returns NaN
 * and leaves grad alone. */
SDI_HIDDEN double sdi_energy_task_loss(const sdi_energy_model *m, const double *x, sd_op op,
                                       const double *us, double baseline_us, double lambda,
                                       double temperature, double scale, double *grad);
/* The ranking loss (docs/ARCHITECTURE.md "Energy model") on energies E[0..n) of one task
 * (any ranker: energy
 * model, MLP): −Σ q_s log p_s + λ Σ_{t_s > t_s'} (t_s − t_s')·softplus(E_s − E_s') over
 * the measured templates (us > 0, finite). gE (may be NULL) receives ∂loss/∂E_s (0 for
 * unmeasured s). 0 when nothing is measured. */
SDI_HIDDEN double sdi_rank_loss(const double *E, const double *us, int n, double baseline_us,
                                double lambda, double temperature, double *gE);
/* Atomic write (temporary + rename). */
SDI_HIDDEN sd_status sdi_energy_save(const sdi_energy_model *m, const char *path);

#endif /* SDI_ENERGY_LOSS_H */
