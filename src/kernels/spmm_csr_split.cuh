// src/kernels/spmm_csr_split.cuh: nonzero-split CSR SpMM for skewed rows: rows with more
// than T entries are cut into chunks of CH entries, each chunk handled by a full
// warp (SD_KL lanes across the K tile × SD_NZL lanes across entries); other rows go
// through the row-wise groups of spmm_csr_row (SD_KL × SD_NZ lanes).
//
// SD_MODE 0 (atomic, two launches on one stream):
//   SD_KNAME  row-wise pass over all rows; a long row does only its first CH entries
//             and writes them (plain store), so C needs no zeroing;
//   SD_KNAME2 the remaining chunks, one warp each, added with atomicAdd.
//   Arguments: SD_KNAME (rowptr, colind, vals, B, C);
//              SD_KNAME2 (rowptr, colind, vals, chunk_row, chunk_start, B, C).
// SD_MODE 1 (fixup, one launch, no float atomics, bitwise reproducible):
//   blocks [0, nb_short) are the row-wise pass over rows of ≤ T entries; the other
//   blocks take one chunk per warp, store the chunk's partial tile in the workspace ws,
//   and count arrivals per (long row, K tile) in cnt; the last chunk to arrive sums the
//   partials of its row in chunk order, writes C and resets the counter (cnt is zeroed
//   once when the program is loaded and left zero by every run).
//   Arguments: (rowptr, colind, vals, chunk_row, chunk_start, chunk_long, long_first, ws,
//   cnt, B, C).
// SD_MODE 2 (segments, one launch, no float atomics, bitwise reproducible): nonzero-balanced
//   over every row, COO style: group g of SD_KL lanes (nzpar 1) takes the entries
//   [g·CH, (g+1)·CH), rows from rowind. A run of a row that lies inside the segment is
//   stored; a run cut by a segment boundary stores its partial in ws (slot 1 when the
//   row starts in this segment, else slot 0) and counts in cnt at (the row's first
//   segment, K tile); the last to arrive sums the row's partials in segment order. Empty
//   rows are zeroed by the segment whose entries straddle them (the last segment: the
//   rows after its last entry; segment 0: the rows before the first).
//   Arguments: (rowptr, rowind, colind, vals, ws, cnt, B, C, rows, nnz (64-bit), CH, nseg).
// SD_MODE 3 (segments with atomic sums, one launch, float atomics): as mode 2, but a run cut
//   by a segment boundary adds its partial into the row's slot of ws (K floats at the row's
//   first segment) with vector atomics; the last of the row's segments to arrive (cnt) reads
//   the slot, writes C and zeroes the slot. Its finish is one load whatever the row's length,
//   where mode 2's last segment sums one partial per segment in order (rajat22's twin, a row
//   of 3401 entries: 107 partials at CH = 32). ws is zero when the program is
//   loaded and left zero by every run. Same arguments as mode 2.
// Launch: grid (blocks, K tiles), block SD_WARPS·32. Modes 0 and 1 also take the sizes
// (rows, T, CH) and mode 0's SD_KNAME2 / mode 1's SD_KNAME (nchunks, nb_short) after C.
#include "spmm_common.cuh"

#define SD_G (SD_KL * SD_NZ)
#define SD_GPC (SD_WARPS * 32 / SD_G)
#define SD_KTILE (SD_KL * SD_V * SD_CO)
#define SD_KTILES ((SD_K + SD_KTILE - 1) / SD_KTILE)

// Row-wise group over row `row`; long rows capped (mode 0) or skipped (mode 1).
__device__ __forceinline__ void sd_split_short(const sd_rp *__restrict__ rowptr,
                                               const int *__restrict__ colind,
                                               const float *__restrict__ vals,
                                               const float *__restrict__ B,
                                               float *__restrict__ C, int row, int rows,
                                               int T, int CH)
{
    if (row >= rows)
        return;
    const int lane = (int)threadIdx.x % SD_G;
    const int k0 = SD_KTILES == 1 ? 0 : (int)blockIdx.y * SD_KTILE;
    const unsigned gmask = sd_gmask<SD_G>((int)threadIdx.x & 31);
    const sd_rp s = __ldg(rowptr + row);
    sd_rp e = __ldg(rowptr + row + 1);
    if (e - s > (sd_rp)T) {
        if (SD_MODE == 1)
            return;
        e = s + CH;
    }
    float acc[SD_CO][SD_V];
    sd_zero(acc);
    sd_row_accum<SD_KL, SD_NZ, SD_V, SD_CO>(colind, vals, s, e, B, k0, lane, gmask, acc);
    if (SD_NZ > 1)
        sd_group_reduce<SD_KL, SD_NZ, SD_V, SD_CO>(gmask, acc);
    if (lane < SD_KL)
        sd_store_row<SD_KL, SD_V, SD_CO>(C + (sd_off)row * SD_K, k0, lane, acc);
}

