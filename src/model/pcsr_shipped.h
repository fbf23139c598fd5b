/* src/model/pcsr_shipped.h: ParamSpMM's decider as the search consults it: the shipped
 * decider file and the PCSR configuration the search starts from. */
#ifndef SDI_PCSR_SHIPPED_H
#define SDI_PCSR_SHIPPED_H

#include "../plan/family.h"
#include "../plan/spmm.h"
#include "forest.h"

/* The decider the search consults: paramspmm.json on the models' search path
 * (model_files.h: $SPARSEDITTO_MODELS, the library's models/, the install's share/, the
 * checkout's models/), loaded once per process. NULL when there is none, or when the file
 * does not load (one warning on stderr, never an error: the search keeps the PCSR
 * default). note (may be NULL) receives the file used or why none. The decider stays
 * valid until sdi_paramspmm_shipped_reload. Thread-safe. */
SDI_HIDDEN const sdi_paramspmm_deciders *sdi_paramspmm_shipped(char *note, size_t note_cap);
/* Forgets the loaded decider so that the next call searches again (tests; not thread-safe
 * against concurrent searches). */
SDI_HIDDEN void sdi_paramspmm_shipped_reload(void);

/* The PCSR configuration the search measures first for A and dense width k: the
 * decider's ⟨W, F, V, S⟩ (d, or the shipped one when d is NULL) as the PCSR sweep's
 * configuration with those parameters and 32 threads per row (ParamSpMM's kernel), when
 * there is a decider and the sweep for k holds that configuration; otherwise the PCSR
 * default (sdi_spmm_config_default). *decided is 1 when the decider chose, else 0; why
 * (may be NULL) says which and why. */
SDI_HIDDEN sd_status sdi_paramspmm_preset(const sd_csr *a, int k, const sdi_spmm_stats *st,
                                          const sdi_paramspmm_deciders *d,
                                          sdi_spmm_config *out, int *decided, char *why,
                                          size_t why_cap);

/* The search's sdi_task.preset: the pcsr family's defaults hook passes its rule's plan,
 * which becomes sdi_paramspmm_preset's configuration with the shipped decider (logged as
 * "pcsr preset: …"). A preset that fails leaves the family without a default
 * (SD_ERR_UNSUPPORTED, naming why), as the search did. */
SDI_HIDDEN sd_status sdi_paramspmm_task_preset(const sdi_task *t, sdi_plan *p);

#endif /* SDI_PCSR_SHIPPED_H */
