// src/kernels/spgemm_prep.cuh: SpGEMM plan-time kernels (pattern only, run once per
// kernel build): the upper-bound analysis u(i) with each row's column span, the
// transpose Aᵀ (counts, scatter, per-row sorts, so that rows come out sorted and the
// result is deterministic), and the value gather through the transpose's permutation
// (also used per call when B = Aᵀ is gathered).
#ifndef SD_SPGEMM_PREP_CUH
#define SD_SPGEMM_PREP_CUH

#include "spgemm_abi.cuh"

#define SG_PREP_THREADS 256

// u(i) = Σ_{k ∈ A[i,:]} nnz(B[k,:]), and the first / last column any product of row i
// reaches (B's rows are sorted): lo = −1 when the row has no products. Warp per row.
SD_KERNEL void SD_LAUNCH_BOUNDS(SG_PREP_THREADS) sd_spgemm_prep_rowinfo(const sd_spgemm_prep_args a)
{
    const int lane = (int)(threadIdx.x & 31);
    const long long row = ((long long)blockIdx.x * SG_PREP_THREADS + threadIdx.x) / 32;
    if (row >= a.m)
        return;
    long long u = 0;
    int lo = 0x7fffffff, hi = -1;
    for (sd_offset p = a.arow[row] + lane; p < a.arow[row + 1]; p += 32) {
        const int k = a.acol[p];
        const sd_offset b0 = a.brow[k], b1 = a.brow[k + 1];
        if (b1 > b0) {
            u += b1 - b0;
            lo = min(lo, a.bcol[b0]);
            hi = max(hi, a.bcol[b1 - 1]);
        }
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        u += __shfl_xor_sync(SD_FULL_MASK, u, o);
        lo = min(lo, __shfl_xor_sync(SD_FULL_MASK, lo, o));
        hi = max(hi, __shfl_xor_sync(SD_FULL_MASK, hi, o));
    }
    if (lane == 0) {
        a.u[row] = u;
        a.lo[row] = u > 0 ? lo : -1;
        a.hi[row] = u > 0 ? hi : -1;
    }
}

// Transpose, step 1: entries per column of A.
SD_KERNEL void SD_LAUNCH_BOUNDS(SG_PREP_THREADS) sd_spgemm_prep_tcount(const sd_spgemm_prep_args a)
{
    const long long p = (long long)blockIdx.x * SG_PREP_THREADS + threadIdx.x;
    if (p < a.nnz)
        atomicAdd(a.tcount + a.acol[p], 1ull);
}

// Step 2 (after the host's prefix sum into trow and tcursor): every entry (r, c) of A
// goes to the next free slot of row c of Aᵀ. Warp per row of A. The order inside a row
// of Aᵀ depends on timing; step 3 sorts it.
SD_KERNEL void SD_LAUNCH_BOUNDS(SG_PREP_THREADS) sd_spgemm_prep_tscatter(const sd_spgemm_prep_args a)
{
    const int lane = (int)(threadIdx.x & 31);
    const long long row = ((long long)blockIdx.x * SG_PREP_THREADS + threadIdx.x) / 32;
    if (row >= a.m)
        return;
    for (sd_offset p = a.arow[row] + lane; p < a.arow[row + 1]; p += 32) {
        const int c = a.acol[p];
        const sd_offset pos =
            (sd_offset)atomicAdd((unsigned long long *)(a.tcursor + c), 1ull);
        a.tcol[pos] = (int)row;
        a.tperm[pos] = p;
    }
}

// Step 3a: sorts each row of Aᵀ of at most 32 entries (warp per row, by rank: the
// row indices in a row of Aᵀ are distinct).
SD_KERNEL void SD_LAUNCH_BOUNDS(SG_PREP_THREADS) sd_spgemm_prep_tsort_warp(const sd_spgemm_prep_args a)
{
    const int lane = (int)(threadIdx.x & 31);
    const long long r = ((long long)blockIdx.x * SG_PREP_THREADS + threadIdx.x) / 32;
    if (r >= a.k)
        return;
    const sd_offset b = a.trow[r];
    const int len = (int)(a.trow[r + 1] - b);
    if (len <= 1 || len > 32)
        return;
    const int key = lane < len ? a.tcol[b + lane] : 0x7fffffff;
    const sd_offset perm = lane < len ? a.tperm[b + lane] : 0;
    int rank = 0;
    for (int j = 0; j < len; j++)
        rank += __shfl_sync(SD_FULL_MASK, key, j) < key;
    __syncwarp();
    if (lane < len) {
        a.tcol[b + rank] = key;
        a.tperm[b + rank] = perm;
    }
}

// Bitonic sort of n2 (a power of two) (key, perm) pairs in shared memory by the CTA.
static __device__ __forceinline__ void sg_prep_bitonic(int *keys, sd_offset *perm, int n2)
{
    for (int k = 2; k <= n2; k <<= 1) {
        for (int j = k >> 1; j > 0; j >>= 1) {
            for (int t = (int)threadIdx.x; t < (n2 >> 1); t += SG_PREP_THREADS) {
                const int i = 2 * t - (t & (j - 1));
                const int l = i + j;
                const int ki = keys[i], kl = keys[l];
                if ((ki > kl) == ((i & k) == 0)) {
                    keys[i] = kl;
                    keys[l] = ki;
                    const sd_offset pi = perm[i];
                    perm[i] = perm[l];
                    perm[l] = pi;
                }
            }
            __syncthreads();
        }
    }
}

