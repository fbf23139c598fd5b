/* tools/evalmodel/importance.h: permutation importance of the energy model's 36 feature inputs
 * per operator (importance.c). */
#ifndef SDI_IMPORTANCE_H
#define SDI_IMPORTANCE_H

#include "train/energy_train.h"

typedef struct {
    int repeats;
    int ntasks[SDI_EM_NOP];     /* tasks with a measured template, per operator */
    double base_regret[SDI_EM_NOP], base_top1[SDI_EM_NOP];
    /* with feature j shuffled: geomean regret over the shuffles, mean top-1 */
    double regret[SDI_EM_NOP][SDI_EM_NFEAT], top1[SDI_EM_NOP][SDI_EM_NFEAT];
} sdi_energy_importance;

/* Ranks c's tasks with m, then again with each feature's column shuffled `repeats` times
 * per operator (deterministic in seed). */
SDI_HIDDEN sd_status sdi_energy_importance_compute(const sdi_energy_model *m, const sdi_corpus *c,
                                                   int repeats, unsigned long long seed,
                                                   sdi_energy_importance *out);
/* {"repeats", "operators": {"spmv": {"tasks", "regret", "top1", "features": [{"name",
 * "regret_permuted", "regret_increase_pct", "top1_permuted"}, ...]}, ...}} */
SDI_HIDDEN void sdi_energy_importance_json(const sdi_energy_importance *imp, sdi_json *j);
/* A markdown paragraph + table (feature × operator, regret increase in %); *md owned by
 * the caller (sdi_free). */
SDI_HIDDEN sd_status sdi_energy_importance_markdown(const sdi_energy_importance *imp,
                                                    const char *title, char **md);

#endif /* SDI_IMPORTANCE_H */
