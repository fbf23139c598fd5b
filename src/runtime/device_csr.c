/* src/runtime/device_csr.c: sd_device_csr_free (device arrays returned by sd_spgemm,
 * allocated through the device hooks). */
#include <string.h>

#include "runtime.h"

void sd_device_csr_free(sd_device_csr *c)
{
    if (c == NULL)
        return;
    /* Errors cannot be reported (void); they only come from a context already torn
     * down or broken, whose memory is gone with it. */
    sdi_device_free(c->rowptr);
    sdi_device_free(c->colind);
    sdi_device_free(c->vals);
    memset(c, 0, sizeof *c);
}