// Sorts [b, b + len) (len ≤ SD_SG_TR_SMEM_SORT) of col/perm through shared memory.
static __device__ __forceinline__ void sg_prep_sort_chunk(sd_index *col, sd_offset *perm, sd_offset b,
                                                          int len, int *skeys, sd_offset *sperm)
{
    int n2 = 1;
    while (n2 < len)
        n2 <<= 1;
    for (int t = (int)threadIdx.x; t < n2; t += SG_PREP_THREADS) {
        skeys[t] = t < len ? col[b + t] : 0x7fffffff;
        sperm[t] = t < len ? perm[b + t] : 0;
    }
    __syncthreads();
    sg_prep_bitonic(skeys, sperm, n2);
    for (int t = (int)threadIdx.x; t < len; t += SG_PREP_THREADS) {
        col[b + t] = skeys[t];
        perm[b + t] = sperm[t];
    }
    __syncthreads();
}

// Step 3b: rows of Aᵀ of 33 … SD_SG_TR_SMEM_SORT entries, a CTA per row (grid-stride).
SD_KERNEL void SD_LAUNCH_BOUNDS(SG_PREP_THREADS) sd_spgemm_prep_tsort_cta(const sd_spgemm_prep_args a)
{
    __shared__ int skeys[SD_SG_TR_SMEM_SORT];
    __shared__ sd_offset sperm[SD_SG_TR_SMEM_SORT];
    for (long long r = blockIdx.x; r < a.k; r += gridDim.x) {
        const sd_offset b = a.trow[r];
        const long long len = a.trow[r + 1] - b;
        if (len <= 32 || len > SD_SG_TR_SMEM_SORT)
            continue;
        sg_prep_sort_chunk(a.tcol, a.tperm, b, (int)len, skeys, sperm);
    }
}

// Step 3c: the rows longer than SD_SG_TR_SMEM_SORT (listed in long_rows), a CTA per
// row: chunks sorted in shared memory, then merge passes between the row and its copy
// in tmp_col/tmp_perm. A pass places each element by its rank in the partner run
// (keys are distinct), so the result is the sorted row, whatever the timing.
SD_KERNEL void SD_LAUNCH_BOUNDS(SG_PREP_THREADS) sd_spgemm_prep_tsort_long(const sd_spgemm_prep_args a)
{
    __shared__ int skeys[SD_SG_TR_SMEM_SORT];
    __shared__ sd_offset sperm[SD_SG_TR_SMEM_SORT];
    if ((int)blockIdx.x >= a.nlong)
        return;
    const int r = a.long_rows[blockIdx.x];
    const sd_offset b = a.trow[r];
    const long long len = a.trow[r + 1] - b;
    for (long long c = 0; c < len; c += SD_SG_TR_SMEM_SORT)
        sg_prep_sort_chunk(a.tcol, a.tperm, b + c,
                           (int)min((long long)SD_SG_TR_SMEM_SORT, len - c), skeys, sperm);
    sd_index *sc = a.tcol + b, *dc = a.tmp_col + b;
    sd_offset *sp = a.tperm + b, *dp = a.tmp_perm + b;
    for (long long w = SD_SG_TR_SMEM_SORT; w < len; w *= 2) {
        for (long long x = threadIdx.x; x < len; x += SG_PREP_THREADS) {
            const long long pair = x / (2 * w) * (2 * w);
            const long long mid = min(pair + w, len), end = min(pair + 2 * w, len);
            const int key = sc[x];
            // rank of key in the partner run: how many of its keys are smaller
            long long lo, hi, own;
            if (x < mid) {
                lo = mid;
                hi = end;
                own = x - pair;
            } else {
                lo = pair;
                hi = mid;
                own = x - mid;
            }
            const long long base = lo;
            while (lo < hi) {
                const long long h = (lo + hi) / 2;
                if (sc[h] < key)
                    lo = h + 1;
                else
                    hi = h;
            }
            const long long pos = pair + own + (lo - base);
            dc[pos] = key;
            dp[pos] = sp[x];
        }
        __syncthreads();
        sd_index *tc = sc;
        sc = dc;
        dc = tc;
        sd_offset *tp = sp;
        sp = dp;
        dp = tp;
    }
    if (sc != a.tcol + b) {
        for (long long x = threadIdx.x; x < len; x += SG_PREP_THREADS) {
            a.tcol[b + x] = sc[x];
            a.tperm[b + x] = sp[x];
        }
    }
}

// dst[p] = src[perm[p]]: the values of Aᵀ from those of A.
SD_KERNEL void SD_LAUNCH_BOUNDS(SG_PREP_THREADS) sd_spgemm_prep_gather(const sd_spgemm_prep_args a)
{
    const long long p = (long long)blockIdx.x * SG_PREP_THREADS + threadIdx.x;
    if (p < a.nnz)
        a.gdst[p] = __ldg(a.gsrc + __ldg(a.gperm + p));
}

#endif // SD_SPGEMM_PREP_CUH
