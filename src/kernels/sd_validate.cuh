/* src/kernels/sd_validate.cuh: the device-side check of an output (SpMV y, SpMM C, or
 * SpGEMM's CSR C) against a reference prepared on the host (src/runtime/validate_device.c):
 * entry e passes when |got[e] − want[e]| ≤ tol[e], computed in double; for SpGEMM the row
 * pointers and column indices must also equal the reference's (sorted, coalesced). want
 * is the double reference rounded to FP32 and tol the bound of docs/ARCHITECTURE.md
 * "Validation" minus that rounding
 * error, rounded towards zero, so a pass here implies the exact rule; a negative tol marks
 * an entry only the host can judge. The host re-checks every output the device flags, so
 * the verdict and its message are always the host's. Plain C argument blocks, shared with
 * the host. */
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

/* SpGEMM: C's row pointers (4 or 8 bytes), columns and values against the reference's
 * (rows + 1 row pointers, nnz entries each). result as above; a structural difference
 * counts as a failing entry. */
typedef struct {
    const void *got_rowptr;
    const int *got_col;
    const float *got_val;
    const long long *want_rowptr;
    const int *want_col;
    const float *want;
    const float *tol;
    long long rows, nnz;
    int rowptr64;
    unsigned long long *result;
} sd_validate_sparse_args;

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

// Adds a thread's counts to the result (one atomic per warp).
static __device__ __forceinline__ void sd_validate_reduce(unsigned long long bad, float worst,
                                                          unsigned long long *result)
{
    for (int off = SD_WARP_SIZE / 2; off > 0; off /= 2) {
        bad += __shfl_down_sync(SD_FULL_MASK, bad, off);
        worst = fmaxf(worst, __shfl_down_sync(SD_FULL_MASK, worst, off));
    }
    if (threadIdx.x % SD_WARP_SIZE == 0) {
        if (bad)
            atomicAdd(&result[0], bad);
        /* Non-negative floats order like their bit patterns. */
        if (worst > 0.0f)
            atomicMax(&result[1], (unsigned long long)__float_as_uint(worst));
    }
}

// Whether |got − want| ≤ tol (NaN and Inf fail); the ratio of a passing entry to worst.
static __device__ __forceinline__ bool sd_validate_entry(float got, float want, float tol, float &worst)
{
    const double d = fabs((double)got - (double)want);
    const double t = (double)tol;
    if (!(d <= t))
        return false;
    if (t > 0.0)
        worst = fmaxf(worst, (float)(d / t));
    return true;
}

SD_KERNEL void SD_LAUNCH_BOUNDS(SD_VALIDATE_THREADS) sd_validate_dense(sd_validate_args a)
{
    unsigned long long bad = 0;
    float worst = 0.0f;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < a.n; e += stride)
        bad += !sd_validate_entry(a.got[e], a.want[e], a.tol[e], worst);
    sd_validate_reduce(bad, worst, a.result);
}

SD_KERNEL void SD_LAUNCH_BOUNDS(SD_VALIDATE_THREADS) sd_validate_spgemm(sd_validate_sparse_args a)
{
    unsigned long long bad = 0;
    float worst = 0.0f;
    const long long stride = (long long)gridDim.x * blockDim.x;
    const long long t0 = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (long long i = t0; i <= a.rows; i += stride) {
        const long long g = a.rowptr64 ? ((const long long *)a.got_rowptr)[i]
                                       : (long long)((const int *)a.got_rowptr)[i];
        bad += g != a.want_rowptr[i];
    }
    for (long long e = t0; e < a.nnz; e += stride)
        bad += a.got_col[e] != a.want_col[e] || !sd_validate_entry(a.got_val[e], a.want[e], a.tol[e], worst);
    sd_validate_reduce(bad, worst, a.result);
}

#endif
#endif /* SD_VALIDATE_CUH */
