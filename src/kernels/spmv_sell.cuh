/* src/kernels/spmv_sell.cuh: SELL-C-σ and column-major ELL SpMV. Slot k of sorted row i
 * sits at sliceptr[i / C] + (i mod C) + k·C (ELL: i + k·ld). A group of SD_TPR lanes
 * takes SD_RPT consecutive rows (RPT = 2 or 4: 8- or 16-byte loads across rows), lane j
 * the slots k ≡ j (mod TPR); padding has value 0, so no per-row lengths are read. The
 * row permutation of σ-sorting is undone on the write. Macros:
 *   SD_BLOCK  threads per CTA    SD_C  slice height (power of two ≥ SD_RPT)
 *   SD_TPR    lanes per row group: 1, 2, 4, 8, 16, 32     SD_RPT  rows per group: 1, 2, 4
 *   SD_PERM   1: y[perm[i]] (σ > 1)   SD_ELL  1: ELL (ld and width are arguments)
 *   SD_UNROLL, SD_STREAM
 * Arguments: sliceptr (NULL for ELL), colind, vals, perm (NULL unless SD_PERM), x, y,
 *            rows, ell_width, ell_ld. */
#include "spmv_util.cuh"

#ifndef SD_BLOCK
#define SD_BLOCK 256
#endif
#ifndef SD_C
#define SD_C 32
#endif
#ifndef SD_TPR
#define SD_TPR 1
#endif
#ifndef SD_RPT
#define SD_RPT 1
#endif
#ifndef SD_PERM
#define SD_PERM 0
#endif
#ifndef SD_ELL
#define SD_ELL 0
#endif
#ifndef SD_UNROLL
#define SD_UNROLL 4
#endif

static_assert(SD_BLOCK % 32 == 0 && SD_BLOCK >= 32 && SD_BLOCK <= 1024, "SD_BLOCK");
static_assert(SD_TPR == 1 || SD_TPR == 2 || SD_TPR == 4 || SD_TPR == 8 || SD_TPR == 16 ||
                  SD_TPR == 32,
              "SD_TPR must be a power of two in [1, 32]");
static_assert(SD_RPT == 1 || SD_RPT == 2 || SD_RPT == 4, "SD_RPT must be 1, 2 or 4");
static_assert((SD_C & (SD_C - 1)) == 0 && SD_C >= SD_RPT, "SD_C must be a power of two ≥ SD_RPT");
#if SD_COLC
#error "spmv_sell: 16-bit column deltas are not supported"
#endif

/* Resident CTAs the register allocator plans for (≥ 40 registers per thread): at full
 * occupancy's 32, unrolled multi-row variants spill. */
#define SD_SELL_MINB (1536 / SD_BLOCK > 0 ? 1536 / SD_BLOCK : 1)

template <int N> struct sd_vec;
template <> struct sd_vec<1> {
    typedef float F;
    typedef int I;
};
template <> struct sd_vec<2> {
    typedef float2 F;
    typedef int2 I;
};
template <> struct sd_vec<4> {
    typedef float4 F;
    typedef int4 I;
};
static __device__ __forceinline__ float sd_vget(float v, int) { return v; }
static __device__ __forceinline__ int sd_vget(int v, int) { return v; }
static __device__ __forceinline__ float sd_vget(float2 v, int i) { return i == 0 ? v.x : v.y; }
static __device__ __forceinline__ int sd_vget(int2 v, int i) { return i == 0 ? v.x : v.y; }
static __device__ __forceinline__ float sd_vget(float4 v, int i)
{
    return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}
static __device__ __forceinline__ int sd_vget(int4 v, int i)
{
    return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}

SD_KERNEL SD_LAUNCH_BOUNDS_MIN(SD_BLOCK, SD_SELL_MINB) void sd_spmv_sell(
    const long long *SD_RESTRICT sliceptr, const int *SD_RESTRICT colind,
    const float *SD_RESTRICT vals, const int *SD_RESTRICT perm, const float *SD_RESTRICT x,
    float *SD_RESTRICT y, int rows, long long ell_width, long long ell_ld)
{
    typedef typename sd_vec<SD_RPT>::F vf;
    typedef typename sd_vec<SD_RPT>::I vi;
    const long long g = (long long)blockIdx.x * (SD_BLOCK / SD_TPR) + threadIdx.x / SD_TPR;
    const int j = (int)(threadIdx.x % SD_TPR);
    const long long i0 = g * SD_RPT; /* first sorted row of the group */
    /* Groups past the end still take part in the lane-group shuffles below. */
    const bool live = i0 < rows;
    long long base = 0, width = 0, ld;
#if SD_ELL
    (void)sliceptr;
    base = i0;
    width = ell_width;
    ld = ell_ld;
#else
    (void)ell_width;
    (void)ell_ld;
    ld = SD_C;
    if (live) {
        const long long s = i0 / SD_C;
        const long long p0 = __ldg(sliceptr + s), p1 = __ldg(sliceptr + s + 1);
        base = p0 + (i0 % SD_C);
        width = (p1 - p0) / SD_C;
    }
#endif
    if (!live)
        width = 0;
    float acc[SD_RPT];
#pragma unroll
    for (int r = 0; r < SD_RPT; r++)
        acc[r] = 0.0f;
SD_UNROLL_BY(SD_UNROLL)
    for (long long k = j; k < width; k += SD_TPR) {
        const long long slot = base + k * ld;
        const vi ci = sd_ldm(reinterpret_cast<const vi *>(colind + slot));
        const vf v = sd_ldm(reinterpret_cast<const vf *>(vals + slot));
#pragma unroll
        for (int r = 0; r < SD_RPT; r++)
            acc[r] += sd_vget(v, r) * sd_ldx(x, sd_vget(ci, r));
    }
    if (SD_TPR > 1) {
        const unsigned mask = sd_group_mask(SD_TPR);
#pragma unroll
        for (int r = 0; r < SD_RPT; r++)
#pragma unroll
            for (int off = SD_TPR / 2; off > 0; off /= 2)
                acc[r] += __shfl_down_sync(mask, acc[r], off, SD_TPR);
    }
    if (j == 0 && live) {
#pragma unroll
        for (int r = 0; r < SD_RPT; r++) {
            const long long i = i0 + r;
            if (i < rows) {
#if SD_PERM
                y[__ldg(perm + i)] = acc[r];
#else
                (void)perm;
                y[i] = acc[r];
#endif
            }
        }
    }
}
