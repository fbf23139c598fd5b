/* src/runtime/device_csr.c: sd_device_csr_free (device arrays returned by sd_spgemm). */
#include <string.h>

#include <cuda_runtime_api.h>

#include "core/sdi.h"

void sd_device_csr_free(sd_device_csr *c)
{
    if (c == NULL)
        return;
    /* cudaFree(NULL) is a no-op; errors here cannot be reported (void) and would only
     * come from a context already torn down. */
    if (c->rowptr)
        cudaFree(c->rowptr);
    if (c->colind)
        cudaFree(c->colind);
    if (c->vals)
        cudaFree(c->vals);
    memset(c, 0, sizeof *c);
}