// One warp accumulates chunk c of a long row into acc (all lanes end with the sum).
__device__ __forceinline__ int sd_split_chunk(const sd_rp *__restrict__ rowptr,
                                              const int *__restrict__ colind,
                                              const float *__restrict__ vals,
                                              const int *__restrict__ chunk_row,
                                              const sd_rp *__restrict__ chunk_start,
                                              const float *__restrict__ B, int c, int k0,
                                              int CH, float (&acc)[SD_CO][SD_V])
{
    const int lane = (int)threadIdx.x & 31;
    const int row = __ldg(chunk_row + c);
    const sd_rp s = __ldg(chunk_start + c);
    const sd_rp re = __ldg(rowptr + row + 1);
    const sd_rp e = re - s > (sd_rp)CH ? s + CH : re;
    sd_zero(acc);
    sd_row_accum<SD_KL, SD_NZL, SD_V, SD_CO>(colind, vals, s, e, B, k0, lane, 0xffffffffu, acc);
    sd_group_reduce<SD_KL, SD_NZL, SD_V, SD_CO>(0xffffffffu, acc);
    return row;
}

#if SD_MODE == 0

SD_KERNEL void __launch_bounds__(SD_WARPS * 32, SD_MINB)
    SD_KNAME(const sd_rp *__restrict__ rowptr, const int *__restrict__ colind,
             const float *__restrict__ vals, const float *__restrict__ B, float *__restrict__ C,
             int rows, int T, int CH)
{
    sd_split_short(rowptr, colind, vals, B, C, (int)blockIdx.x * SD_GPC + (int)threadIdx.x / SD_G,
                   rows, T, CH);
}

SD_KERNEL void __launch_bounds__(SD_WARPS * 32, SD_MINB)
    SD_KNAME2(const sd_rp *__restrict__ rowptr, const int *__restrict__ colind,
              const float *__restrict__ vals, const int *__restrict__ chunk_row,
              const sd_rp *__restrict__ chunk_start, const float *__restrict__ B,
              float *__restrict__ C, int rows, int T, int CH, int nchunks)
{
    const int c = (int)blockIdx.x * SD_WARPS + (int)threadIdx.x / 32;
    if (c >= nchunks)
        return;
    const int lane = (int)threadIdx.x & 31;
    const int k0 = SD_KTILES == 1 ? 0 : (int)blockIdx.y * SD_KTILE;
    float acc[SD_CO][SD_V];
    const int row = sd_split_chunk(rowptr, colind, vals, chunk_row, chunk_start, B, c, k0, CH, acc);
    if (lane < SD_KL)
        sd_store_row_atomic<SD_KL, SD_V, SD_CO>(C + (sd_off)row * SD_K, k0, lane, acc);
}

#elif SD_MODE == 2 || SD_MODE == 3

// B vectors of entries loaded before any is used: about 32 floats per lane (16 under the
// light cap, SD_INFLIGHT 8), at most 8 entries. Segments wait on these loads alone: the
// LAW_in-2004 twin at K = 8 takes 366 us with 2 rows of B in flight per group, 315 us with 4
// and 268 us with 8 (H200, `sparseditto bench --set paper60 --ops spmm8`).
#define SD_SEG_FLOATS (SD_INFLIGHT >= 32 ? 32 : 16)
#define SD_SU_RAW (SD_SEG_FLOATS / (SD_CO * SD_V))
#define SD_SU (SD_SU_RAW < 1 ? 1 : SD_SU_RAW > 8 ? 8 : SD_SU_RAW)
// Entries each lane loads per batch: a batch holds at least SD_SU entries, so that narrow
// groups (K = 8: two lanes of float4) keep SD_SU rows of B in flight, not SD_KL.
#define SD_EPL (SD_KL >= SD_SU ? 1 : SD_SU / SD_KL)
#define SD_BATCH (SD_KL * SD_EPL)
#define SD_SEG_PREFETCH (SD_EPL == 1)
#if SD_EPL > 1 && SD_BATCH != SD_SU
#error "csr_split segments: a batch of several entries per lane must be SD_SU entries"
#endif
// Partials of a cut row loaded together by its finisher: about 32 floats per lane, at most 8.
#define SD_FU ((32 / (SD_CO * SD_V)) < 1 ? 1 : (32 / (SD_CO * SD_V)) > 8 ? 8 : (32 / (SD_CO * SD_V)))

