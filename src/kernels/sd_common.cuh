/* src/kernels/sd_common.cuh: the ABI shared by host code and generated kernels: index,
 * offset and value types, the kernel declaration macro and launch bounds. Included by
 * every template (NVRTC) and by src/runtime/templates.h (C), which checks the sizes, so
 * the two sides cannot drift apart. Kernels are self-contained: builtins only, no
 * host or CCCL headers. */
#ifndef SD_COMMON_CUH
#define SD_COMMON_CUH

/* Column indices are int32, row pointers int64, values FP32 (docs/ARCHITECTURE.md
 * "Operators and data types").
 * On every target (x86-64, aarch64, NVPTX) int is 32-bit and long long 64-bit. */
typedef int sd_index;
typedef long long sd_offset;
typedef float sd_value;

#define SD_WARP_SIZE 32

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

/* extern "C": unmangled names, so the host looks kernels up by their plain name. */
#define SD_KERNEL extern "C" __global__
/* Launch bounds: the register allocator targets `threads` per CTA (and `blocks` CTAs
 * per SM with the second form). */
#define SD_LAUNCH_BOUNDS(threads) __launch_bounds__(threads)
#define SD_LAUNCH_BOUNDS_MIN(threads, blocks) __launch_bounds__(threads, blocks)
#define SD_RESTRICT __restrict__
#define SD_FULL_MASK 0xffffffffu

/* Read-only (non-coherent) load for operands no kernel writes during the launch. */
static __device__ __forceinline__ float sd_load_ro(const float *p) { return __ldg(p); }

/* Mask of the `width`-lane group (width a power of two ≤ 32) holding this lane. */
static __device__ __forceinline__ unsigned sd_group_mask(int width)
{
    if (width >= SD_WARP_SIZE)
        return SD_FULL_MASK;
    const unsigned lane = threadIdx.x % SD_WARP_SIZE;
    return ((1u << width) - 1u) << (lane - lane % (unsigned)width);
}

/* Sum over a `width`-lane group; the result is valid in the group's first lane. */
static __device__ __forceinline__ float sd_group_sum(float v, int width)
{
    const unsigned mask = sd_group_mask(width);
    for (int off = width / 2; off > 0; off /= 2)
        v += __shfl_down_sync(mask, v, off, width);
    return v;
}

#endif /* __CUDACC__ || __CUDACC_RTC__ */

#endif /* SD_COMMON_CUH */
