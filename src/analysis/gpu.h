/* src/analysis/gpu.h: GPU properties, the hardware context of analysis and synthesis.
 * Built-in profiles live in src/analysis (no CUDA); reading them off a device lives in
 * src/runtime (sdi_runtime_gpu_props), which fills the same struct. */
#ifndef SDI_GPU_H
#define SDI_GPU_H

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
} sdi_gpu_props;

/* Built-in profile by name, case-insensitive, matching "H200", "H100", "A100",
 * "RTX PRO 6000", "RTX 4090", "A6000" (also with an "NVIDIA " prefix and with '-' or
 * '_' for spaces). SD_ERR_INVALID_ARG lists the known names. */
SDI_HIDDEN sd_status sdi_gpu_profile(const char *name, sdi_gpu_props *out);
/* Names of the built-in profiles, NULL-terminated. */
SDI_HIDDEN const char *const *sdi_gpu_profile_names(void);

#endif /* SDI_GPU_H */
