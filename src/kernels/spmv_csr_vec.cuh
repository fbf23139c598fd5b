/* src/kernels/spmv_csr_vec.cuh: CSR SpMV with a sub-warp of SD_VW lanes per row
 * (SD_VW = 1 is thread per row, 32 warp per row; the planner picks the width from the
 * row-length distribution). One launch, no atomics, no workspace. Macros:
 *   SD_BLOCK   threads per CTA (multiple of 32, ≤ 1024)
 *   SD_VW      lanes per row: 1, 2, 4, 8, 16, 32
 *   SD_VEC     1: one element per lane per step; 4: aligned 16-byte chunks of 4
 *              elements (colind/vals padded to a multiple of 8 by the format)
 *   SD_UNROLL  unroll factor of the row loop
 *   SD_GRID_STRIDE 1: rows visited in a grid-stride loop (any grid; the single-CTA tiny
 *              path); 0: one row per sub-warp (grid = ⌈rows·VW / BLOCK⌉)
 *   SD_XSMEM   1: each CTA first copies all of x (cols floats) into dynamic shared memory
 *              and gathers from there (implies the grid-stride loop: a few resident CTAs
 *              per SM, so each copies x once). A gather then costs a bank access
 *              instead of a cache line's tag and sector. On the H200 it is within
 *              1-3 % of the L1-cached gathers on Nemeth_nemeth26 and Andrianov_net125's
 *              twins (x stays in L1 there) and wins a few small real matrices
 *              (`sparseditto bench --set paper60,real --ops spmv`).
 *   SD_RP32, SD_COLC, SD_COLC_SHIFT, SD_STREAM (spmv_util.cuh)
 * Arguments: rowptr, colind, colbase (NULL unless SD_COLC), vals, x, y, rows, cols. */
#include "spmv_util.cuh"

#ifndef SD_BLOCK
#define SD_BLOCK 256
#endif
#ifndef SD_VW
#define SD_VW 32
#endif
#ifndef SD_VEC
#define SD_VEC 1
#endif
#ifndef SD_UNROLL
#define SD_UNROLL 2
#endif
#ifndef SD_XSMEM
#define SD_XSMEM 0
#endif
#if SD_XSMEM
#undef SD_GRID_STRIDE
#define SD_GRID_STRIDE 1
/* x is read from shared memory: a plain load (the read-only path is global only). */
#define SD_XLOAD(x, c) ((x)[c])
#else
#define SD_XLOAD(x, c) sd_ldx((x), (c))
#endif
#ifndef SD_GRID_STRIDE
#define SD_GRID_STRIDE 0
#endif

static_assert(SD_VW == 1 || SD_VW == 2 || SD_VW == 4 || SD_VW == 8 || SD_VW == 16 ||
                  SD_VW == 32,
              "SD_VW must be a power of two in [1, 32]");
static_assert(SD_BLOCK % 32 == 0 && SD_BLOCK >= 32 && SD_BLOCK <= 1024,
              "SD_BLOCK must be a multiple of 32 in [32, 1024]");
static_assert(SD_VEC == 1 || SD_VEC == 4, "SD_VEC must be 1 or 4");

/* Partial sum of the lanes' share of row [start, end). */
static __device__ __forceinline__ float sd_csr_row_part(const sd_ci_t *SD_RESTRICT colind,
                                                        const float *SD_RESTRICT vals,
                                                        const float *SD_RESTRICT x,
                                                        long long start, long long end, int base,
                                                        int lane)
{
    float sum = 0.0f;
#if SD_VEC == 4
    const long long a0 = start & ~3LL;
SD_UNROLL_BY(SD_UNROLL)
    for (long long c = a0 + 4LL * lane; c < end; c += 4LL * SD_VW) {
        const int4 ci = sd_load_cols4(colind, c, base);
        const float4 v = sd_ldm(reinterpret_cast<const float4 *>(vals + c));
        if (c >= start && c + 4 <= end) {
            sum += v.x * SD_XLOAD(x, ci.x);
            sum += v.y * SD_XLOAD(x, ci.y);
            sum += v.z * SD_XLOAD(x, ci.z);
            sum += v.w * SD_XLOAD(x, ci.w);
        } else { /* the row's first or last chunk: mask elements outside the row */
            if (c >= start)
                sum += v.x * SD_XLOAD(x, ci.x);
            if (c + 1 >= start && c + 1 < end)
                sum += v.y * SD_XLOAD(x, ci.y);
            if (c + 2 >= start && c + 2 < end)
                sum += v.z * SD_XLOAD(x, ci.z);
            if (c + 3 < end)
                sum += v.w * SD_XLOAD(x, ci.w);
        }
    }
#else
SD_UNROLL_BY(SD_UNROLL)
    for (long long k = start + lane; k < end; k += SD_VW)
        sum += sd_ldm(vals + k) * SD_XLOAD(x, sd_load_col(colind, k, base));
#endif
    return sum;
}

SD_KERNEL SD_LAUNCH_BOUNDS(SD_BLOCK) void sd_spmv_csr_vec(
    const sd_rp_t *SD_RESTRICT rowptr, const sd_ci_t *SD_RESTRICT colind,
    const int *SD_RESTRICT colbase, const float *SD_RESTRICT vals, const float *SD_RESTRICT x,
    float *SD_RESTRICT y, int rows, int cols)
{
#if SD_XSMEM
    extern __shared__ float4 sd_xs4[];
    {
        float *xs = reinterpret_cast<float *>(sd_xs4);
        int i = (int)threadIdx.x;
        if ((reinterpret_cast<unsigned long long>(x) & 15) == 0) { /* 16-byte copies */
            const float4 *x4 = reinterpret_cast<const float4 *>(x);
            for (; i < cols / 4; i += SD_BLOCK)
                sd_xs4[i] = __ldg(x4 + i);
            i = cols / 4 * 4 + (int)threadIdx.x;
        }
        for (; i < cols; i += SD_BLOCK)
            xs[i] = __ldg(x + i);
        __syncthreads();
        x = xs;
    }
#else
    (void)cols;
#endif
    const int lane = (int)(threadIdx.x % SD_VW);
    const long long groups = SD_BLOCK / SD_VW;
    long long row = (long long)blockIdx.x * groups + threadIdx.x / SD_VW;
#if SD_GRID_STRIDE
    const long long stride = (long long)gridDim.x * groups;
    for (; row < rows; row += stride) {
#else
    if (row < rows) {
#endif
        const long long start = sd_ldm(rowptr + row), end = sd_ldm(rowptr + row + 1);
#if SD_COLC
        const int base = __ldg(colbase + (row >> SD_COLC_SHIFT));
#else
        const int base = 0;
        (void)colbase;
#endif
        float sum = sd_csr_row_part(colind, vals, x, start, end, base, lane);
        /* Every lane of a group holds the same row, so the group is converged here. */
        if (SD_VW > 1) {
            const unsigned mask = sd_group_mask(SD_VW);
#pragma unroll
            for (int off = SD_VW / 2; off > 0; off /= 2)
                sum += __shfl_down_sync(mask, sum, off, SD_VW);
        }
        if (lane == 0)
            y[row] = sum;
    }
}
