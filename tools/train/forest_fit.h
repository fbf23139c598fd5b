/* tools/train/forest_fit.h: fitting random forests and ParamSpMM's deciders
 * (src/model/forest.h) and writing the deciders' files (formats in forest.h). */
#ifndef SDI_FOREST_FIT_H
#define SDI_FOREST_FIT_H

#include "model/forest.h"

/* Fits on X (n rows of p features, row-major) and targets y (class indices 0..nclass-1
 * when nclass ≥ 2). *out owned by the caller (sdi_forest_free) on success. */
SDI_HIDDEN sd_status sdi_forest_fit(const double *X, const double *y, int n, int p, int nclass,
                                    const sdi_forest_opts *opts, sdi_forest *out);
/* Fits the four forests on n examples (X: n × SDI_PSPMM_NFEAT; y: the best measured
 * parameters of each, which must lie in the value sets). */
SDI_HIDDEN sd_status sdi_paramspmm_decider_fit(const double *X, const sdi_paramspmm_params *y,
                                               int n, const sdi_forest_opts *opts,
                                               sdi_paramspmm_decider *out);
/* Fits one decider per distinct K of ks[0..n) (K ≥ 1, at most SDI_PSPMM_MAX_KS values).
 * *out owned by the caller (sdi_paramspmm_deciders_free) on success. */
SDI_HIDDEN sd_status sdi_paramspmm_deciders_fit(const double *X, const sdi_paramspmm_params *y,
                                                const int *ks, int n,
                                                const sdi_forest_opts *opts,
                                                sdi_paramspmm_deciders *out);
/* Writes a version-1 (one decider) or version-2 (one per K) file. */
SDI_HIDDEN sd_status sdi_paramspmm_decider_save(const sdi_paramspmm_decider *d, const char *path);
SDI_HIDDEN sd_status sdi_paramspmm_deciders_save(const sdi_paramspmm_deciders *d,
                                                 const char *path);

#endif /* SDI_FOREST_FIT_H */
