/* src/kernels/spmv_tiles16.cuh: adaptive 16×16-tile SpMV (CB-SpMV style). A warp takes
 * a tile row (16 rows); lane pair (2r, 2r+1) accumulates row r across the tile row's
 * tiles, each tile handled by its own format: dense (lane pair reads the row's 16 values
 * as four float4 and x as float4s), CSR (row starts in 16 bytes, lanes of the pair take
 * alternate entries), COO (entries spread over the warp, summed per row by a segmented
 * warp scan into a per-warp row buffer). No atomics. Macros: SD_BLOCK, SD_STREAM.
 * Arguments: trowptr, tdesc (int4 per tile), tidx, tvals, x, y, trows, rows, cols. */
#include "spmv_util.cuh"

#ifndef SD_BLOCK
#define SD_BLOCK 128
#endif

static_assert(SD_BLOCK % 32 == 0 && SD_BLOCK >= 32 && SD_BLOCK <= 1024, "SD_BLOCK");

SD_KERNEL SD_LAUNCH_BOUNDS(SD_BLOCK) void sd_spmv_tiles16(
    const int *SD_RESTRICT trowptr, const int4 *SD_RESTRICT tdesc,
    const unsigned char *SD_RESTRICT tidx, const float *SD_RESTRICT tvals,
    const float *SD_RESTRICT x, float *SD_RESTRICT y, int trows, int rows, int cols)
{
    __shared__ float s_acc[SD_BLOCK / 32][16];
    const int lane = (int)(threadIdx.x % 32), warp = (int)(threadIdx.x / 32);
    const long long tr = (long long)blockIdx.x * (SD_BLOCK / 32) + warp;
    if (tr >= trows)
        return; /* whole warps leave together */
    const int r = lane >> 1, h = lane & 1;
    if (lane < 16)
        s_acc[warp][lane] = 0.0f;
    __syncwarp();
    float sum = 0.0f;
    const int t0 = __ldg(trowptr + tr), t1 = __ldg(trowptr + tr + 1);
    for (int t = t0; t < t1; t++) {
        const int4 d = __ldg(tdesc + t);
        const int type = d.y >> 16, nz = d.y & 0xffff;
        const int col0 = d.x * 16;
        const float *tv = tvals + d.z;
        const unsigned char *ti = tidx + d.w;
        if (type == 0) { /* dense: lane pair → row r, half h (8 columns) */
            const float4 v0 = sd_ldm(reinterpret_cast<const float4 *>(tv + r * 16 + h * 8));
            const float4 v1 = sd_ldm(reinterpret_cast<const float4 *>(tv + r * 16 + h * 8 + 4));
            const int c = col0 + h * 8;
            if (c + 8 <= cols) {
                const float4 x0 = __ldg(reinterpret_cast<const float4 *>(x + c));
                const float4 x1 = __ldg(reinterpret_cast<const float4 *>(x + c + 4));
                sum += v0.x * x0.x + v0.y * x0.y + v0.z * x0.z + v0.w * x0.w;
                sum += v1.x * x1.x + v1.y * x1.y + v1.z * x1.z + v1.w * x1.w;
            } else { /* the last column tile: padded values are 0 */
                const float v[8] = {v0.x, v0.y, v0.z, v0.w, v1.x, v1.y, v1.z, v1.w};
#pragma unroll
                for (int k = 0; k < 8; k++)
                    if (c + k < cols)
                        sum += v[k] * sd_ldx(x, c + k);
            }
        } else if (type == 1) { /* CSR inside the tile */
            const int s = __ldg(ti + r), e = r < 15 ? __ldg(ti + r + 1) : nz;
            for (int k = s + h; k < e; k += 2)
                sum += sd_ldm(tv + k) * sd_ldx(x, col0 + __ldg(ti + 16 + k));
        } else { /* COO inside the tile: codes sorted by row */
            for (int base = 0; base < nz; base += 32) {
                const int k = base + lane;
                const bool ok = k < nz;
                const int code = ok ? __ldg(ti + k) : 0;
                const int key = ok ? code >> 4 : 16;
                const float p = ok ? sd_ldm(tv + k) * sd_ldx(x, col0 + (code & 15)) : 0.0f;
                const float sc = sd_warp_segscan(p, key);
                const int nk = __shfl_down_sync(SD_FULL_MASK, key, 1);
                if (ok && (lane == 31 || nk != key))
                    s_acc[warp][key] += sc; /* one segment end per row per round */
                __syncwarp();
            }
        }
    }
    sum += __shfl_xor_sync(SD_FULL_MASK, sum, 1);
    __syncwarp();
    if (h == 0) {
        const long long row = tr * 16 + r;
        if (row < rows)
            y[row] = sum + s_acc[warp][r];
    }
}
