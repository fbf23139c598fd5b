/* src/analysis/gpu_profiles.c: built-in GPU property profiles (no CUDA), looked up by
 * name, and the per-architecture facts a device query does not report.
 *
 * Sources: NVIDIA product datasheets (SM count, L2, memory size and bandwidth) and the
 * CUDA C++ Programming Guide's "Technical Specifications per Compute Capability" table
 * (shared memory, registers, threads and CTAs per SM). Sizes in bytes; KiB/MiB as
 * cudaDeviceProp reports them (e.g. 228 KiB shared memory per SM on sm_90, of which
 * 227 KiB can be given to one CTA: CUDA reserves 1 KiB per CTA). */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "gpu.h"

#define KIB 1024
#define MIB (1024 * 1024)
#define GIB ((int64_t)1024 * 1024 * 1024)

typedef struct {
    const char *short_name;  /* what --gpu lists */
    const char *aliases[6];  /* normalised (lowercase, single spaces, no "nvidia ") */
    sdi_gpu_props props;
} profile;

/* Field order: name, SMs, cc, L2, smem/CTA default, opt-in, smem/SM, regs/CTA, regs/SM,
 * threads/CTA, threads/SM, bandwidth, global memory, from_device, CTAs/SM, regs/thread,
 * reserved smem/CTA, warp size, measured copy bandwidth. */
static const profile k_profiles[] = {
    /* H200 SXM (GH100, HBM3e), as cudaGetDeviceProperties reported it on this project's
     * H200: 132 SMs, 60 MiB L2 (the H100 SXM enables 50 MiB of the same die),
     * 150109880320 bytes of the datasheet's 141 GB, 4.8 TB/s (datasheet; 4.81 TB/s from
     * the memory clock and bus width). Copy bandwidth: ≈ 4.3 TB/s measured
     * device-to-device on the same H200. */
    {"H200",
     {"h200", "h200 sxm", "h200 sxm 141gb", NULL},
     {"NVIDIA H200", 132, 9, 0, 60 * MIB, 48 * KIB, 227 * KIB, 228 * KIB, 65536, 65536, 1024,
      2048, 4.8e12, 150109880320LL, 0, 32, 255, 1 * KIB, 32, 4.3e12}},
    /* H100 SXM5 80GB (HBM3): 132 SMs, 50 MiB L2, 3.35 TB/s. */
    {"H100",
     {"h100", "h100 sxm", "h100 sxm5", "h100 80gb hbm3", "h100 sxm5 80gb", NULL},
     {"NVIDIA H100 80GB HBM3", 132, 9, 0, 50 * MIB, 48 * KIB, 227 * KIB, 228 * KIB, 65536,
      65536, 1024, 2048, 3.35e12, 80 * GIB, 0, 32, 255, 1 * KIB, 32, 0.0}},
    /* A100 SXM4 80GB (HBM2e): 108 SMs, 40 MiB L2, 164 KiB shared per SM (163 KiB per CTA),
     * 2.039 TB/s. */
    {"A100",
     {"a100", "a100 sxm", "a100 sxm4", "a100 80gb", "a100 sxm4 80gb", NULL},
     {"NVIDIA A100-SXM4-80GB", 108, 8, 0, 40 * MIB, 48 * KIB, 163 * KIB, 164 * KIB, 65536,
      65536, 1024, 2048, 2.039e12, 80 * GIB, 0, 32, 255, 1 * KIB, 32, 0.0}},
    /* RTX PRO 6000 Blackwell (GB202, sm_120): 188 SMs, 128 MiB L2, 96 GB GDDR7 at
     * 1.792 TB/s; cc 12.0 keeps cc 8.9's 100 KiB shared per SM (99 KiB per CTA) and
     * 1536 threads per SM. */
    {"RTX PRO 6000",
     {"rtx pro 6000", "rtx pro 6000 blackwell", "rtx pro 6000 blackwell workstation edition",
      "rtx pro 6000 blackwell server edition", NULL},
     {"NVIDIA RTX PRO 6000 Blackwell Workstation Edition", 188, 12, 0, 128 * MIB, 48 * KIB,
      99 * KIB, 100 * KIB, 65536, 65536, 1024, 1536, 1.792e12, 96 * GIB, 0, 32, 255, 1 * KIB,
      32, 0.0}},
    /* GeForce RTX 4090 (AD102, sm_89): 128 SMs, 72 MiB L2, 24 GB GDDR6X at 1.008 TB/s. */
    {"RTX 4090",
     {"rtx 4090", "geforce rtx 4090", "4090", NULL},
     {"NVIDIA GeForce RTX 4090", 128, 8, 9, 72 * MIB, 48 * KIB, 99 * KIB, 100 * KIB, 65536,
      65536, 1024, 1536, 1.008e12, 24 * GIB, 0, 24, 255, 1 * KIB, 32, 0.0}},
    /* RTX A6000 (GA102, sm_86): 84 SMs, 6 MiB L2, 48 GB GDDR6 at 768 GB/s. */
    {"A6000",
     {"a6000", "rtx a6000", NULL},
     {"NVIDIA RTX A6000", 84, 8, 6, 6 * MIB, 48 * KIB, 99 * KIB, 100 * KIB, 65536, 65536, 1024,
      1536, 768e9, 48 * GIB, 0, 16, 255, 1 * KIB, 32, 0.0}},
};
#define NPROFILES ((int)(sizeof k_profiles / sizeof k_profiles[0]))