// The n entries of the batch at `base` in the lanes' slots (n <= 0: none).
__device__ __forceinline__ void sd_seg_entries(const int *__restrict__ rowind,
                                               const int *__restrict__ colind,
                                               const float *__restrict__ vals, long long base,
                                               int n, int lane, int (&r)[SD_EPL],
                                               int (&c)[SD_EPL], float (&v)[SD_EPL])
{
#pragma unroll
    for (int p = 0; p < SD_EPL; p++) {
        const int q = p * SD_KL + lane;
        r[p] = 0;
        c[p] = 0;
        v[p] = 0.0f;
        if (q < n) {
            r[p] = __ldg(rowind + base + q);
            c[p] = __ldg(colind + base + q);
            v[p] = __ldg(vals + base + q);
        }
    }
}

// Zeroes the tile of rows [r0, r1) (empty rows).
__device__ __forceinline__ void sd_seg_zero(float *__restrict__ C, int r0, int r1, int k0,
                                            int lane)
{
    float z[SD_CO][SD_V];
    sd_zero(z);
    for (int r = r0; r < r1; r++)
        sd_store_row<SD_KL, SD_V, SD_CO>(C + (sd_off)r * SD_K, k0, lane, z);
}

// A run of `row` cut by a boundary of segment `seg`: its partial goes to ws (mode 2: the
// segment's own slot; mode 3: added into the row's slot); the last of the row's segments to
// arrive sums the partials in segment order (mode 2) or reads the row's slot (mode 3) and
// writes C.
__device__ __forceinline__ void sd_seg_finish(const sd_rp *__restrict__ rowptr, float *ws,
                                              int *cnt, float *__restrict__ C, int row, int seg,
                                              int tile, int k0, int lane, unsigned gmask, int CH,
                                              const float (&acc)[SD_CO][SD_V])
{
    const sd_rp rs = __ldg(rowptr + row), re = __ldg(rowptr + row + 1);
    const int c0 = (int)(rs / CH), c1 = (int)((re - 1) / CH);
#if SD_MODE == 3
    float *slot = ws + (long long)c0 * SD_K;
    sd_store_row_atomic<SD_KL, SD_V, SD_CO>(slot, k0, lane, acc);
#else
    sd_store_row<SD_KL, SD_V, SD_CO>(ws + ((long long)seg * 2 + (c0 == seg)) * SD_K, k0, lane,
                                     acc);
#endif
    __threadfence();
    __syncwarp(gmask);
    int *counter = cnt + (long long)c0 * SD_KTILES + tile;
    int arrived = 0;
    if (lane == 0)
        arrived = atomicAdd(counter, 1);
    arrived = __shfl_sync(gmask, arrived, 0, SD_KL);
    if (arrived != c1 - c0)
        return;
    __threadfence();
    float sum[SD_CO][SD_V];
#if SD_MODE == 3
    // The row's slot holds every segment's partial: read once, then left zero.
#pragma unroll
    for (int t = 0; t < SD_CO; t++) {
        const int k = k0 + (t * SD_KL + lane) * SD_V;
        if (SD_K % SD_KTILE == 0 || k < SD_K)
            sd_load_cg<SD_V>(slot + k, sum[t]);
    }
#else
    sd_zero(sum);
    // SD_FU partials in flight (a long row has many); added in segment order all the same.
    for (int q0 = c0; q0 <= c1; q0 += SD_FU) {
        float x[SD_FU][SD_CO][SD_V];
#pragma unroll
        for (int u = 0; u < SD_FU; u++) {
            const int q = q0 + u;
            const float *part = ws + ((long long)q * 2 + (q == c0)) * SD_K;
#pragma unroll
            for (int t = 0; t < SD_CO; t++) {
                const int k = k0 + (t * SD_KL + lane) * SD_V;
                if (q <= c1 && (SD_K % SD_KTILE == 0 || k < SD_K))
                    sd_load_cg<SD_V>(part + k, x[u][t]);
            }
        }
#pragma unroll
        for (int u = 0; u < SD_FU; u++)
#pragma unroll
            for (int t = 0; t < SD_CO; t++)
                if (q0 + u <= c1)
#pragma unroll
                    for (int i = 0; i < SD_V; i++)
                        sum[t][i] += x[u][t][i];
    }
#endif
    sd_store_row<SD_KL, SD_V, SD_CO>(C + (sd_off)row * SD_K, k0, lane, sum);
#if SD_MODE == 3
    float zero[SD_CO][SD_V];
    sd_zero(zero);
    sd_store_row<SD_KL, SD_V, SD_CO>(slot, k0, lane, zero);
#endif
    if (lane == 0)
        *counter = 0;
}

