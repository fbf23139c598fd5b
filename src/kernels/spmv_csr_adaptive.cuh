/* src/kernels/spmv_csr_adaptive.cuh: CSR-Adaptive SpMV: row binning in one launch. The
 * format's items give each CTA either a stream block (consecutive short rows, at most
 * SD_CAP nonzeros: products staged in shared memory with coalesced loads, then each row
 * reduced by a lane group sized to the block's mean row length, or by the whole CTA for
 * a single medium row) or one piece of a long row (SD_PIECE nonzeros; the pieces'
 * partial sums go to a workspace and the CTA finishing a row's last piece adds them in
 * piece order — no float atomics, deterministic). Macros:
 *   SD_BLOCK  threads per CTA      SD_CAP    nonzeros per stream block (≤ smem)
 *   SD_MAXR   rows per stream block at most      SD_PIECE  nonzeros per long-row piece
 *   SD_RP32, SD_STREAM (spmv_util.cuh)
 * Arguments: rowptr, colind, vals, x, y, items (int4 per CTA), lrbase, lrpart, lrcount. */
#include "spmv_util.cuh"

#ifndef SD_BLOCK
#define SD_BLOCK 256
#endif
#ifndef SD_CAP
#define SD_CAP 2048
#endif
#ifndef SD_MAXR
#define SD_MAXR 512
#endif
#ifndef SD_PIECE
#define SD_PIECE 8192
#endif

static_assert(SD_BLOCK % 32 == 0 && SD_BLOCK >= 64 && SD_BLOCK <= 1024,
              "SD_BLOCK must be a multiple of 32 in [64, 1024]");
static_assert(SD_CAP >= SD_BLOCK && SD_MAXR >= 1, "SD_CAP ≥ SD_BLOCK and SD_MAXR ≥ 1");
#if SD_COLC
#error "spmv_csr_adaptive: 16-bit column deltas are not supported (products are staged by nonzero)"
#endif

/* Sum of [s, e) by the whole CTA with aligned 16-byte loads (arrays padded to 8). */
static __device__ __forceinline__ float sd_cta_range_sum(const int *SD_RESTRICT colind,
                                                         const float *SD_RESTRICT vals,
                                                         const float *SD_RESTRICT x,
                                                         long long s, long long e)
{
    float sum = 0.0f;
    const long long a0 = s & ~3LL;
#pragma unroll 2
    for (long long c = a0 + 4LL * threadIdx.x; c < e; c += 4LL * SD_BLOCK) {
        const int4 ci = sd_ldm(reinterpret_cast<const int4 *>(colind + c));
        const float4 v = sd_ldm(reinterpret_cast<const float4 *>(vals + c));
        if (c >= s)
            sum += v.x * sd_ldx(x, ci.x);
        if (c + 1 >= s && c + 1 < e)
            sum += v.y * sd_ldx(x, ci.y);
        if (c + 2 >= s && c + 2 < e)
            sum += v.z * sd_ldx(x, ci.z);
        if (c + 3 < e)
            sum += v.w * sd_ldx(x, ci.w);
    }
    return sd_block_sum<SD_BLOCK>(sum);
}

SD_KERNEL SD_LAUNCH_BOUNDS(SD_BLOCK) void sd_spmv_csr_adaptive(
    const sd_rp_t *SD_RESTRICT rowptr, const int *SD_RESTRICT colind,
    const float *SD_RESTRICT vals, const float *SD_RESTRICT x, float *SD_RESTRICT y,
    const int4 *SD_RESTRICT items, const int *SD_RESTRICT lrbase, float *SD_RESTRICT lrpart,
    int *SD_RESTRICT lrcount)
{
    __shared__ float s_prod[SD_CAP];
    __shared__ int s_off[SD_MAXR + 1];
    __shared__ int s_last;
    const int tid = (int)threadIdx.x;
    const int4 it = __ldg(items + blockIdx.x);
    if (it.y > 0) {
        /* ---- stream block: rows [r0, r0 + nr), at most SD_CAP nonzeros */
        const int r0 = it.x, nr = it.y;
        const long long z0 = sd_ldm(rowptr + r0);
        for (int i = tid; i <= nr; i += SD_BLOCK)
            s_off[i] = (int)(sd_ldm(rowptr + r0 + i) - z0);
        const int nz = (int)(sd_ldm(rowptr + r0 + nr) - z0);
#pragma unroll 4
        for (int i = tid; i < nz; i += SD_BLOCK)
            s_prod[i] = sd_ldm(vals + z0 + i) * sd_ldx(x, sd_ldm(colind + z0 + i));
        __syncthreads();
        if (nr == 1) {
            float sum = 0.0f;
            for (int i = tid; i < nz; i += SD_BLOCK)
                sum += s_prod[i];
            sum = sd_block_sum<SD_BLOCK>(sum);
            if (tid == 0)
                y[r0] = sum;
            return;
        }
        /* Lane group per row: the mean row length rounded up to a power of two, at most
         * 32, and small enough that the groups cover the rows in one pass if possible. */
        const int mean = (nz + nr - 1) / nr;
        int g = 1;
        while (g < 32 && g < mean)
            g *= 2;
        while (g > 1 && (SD_BLOCK / g) < nr)
            g /= 2;
        const int lane = tid & (g - 1);
        const unsigned mask = sd_group_mask(g);
        for (int r = tid / g; r < nr; r += SD_BLOCK / g) {
            float sum = 0.0f;
            for (int i = s_off[r] + lane; i < s_off[r + 1]; i += g)
                sum += s_prod[i];
            for (int off = g / 2; off > 0; off /= 2)
                sum += __shfl_down_sync(mask, sum, off, g);
            if (lane == 0)
                y[r0 + r] = sum;
        }
        return;
    }
    /* ---- one piece of a long row */
    const int row = it.x, piece = it.z, lid = it.w;
    const long long b = sd_ldm(rowptr + row), e = sd_ldm(rowptr + row + 1);
    const long long s = b + (long long)piece * SD_PIECE;
    const long long t = min(s + SD_PIECE, e);
    const float part = sd_cta_range_sum(colind, vals, x, s, t);
    const int pb = __ldg(lrbase + lid), np = __ldg(lrbase + lid + 1) - pb;
    if (np == 1) {
        if (tid == 0)
            y[row] = part;
        return;
    }
    if (tid == 0) {
        lrpart[pb + piece] = part;
        __threadfence();
        s_last = atomicAdd(lrcount + lid, 1) == np - 1;
    }
    __syncthreads();
    if (!s_last)
        return;
    /* The last piece to finish: all partials are visible; add them in piece order. */
    if (tid < 32) {
        float sum = 0.0f;
        for (int p = tid; p < np; p += 32)
            sum += __ldcg(lrpart + pb + p);
        /* Lanes hold strided partial sums; fold them in a fixed order. */
#pragma unroll
        for (int off = 16; off > 0; off /= 2)
            sum += __shfl_down_sync(SD_FULL_MASK, sum, off);
        if (tid == 0) {
            y[row] = sum;
            lrcount[lid] = 0; /* ready for the next launch */
        }
    }
}
