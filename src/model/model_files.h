/* src/model/model_files.h: where the search finds the model files it may use (the energy
 * model's energy.json, ParamSpMM's decider paramspmm.json): one search path for all; the
 * files' reading and writing and the operator names they use. */
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

/* Op from "spmv"/"spmm"/"spgemm"; -1 when unknown. */
SDI_HIDDEN int sdi_op_from_name(const char *name);
SDI_HIDDEN const char *sdi_op_name(sd_op op);
/* Whole file into a NUL-terminated buffer (sdi_free it); SD_ERR_IO names the path. */
SDI_HIDDEN sd_status sdi_model_read_file(const char *path, char **buf, size_t *len);
/* Writes text to path through the shared output-file routine (sdi_write_file, core/io.h). */
SDI_HIDDEN sd_status sdi_model_write_file(const char *path, const char *text, size_t len);

#endif /* SDI_MODEL_FILES_H */