SD_KERNEL void __launch_bounds__(SD_WARPS * 32, SD_MINB)
    SD_KNAME(const sd_rp *__restrict__ rowptr, const int *__restrict__ rowind,
             const int *__restrict__ colind, const float *__restrict__ vals, float *ws, int *cnt,
             const float *__restrict__ B, float *__restrict__ C, int rows, long long nnz, int CH,
             int nseg)
{
    const int seg = (int)blockIdx.x * (SD_WARPS * 32 / SD_KL) + (int)threadIdx.x / SD_KL;
    if (seg >= nseg)
        return;
    const int lane = (int)threadIdx.x % SD_KL;
    const unsigned gmask = sd_gmask<SD_KL>((int)threadIdx.x & 31);
    const int tile = SD_KTILES == 1 ? 0 : (int)blockIdx.y;
    const int k0 = tile * SD_KTILE;
    const long long s0 = (long long)seg * CH;
    const long long s1 = s0 + CH < nnz ? s0 + CH : nnz;
    int cur = s0 < nnz ? __ldg(rowind + s0) : rows;
    const int prev = s0 > 0 ? __ldg(rowind + s0 - 1) : -1;
    // the row after the segment: loaded with the first entries, not after the last batch
    // (with one entry per lane; K = 8's slots leave no register for it)
    const int next = SD_SEG_PREFETCH && s1 < nnz ? __ldg(rowind + s1) : -1;
    sd_seg_zero(C, prev + 1, cur, k0, lane); // empty rows before this segment's first
    if (s1 <= s0)
        return;
    const bool head_split = prev == cur; // the first run continues a row of the last segment
    bool in_head = true;
    int hrow = -1;
    float acc[SD_CO][SD_V], hacc[SD_CO][SD_V];
    sd_zero(acc);
    sd_zero(hacc);
    // Entry p * SD_KL + lane of a batch in lane `lane`'s slot p. With one entry per lane the
    // next batch's entries are loaded before this batch's rows of B, so that a segment of
    // several batches waits on one load of entries, not one per batch (with several, K = 8,
    // the second set of slots spills at 96 registers).
    int r[SD_EPL], c[SD_EPL];
    float v[SD_EPL];
    if (SD_SEG_PREFETCH)
        sd_seg_entries(rowind, colind, vals, s0, (int)(s1 - s0), lane, r, c, v);
    for (long long base = s0; base < s1; base += SD_BATCH) {
        const int n = s1 - base < SD_BATCH ? (int)(s1 - base) : SD_BATCH;
        int rn[SD_EPL], cn[SD_EPL];
        float vn[SD_EPL];
        if (SD_SEG_PREFETCH)
            sd_seg_entries(rowind, colind, vals, base + SD_BATCH, (int)(s1 - base) - SD_BATCH,
                           lane, rn, cn, vn);
        else
            sd_seg_entries(rowind, colind, vals, base, n, lane, r, c, v);
        // With several entries per lane the batch is SD_SU entries and j0 is 0: the slot and
        // the source lane of entry u are compile-time constants.
        for (int j0 = 0; j0 < n; j0 += SD_SU) {
            int rj[SD_SU];
            float vj[SD_SU], b[SD_SU][SD_CO][SD_V];
#pragma unroll
            for (int u = 0; u < SD_SU; u++) {
                const int j = j0 + u;
                const int p = SD_EPL == 1 ? 0 : u / SD_KL;
                const int src = SD_EPL == 1 ? j : u % SD_KL;
                rj[u] = __shfl_sync(gmask, r[p], src, SD_KL);
                const int cj = __shfl_sync(gmask, c[p], src, SD_KL);
                vj[u] = __shfl_sync(gmask, v[p], src, SD_KL);
                const float *brow = B + (sd_off)cj * SD_K;
#pragma unroll
                for (int t = 0; t < SD_CO; t++) {
                    const int k = k0 + (t * SD_KL + lane) * SD_V;
                    if (j < n && (SD_K % SD_KTILE == 0 || k < SD_K))
                        sd_load<SD_V>(brow + k, b[u][t]);
                    else
#pragma unroll
                        for (int i = 0; i < SD_V; i++)
                            b[u][t][i] = 0.0f;
                }
            }
#pragma unroll
            for (int u = 0; u < SD_SU; u++) {
                if (j0 + u >= n)
                    break;
                if (rj[u] != cur) { // the run of `cur` ends (uniform in the group)
                    if (in_head && head_split) {
                        hrow = cur;
#pragma unroll
                        for (int t = 0; t < SD_CO; t++)
#pragma unroll
                            for (int i = 0; i < SD_V; i++)
                                hacc[t][i] = acc[t][i];
                    } else {
                        sd_store_row<SD_KL, SD_V, SD_CO>(C + (sd_off)cur * SD_K, k0, lane, acc);
                    }
                    in_head = false;
                    sd_seg_zero(C, cur + 1, rj[u], k0, lane);
                    cur = rj[u];
                    sd_zero(acc);
                }
#pragma unroll
                for (int t = 0; t < SD_CO; t++)
#pragma unroll
                    for (int i = 0; i < SD_V; i++)
                        acc[t][i] = fmaf(vj[u], b[u][t][i], acc[t][i]);
            }
        }
        if (SD_SEG_PREFETCH)
#pragma unroll
            for (int p = 0; p < SD_EPL; p++) {
                r[p] = rn[p];
                c[p] = cn[p];
                v[p] = vn[p];
            }
    }
    const bool tail_split =
        s1 < nnz && (SD_SEG_PREFETCH ? next : __ldg(rowind + s1)) == cur;
    const bool split_end = tail_split || (in_head && head_split);
    if (!split_end)
        sd_store_row<SD_KL, SD_V, SD_CO>(C + (sd_off)cur * SD_K, k0, lane, acc);
    if (s1 == nnz)
        sd_seg_zero(C, cur + 1, rows, k0, lane); // empty rows after the last entry
    if (hrow >= 0)
        sd_seg_finish(rowptr, ws, cnt, C, hrow, seg, tile, k0, lane, gmask, CH, hacc);
    if (split_end)
        sd_seg_finish(rowptr, ws, cnt, C, cur, seg, tile, k0, lane, gmask, CH, acc);
}

