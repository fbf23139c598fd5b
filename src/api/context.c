/* src/api/context.c: sd_context_create / destroy. A context binds a CUDA device (its
 * ordinal, a stream, the measured copy bandwidth and launch latency, the in-process
 * cubin memo, a cuSPARSE handle; src/runtime provides that part) and the resolved
 * kernel-cache directory. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache.h"
#include "runtime/runtime.h"

static void context_free(sd_context *ctx)
{
    sdi_device_close(ctx);
    pthread_mutex_destroy(&ctx->memo_lock);
    pthread_mutex_destroy(&ctx->calib_lock);
    pthread_mutex_destroy(&ctx->cusparse_lock);
    sdi_free(ctx->cache_dir);
    ctx->magic = 0;
    sdi_free(ctx);
}

sd_status sd_context_create(const sd_context_options *opts, sd_context **out)
{
    if (out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sd_context_create: out is NULL");
    *out = NULL;
    /* a bad SPARSEDITTO_* value is reported at the first call, before any device work */
    sd_status cs = sdi_config_status();
    if (cs != SD_OK) {
        sdi_error_prefix("sd_context_create");
        return cs;
    }
    if (opts != NULL && opts->device < 0)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sd_context_create: device %d is negative",
                       opts->device);
    sd_context *ctx = sdi_calloc(1, sizeof *ctx);
    if (ctx == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "sd_context_create: out of host memory");
    pthread_mutex_init(&ctx->memo_lock, NULL);
    pthread_mutex_init(&ctx->calib_lock, NULL);
    pthread_mutex_init(&ctx->cusparse_lock, NULL);
    ctx->verbose = opts != NULL ? opts->verbose : 0;
    ctx->cache_dir = sdi_cache_base_dir(opts != NULL ? opts->cache_dir : NULL);
    if (ctx->cache_dir == NULL) {
        context_free(ctx);
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "sd_context_create: out of host memory");
    }
    sd_status s = sdi_device_open(ctx, opts != NULL ? opts->device : 0);
    if (s != SD_OK) {
        context_free(ctx);
        sdi_error_prefix("sd_context_create");
        return s;
    }
    ctx->magic = SDI_CONTEXT_MAGIC;
    sdi_log(1, "context on device %d: %s (%s, %d SMs), cache %s", ctx->device, ctx->props.name,
            ctx->arch, ctx->props.sm_count, ctx->cache_dir[0] ? ctx->cache_dir : "(none)");
    *out = ctx;
    return SD_OK;
}

void sd_context_destroy(sd_context *ctx)
{
    if (ctx == NULL || ctx->magic != SDI_CONTEXT_MAGIC)
        return;
    context_free(ctx);
}
