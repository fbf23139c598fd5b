/* src/api/context.c: sd_context_create / destroy. A context binds a CUDA device and a
 * cache directory; the GPU runtime stage provides the device part. */
#include <string.h>

#include "core/sdi.h"

sd_status sd_context_create(const sd_context_options *opts, sd_context **out)
{
    if (out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sd_context_create: out is NULL");
    *out = NULL;
    if (opts != NULL && opts->device < 0)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sd_context_create: device %d is negative",
                       opts->device);
    return SDI_ERR(SD_ERR_UNSUPPORTED,
                   "sd_context_create: the GPU runtime stage (device context) is not built yet");
}

void sd_context_destroy(sd_context *ctx) { (void)ctx; }