#else // SD_MODE == 1

SD_KERNEL void __launch_bounds__(SD_WARPS * 32, SD_MINB)
    SD_KNAME(const sd_rp *__restrict__ rowptr, const int *__restrict__ colind,
             const float *__restrict__ vals, const int *__restrict__ chunk_row,
             const sd_rp *__restrict__ chunk_start, const int *__restrict__ chunk_long,
             const int *__restrict__ long_first, float *ws, int *cnt,
             const float *__restrict__ B, float *__restrict__ C, int rows, int T, int CH,
             int nchunks, int nb_short)
{
    if ((int)blockIdx.x < nb_short) {
        sd_split_short(rowptr, colind, vals, B, C,
                       (int)blockIdx.x * SD_GPC + (int)threadIdx.x / SD_G, rows, T, CH);
        return;
    }
    const int c = ((int)blockIdx.x - nb_short) * SD_WARPS + (int)threadIdx.x / 32;
    if (c >= nchunks)
        return;
    const int lane = (int)threadIdx.x & 31;
    const int tile = SD_KTILES == 1 ? 0 : (int)blockIdx.y;
    const int k0 = tile * SD_KTILE;
    float acc[SD_CO][SD_V];
    const int row = sd_split_chunk(rowptr, colind, vals, chunk_row, chunk_start, B, c, k0, CH, acc);
    if (lane < SD_KL)
        sd_store_row<SD_KL, SD_V, SD_CO>(ws + (long long)c * SD_K, k0, lane, acc);
    __threadfence();
    __syncwarp();
    const int L = __ldg(chunk_long + c);
    const int first = __ldg(long_first + L), nch = __ldg(long_first + L + 1) - first;
    int *counter = cnt + (long long)L * SD_KTILES + tile;
    int arrived = 0;
    if (lane == 0)
        arrived = atomicAdd(counter, 1);
    arrived = __shfl_sync(0xffffffffu, arrived, 0);
    if (arrived != nch - 1)
        return;
    // Last chunk of this (row, tile): sum the partials in chunk order.
    __threadfence();
    if (lane < SD_KL) {
        float sum[SD_CO][SD_V];
        sd_zero(sum);
        for (int q = first; q < first + nch; q++) {
            const float *part = ws + (long long)q * SD_K;
#pragma unroll
            for (int t = 0; t < SD_CO; t++) {
                const int k = k0 + (t * SD_KL + lane) * SD_V;
                if (SD_K % SD_KTILE == 0 || k < SD_K) {
                    float x[SD_V];
                    sd_load_cg<SD_V>(part + k, x);
#pragma unroll
                    for (int i = 0; i < SD_V; i++)
                        sum[t][i] += x[i];
                }
            }
        }
        sd_store_row<SD_KL, SD_V, SD_CO>(C + (sd_off)row * SD_K, k0, lane, sum);
    }
    if (lane == 0)
        *counter = 0;
}

#endif
