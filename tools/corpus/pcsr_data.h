/* tools/corpus/pcsr_data.h: ParamSpMM decider data from a measured corpus (pcsr_data.c):
 * the training examples of `sparseditto train --pcsr` and the tasks of `evalmodel --pcsr`. */
#ifndef SDI_PCSR_DATA_H
#define SDI_PCSR_DATA_H

#include "model/forest.h"

/* Training examples from a corpus file (tools/corpus/corpus_build.h): for each spmm line
 * (of K = k_filter, or every K when 0) with a "pcsr" member, ParamSpMM's 18 features and
 * the fastest measured configuration of ParamSpMM's space (32 threads per PCSR row, W,
 * F, V, S in the value sets); *k (when k is not NULL) each example's K. *X (n ×
 * SDI_PSPMM_NFEAT), *y and *k are sdi_free'd by the caller. Lines without such data are
 * skipped; a line that is not JSON is SD_ERR_PARSE. */
SDI_HIDDEN sd_status sdi_paramspmm_examples_read(const char *path, int k_filter, double **X,
                                                 sdi_paramspmm_params **y, int **k, int *n);

/* ParamSpMM's space (the value sets above) as 48 configurations, index
 * ((w_i·3 + f_i)·2 + v_i)·2 + s_i over the value-set positions. */
#define SDI_PSPMM_NCONF 48
/* Index of p; -1 when a parameter lies outside its value set. */
SDI_HIDDEN int sdi_paramspmm_config_index(const sdi_paramspmm_params *p);
SDI_HIDDEN void sdi_paramspmm_config_of(int index, sdi_paramspmm_params *out);

/* One spmm task of a corpus with PCSR measurements (pcsr_data.c). */
typedef struct {
    char matrix[96];             /* the line's "matrix" */
    int k;
    double x[SDI_PSPMM_NFEAT];   /* ParamSpMM's features */
    double us[SDI_PSPMM_NCONF];  /* by sdi_paramspmm_config_index; 0 = not measured */
    int best;                    /* index of the fastest measured configuration */
} sdi_pcsr_task;

/* The tasks of corpus text[0..len) that have measured configurations of ParamSpMM's
 * space (the lines sdi_paramspmm_examples_read reads), every K when k_filter is 0. A
 * configuration measured twice keeps its faster time. *out (sdi_free) may be NULL when
 * *n is 0; a line that is not JSON is SD_ERR_PARSE naming the 1-based line. */
SDI_HIDDEN sd_status sdi_pcsr_tasks_parse(const char *text, size_t len, int k_filter,
                                          sdi_pcsr_task **out, int *n);

#endif /* SDI_PCSR_DATA_H */
