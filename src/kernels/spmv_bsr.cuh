/* src/kernels/spmv_bsr.cuh: BSR(b) SpMV. A group of SD_G lanes walks one block row's
 * value stream (blocks of b² values, row-major inside), each lane loading SD_V
 * consecutive values of one block row per step (vector loads); since G·V is a multiple
 * of b², a lane keeps the same row r inside every block, so per-lane sums only need a
 * final reduction across lanes of equal r. Edge blocks are padded with zeros; their
 * column indices are clamped so x is never read past cols. Macros:
 *   SD_BLOCK  threads per CTA    SD_B  block size 2, 4, 8, 16
 *   SD_G      lanes per block row (G·V a multiple of b², G ≤ 32)     SD_STREAM
 * Arguments: browptr, bcolind, bvals, x, y, brows, rows, cols. */
#include "spmv_util.cuh"

#ifndef SD_BLOCK
#define SD_BLOCK 256
#endif
#ifndef SD_B
#define SD_B 4
#endif
#if SD_B == 16
#define SD_V 8
#elif SD_B == 2
#define SD_V 2
#else
#define SD_V 4
#endif
#ifndef SD_G
#define SD_G 32
#endif

static_assert(SD_B == 2 || SD_B == 4 || SD_B == 8 || SD_B == 16, "SD_B must be 2, 4, 8 or 16");
static_assert(SD_G >= 1 && SD_G <= 32 && (SD_G & (SD_G - 1)) == 0, "SD_G: power of two ≤ 32");
static_assert((SD_G * SD_V) % (SD_B * SD_B) == 0, "SD_G·SD_V must be a multiple of b²");
#if SD_COLC
#error "spmv_bsr: 16-bit column deltas are not supported"
#endif

SD_KERNEL SD_LAUNCH_BOUNDS(SD_BLOCK) void sd_spmv_bsr(
    const int *SD_RESTRICT browptr, const int *SD_RESTRICT bcolind,
    const float *SD_RESTRICT bvals, const float *SD_RESTRICT x, float *SD_RESTRICT y,
    int brows, int rows, int cols)
{
    constexpr int BB = SD_B * SD_B;
    constexpr int STEP = SD_G * SD_V;
    const long long br = (long long)blockIdx.x * (SD_BLOCK / SD_G) + threadIdx.x / SD_G;
    const int lane = (int)(threadIdx.x % SD_G);
    const int w = (lane * SD_V) % BB; /* offset inside a block: constant across steps */
    const int r = w / SD_B, c0 = w % SD_B;
    float sum = 0.0f;
    if (br < brows) {
        const long long first = __ldg(browptr + br), nb = __ldg(browptr + br + 1) - first;
        const long long nval = nb * BB;
        const float *bv = bvals + first * BB;
#pragma unroll 2
        for (long long e = (long long)lane * SD_V; e < nval; e += STEP) {
            const long long j = first + e / BB;
            const int col = __ldg(bcolind + j) * SD_B + c0;
            float v[SD_V];
#if SD_V == 8
            const float4 q0 = sd_ldm(reinterpret_cast<const float4 *>(bv + e));
            const float4 q1 = sd_ldm(reinterpret_cast<const float4 *>(bv + e + 4));
            v[0] = q0.x; v[1] = q0.y; v[2] = q0.z; v[3] = q0.w;
            v[4] = q1.x; v[5] = q1.y; v[6] = q1.z; v[7] = q1.w;
#elif SD_V == 4
            const float4 q = sd_ldm(reinterpret_cast<const float4 *>(bv + e));
            v[0] = q.x; v[1] = q.y; v[2] = q.z; v[3] = q.w;
#else
            const float2 q = sd_ldm(reinterpret_cast<const float2 *>(bv + e));
            v[0] = q.x; v[1] = q.y;
#endif
            if (col + SD_V <= cols) {
#pragma unroll
                for (int t = 0; t < SD_V; t++)
                    sum += v[t] * sd_ldx(x, col + t);
            } else { /* an edge block: padded columns hold 0 */
#pragma unroll
                for (int t = 0; t < SD_V; t++)
                    sum += v[t] * sd_ldx(x, min(col + t, cols - 1));
            }
        }
    }
    /* Fold lanes holding the same row r: lane bit m keeps r when m·V < b (it moves
     * along the row) or m·V ≥ b² (it moves to another block). */
    if (SD_G > 1) {
        const unsigned mask = sd_group_mask(SD_G);
#pragma unroll
        for (int m = 1; m < SD_G; m *= 2)
            if (m * SD_V < SD_B || m * SD_V >= BB)
                sum += __shfl_xor_sync(mask, sum, m, SD_G);
    }
    if (br < brows && lane * SD_V < BB && c0 == 0) {
        const long long row = br * SD_B + r;
        if (row < rows)
            y[row] = sum;
    }
}
