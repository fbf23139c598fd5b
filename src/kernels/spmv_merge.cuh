/* src/kernels/spmv_merge.cuh: merge-path CSR SpMV (nonzero- and row-balanced whatever
 * the row lengths). The merge of row ends and nonzeros is cut into tiles of
 * SD_BLOCK·SD_IPT items (coordinates precomputed by the format builder); CTA c consumes
 * tiles_per_cta consecutive tiles, staging the tile's row ends and products in shared
 * memory; each thread consumes SD_IPT items; thread carries are combined by a
 * deterministic segmented scan; a row open at a CTA's end leaves a carry, and the CTA
 * that finishes last adds all carries (in CTA order) — one launch, no float atomics.
 * SD_SINGLE = 1 is the tiny-matrix path: one CTA consumes every tile, no carries.
 * Macros: SD_BLOCK, SD_IPT, SD_SINGLE, SD_RP32, SD_STREAM.
 * Arguments: rowptr, colind, vals, x, y, tilerow, tilenz, ntiles, tiles_per_cta,
 *            carry_row, carry_val, counter, rows. */
#include "spmv_util.cuh"

#ifndef SD_BLOCK
#define SD_BLOCK 256
#endif
#ifndef SD_IPT
#define SD_IPT 8
#endif
#ifndef SD_SINGLE
#define SD_SINGLE 0
#endif

static_assert(SD_BLOCK % 32 == 0 && SD_BLOCK >= 32 && SD_BLOCK <= 1024,
              "SD_BLOCK must be a multiple of 32 in [32, 1024]");
static_assert(SD_IPT >= 1 && SD_IPT <= 64, "SD_IPT out of [1, 64]");
#if SD_COLC
#error "spmv_merge: 16-bit column deltas are not supported (products are staged by nonzero)"
#endif

#define SD_TILE (SD_BLOCK * SD_IPT)
/* Resident CTAs the register allocator plans for: without it ptxas squeezes this kernel
 * into 32 registers and spills. */
#define SD_MERGE_MINB (1024 / SD_BLOCK > 0 ? 1024 / SD_BLOCK : 1)

SD_KERNEL SD_LAUNCH_BOUNDS_MIN(SD_BLOCK, SD_MERGE_MINB) void sd_spmv_merge(
    const sd_rp_t *SD_RESTRICT rowptr, const int *SD_RESTRICT colind,
    const float *SD_RESTRICT vals, const float *SD_RESTRICT x, float *SD_RESTRICT y,
    const int *SD_RESTRICT tilerow, const long long *SD_RESTRICT tilenz, int ntiles,
    int tiles_per_cta, int *SD_RESTRICT carry_row, float *SD_RESTRICT carry_val,
    int *SD_RESTRICT counter, int rows)
{
    /* A tile holds nr row ends and nz products with nr + nz ≤ SD_TILE: the row ends
     * (relative to the tile's first nonzero) fill s_buf[0, nr), the products
     * s_buf[nr, nr + nz). Emitted row sums go to s_y: threads inside one long row keep
     * reading its end while others emit, so the two cannot share space. */
    union sd_merge_slot {
        int i;
        float f;
    };
    __shared__ sd_merge_slot s_buf[SD_TILE];
    __shared__ float s_y[SD_TILE];
    __shared__ int s_key[SD_BLOCK];
    __shared__ float s_carry;
    const int tid = (int)threadIdx.x;
    const int t0 = (int)blockIdx.x * tiles_per_cta;
    const int t1 = min(t0 + tiles_per_cta, ntiles);
    float carry_in = 0.0f; /* the open row's sum from this CTA's earlier tiles */
    int open_row = t0 < ntiles ? tilerow[t0] : rows;
    for (int t = t0; t < t1; t++) {
        const int r0 = tilerow[t], r1 = tilerow[t + 1];
        const long long z0 = tilenz[t], z1 = tilenz[t + 1];
        const int nr = r1 - r0, nz = (int)(z1 - z0);
        sd_merge_slot *s_prod = s_buf + nr;
        for (int i = tid; i < nr; i += SD_BLOCK)
            s_buf[i].i = (int)(sd_ldm(rowptr + r0 + i + 1) - z0);
#pragma unroll 4
        for (int i = tid; i < nz; i += SD_BLOCK) {
            const long long k = z0 + i;
            s_prod[i].f = sd_ldm(vals + k) * sd_ldx(x, sd_ldm(colind + k));
        }
        __syncthreads();
        /* This thread's merge range [d0, d1) inside the tile. */
        const int total = nr + nz;
        const int d0 = min(tid * SD_IPT, total), d1 = min(d0 + SD_IPT, total);
        int lo = max(d0 - nz, 0), hi = min(d0, nr);
        while (lo < hi) {
            const int pivot = (lo + hi) >> 1;
            if (s_buf[pivot].i <= d0 - pivot - 1)
                lo = pivot + 1;
            else
                hi = pivot;
        }
        int row = lo, k = d0 - lo;
        float sum = tid == 0 ? carry_in : 0.0f;
        for (int d = d0; d < d1; d++) {
            if (row < nr && s_buf[row].i <= k) {
                s_y[row] = sum;
                sum = 0.0f;
                row++;
            } else {
                sum += s_prod[k].f;
                k++;
            }
        }
        /* Thread carries: keys (open rows) are non-decreasing in thread order. The
         * last segment's key is nr (the tile's open row); it holds thread SD_BLOCK − 1. */
        const float scanned = sd_block_segscan<SD_BLOCK>(sum, row);
        s_key[tid] = row;
        __syncthreads();
        const int nk = tid + 1 < SD_BLOCK ? s_key[tid + 1] : 0x7fffffff;
        if (nk != row) { /* segment end */
            if (row < nr)
                s_y[row] += scanned;
            else
                s_carry = scanned;
        }
        __syncthreads();
        for (int i = tid; i < nr; i += SD_BLOCK)
            y[r0 + i] = s_y[i];
        carry_in = s_carry;
        open_row = r1;
        __syncthreads(); /* shared arrays are refilled by the next tile */
    }
#if SD_SINGLE
    (void)carry_row;
    (void)carry_val;
    (void)counter;
    (void)open_row;
#else
    if (tid == 0) {
        carry_row[blockIdx.x] = open_row;
        carry_val[blockIdx.x] = carry_in;
    }
    if (gridDim.x > 1 && sd_last_cta(counter, gridDim.x)) {
        /* Carries in CTA order, SD_BLOCK at a time: rows are non-decreasing, so a
         * segmented scan gives each row's total at its segment end; chunks run one
         * after the other, so a row spanning two chunks is updated twice, in order. */
        for (int base = 0; base < (int)gridDim.x; base += SD_BLOCK) {
            const int i = base + tid;
            const int key = i < (int)gridDim.x ? __ldcg(carry_row + i) : 0x7fffffff;
            const float v = i < (int)gridDim.x ? __ldcg(carry_val + i) : 0.0f;
            const float sc = sd_block_segscan<SD_BLOCK>(v, key);
            s_key[tid] = key;
            __syncthreads();
            const int nk = tid + 1 < SD_BLOCK ? s_key[tid + 1] : 0x7fffffff;
            if (key != nk && key < rows)
                y[key] = __ldcg(y + key) + sc;
            __syncthreads();
        }
        if (tid == 0)
            *counter = 0; /* ready for the next launch */
    }
#endif
}
