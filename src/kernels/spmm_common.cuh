// src/kernels/spmm_common.cuh: device helpers shared by the SpMM templates: index types,
// vector loads/stores of B and C, group masks, the (sub-)warp row accumulation with
// broadcast of the sparse entries, and the group reductions and write-backs.
//
// Macros fixed by the lowering (src/plan/families/spmm_*.c), passed as -D options:
//   SD_K      dense width K (B is cols×K, C is rows×K, both row-major)
//   SD_RP64   1: 64-bit row pointers;  SD_BIG  1: 64-bit offsets into B and C
// plus each template's θ_H macros. Sizes of the matrix are kernel arguments, so one
// compiled kernel serves every matrix with the same θ_H and K.
// Everything is FP32 with fmaf; atomics only in sd_store_row_atomic.
#ifndef SD_SPMM_COMMON_CUH
#define SD_SPMM_COMMON_CUH

#include "sd_common.cuh"

#ifndef SD_RP64
#define SD_RP64 0
#endif
#ifndef SD_BIG
#define SD_BIG 0
#endif
// Minimum CTAs per SM for __launch_bounds__: caps registers at 65536 / (threads · SD_MINB).
// (With the thread count alone, CUDA 13's ptxas aims at full occupancy, 32 registers, and
// spills the coarsened accumulators; the lowering picks SD_MINB from the plan's cap.)
#ifndef SD_MINB
#define SD_MINB 1
#endif
// Floats of B a lane keeps in flight in a full batch (sd_row_accum): 32 by default; the
// lowering sets 8 with the light register cap of 32, which holds them without spilling.
#ifndef SD_INFLIGHT
#define SD_INFLIGHT 32
#endif
// Entries per lane whose B loads are issued together in a partial batch.
#ifndef SD_TAIL_UNROLL
#define SD_TAIL_UNROLL 4
#endif

#if SD_RP64
typedef long long sd_rp;
#else
typedef int sd_rp;
#endif
#if SD_BIG
typedef long long sd_off;
#else
typedef int sd_off;
#endif

// Loads V consecutive floats of B (read-only path); p is V·4-byte aligned by construction
// (K % V == 0 and every tile column offset is a multiple of V).
template <int V> __device__ __forceinline__ void sd_load(const float *__restrict__ p, float *x);
template <> __device__ __forceinline__ void sd_load<1>(const float *__restrict__ p, float *x)
{
    x[0] = __ldg(p);
}
template <> __device__ __forceinline__ void sd_load<2>(const float *__restrict__ p, float *x)
{
    const float2 t = __ldg(reinterpret_cast<const float2 *>(p));
    x[0] = t.x;
    x[1] = t.y;
}
template <> __device__ __forceinline__ void sd_load<4>(const float *__restrict__ p, float *x)
{
    const float4 t = __ldg(reinterpret_cast<const float4 *>(p));
    x[0] = t.x;
    x[1] = t.y;
    x[2] = t.z;
    x[3] = t.w;
}

template <int V> __device__ __forceinline__ void sd_store(float *p, const float *x);
template <> __device__ __forceinline__ void sd_store<1>(float *p, const float *x) { p[0] = x[0]; }
template <> __device__ __forceinline__ void sd_store<2>(float *p, const float *x)
{
    *reinterpret_cast<float2 *>(p) = make_float2(x[0], x[1]);
}
template <> __device__ __forceinline__ void sd_store<4>(float *p, const float *x)
{
    *reinterpret_cast<float4 *>(p) = make_float4(x[0], x[1], x[2], x[3]);
}

// Coherent (L2) loads for data written by other CTAs during the same launch.
template <int V> __device__ __forceinline__ void sd_load_cg(const float *p, float *x)
{
#pragma unroll
    for (int i = 0; i < V; i++)
        x[i] = __ldcg(p + i);
}

// a[t][i] = 0 for a lane's CO vectors of V floats (accumulators, partial sums).
template <int CO, int V> __device__ __forceinline__ void sd_zero(float (&a)[CO][V])
{
#pragma unroll
    for (int t = 0; t < CO; t++)
#pragma unroll
        for (int i = 0; i < V; i++)
            a[t][i] = 0.0f;
}

// Lanes of the aligned group of G lanes that holds warp lane `lane_w`.
template <int G> __device__ __forceinline__ unsigned sd_gmask(int lane_w)
{
    return G == 32 ? 0xffffffffu : (((1u << G) - 1u) << (lane_w & ~(G - 1)));
}

// acc[t] += v · B[col, k0 + (t·KL + kl)·V ... + V) for the CO vectors of this lane.
// The bound check folds away when the tile count divides K.
template <int KL, int V, int CO>
__device__ __forceinline__ void sd_fma_row(const float *__restrict__ B, int col, float v, int k0,
                                           int kl, float (&acc)[CO][V])
{
    const float *brow = B + (sd_off)col * SD_K;
#pragma unroll
    for (int t = 0; t < CO; t++) {
        const int k = k0 + (t * KL + kl) * V;
        if (SD_K % (KL * V * CO) == 0 || k < SD_K) {
            float b[V];
            sd_load<V>(brow + k, b);
#pragma unroll
            for (int i = 0; i < V; i++)
                acc[t][i] = fmaf(v, b[i], acc[t][i]);
        }
    }
}

