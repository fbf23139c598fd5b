/* src/model/model_files.h: where the search finds the model files it may use (the energy
 * model's energy.json, ParamSpMM's decider paramspmm.json): one search path for all. */
#ifndef SDI_MODEL_FILES_H
#define SDI_MODEL_FILES_H

#include <stddef.h>

#include "../core/core.h"

/* The first of
 *   1. $SPARSEDITTO_MODELS/FILE when SPARSEDITTO_MODELS is set (an empty value means "no
 *      model": nothing is searched);
 *   2. <directory of the library or program>/models/FILE (the Python wheel);
 *   3. <directory of the library or program>/../share/sparseditto/models/FILE
 *      (`cmake --install`);
 *   4. SD_MODELS_DIR/FILE, compiled in: the checkout's models/ (build trees);
 * that exists and is readable. Returns 1 with path[0..path_cap) set; otherwise 0 with
 * path "" and why[0..why_cap) saying what was searched (either may be NULL). */
SDI_HIDDEN int sdi_model_find(const char *file, char *path, size_t path_cap, char *why,
                              size_t why_cap);

#endif /* SDI_MODEL_FILES_H */
