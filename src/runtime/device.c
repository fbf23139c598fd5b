/* src/runtime/device.c: the device side of a context (open, close, entry check), GPU
 * properties, CUDA error mapping with sticky-error detection, the device allocation
 * hooks with fault injection, and checked host <-> device copies. */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "cs_format.h"
#include "device_memory.h"
#include "memo.h"

/* ------------------------------------------------------------------ errors */

bool sdi_cuda_error_is_sticky(cudaError_t e)
{
    /* The CUDA runtime documents these as leaving the context in an unusable state:
     * every later call in the process returns the same error. */
    switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorLaunchTimeout:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorECCUncorrectable:
        return true;
    default:
        return false;
    }
}

static bool is_no_device(cudaError_t e)
{
    switch (e) {
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorInitializationError:
    case cudaErrorInvalidDevice:
    case cudaErrorCompatNotSupportedOnDevice:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorSystemNotReady:
    case cudaErrorStubLibrary:
    case cudaErrorDevicesUnavailable:
        return true;
    default:
        return false;
    }
}

/* CUDA versions are 1000 × major + 10 × minor. */
#define CUDA_MAJOR(v) ((v) / 1000)
#define CUDA_MINOR(v) ((v) % 1000 / 10)

void sdi_no_device_cause(cudaError_t e, const char *dl_error, int driver_version,
                         int runtime_version, char *buf, size_t cap)
{
    if (e != cudaErrorInsufficientDriver && e != cudaErrorNoDevice) {
        snprintf(buf, cap, "%s (%s)", cudaGetErrorString(e), cudaGetErrorName(e));
        return;
    }
    if (dl_error != NULL) {
        /* dlerror() starts with the library's name, which the message already gives. */
        const char *prefix = "libcuda.so.1: ";
        if (strncmp(dl_error, prefix, strlen(prefix)) == 0)
            dl_error += strlen(prefix);
        snprintf(buf, cap, "no NVIDIA driver found (libcuda.so.1 not loadable: %s)", dl_error);
    } else if (e == cudaErrorInsufficientDriver) {
        snprintf(buf, cap,
                 "the NVIDIA driver supports CUDA %d.%d, older than this build's CUDA %d.%d "
                 "runtime: a newer driver is needed (%s)",
                 CUDA_MAJOR(driver_version), CUDA_MINOR(driver_version),
                 CUDA_MAJOR(runtime_version), CUDA_MINOR(runtime_version), cudaGetErrorName(e));
    } else {
        const char *visible = sdi_config_is_set("CUDA_VISIBLE_DEVICES") ? sdi_config_get()->cuda_visible_devices : NULL;
        snprintf(buf, cap, "the NVIDIA driver (CUDA %d.%d) reports no GPU%s%.64s%s (%s)",
                 CUDA_MAJOR(driver_version), CUDA_MINOR(driver_version),
                 visible != NULL ? " with CUDA_VISIBLE_DEVICES='" : "",
                 visible != NULL ? visible : "", visible != NULL ? "'" : "", cudaGetErrorName(e));
    }
}

/* The cause of a failure that means "no device", in words. The runtime answers
 * cudaErrorInsufficientDriver both for a driver too old and for no driver at all, and its
 * text ("CUDA driver version is insufficient for CUDA runtime version") reads as if one
 * were installed: whether libcuda.so.1 loads tells the two apart. */
static void no_device_cause(cudaError_t e, char *buf, size_t cap)
{
    const char *dl_error = NULL;
    char dl_text[200];
    if (e == cudaErrorInsufficientDriver || e == cudaErrorNoDevice) {
        void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
        if (h == NULL) {
            const char *d = dlerror();
            snprintf(dl_text, sizeof dl_text, "%s", d != NULL ? d : "unknown reason");
            dl_error = dl_text;
        } else {
            dlclose(h);
        }
    }
    int driver = 0, runtime = 0;
    (void)cudaDriverGetVersion(&driver);
    (void)cudaRuntimeGetVersion(&runtime);
    (void)cudaGetLastError();
    sdi_no_device_cause(e, dl_error, driver, runtime, buf, cap);
}

