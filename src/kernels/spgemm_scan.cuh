// src/kernels/spgemm_scan.cuh: C's row pointers from the per-row counts in one launch:
// a single-pass prefix sum with decoupled look-back over tiles of SD_SG_SCAN_TILE rows,
// optionally followed (same launch) by the compaction of one-phase rows into C.
// Look-back words: status (2 bits) | epoch (14 bits) | value (48 bits); the epoch of
// the call tells current words from stale ones, so nothing is cleared between calls.
#ifndef SD_SPGEMM_SCAN_CUH
#define SD_SPGEMM_SCAN_CUH

#include "spgemm_rows.cuh"

#define SG_LB_AGG 1ull
#define SG_LB_PREFIX 2ull
#define SG_LB_VALUE_MASK ((1ull << 48) - 1ull)

static __device__ __forceinline__ void sg_lb_publish(unsigned long long *flags, int tile,
                                                     unsigned long long status, unsigned epoch,
                                                     long long value)
{
    const unsigned long long w = (status << 62) |
                                 ((unsigned long long)(epoch & SD_SG_EPOCH_MASK) << 48) |
                                 ((unsigned long long)value & SG_LB_VALUE_MASK);
    __threadfence();
    atomicExch(flags + tile, w);
}

// Run by warp 0 of tile `tile` (> 0): the sum of every earlier tile's count.
static __device__ __forceinline__ long long sg_lookback(unsigned long long *flags, int tile,
                                                        unsigned epoch)
{
    const int lane = (int)(threadIdx.x & 31);
    long long excl = 0;
    int j = tile - 1;
    for (;;) {
        const int idx = j - lane; // lane 0 looks at the nearest predecessor
        unsigned long long w;
        bool ready;
        do {
            if (idx >= 0) {
                w = ((volatile unsigned long long *)flags)[idx];
                ready = (w >> 62) != 0ull &&
                        ((unsigned)(w >> 48) & SD_SG_EPOCH_MASK) == (epoch & SD_SG_EPOCH_MASK);
            } else {
                w = SG_LB_PREFIX << 62; // before tile 0: a prefix of 0
                ready = true;
            }
        } while (!__all_sync(SD_FULL_MASK, ready));
        const unsigned pmask = __ballot_sync(SD_FULL_MASK, (w >> 62) == SG_LB_PREFIX);
        const int stop = pmask != 0u ? __ffs(pmask) - 1 : 31;
        long long v = lane <= stop ? (long long)(w & SG_LB_VALUE_MASK) : 0;
#pragma unroll
        for (int o = 16; o > 0; o >>= 1)
            v += __shfl_xor_sync(SD_FULL_MASK, v, o);
        excl += v;
        if (pmask != 0u)
            return excl;
        j -= 32;
    }
}

struct SgScanScratch {
    SgCopyScratch<SD_SG_SCAN_THREADS> copy;
    long long prefix;
};

// crow[r] for every row, crow[m] = nnz(C); with `copy`, one-phase rows are then moved
// from the staging area into C (C must be allocated: the upper-bound output mode).
SD_KERNEL void SD_LAUNCH_BOUNDS(SD_SG_SCAN_THREADS) sd_spgemm_scan(const sd_spgemm_args a, int copy)
{
    __shared__ SgScanScratch s;
    constexpr int T = SD_SG_SCAN_THREADS, ITEMS = SD_SG_SCAN_ITEMS;
    const SgCta<T> tm(&s.copy.cta);
    const int tile = (int)blockIdx.x;
    const int r0 = tile * SD_SG_SCAN_TILE;
    const int nr = min(SD_SG_SCAN_TILE, a.m - r0);
    int c[ITEMS];
    long long mine = 0;
#pragma unroll
    for (int q = 0; q < ITEMS; q++) {
        const int j = (int)threadIdx.x * ITEMS + q;
        c[q] = j < nr ? a.cnt[r0 + j] : 0;
        mine += c[q];
    }
    long long total;
    const long long excl = tm.excl_scan64(mine, total);
    if (threadIdx.x < 32) {
        long long prefix = 0;
        if (tile == 0) {
            if (threadIdx.x == 0)
                sg_lb_publish(a.flags, 0, SG_LB_PREFIX, a.epoch, total);
        } else {
            if (threadIdx.x == 0)
                sg_lb_publish(a.flags, tile, SG_LB_AGG, a.epoch, total);
            prefix = sg_lookback(a.flags, tile, a.epoch);
            if (threadIdx.x == 0)
                sg_lb_publish(a.flags, tile, SG_LB_PREFIX, a.epoch, prefix + total);
        }
        if (threadIdx.x == 0)
            s.prefix = prefix;
    }
    __syncthreads();
    long long run = s.prefix + excl;
#pragma unroll
    for (int q = 0; q < ITEMS; q++) {
        const int j = (int)threadIdx.x * ITEMS + q;
        if (j < nr) {
            a.crow[r0 + j] = run;
            s.copy.crow[j] = run;
        }
        run += c[q];
    }
    if (r0 + nr == a.m && threadIdx.x == 0) {
        a.crow[a.m] = s.prefix + total;
        if (a.nnz_host != nullptr) { // the host reads it after the wait: no copy queued behind C
            *(volatile long long *)a.nnz_host = s.prefix + total;
            __threadfence_system();
        }
    }
    if (copy) {
        __syncthreads();
        sg_copy_tile<T>(a, tile, &s.copy, true);
    }
}

#endif // SD_SPGEMM_SCAN_CUH
