/* src/model/model_files.c: the model files' search path, reading and writing them, and
 * the operator names they use (model_files.h). */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/io.h"
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

int sdi_op_from_name(const char *name)
{
    if (name == NULL)
        return -1;
    if (strcmp(name, "spmv") == 0)
        return SD_OP_SPMV;
    if (strcmp(name, "spmm") == 0)
        return SD_OP_SPMM;
    if (strcmp(name, "spgemm") == 0)
        return SD_OP_SPGEMM;
    return -1;
}

const char *sdi_op_name(sd_op op)
{
    return op == SD_OP_SPGEMM ? "spgemm" : op == SD_OP_SPMM ? "spmm" : "spmv";
}

sd_status sdi_model_read_file(const char *path, char **buf, size_t *len)
{
    *buf = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return SDI_ERR(SD_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    size_t cap = 1 << 16, n = 0;
    char *b = sdi_malloc(cap + 1);
    if (b == NULL) {
        fclose(f);
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory reading %s", path);
    }
    for (;;) {
        size_t got = fread(b + n, 1, cap - n, f);
        n += got;
        if (n < cap)
            break;
        char *nb = sdi_realloc_array(b, cap * 2 + 1, 1);
        if (nb == NULL) {
            sdi_free(b);
            fclose(f);
            return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory reading %s", path);
        }
        b = nb;
        cap *= 2;
    }
    int err = ferror(f);
    fclose(f);
    if (err) {
        sdi_free(b);
        return SDI_ERR(SD_ERR_IO, "%s: read error", path);
    }
    b[n] = '\0';
    *buf = b;
    *len = n;
    return SD_OK;
}

sd_status sdi_model_write_file(const char *path, const char *text, size_t len)
{
    return sdi_write_file(path, text, len);
}
