/* src/runtime/module.c: loading cubins as CUDA libraries, looking kernels up by name,
 * reading their resources back (registers, shared and local memory) and the legality
 * check of docs/ARCHITECTURE.md "Static bounds and legality" (B_t ≤ T_max,
 * r_t·B_t ≤ R_max, S_t ≤ S_max). */
#include <stdio.h>
#include <string.h>

#include "context.h"
#include "memo.h"
#include "module.h"

void sdi_module_unload(sdi_module *m)
{
    if (m == NULL)
        return;
    if (m->lib != NULL && cudaLibraryUnload(m->lib) != cudaSuccess)
        (void)cudaGetLastError(); /* only fails on a context already broken */
    sdi_free(m->functions);
    memset(m, 0, sizeof *m);
}

sd_status sdi_module_load(sd_context *ctx, const void *cubin, size_t size,
                          const char *const *names, int nnames, sdi_module *out)
{
    if (out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sdi_module_load: out is NULL");
    memset(out, 0, sizeof *out);
    sd_status s = sdi_ctx_enter(ctx);
    if (s != SD_OK)
        return s;
    if (cubin == NULL || size == 0 || names == NULL || nnames <= 0)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sdi_module_load: empty cubin or no kernel names");
    sdi_module m;
    memset(&m, 0, sizeof m);
#define SD_FREE_ALL sdi_module_unload(&m)
    m.functions = sdi_calloc((size_t)nnames, sizeof *m.functions);
    SD_CHECK_ALLOC(m.functions, "module functions");
    char what[192];
    snprintf(what, sizeof what, "loading the cubin of '%s' (%zu bytes)", names[0], size);
    cudaError_t e = cudaLibraryLoadData(&m.lib, cubin, NULL, NULL, 0, NULL, NULL, 0);
    if (e != cudaSuccess) {
        m.lib = NULL;
        SD_FREE_ALL;
        return sdi_cuda_status(ctx, e, what, NULL);
    }
    for (int i = 0; i < nnames; i++) {
        sdi_function *f = &m.functions[i];
        if (names[i] == NULL || strlen(names[i]) >= sizeof f->name) {
            SD_FREE_ALL;
            return SDI_ERR(SD_ERR_INVALID_ARG, "sdi_module_load: kernel name %d is NULL or "
                           "longer than %zu characters", i, sizeof f->name - 1);
        }
        snprintf(f->name, sizeof f->name, "%s", names[i]);
        e = cudaLibraryGetKernel(&f->kernel, m.lib, names[i]);
        if (e != cudaSuccess) {
            SD_FREE_ALL;
            (void)cudaGetLastError();
            return SDI_ERR(SD_ERR_CUDA, "the cubin has no kernel named '%s' (%s); was it "
                           "declared SD_KERNEL (extern \"C\")?", names[i], cudaGetErrorName(e));
        }
        /* Reading the attributes also loads the library into this context (lazy
         * loading), so a cubin the device cannot run fails here, named. */
        struct cudaFuncAttributes a;
        e = cudaFuncGetAttributes(&a, (const void *)f->kernel);
        if (e != cudaSuccess) {
            SD_FREE_ALL;
            return sdi_cuda_status(ctx, e, "reading the function attributes", names[i]);
        }
        f->num_regs = a.numRegs;
        f->static_smem = a.sharedSizeBytes;
        f->local_bytes = a.localSizeBytes;
        f->const_bytes = a.constSizeBytes;
        f->max_threads = a.maxThreadsPerBlock;
        f->ptx_version = a.ptxVersion;
        f->binary_version = a.binaryVersion;
        f->max_dynamic_smem = a.maxDynamicSharedSizeBytes;
        sdi_log(3, "kernel %s: %d registers, %zu B static smem, %zu B local, max %d threads",
                f->name, f->num_regs, f->static_smem, f->local_bytes, f->max_threads);
    }
    m.nfunctions = nnames;
    *out = m;
    return SD_OK;
#undef SD_FREE_ALL
}

sdi_function *sdi_module_function(sdi_module *m, const char *name)
{
    if (m == NULL || name == NULL)
        return NULL;
    for (int i = 0; i < m->nfunctions; i++)
        if (strcmp(m->functions[i].name, name) == 0)
            return &m->functions[i];
    return NULL;
}

sd_status sdi_function_reserve_smem(sd_context *ctx, sdi_function *f, int bytes)
{
    if (f == NULL || bytes < 0)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sdi_function_reserve_smem: bad arguments");
    if ((size_t)bytes + f->static_smem > (size_t)ctx->props.smem_per_cta_optin)
        return SDI_ERR(SD_ERR_UNSUPPORTED,
                       "kernel '%s': %d B dynamic + %zu B static shared memory exceed the "
                       "%d B a CTA may opt in to",
                       f->name, bytes, f->static_smem, ctx->props.smem_per_cta_optin);
    cudaError_t e = cudaFuncSetAttribute((const void *)f->kernel,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
    if (e != cudaSuccess)
        return sdi_cuda_status(ctx, e, "raising the dynamic shared memory limit", f->name);
    f->max_dynamic_smem = bytes;
    return SD_OK;
}

sd_status sdi_function_resident_ctas(sd_context *ctx, const sdi_function *f,
                                     int threads_per_cta, size_t dyn_smem, int *out)
{
    if (f == NULL || out == NULL || threads_per_cta <= 0)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sdi_function_resident_ctas: bad arguments");
    *out = 0;
    cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(out, (const void *)f->kernel,
                                                                  threads_per_cta, dyn_smem);
    if (e != cudaSuccess)
        return sdi_cuda_status(ctx, e, "reading the resident CTAs per SM", f->name);
    return SD_OK;
}

sd_status sdi_function_check_legal(const sd_context *ctx, const sdi_function *f,
                                   int threads_per_cta, size_t dyn_smem)
{
    if (ctx == NULL || f == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sdi_function_check_legal: NULL argument");
    const sdi_gpu_props *g = &ctx->props;
    int t_max = g->max_threads_per_cta < f->max_threads ? g->max_threads_per_cta
                                                         : f->max_threads;
    if (threads_per_cta <= 0 || threads_per_cta > t_max)
        return SDI_ERR(SD_ERR_UNSUPPORTED,
                       "kernel '%s': %d threads per CTA exceed T_max = %d (device %d, "
                       "function %d)",
                       f->name, threads_per_cta, t_max, g->max_threads_per_cta, f->max_threads);
    long long regs = (long long)f->num_regs * threads_per_cta;
    if (regs > g->regs_per_cta)
        return SDI_ERR(SD_ERR_UNSUPPORTED,
                       "kernel '%s': %d registers x %d threads = %lld exceed R_max = %d",
                       f->name, f->num_regs, threads_per_cta, regs, g->regs_per_cta);
    size_t smem = f->static_smem + dyn_smem;
    if (smem > (size_t)g->smem_per_cta_optin)
        return SDI_ERR(SD_ERR_UNSUPPORTED,
                       "kernel '%s': %zu B shared memory per CTA exceed S_max = %d",
                       f->name, smem, g->smem_per_cta_optin);
    if (dyn_smem > (size_t)f->max_dynamic_smem)
        return SDI_ERR(SD_ERR_UNSUPPORTED,
                       "kernel '%s': %zu B dynamic shared memory exceed the reserved %d B "
                       "(sdi_function_reserve_smem)",
                       f->name, dyn_smem, f->max_dynamic_smem);
    return SD_OK;
}
