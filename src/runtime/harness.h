/* src/runtime/harness.h: an agent-written SpMV / SpMM kernel loaded into this process: one
 * CUDA file compiled to a shared object exporting the extern "C" entry points of
 * SDI_AGENT_ABI (src/lower/agent/agent.h: the text the model is given and the header its
 * file is compiled with). The worker validates such a kernel first; the executable
 * (runtime/executable.h) runs one that won. */
#ifndef SDI_RUNTIME_HARNESS_H
#define SDI_RUNTIME_HARNESS_H

#include <stdbool.h>

#include <cuda_runtime_api.h>

#include "../core/core.h"

/* A loaded candidate .so. */
typedef struct {
    void *dl;
    int (*preprocess)(const void *problem, void **state);
    int (*compute)(void *state, const float *x, float *y, cudaStream_t stream);
    void (*cleanup)(void *state);
    void *state;
    bool prepared;
} sdi_harness;

/* dlopen + the three entry points (SD_ERR_COMPILE names a missing one). */
SDI_HIDDEN sd_status sdi_harness_load(const char *so_path, sdi_harness *h);
/* Calls sd_agent_preprocess with a's host CSR; a non-zero return is SD_ERR_CUDA naming it. */
SDI_HIDDEN sd_status sdi_harness_prepare(sdi_harness *h, const sd_csr *a, sd_op op, int k);
/* cleanup (when prepared) and dlclose; accepts a zeroed harness. */
SDI_HIDDEN void sdi_harness_unload(sdi_harness *h);

#endif /* SDI_RUNTIME_HARNESS_H */
