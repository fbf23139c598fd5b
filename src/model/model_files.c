/* src/model/model_files.c: the model files' search path (model_files.h). */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model_files.h"

#ifndef SD_MODELS_DIR
#define SD_MODELS_DIR "" /* set by CMake: the checkout's models/ */
#endif

static int file_exists(const char *path)
{
    return path[0] != '\0' && access(path, R_OK) == 0;
}

/* Directory of the binary this code lives in (the shared library, or the program for
 * static links); "" when unknown. */
static void self_dir(char *buf, size_t cap)
{
    buf[0] = '\0';
    Dl_info info;
    if (dladdr((void *)&sdi_model_find, &info) == 0 || info.dli_fname == NULL)
        return;
    char *real = realpath(info.dli_fname, NULL);
    const char *p = real != NULL ? real : info.dli_fname;
    const char *slash = strrchr(p, '/');
    if (slash != NULL)
        snprintf(buf, cap, "%.*s", (int)(slash - p), p);
    free(real); /* realpath allocates with malloc, outside our hooks */
}

int sdi_model_find(const char *file, char *path, size_t path_cap, char *why, size_t why_cap)
{
    char cand[3][512];
    int n = 0;
    if (path != NULL && path_cap > 0)
        path[0] = '\0';
    if (why != NULL && why_cap > 0)
        why[0] = '\0';
    const char *env = sdi_config_is_set("SPARSEDITTO_MODELS") ? sdi_config_get()->models : NULL;
    if (env != NULL) {
        if (env[0] == '\0') {
            if (why != NULL && why_cap > 0)
                snprintf(why, why_cap, "SPARSEDITTO_MODELS is empty: no model");
            return 0;
        }
        snprintf(cand[n++], sizeof cand[0], "%.400s/%.100s", env, file);
    } else {
        char dir[380];
        self_dir(dir, sizeof dir);
        if (dir[0] != '\0') {
            snprintf(cand[n++], sizeof cand[0], "%s/models/%.100s", dir, file);
            snprintf(cand[n++], sizeof cand[0], "%s/../share/sparseditto/models/%.100s", dir, file);
        }
        if (SD_MODELS_DIR[0] != '\0')
            snprintf(cand[n++], sizeof cand[0], "%.400s/%.100s", SD_MODELS_DIR, file);
    }
    for (int i = 0; i < n; i++)
        if (file_exists(cand[i])) {
            if (path != NULL && path_cap > 0)
                snprintf(path, path_cap, "%s", cand[i]);
            return 1;
        }
    if (why != NULL && why_cap > 0)
        snprintf(why, why_cap, "no %.100s found%s%.180s", file,
                 env != NULL ? " in SPARSEDITTO_MODELS=" : "", env != NULL ? env : "");
    return 0;
}