static const char *const k_names[] = {"H200", "H100", "A100", "RTX PRO 6000", "RTX 4090", "A6000",
                                      NULL};
_Static_assert(sizeof k_names / sizeof k_names[0] == NPROFILES + 1, "one name per profile");

const char *const *sdi_gpu_profile_names(void) { return k_names; }

/* Lowercase, '-' and '_' as spaces, runs of spaces collapsed, trimmed, a leading
 * "nvidia " dropped. */
static void normalise(const char *in, char *out, size_t cap)
{
    size_t n = 0;
    int space = 1; /* drops leading spaces */
    for (; *in != '\0' && n + 1 < cap; in++) {
        char c = (char)tolower((unsigned char)*in);
        if (c == '-' || c == '_' || isspace((unsigned char)c)) {
            if (!space)
                out[n++] = ' ';
            space = 1;
            continue;
        }
        out[n++] = c;
        space = 0;
    }
    while (n > 0 && out[n - 1] == ' ')
        n--;
    out[n] = '\0';
    if (strncmp(out, "nvidia ", 7) == 0)
        memmove(out, out + 7, strlen(out + 7) + 1);
}

static const profile *find(const char *name)
{
    char key[128];
    normalise(name, key, sizeof key);
    for (int i = 0; i < NPROFILES; i++)
        for (int k = 0; k < 6 && k_profiles[i].aliases[k] != NULL; k++)
            if (strcmp(key, k_profiles[i].aliases[k]) == 0)
                return &k_profiles[i];
    return NULL;
}

sd_status sdi_gpu_profile(const char *name, sdi_gpu_props *out)
{
    if (out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sdi_gpu_profile: out is NULL");
    memset(out, 0, sizeof *out);
    const profile *p = name != NULL ? find(name) : NULL;
    if (p == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG,
                       "unknown GPU profile '%s' (known: H200, H100, A100, RTX PRO 6000, "
                       "RTX 4090, A6000)",
                       name != NULL ? name : "(null)");
    *out = p->props;
    return SD_OK;
}

void sdi_gpu_props_complete(sdi_gpu_props *p)
{
    if (p == NULL)
        return;
    int cc = p->cc_major * 10 + p->cc_minor;
    if (p->max_ctas_per_sm == 0) {
        /* Resident CTAs per SM: 16 on 7.5, 8.6 and 8.7, 24 on 8.9, 32 elsewhere. */
        p->max_ctas_per_sm = (cc == 75 || cc == 86 || cc == 87) ? 16 : cc == 89 ? 24 : 32;
    }
    if (p->max_regs_per_thread == 0)
        p->max_regs_per_thread = 255;
    if (p->smem_reserved_per_cta == 0 && cc >= 80)
        p->smem_reserved_per_cta = 1 * KIB;
    if (p->warp_size == 0)
        p->warp_size = 32;
    if (p->copy_bandwidth == 0.0) {
        const profile *q = find(p->name);
        if (q != NULL && q->props.cc_major == p->cc_major && q->props.cc_minor == p->cc_minor)
            p->copy_bandwidth = q->props.copy_bandwidth;
    }
}
