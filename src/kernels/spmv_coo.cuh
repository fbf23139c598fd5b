/* src/kernels/spmv_coo.cuh: row-major COO SpMV in two launches: sd_spmv_coo_zero clears
 * y (empty rows and atomics need it), then sd_spmv_coo gives each warp a chunk of
 * SD_CHUNK·32 entries, reduces 32 entries per step with a warp-segmented scan keyed by
 * row, carries the step's last row into the next step, stores rows that start and end
 * inside the chunk, and adds the chunk's first and last rows atomically (they may be
 * shared with neighbouring warps). With SD_IPT > 1 a step is 32·SD_IPT entries, each lane
 * SD_IPT consecutive ones (16-byte loads where whole): the lane sums its runs of equal rows
 * itself (runs inside it are complete: stored), then one warp-segmented scan over the
 * lanes' last runs joins rows that cross lanes — one scan per 32·SD_IPT entries instead of
 * per 32. Macros: SD_BLOCK, SD_CHUNK, SD_IPT (1, 2, 4 or 8), SD_STREAM.
 * Arguments: zero: y, rows. coo: rowind, colind, vals, x, y, nnz. */
#include "spmv_util.cuh"

#ifndef SD_BLOCK
#define SD_BLOCK 256
#endif
#ifndef SD_CHUNK
#define SD_CHUNK 8
#endif
#ifndef SD_IPT
#define SD_IPT 1
#endif

static_assert(SD_BLOCK % 32 == 0 && SD_BLOCK >= 32 && SD_BLOCK <= 1024, "SD_BLOCK");
static_assert(SD_CHUNK >= 1 && SD_CHUNK <= 1024, "SD_CHUNK");
static_assert(SD_IPT == 1 || SD_IPT == 2 || SD_IPT == 4 || SD_IPT == 8, "SD_IPT");
#define SD_NOROW 0x7fffffff /* the key of slots past the last entry */

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
#if SD_IPT == 1
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
#else
    const int lane = (int)(threadIdx.x % 32);
    const long long warp = (long long)blockIdx.x * (SD_BLOCK / 32) + threadIdx.x / 32;
    constexpr long long STEP = 32LL * SD_IPT;
    const long long c0 = warp * SD_CHUNK * STEP;
    if (c0 >= nnz)
        return;
    const long long c1 = min(c0 + (long long)SD_CHUNK * STEP, nnz);
    /* Rows equal to the chunk's first may have entries in the warp before: added atomically,
     * like the last row carried out of the chunk; every other row is this warp's alone. */
    const int first_row = __ldg(rowind + c0);
    int carry_row = -1;
    float carry = 0.0f;
    for (long long b = c0; b < c1; b += STEP) {
        const long long e0 = b + (long long)lane * SD_IPT;
        int key[SD_IPT], col[SD_IPT];
        float val[SD_IPT];
#if SD_IPT % 4 == 0
        if (e0 + SD_IPT <= c1) { /* whole: 16-byte loads (c0, and so e0, is a multiple of 4) */
#pragma unroll
            for (int q = 0; q < SD_IPT / 4; q++) {
                const int4 r4 = sd_ldm(reinterpret_cast<const int4 *>(rowind + e0) + q);
                const int4 k4 = sd_ldm(reinterpret_cast<const int4 *>(colind + e0) + q);
                const float4 v4 = sd_ldm(reinterpret_cast<const float4 *>(vals + e0) + q);
                key[4 * q] = r4.x, key[4 * q + 1] = r4.y, key[4 * q + 2] = r4.z, key[4 * q + 3] = r4.w;
                col[4 * q] = k4.x, col[4 * q + 1] = k4.y, col[4 * q + 2] = k4.z, col[4 * q + 3] = k4.w;
                val[4 * q] = v4.x, val[4 * q + 1] = v4.y, val[4 * q + 2] = v4.z, val[4 * q + 3] = v4.w;
            }
        } else
#endif
        {
#pragma unroll
            for (int i = 0; i < SD_IPT; i++) {
                const bool ok = e0 + i < c1;
                key[i] = ok ? sd_ldm(rowind + e0 + i) : SD_NOROW;
                col[i] = ok ? sd_ldm(colind + e0 + i) : 0;
                val[i] = ok ? sd_ldm(vals + e0 + i) : 0.0f;
            }
        }
        float p[SD_IPT];
#pragma unroll
        for (int i = 0; i < SD_IPT; i++)
            p[i] = key[i] != SD_NOROW ? val[i] * sd_ldx(x, col[i]) : 0.0f;
        /* The previous step's last row continues in lane 0 or is finished. */
        const int key0 = __shfl_sync(SD_FULL_MASK, key[0], 0);
        if (lane == 0 && carry_row >= 0 && carry_row != key0) {
            if (carry_row == first_row)
                atomicAdd(y + carry_row, carry);
            else
                y[carry_row] = carry;
        }
        if (lane == 0 && carry_row == key0)
            p[0] += carry;
        /* The lane's runs of equal rows: the first (head) may continue from earlier lanes, the
         * last (tail) into later ones; those between are whole rows, stored here. */
        float head = 0.0f, run = 0.0f;
        bool multi = false;
        int rrow = key[0];
#pragma unroll
        for (int i = 0; i < SD_IPT; i++) {
            if (key[i] != rrow) {
                if (!multi) {
                    head = run;
                    multi = true;
                } else if (rrow != SD_NOROW) {
                    y[rrow] = run;
                }
                rrow = key[i];
                run = 0.0f;
            }
            run += p[i];
        }
        /* Tails joined across lanes; a head ends in its lane, so it is whole once the tail
         * of the lane before (when it has the same row) is added. */
        const float s = sd_warp_segscan(run, rrow);
        const float s_prev = __shfl_up_sync(SD_FULL_MASK, s, 1);
        const int row_prev = __shfl_up_sync(SD_FULL_MASK, rrow, 1);
        const int head_next = __shfl_down_sync(SD_FULL_MASK, key[0], 1);
        if (multi) {
            const float h = lane > 0 && row_prev == key[0] ? head + s_prev : head;
            if (key[0] == first_row)
                atomicAdd(y + key[0], h);
            else
                y[key[0]] = h;
        }
        /* A tail whose row does not go on into the next lane is whole (lane 31's goes on
         * into the next step as the carry). */
        if (lane < 31 && rrow != head_next && rrow != SD_NOROW) {
            if (rrow == first_row)
                atomicAdd(y + rrow, s);
            else
                y[rrow] = s;
        }
        const int last = __shfl_sync(SD_FULL_MASK, rrow, 31);
        carry = __shfl_sync(SD_FULL_MASK, s, 31);
        carry_row = last == SD_NOROW ? -1 : last;
    }
    /* The chunk's last row may continue in the next warp's chunk. */
    if (lane == 0 && carry_row >= 0)
        atomicAdd(y + carry_row, carry);
#endif
}
