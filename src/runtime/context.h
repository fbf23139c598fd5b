/* src/runtime/context.h: the device context (struct sd_context), opening and closing a
 * device, the entry checks of runtime calls, and the mapping of CUDA errors to statuses
 * (sticky errors break the context). */
#ifndef SDI_CONTEXT_H
#define SDI_CONTEXT_H

#include <pthread.h>
#include <stdbool.h>

#include <cuda_runtime_api.h>

#include "../analysis/gpu.h"
#include "../core/sdi.h"

#define SDI_CONTEXT_MAGIC 0x5344435458u /* "SDCTX" */

typedef struct sdi_memo_entry sdi_memo_entry;

struct sd_context {
    uint64_t magic;
    int device;
    int verbose;
    char *cache_dir; /* resolved cache root (owned); "" when none could be resolved */
    cudaStream_t stream;
    sdi_gpu_props props;
    char arch[SDI_GPU_ARCH_TEXT]; /* "sm_90" (sdi_gpu_arch) */
    int driver_version, runtime_version;
    /* A sticky CUDA error (illegal address, ...) poisons the CUDA context for the
     * process: every later call on this sd_context fails with this reason. */
    _Atomic int broken;
    char broken_reason[512];
    /* Measured once per context, lazily (sdi_device_calibrate). */
    pthread_mutex_t calib_lock;
    int calibrated;
    double copy_bw;        /* bytes/s, device-to-device copy, read + written */
    double launch_us_mean; /* event-timed empty launch */
    double launch_us_min;
    /* In-process memo of compiled cubins by request hash. */
    pthread_mutex_t memo_lock;
    sdi_memo_entry *memo;
    /* cuSPARSE handle, created on first use (cusparseHandle_t). */
    pthread_mutex_t cusparse_lock;
    void *cusparse;
};

/* Opens device `device` into ctx (fields zeroed by the caller, cache_dir set):
 * SD_ERR_NO_DEVICE (no driver, no device, ordinal out of range) with the CUDA cause. */
SDI_HIDDEN sd_status sdi_device_open(sd_context *ctx, int device);
/* Releases everything the runtime holds in ctx (memo, stream, cuSPARSE handle). */
SDI_HIDDEN void sdi_device_close(sd_context *ctx);
/* Entry check of every runtime function: magic, not broken, device current. */
SDI_HIDDEN sd_status sdi_ctx_enter(sd_context *ctx);
/* The same check for execution calls: cudaSetDevice only when another device is current,
 * so that it stays legal during graph capture and costs a query on the common path. */
SDI_HIDDEN sd_status sdi_ctx_enter_run(sd_context *ctx);

/* The cause of a CUDA error that leaves no usable device, in words, into buf:
 * cudaErrorInsufficientDriver or cudaErrorNoDevice with dl_error set (libcuda.so.1 did
 * not load; dl_error is dlerror's text) is "no NVIDIA driver found"; without it, a driver
 * older than the runtime names both versions (1000 × major + 10 × minor), and no device
 * names the driver's; any other error gives CUDA's own text and name. */
SDI_HIDDEN void sdi_no_device_cause(cudaError_t e, const char *dl_error, int driver_version,
                                    int runtime_version, char *buf, size_t cap);

/* GPU properties of device `device` read from the device (from_device = 1); the
 * bandwidth is the theoretical one (2 × memory clock × bus width) until measured. */
SDI_HIDDEN sd_status sdi_runtime_gpu_props(int device, sdi_gpu_props *out);

/* Maps a CUDA error to a status and records a message "<what>[ (kernel 'k')]: <cause>
 * (<name>)". cudaSuccess → SD_OK. Allocation failure → SD_ERR_OUT_OF_MEMORY; no
 * driver/device → SD_ERR_NO_DEVICE; everything else SD_ERR_CUDA. Sticky errors
 * (illegal address, launch failure, ...) mark ctx broken (ctx may be NULL). The error
 * is consumed from the runtime's last-error slot. */
SDI_HIDDEN sd_status sdi_cuda_status(sd_context *ctx, cudaError_t e, const char *what,
                                     const char *kernel);
/* True for the errors after which the CUDA context cannot be used any more. */
SDI_HIDDEN bool sdi_cuda_error_is_sticky(cudaError_t e);

#endif /* SDI_CONTEXT_H */
