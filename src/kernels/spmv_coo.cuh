/* src/kernels/spmv_coo.cuh: row-major COO SpMV in two launches: sd_spmv_coo_zero clears
 * y (empty rows and atomics need it), then sd_spmv_coo gives each warp a chunk of
 * SD_CHUNK·32 entries, reduces 32 entries per step with a warp-segmented scan keyed by
 * row, carries the step's last row into the next step, stores rows that start and end
 * inside the chunk, and adds the chunk's first and last rows atomically (they may be
 * shared with neighbouring warps). Macros: SD_BLOCK, SD_CHUNK, SD_STREAM.
 * Arguments: zero: y, rows. coo: rowind, colind, vals, x, y, nnz. */
#include "spmv_util.cuh"

#ifndef SD_BLOCK
#define SD_BLOCK 256
#endif
#ifndef SD_CHUNK
#define SD_CHUNK 8
#endif

static_assert(SD_BLOCK % 32 == 0 && SD_BLOCK >= 32 && SD_BLOCK <= 1024, "SD_BLOCK");
static_assert(SD_CHUNK >= 1 && SD_CHUNK <= 1024, "SD_CHUNK");

SD_KERNEL SD_LAUNCH_BOUNDS(SD_BLOCK) void sd_spmv_coo_zero(float *SD_RESTRICT y, int rows)
{
    for (long long i = (long long)blockIdx.x * SD_BLOCK + threadIdx.x; i < rows;
         i += (long long)gridDim.x * SD_BLOCK)
        y[i] = 0.0f;
}

SD_KERNEL SD_LAUNCH_BOUNDS(SD_BLOCK) void sd_spmv_coo(const int *SD_RESTRICT rowind,
                                                      const int *SD_RESTRICT colind,
                                                      const float *SD_RESTRICT vals,
                                                      const float *SD_RESTRICT x,
                                                      float *SD_RESTRICT y, long long nnz)
{
    const int lane = (int)(threadIdx.x % 32);
    const long long warp = (long long)blockIdx.x * (SD_BLOCK / 32) + threadIdx.x / 32;
    const long long c0 = warp * SD_CHUNK * 32;
    if (c0 >= nnz)
        return;
    const long long c1 = min(c0 + (long long)SD_CHUNK * 32, nnz);
    const int first_row = __ldg(rowind + c0);
    int carry_row = -1;
    float carry = 0.0f;
    for (long long b = c0; b < c1; b += 32) {
        const long long k = b + lane;
        const bool ok = k < c1;
        const int key = ok ? sd_ldm(rowind + k) : 0x7fffffff;
        float p = ok ? sd_ldm(vals + k) * sd_ldx(x, sd_ldm(colind + k)) : 0.0f;
        /* The previous step's last row continues here or is finished. */
        const int key0 = __shfl_sync(SD_FULL_MASK, key, 0);
        if (carry_row >= 0 && carry_row != key0 && lane == 0) {
            if (carry_row == first_row)
                atomicAdd(y + carry_row, carry);
            else
                y[carry_row] = carry;
        }
        if (lane == 0 && carry_row == key0)
            p += carry;
        const float sc = sd_warp_segscan(p, key);
        const int nk = __shfl_down_sync(SD_FULL_MASK, key, 1);
        /* The step's last valid lane carries its row forward. */
        const int nvalid = (int)min(32LL, c1 - b);
        if (ok && lane < nvalid - 1 && nk != key) {
            if (key == first_row)
                atomicAdd(y + key, sc);
            else
                y[key] = sc;
        }
        carry_row = __shfl_sync(SD_FULL_MASK, key, nvalid - 1);
        carry = __shfl_sync(SD_FULL_MASK, sc, nvalid - 1);
    }
    /* The chunk's last row may continue in the next warp's chunk. */
    if (lane == 0 && carry_row >= 0)
        atomicAdd(y + carry_row, carry);
}
