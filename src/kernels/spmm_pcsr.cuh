// src/kernels/spmm_pcsr.cuh: ParamSpMM over the PCSR format ⟨W, F, V, S⟩.
//   W = SD_W warps per block; a group of SD_PG threads (32 as in the paper, 16/8/4 as our
//       extension for K < 32) handles one PCSR row for a K tile of SD_PG·SD_F columns;
//   F = SD_F columns per thread (thread coarsening), column lane + SD_PG·f (coalesced);
//   V = SD_PV: vectorised blocking, each thread loads V consecutive slots (int2/float2
//       when V = 2) and the group broadcasts them, V products per broadcast;
//   S = SD_PS: workload balancing; PCSR rows are chunks of at most `bound` slots and
//       trow holds each chunk's target row, negative (−row − 1) when the row was split:
//       those partials are added with atomicAdd after SD_KNAME2 zeroed the split rows
//       (same stream, before SD_KNAME); unsplit rows are written with plain stores.
// Macros: SD_KNAME, SD_KNAME2, SD_W, SD_F, SD_PV, SD_PS, SD_PG.
// Launch SD_KNAME2 (only when rows were split): grid ⌈nsplit·K / 256⌉, block 256,
//   arguments (split_rows, C, nsplit). SD_KNAME: grid (⌈prows / groups per block⌉,
//   K tiles), block SD_W·32, arguments (rowptr, colidx, val, trow, B, C, prows) (trow
//   unused when S = 0).
#include "spmm_common.cuh"

#define SD_PGPB (SD_W * 32 / SD_PG) // PCSR rows per block
#define SD_PTILE (SD_PG * SD_F)
#define SD_PTILES ((SD_K + SD_PTILE - 1) / SD_PTILE)

template <int V> struct sd_pvec;
template <> struct sd_pvec<1> {
    int c[1];
    float v[1];
    __device__ __forceinline__ void load(const int *ci, const float *va, sd_rp at)
    {
        c[0] = __ldg(ci + at);
        v[0] = __ldg(va + at);
    }
};
template <> struct sd_pvec<2> {
    int c[2];
    float v[2];
    __device__ __forceinline__ void load(const int *ci, const float *va, sd_rp at)
    {
        const int2 cc = __ldg(reinterpret_cast<const int2 *>(ci + at));
        const float2 vv = __ldg(reinterpret_cast<const float2 *>(va + at));
        c[0] = cc.x;
        c[1] = cc.y;
        v[0] = vv.x;
        v[1] = vv.y;
    }
};

__device__ __forceinline__ void sd_pcsr_fma(const float *__restrict__ B, const int (&c)[SD_PV],
                                            const float (&v)[SD_PV], int k0, int lane,
                                            float (&acc)[SD_F])
{
#pragma unroll
    for (int f = 0; f < SD_F; f++) {
        const int k = k0 + lane + SD_PG * f;
        if (SD_K % SD_PTILE == 0 || k < SD_K) {
#pragma unroll
            for (int u = 0; u < SD_PV; u++)
                acc[f] = fmaf(v[u], __ldg(B + (sd_off)c[u] * SD_K + k), acc[f]);
        }
    }
}

SD_KERNEL void __launch_bounds__(SD_W * 32, SD_MINB)
    SD_KNAME(const sd_rp *__restrict__ rowptr, const int *__restrict__ colidx,
             const float *__restrict__ val, const int *__restrict__ trow,
             const float *__restrict__ B, float *__restrict__ C, long long prows)
{
    const long long p = (long long)blockIdx.x * SD_PGPB + (int)threadIdx.x / SD_PG;
    if (p >= prows)
        return;
    const int lane = (int)threadIdx.x % SD_PG;
    const unsigned gmask = sd_gmask<SD_PG>((int)threadIdx.x & 31);
    const int k0 = SD_PTILES == 1 ? 0 : (int)blockIdx.y * SD_PTILE;
    float acc[SD_F];
#pragma unroll
    for (int f = 0; f < SD_F; f++)
        acc[f] = 0.0f;
    const sd_rp s = __ldg(rowptr + p), e = __ldg(rowptr + p + 1);
    for (sd_rp base = s; base < e; base += SD_PG * SD_PV) {
        const sd_rp left = (e - base) / SD_PV; // vectors left
        const int n = left < (sd_rp)SD_PG ? (int)left : SD_PG;
        sd_pvec<SD_PV> mine;
#pragma unroll
        for (int u = 0; u < SD_PV; u++) {
            mine.c[u] = 0;
            mine.v[u] = 0.0f;
        }
        if (lane < n)
            mine.load(colidx, val, base + (sd_rp)lane * SD_PV);
        if (n == SD_PG) {
            // full batch: UF vectors at a time (about 16 loads of B in flight per thread)
            constexpr int UF = (16 / (SD_F * SD_PV)) < 1 ? 1
                               : (16 / (SD_F * SD_PV)) > SD_PG ? SD_PG : (16 / (SD_F * SD_PV));
#pragma unroll 1
            for (int j0 = 0; j0 < SD_PG; j0 += UF) {
#pragma unroll
                for (int q = 0; q < UF; q++) {
                    const int j = j0 + q;
                    if (SD_PG % UF == 0 || j < SD_PG) {
                        int c[SD_PV];
                        float v[SD_PV];
#pragma unroll
                        for (int u = 0; u < SD_PV; u++) {
                            c[u] = __shfl_sync(gmask, mine.c[u], j, SD_PG);
                            v[u] = __shfl_sync(gmask, mine.v[u], j, SD_PG);
                        }
                        sd_pcsr_fma(B, c, v, k0, lane, acc);
                    }
                }
            }
        } else {
            // partial batch: SD_TAIL_UNROLL vectors at a time, loads predicated (n uniform)
            for (int j0 = 0; j0 < n; j0 += SD_TAIL_UNROLL) {
#pragma unroll
                for (int q = 0; q < SD_TAIL_UNROLL; q++) {
                    const int j = j0 + q;
                    if (SD_PG % SD_TAIL_UNROLL == 0 || j < SD_PG) {
                        int c[SD_PV];
                        float v[SD_PV];
#pragma unroll
                        for (int u = 0; u < SD_PV; u++) {
                            c[u] = __shfl_sync(gmask, mine.c[u], j, SD_PG);
                            v[u] = __shfl_sync(gmask, mine.v[u], j, SD_PG);
                        }
                        if (j < n)
                            sd_pcsr_fma(B, c, v, k0, lane, acc);
                    }
                }
            }
        }
    }
    int row = (int)p;
    bool split = false;
    if (SD_PS) {
        row = __ldg(trow + p);
        if (row < 0) {
            row = -row - 1;
            split = true;
        }
    }
    float *dst = C + (sd_off)row * SD_K;
#pragma unroll
    for (int f = 0; f < SD_F; f++) {
        const int k = k0 + lane + SD_PG * f;
        if (SD_K % SD_PTILE == 0 || k < SD_K) {
            if (split)
                atomicAdd(dst + k, acc[f]);
            else
                dst[k] = acc[f];
        }
    }
}

SD_KERNEL void __launch_bounds__(256)
    SD_KNAME2(const int *__restrict__ split_rows, float *__restrict__ C, int nsplit)
{
    const long long i = (long long)blockIdx.x * 256 + threadIdx.x;
    if (i >= (long long)nsplit * SD_K)
        return;
    const int r = __ldg(split_rows + i / SD_K);
    C[(sd_off)r * SD_K + (int)(i % SD_K)] = 0.0f;
}