sd_status sdi_cuda_status(sd_context *ctx, cudaError_t e, const char *what, const char *kernel)
{
    if (e == cudaSuccess)
        return SD_OK;
    /* Consume the error from the per-thread slot so that a later, unrelated check does
     * not report it again (sticky errors come back anyway). */
    (void)cudaGetLastError();
    char where[256];
    if (kernel != NULL && kernel[0] != '\0')
        snprintf(where, sizeof where, "%s (kernel '%s')", what, kernel);
    else
        snprintf(where, sizeof where, "%s", what);
    if (e == cudaErrorMemoryAllocation)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "%s: out of device memory (%s)", where,
                       cudaGetErrorName(e));
    if (is_no_device(e)) {
        char cause[320];
        no_device_cause(e, cause, sizeof cause);
        return SDI_ERR(SD_ERR_NO_DEVICE, "%s: no usable CUDA device: %s", where, cause);
    }
    if (sdi_cuda_error_is_sticky(e)) {
        if (ctx != NULL && !atomic_exchange(&ctx->broken, 1))
            snprintf(ctx->broken_reason, sizeof ctx->broken_reason, "%s: %s (%s)", where,
                     cudaGetErrorString(e), cudaGetErrorName(e));
        return SDI_ERR(SD_ERR_CUDA,
                       "%s: %s (%s); the CUDA context is unusable from now on: destroy the "
                       "sd_context (this process cannot use the GPU again)",
                       where, cudaGetErrorString(e), cudaGetErrorName(e));
    }
    return SDI_ERR(SD_ERR_CUDA, "%s: %s (%s)", where, cudaGetErrorString(e),
                   cudaGetErrorName(e));
}

/* ------------------------------------------------------------------ properties */

sd_status sdi_runtime_gpu_props(int device, sdi_gpu_props *out)
{
    if (out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sdi_runtime_gpu_props: out is NULL");
    memset(out, 0, sizeof *out);
    if (device < 0)
        return SDI_ERR(SD_ERR_INVALID_ARG, "device %d is negative", device);
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        char cause[320];
        no_device_cause(e, cause, sizeof cause);
        return SDI_ERR(SD_ERR_NO_DEVICE, "no usable CUDA device: %s", cause);
    }
    if (n == 0)
        return SDI_ERR(SD_ERR_NO_DEVICE, "no usable CUDA device: the driver reports none");
    if (device >= n)
        return SDI_ERR(SD_ERR_NO_DEVICE, "no CUDA device %d (this machine has %d)", device, n);
    struct cudaDeviceProp p;
    e = cudaGetDeviceProperties(&p, device);
    if (e != cudaSuccess)
        return sdi_cuda_status(NULL, e, "cudaGetDeviceProperties", NULL);
    size_t name_len = strnlen(p.name, sizeof out->name - 1);
    memcpy(out->name, p.name, name_len);
    out->name[name_len] = '\0';
    out->sm_count = p.multiProcessorCount;
    out->cc_major = p.major;
    out->cc_minor = p.minor;
    out->l2_bytes = p.l2CacheSize;
    out->smem_per_cta_default = (int)p.sharedMemPerBlock;
    out->smem_per_cta_optin = (int)p.sharedMemPerBlockOptin;
    out->smem_per_sm = (int)p.sharedMemPerMultiprocessor;
    out->regs_per_cta = p.regsPerBlock;
    out->regs_per_sm = p.regsPerMultiprocessor;
    out->max_threads_per_cta = p.maxThreadsPerBlock;
    out->max_threads_per_sm = p.maxThreadsPerMultiProcessor;
    out->global_mem_bytes = (int64_t)p.totalGlobalMem;
    /* cudaDeviceProp lost its memory clock in CUDA 13: read the attributes. */
    int clock_khz = 0, bus_bits = 0;
    e = cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, device);
    if (e == cudaSuccess)
        e = cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device);
    if (e != cudaSuccess)
        return sdi_cuda_status(NULL, e, "cudaDeviceGetAttribute(memory clock, bus width)", NULL);
    /* Double data rate: two transfers per clock. */
    out->mem_bandwidth = 2.0 * (double)clock_khz * 1e3 * (double)bus_bits / 8.0;
    out->from_device = 1;
    return SD_OK;
}

/* ------------------------------------------------------------------ context */

