/* src/analysis/gpu.h: GPU properties, the hardware context of analysis and synthesis.
 * Built-in profiles live in src/analysis (no CUDA); reading them off a device lives in
 * src/runtime (sdi_runtime_gpu_props), which fills the same struct. */
#ifndef SDI_GPU_H
#define SDI_GPU_H

#include <stdio.h>

#include "../core/sdi.h"

typedef struct {
    char name[64];              /* e.g. "NVIDIA H200" */
    int sm_count;
    int cc_major, cc_minor;     /* compute capability */
    int64_t l2_bytes;
    int smem_per_cta_default;   /* bytes without opt-in (48 KiB) */
    int smem_per_cta_optin;     /* bytes with cudaFuncAttributeMaxDynamicSharedMemorySize */
    int smem_per_sm;
    int regs_per_cta;
    int regs_per_sm;
    int max_threads_per_cta;
    int max_threads_per_sm;
    double mem_bandwidth;       /* bytes/s (datasheet for profiles; measured copy when known) */
    int64_t global_mem_bytes;
    int from_device;            /* 1: read from a device; 0: built-in profile */
    /* Architecture facts (CUDA programming guide, per compute capability); a device read
     * may leave them 0: sdi_gpu_props_complete fills them from cc_major/cc_minor. */
    int max_ctas_per_sm;        /* resident thread blocks per SM */
    int max_regs_per_thread;    /* 255 */
    int smem_reserved_per_cta;  /* bytes the system reserves per CTA (1 KiB on cc >= 8.0) */
    int warp_size;              /* 32 */
    double copy_bandwidth;      /* bytes/s of a measured device-to-device copy; 0 unknown */
} sdi_gpu_props;

/* Built-in profile by name, case-insensitive, matching "H200", "H100", "A100",
 * "RTX PRO 6000", "RTX 4090", "A6000" (also with an "NVIDIA " prefix and with '-' or
 * '_' for spaces). SD_ERR_INVALID_ARG lists the known names. */
SDI_HIDDEN sd_status sdi_gpu_profile(const char *name, sdi_gpu_props *out);
/* Names of the built-in profiles, NULL-terminated. */
SDI_HIDDEN const char *const *sdi_gpu_profile_names(void);
/* Fills the architecture facts left 0 (max_ctas_per_sm, max_regs_per_thread,
 * smem_reserved_per_cta, warp_size) from the compute capability, and copy_bandwidth from
 * the matching built-in profile when the name matches one. Idempotent. */
SDI_HIDDEN void sdi_gpu_props_complete(sdi_gpu_props *p);
/* NVRTC's name of p's architecture, "sm_<major><minor>" ("sm_90"), into out, which
 * SDI_GPU_ARCH_TEXT bytes hold whatever the two numbers. */
#define SDI_GPU_ARCH_TEXT 32
static inline void sdi_gpu_arch(const sdi_gpu_props *p, char out[SDI_GPU_ARCH_TEXT])
{
    snprintf(out, SDI_GPU_ARCH_TEXT, "sm_%d%d", p->cc_major, p->cc_minor);
}

#endif /* SDI_GPU_H */