// One group of G = KL·NZ lanes accumulates the entries [s, e) of one row for the K tile
// starting at k0: each batch of G entries is loaded once, coalesced (one entry per
// lane), and broadcast with __shfl_sync; NZ lanes work on different entries of a batch
// and KL lanes on different columns of the tile. Full batches run unrolled (independent
// loads in flight); the tail batch is predicated. `lane` is the lane inside the group.
template <int KL, int NZ, int V, int CO>
__device__ __forceinline__ void sd_row_accum(const int *__restrict__ ci,
                                             const float *__restrict__ va, sd_rp s, sd_rp e,
                                             const float *__restrict__ B, int k0, int lane,
                                             unsigned gmask, float (&acc)[CO][V])
{
    constexpr int G = KL * NZ;
    const int kl = lane % KL, nzl = lane / KL;
    for (sd_rp base = s; base < e; base += G) {
        const sd_rp left = e - base;
        const int n = left < (sd_rp)G ? (int)left : G;
        int c = 0;
        float v = 0.0f;
        if (lane < n) {
            c = __ldg(ci + base + lane);
            v = __ldg(va + base + lane);
        }
        if (n == G) {
            // Full batch: UF entries per lane at a time (about SD_INFLIGHT floats of B in
            // flight per lane: enough to cover latency without spilling the accumulators).
            constexpr int F = SD_INFLIGHT / (CO * V);
            constexpr int UF = F < 1 ? 1 : F > G / NZ ? G / NZ : F;
#pragma unroll 1
            for (int j0 = 0; j0 < G / NZ; j0 += UF) {
#pragma unroll
                for (int u = 0; u < UF; u++) {
                    const int j = j0 + u;
                    if ((G / NZ) % UF == 0 || j < G / NZ) {
                        const int src = j * NZ + nzl;
                        const int cj = __shfl_sync(gmask, c, src, G);
                        const float vj = __shfl_sync(gmask, v, src, G);
                        sd_fma_row<KL, V, CO>(B, cj, vj, k0, kl, acc);
                    }
                }
            }
        } else {
            // The tail batch (every batch of a row shorter than G): SD_TAIL_UNROLL entries
            // per lane at a time, their loads predicated rather than branched around, so
            // they are in flight together (n is uniform in the group).
            for (int j0 = 0; j0 * NZ < n; j0 += SD_TAIL_UNROLL) {
#pragma unroll
                for (int u = 0; u < SD_TAIL_UNROLL; u++) {
                    const int j = j0 + u;
                    if (G / NZ % SD_TAIL_UNROLL == 0 || j < G / NZ) {
                        const int src = j * NZ + nzl;
                        const int cj = __shfl_sync(gmask, c, src, G);
                        const float vj = __shfl_sync(gmask, v, src, G);
                        if (src < n)
                            sd_fma_row<KL, V, CO>(B, cj, vj, k0, kl, acc);
                    }
                }
            }
        }
    }
}

// Sums the NZ partial accumulators of a group (butterfly: every lane ends with the sum).
template <int KL, int NZ, int V, int CO>
__device__ __forceinline__ void sd_group_reduce(unsigned gmask, float (&acc)[CO][V])
{
#pragma unroll
    for (int off = KL; off < KL * NZ; off <<= 1)
#pragma unroll
        for (int t = 0; t < CO; t++)
#pragma unroll
            for (int i = 0; i < V; i++)
                acc[t][i] += __shfl_xor_sync(gmask, acc[t][i], off, KL * NZ);
}

// Writes the tile of one output row (lanes with nzl == 0 hold the result).
template <int KL, int V, int CO>
__device__ __forceinline__ void sd_store_row(float *__restrict__ dst_row, int k0, int kl,
                                             const float (&acc)[CO][V])
{
#pragma unroll
    for (int t = 0; t < CO; t++) {
        const int k = k0 + (t * KL + kl) * V;
        if (SD_K % (KL * V * CO) == 0 || k < SD_K)
            sd_store<V>(dst_row + k, acc[t]);
    }
}

template <int KL, int V, int CO>
__device__ __forceinline__ void sd_store_row_atomic(float *dst_row, int k0, int kl,
                                                    const float (&acc)[CO][V])
{
#pragma unroll
    for (int t = 0; t < CO; t++) {
        const int k = k0 + (t * KL + kl) * V;
        if (SD_K % (KL * V * CO) == 0 || k < SD_K) {
#if __CUDA_ARCH__ >= 900
            // One vector reduction instead of V (sm_90's red.global.add.v4/v2.f32); the
            // address is V floats aligned as the plain vector stores of this row are.
            if (V == 4) {
                atomicAdd(reinterpret_cast<float4 *>(dst_row + k),
                          make_float4(acc[t][0], acc[t][V > 1 ? 1 : 0], acc[t][V > 2 ? 2 : 0],
                                      acc[t][V > 3 ? 3 : 0]));
                continue;
            }
            if (V == 2) {
                atomicAdd(reinterpret_cast<float2 *>(dst_row + k),
                          make_float2(acc[t][0], acc[t][V > 1 ? 1 : 0]));
                continue;
            }
#endif
#pragma unroll
            for (int i = 0; i < V; i++)
                atomicAdd(dst_row + k + i, acc[t][i]);
        }
    }
}

#endif // SD_SPMM_COMMON_CUH