sd_status sdi_device_open(sd_context *ctx, int device)
{
    sd_status s = sdi_runtime_gpu_props(device, &ctx->props);
    if (s != SD_OK)
        return s;
    cudaError_t e = cudaSetDevice(device);
    if (e != cudaSuccess)
        return sdi_cuda_status(NULL, e, "cudaSetDevice", NULL);
    /* Create (or attach to) the primary context now, so that a sticky error left by
     * earlier work in this process shows up here and not in the first kernel. */
    e = cudaFree(NULL);
    if (e != cudaSuccess)
        return sdi_cuda_status(NULL, e, "initialising the CUDA context", NULL);
    e = cudaStreamCreateWithFlags(&ctx->stream, cudaStreamNonBlocking);
    if (e != cudaSuccess) {
        ctx->stream = NULL;
        return sdi_cuda_status(NULL, e, "cudaStreamCreate", NULL);
    }
    ctx->device = device;
    sdi_gpu_arch(&ctx->props, ctx->arch);
    (void)cudaDriverGetVersion(&ctx->driver_version);
    (void)cudaRuntimeGetVersion(&ctx->runtime_version);
    return SD_OK;
}

void sdi_device_close(sd_context *ctx)
{
    if (ctx == NULL)
        return;
    sdi_cusparse_release(ctx);
    sdi_memo_clear(ctx);
    if (ctx->stream != NULL) {
        /* After a sticky error the destroy fails too; nothing more can be done. */
        (void)cudaSetDevice(ctx->device);
        (void)cudaStreamDestroy(ctx->stream);
        (void)cudaGetLastError();
        ctx->stream = NULL;
    }
}

/* The checks both entries share: a live context that no earlier error broke. */
static sd_status ctx_usable(const sd_context *ctx)
{
    if (ctx == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "the context is NULL");
    if (ctx->magic != SDI_CONTEXT_MAGIC)
        return SDI_ERR(SD_ERR_INVALID_ARG,
                       "the context is not a live sd_context (destroyed or corrupt)");
    if (atomic_load(&ctx->broken))
        return SDI_ERR(SD_ERR_CUDA,
                       "the CUDA context is unusable after an earlier error: %s",
                       ctx->broken_reason);
    return SD_OK;
}

sd_status sdi_ctx_enter(sd_context *ctx)
{
    sd_status s = ctx_usable(ctx);
    if (s != SD_OK)
        return s;
    cudaError_t e = cudaSetDevice(ctx->device);
    if (e != cudaSuccess)
        return sdi_cuda_status(ctx, e, "cudaSetDevice", NULL);
    return SD_OK;
}

sd_status sdi_ctx_enter_run(sd_context *ctx)
{
    sd_status s = ctx_usable(ctx);
    if (s != SD_OK)
        return s;
    int dev = -1;
    if (cudaGetDevice(&dev) != cudaSuccess || dev != ctx->device) {
        (void)cudaGetLastError();
        cudaError_t e = cudaSetDevice(ctx->device);
        if (e != cudaSuccess)
            return sdi_cuda_status(ctx, e, "cudaSetDevice", NULL);
    }
    return SD_OK;
}

/* ------------------------------------------------------------------ allocation hooks */

static atomic_long g_dev_fail_after = -1;
static atomic_long g_dev_count = 0;
static atomic_long g_dev_live = 0;
static atomic_size_t g_dev_fail_above = 0;

void sdi_device_alloc_fail_above(size_t bytes) { atomic_store(&g_dev_fail_above, bytes); }

/* Whether the injected faults take this allocation (the n-th since the count was reset). */
static bool injected_failure(long n, size_t bytes)
{
    const long limit = atomic_load(&g_dev_fail_after);
    const size_t above = atomic_load(&g_dev_fail_above);
    return (limit >= 0 && n >= limit) || (above > 0 && bytes > above);
}

long sdi_device_alloc_fail_after(long n)
{
    long made = atomic_exchange(&g_dev_count, 0);
    atomic_store(&g_dev_fail_after, n);
    return made;
}

size_t sdi_device_free_bytes(void)
{
    size_t f = 0, t = 0;
    if (cudaMemGetInfo(&f, &t) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return f;
}

long sdi_device_alloc_live(void) { return atomic_load(&g_dev_live); }

sd_status sdi_device_malloc(sd_context *ctx, void **p, size_t bytes, const char *what)
{
    *p = NULL;
    if (bytes == 0)
        return SD_OK;
    long n = atomic_fetch_add(&g_dev_count, 1);
    if (injected_failure(n, bytes))
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY,
                       "out of device memory allocating %zu bytes for %s (injected failure)",
                       bytes, what);
    cudaError_t e = cudaMalloc(p, bytes);
    if (e != cudaSuccess) {
        *p = NULL;
        if (e == cudaErrorMemoryAllocation) {
            (void)cudaGetLastError();
            size_t free_b = 0, total_b = 0;
            (void)cudaMemGetInfo(&free_b, &total_b);
            (void)cudaGetLastError();
            return SDI_ERR(SD_ERR_OUT_OF_MEMORY,
                           "out of device memory allocating %zu bytes for %s (%zu of %zu "
                           "bytes free)",
                           bytes, what, free_b, total_b);
        }
        char msg[160];
        snprintf(msg, sizeof msg, "cudaMalloc(%zu bytes) for %s", bytes, what);
        return sdi_cuda_status(ctx, e, msg, NULL);
    }
    atomic_fetch_add(&g_dev_live, 1);
    return SD_OK;
}

