/* src/kernels/sd_validate.cuh: the device-side check of a dense output (SpMV y, SpMM C)
 * against a reference prepared on the host (src/runtime/validate_device.c): entry e
 * passes when |got[e] − want[e]| ≤ tol[e], computed in double. want is the double
 * reference rounded to FP32 and tol the DESIGN.md bound minus that rounding error,
 * rounded towards zero, so a pass here implies the exact rule; a negative tol marks an
 * entry only the host can judge. The host re-checks every output the device flags, so
 * the verdict and its message are always the host's. Plain C argument block, shared
 * with the host. */
#ifndef SD_VALIDATE_CUH
#define SD_VALIDATE_CUH

#include "sd_common.cuh"

#define SD_VALIDATE_THREADS 256

typedef struct {
    const float *got;
    const float *want;
    const float *tol;
    long long n;
    /* result[0]: entries that fail (or need the host); result[1]: the largest
     * |got − want| / tol among passing entries with tol > 0, as FP32 bits */
    unsigned long long *result;
} sd_validate_args;

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

SD_KERNEL void SD_LAUNCH_BOUNDS(SD_VALIDATE_THREADS) sd_validate_dense(sd_validate_args a)
{
    unsigned long long bad = 0;
    float worst = 0.0f;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < a.n; e += stride) {
        const double d = fabs((double)a.got[e] - (double)a.want[e]);
        const double t = (double)a.tol[e];
        if (!(d <= t)) /* NaN and Inf fail here too */
            bad++;
        else if (t > 0.0)
            worst = fmaxf(worst, (float)(d / t));
    }
    for (int off = SD_WARP_SIZE / 2; off > 0; off /= 2) {
        bad += __shfl_down_sync(SD_FULL_MASK, bad, off);
        worst = fmaxf(worst, __shfl_down_sync(SD_FULL_MASK, worst, off));
    }
    if (threadIdx.x % SD_WARP_SIZE == 0) {
        if (bad)
            atomicAdd(&a.result[0], bad);
        /* Non-negative floats order like their bit patterns. */
        if (worst > 0.0f)
            atomicMax(&a.result[1], (unsigned long long)__float_as_uint(worst));
    }
}

#endif
#endif /* SD_VALIDATE_CUH */
