/* src/runtime/harness.c: the loader of an agent-written kernel: a shared object with the
 * harness ABI (dlopen, sd_agent_preprocess / compute / cleanup). */
#include <dlfcn.h>
#include <string.h>

#include "harness.h"

/* Mirrors sd_agent_problem of SDI_HARNESS_ABI (the candidate's view of the task). */
typedef struct {
    int op;
    int k;
    int32_t rows, cols;
    int64_t nnz;
    const int64_t *rowptr;
    const int32_t *colind;
    const float *vals;
} harness_problem;

sd_status sdi_harness_load(const char *so_path, sdi_harness *h)
{
    memset(h, 0, sizeof *h);
    dlerror();
    /* RTLD_LOCAL: the candidate's symbols (and its own static CUDA runtime) stay apart. */
    h->dl = dlopen(so_path, RTLD_NOW | RTLD_LOCAL);
    if (h->dl == NULL)
        return SDI_ERR(SD_ERR_COMPILE, "cannot load '%s': %s", so_path, dlerror());
    static const char *const names[3] = {"sd_agent_preprocess", "sd_agent_compute", "sd_agent_cleanup"};
    void *sym[3];
    for (int i = 0; i < 3; i++) {
        sym[i] = dlsym(h->dl, names[i]);
        if (sym[i] == NULL) {
            dlclose(h->dl);
            memset(h, 0, sizeof *h);
            return SDI_ERR(SD_ERR_COMPILE, "the candidate does not export extern \"C\" %s", names[i]);
        }
    }
    /* POSIX guarantees object ↔ function pointer conversion for dlsym results. */
    memcpy(&h->preprocess, &sym[0], sizeof sym[0]);
    memcpy(&h->compute, &sym[1], sizeof sym[1]);
    memcpy(&h->cleanup, &sym[2], sizeof sym[2]);
    return SD_OK;
}

sd_status sdi_harness_prepare(sdi_harness *h, const sd_csr *a, sd_op op, int k)
{
    harness_problem p = {(int)op, op == SD_OP_SPMM ? k : 1, a->rows, a->cols, a->nnz,
                         a->rowptr, a->colind, a->vals};
    h->state = NULL;
    int rc = h->preprocess(&p, &h->state);
    if (rc != 0)
        return SDI_ERR(SD_ERR_CUDA, "sd_agent_preprocess returned %d (%s)", rc,
                       cudaGetErrorString((cudaError_t)rc));
    h->prepared = true;
    return SD_OK;
}

void sdi_harness_unload(sdi_harness *h)
{
    if (h == NULL)
        return;
    if (h->prepared && h->cleanup != NULL)
        h->cleanup(h->state);
    if (h->dl != NULL)
        dlclose(h->dl);
    memset(h, 0, sizeof *h);
}
