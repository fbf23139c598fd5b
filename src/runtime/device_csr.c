/* src/runtime/device_csr.c: sd_device_csr_free (device arrays returned by sd_spgemm,
 * allocated stream-ordered through the device hooks). */
#include <string.h>

#include "device_memory.h"

void sd_device_csr_free(sd_device_csr *c)
{
    if (c == NULL)
        return;
    /* sd_spgemm allocates C stream-ordered and its last kernels and copies may still run
     * on the caller's stream; cudaFree of such memory does not wait for them (the H200
     * faults on delaunay_n24's 4.6 GB C freed straight after the call), so
     * the device is drained first. Errors cannot be reported (void); they only come from
     * a context already torn down or broken, whose memory is gone with it. */
    if (c->rowptr != NULL || c->colind != NULL || c->vals != NULL) {
        if (cudaDeviceSynchronize() != cudaSuccess)
            (void)cudaGetLastError();
    }
    sdi_device_free(c->rowptr);
    sdi_device_free(c->colind);
    sdi_device_free(c->vals);
    memset(c, 0, sizeof *c);
}
