/* src/runtime/device_memory.h: one pair of hooks for every device allocation of the
 * library (fault injection like the host hooks; bytes = 0 allocates nothing and sets
 * *p = NULL), the copies and the stream wait. */
#ifndef SDI_DEVICE_MEMORY_H
#define SDI_DEVICE_MEMORY_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#include "../core/sdi.h"

SDI_HIDDEN sd_status sdi_device_malloc(sd_context *ctx, void **p, size_t bytes,
                                       const char *what);
SDI_HIDDEN void sdi_device_free(void *p);
/* Stream-ordered hooks (cudaMallocAsync / cudaFreeAsync on the default pool), counted
 * and fault-injected like the others; sdi_device_free also releases such memory. */
SDI_HIDDEN sd_status sdi_device_malloc_async(sd_context *ctx, void **p, size_t bytes,
                                             cudaStream_t stream, const char *what);
SDI_HIDDEN void sdi_device_free_async(void *p, cudaStream_t stream);
/* Fault injection: the n-th device allocation from now (0 = the next) and every later
 * one fails with SD_ERR_OUT_OF_MEMORY; n < 0 turns it off. Returns the number of device
 * allocations made since the last call. Process-wide; tests only. */
SD_API long sdi_device_alloc_fail_after(long n);
/* Fault injection by size: every device allocation of more than `bytes` fails with
 * SD_ERR_OUT_OF_MEMORY (a device whose free memory holds the exact output but not an
 * upper bound of it); 0 turns it off. Process-wide; tests only. */
SD_API void sdi_device_alloc_fail_above(size_t bytes);
/* Device allocations made through the hooks and not yet freed (leak checks). */
SD_API long sdi_device_alloc_live(void);
/* Free bytes on the current device now (cudaMemGetInfo; 0 when unknown, which makes the
 * callers' size limits refuse rather than try). */
SDI_HIDDEN size_t sdi_device_free_bytes(void);

/* Copies on ctx->stream, then waits for the stream (errors name `what`). */
SDI_HIDDEN sd_status sdi_copy_to_device(sd_context *ctx, void *dst, const void *src,
                                        size_t bytes, const char *what);
SDI_HIDDEN sd_status sdi_copy_to_host(sd_context *ctx, void *dst, const void *src,
                                      size_t bytes, const char *what);
/* Allocates and uploads: *dst = device copy of bytes from src. */
SDI_HIDDEN sd_status sdi_device_upload(sd_context *ctx, void **dst, const void *src,
                                       size_t bytes, const char *what);
/* Waits for ctx->stream; a kernel fault is reported against `what`/`kernel`. */
SDI_HIDDEN sd_status sdi_stream_sync(sd_context *ctx, const char *what, const char *kernel);

#endif /* SDI_DEVICE_MEMORY_H */
