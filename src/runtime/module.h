/* src/runtime/module.h: loaded modules and their kernels, shared-memory opt-in, the
 * legality check and occupancy of a launch.
 *
 * Driver access: kernels are loaded with the runtime's library-management API
 * (cudaLibraryLoadData / cudaLibraryGetKernel / cudaLaunchKernel / cudaFuncGetAttributes)
 * rather than driver entry points fetched with cudaGetDriverEntryPointByVersion. Why:
 * the library must load without libcuda (only cudart_static is linked), a cudaLibrary_t
 * is context-independent (loaded lazily into whichever context launches it, so there is
 * no cuCtxSetCurrent bookkeeping per thread), its errors share one enum (cudaError_t)
 * with allocations, copies and launches, and no table of function pointers has to track
 * driver ABI versions. */
#ifndef SDI_MODULE_H
#define SDI_MODULE_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#include "jit.h"

typedef struct {
    char name[128];
    cudaKernel_t kernel;
    /* read back from the compiled function (cudaFuncGetAttributes) */
    int num_regs;
    size_t static_smem;
    size_t local_bytes; /* spills and stack: 0 for a clean kernel */
    size_t const_bytes;
    int max_threads; /* the function's limit (launch bounds, registers) */
    int ptx_version, binary_version;
    int max_dynamic_smem; /* set by sdi_function_reserve_smem */
} sdi_function;

typedef struct {
    cudaLibrary_t lib;
    int nfunctions;
    sdi_function *functions;
} sdi_module;

/* Loads a cubin and looks up the named kernels (all must exist: SD_ERR_CUDA names the
 * missing one). On failure *out is zeroed and nothing stays loaded. */
SDI_HIDDEN sd_status sdi_module_load(sd_context *ctx, const void *cubin, size_t size,
                                     const char *const *names, int nnames, sdi_module *out);
SDI_HIDDEN void sdi_module_unload(sdi_module *m);
SDI_HIDDEN sdi_function *sdi_module_function(sdi_module *m, const char *name);
/* Compile (memoised) + load in one step for a single kernel. */
SDI_HIDDEN sd_status sdi_module_build(sd_context *ctx, const sdi_jit_request *req,
                                      const char *kernel, sdi_module *out);
/* Allows `bytes` of dynamic shared memory (opt-in above the 48 KiB default). */
SDI_HIDDEN sd_status sdi_function_reserve_smem(sd_context *ctx, sdi_function *f, int bytes);
/* The legality check (docs/ARCHITECTURE.md "Static bounds and legality") for a launch of
 * B_t threads per CTA with S_dyn bytes of
 * dynamic shared memory: B_t ≤ T_max (device and function), r_t·B_t ≤ R_max,
 * S_static + S_dyn ≤ S_max (opt-in). SD_ERR_UNSUPPORTED names the violated bound. */
SDI_HIDDEN sd_status sdi_function_check_legal(const sd_context *ctx, const sdi_function *f,
                                              int threads_per_cta, size_t dyn_smem);
/* CTAs of f resident per SM at threads_per_cta and dyn_smem (registers, shared memory,
 * threads; cudaOccupancyMaxActiveBlocksPerMultiprocessor): the grid of a kernel that
 * loops over its work. */
SDI_HIDDEN sd_status sdi_function_resident_ctas(sd_context *ctx, const sdi_function *f,
                                                int threads_per_cta, size_t dyn_smem, int *out);

#endif /* SDI_MODULE_H */