void sdi_device_free(void *p)
{
    if (p == NULL)
        return;
    /* A failure here only comes from a context already broken or torn down; the
     * memory is gone with it. */
    if (cudaFree(p) != cudaSuccess)
        (void)cudaGetLastError();
    atomic_fetch_sub(&g_dev_live, 1);
}

/* Stream-ordered twins of the hooks (cudaMallocAsync from the device's default pool):
 * the same fault injection and live count, so outputs handed to callers are counted
 * like every other allocation. Memory from the pool may also be released with
 * sdi_device_free (cudaFree), but only once no queued work uses it: cudaFree does not wait
 * for stream-ordered work (sd_device_csr_free drains the device first). */
sd_status sdi_device_malloc_async(sd_context *ctx, void **p, size_t bytes, cudaStream_t stream,
                                  const char *what)
{
    *p = NULL;
    if (bytes == 0)
        return SD_OK;
    long n = atomic_fetch_add(&g_dev_count, 1);
    if (injected_failure(n, bytes))
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY,
                       "out of device memory allocating %zu bytes for %s (injected failure)",
                       bytes, what);
    cudaError_t e = cudaMallocAsync(p, bytes, stream);
    if (e != cudaSuccess) {
        *p = NULL;
        if (e == cudaErrorMemoryAllocation) {
            (void)cudaGetLastError();
            return SDI_ERR(SD_ERR_OUT_OF_MEMORY,
                           "out of device memory allocating %zu bytes for %s (stream pool)",
                           bytes, what);
        }
        return sdi_cuda_status(ctx, e, "cudaMallocAsync for", what);
    }
    atomic_fetch_add(&g_dev_live, 1);
    return SD_OK;
}

void sdi_device_free_async(void *p, cudaStream_t stream)
{
    if (p == NULL)
        return;
    if (cudaFreeAsync(p, stream) != cudaSuccess)
        (void)cudaGetLastError();
    atomic_fetch_sub(&g_dev_live, 1);
}

/* ------------------------------------------------------------------ copies */

sd_status sdi_stream_sync(sd_context *ctx, const char *what, const char *kernel)
{
    return sdi_cuda_status(ctx, cudaStreamSynchronize(ctx->stream), what, kernel);
}

static sd_status copy(sd_context *ctx, void *dst, const void *src, size_t bytes,
                      enum cudaMemcpyKind kind, const char *what)
{
    if (bytes == 0)
        return SD_OK;
    char msg[160];
    snprintf(msg, sizeof msg, "copying %s (%zu bytes %s)", what, bytes,
             kind == cudaMemcpyHostToDevice ? "to the device" : "to the host");
    sd_status s = sdi_cuda_status(ctx, cudaMemcpyAsync(dst, src, bytes, kind, ctx->stream),
                                  msg, NULL);
    if (s != SD_OK)
        return s;
    return sdi_stream_sync(ctx, msg, NULL);
}

sd_status sdi_copy_to_device(sd_context *ctx, void *dst, const void *src, size_t bytes,
                             const char *what)
{
    return copy(ctx, dst, src, bytes, cudaMemcpyHostToDevice, what);
}

sd_status sdi_copy_to_host(sd_context *ctx, void *dst, const void *src, size_t bytes,
                           const char *what)
{
    return copy(ctx, dst, src, bytes, cudaMemcpyDeviceToHost, what);
}

sd_status sdi_device_upload(sd_context *ctx, void **dst, const void *src, size_t bytes,
                            const char *what)
{
    void *d = NULL;
    sd_status s = sdi_device_malloc(ctx, &d, bytes, what);
    if (s == SD_OK)
        s = sdi_copy_to_device(ctx, d, src, bytes, what);
    if (s != SD_OK) {
        sdi_device_free(d);
        d = NULL;
    }
    *dst = d;
    return s;
}
