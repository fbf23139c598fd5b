/* src/kernels/spmv_util.cuh: device helpers shared by the SpMV templates: index widths
 * (32/64-bit row pointers, 16-bit column deltas), cache-hinted loads, segmented scans
 * over sorted keys, block sums. Macros read here (all optional):
 *   SD_RP32         1: row pointers are int32 (nnz < 2^31); 0: int64
 *   SD_COLC         1: columns are uint16 deltas against colbase[row >> SD_COLC_SHIFT]
 *   SD_COLC_SHIFT   log2 of the rows sharing one column base
 *   SD_STREAM       1: matrix arrays are loaded evict-first (keeps x in L2 when the
 *                   matrix is larger than L2); 2: also x with an L2 evict-last policy
 *                   (x that nearly fills L2, gathered at random, against the stream);
 *                   0: read-only path */
#ifndef SD_SPMV_UTIL_CUH
#define SD_SPMV_UTIL_CUH

#include "sd_common.cuh"

#ifndef SD_RP32
#define SD_RP32 0
#endif
#ifndef SD_COLC
#define SD_COLC 0
#endif
#ifndef SD_COLC_SHIFT
#define SD_COLC_SHIFT 0
#endif
#ifndef SD_STREAM
#define SD_STREAM 0
#endif

/* #pragma unroll with a macro argument (pragmas do not expand macros). */
#define SD_PRAGMA_(x) _Pragma(#x)
#define SD_UNROLL_BY(n) SD_PRAGMA_(unroll n)

#if SD_RP32
typedef int sd_rp_t;
#else
typedef long long sd_rp_t;
#endif

#if SD_COLC
typedef unsigned short sd_ci_t;
#else
typedef int sd_ci_t;
#endif

/* Matrix arrays: read once per execution. Evict-first keeps the reused x in L2. */
template <typename T> static __device__ __forceinline__ T sd_ldm(const T *p)
{
#if SD_STREAM
    return __ldcs(p);
#else
    return __ldg(p);
#endif
}
/* x: reused across rows, read-only for the whole launch. With SD_STREAM 2 its lines
 * get evict-last priority in L2 (createpolicy + ld.global.nc.L2::cache_hint, sm_80+), so
 * the streamed matrix lines, loaded evict-first, are the ones replaced. */
#if SD_STREAM >= 2
static __device__ __forceinline__ float sd_ldx(const float *x, int c)
{
    float v;
    asm("{\n\t.reg .b64 pol;\n\t"
        "createpolicy.fractional.L2::evict_last.b64 pol, 1.0;\n\t"
        "ld.global.nc.L2::cache_hint.f32 %0, [%1], pol;\n\t}"
        : "=f"(v)
        : "l"(x + c));
    return v;
}
#else
static __device__ __forceinline__ float sd_ldx(const float *x, int c) { return __ldg(x + c); }
#endif

/* Four consecutive column indices at an index c that is a multiple of 4, decoded to
 * absolute columns (base is the column base of the row for SD_COLC). */
static __device__ __forceinline__ int4 sd_load_cols4(const sd_ci_t *SD_RESTRICT colind,
                                                     long long c, int base)
{
#if SD_COLC
    const uint2 raw = sd_ldm(reinterpret_cast<const uint2 *>(colind + c));
    int4 r;
    r.x = base + (int)(raw.x & 0xffffu);
    r.y = base + (int)(raw.x >> 16);
    r.z = base + (int)(raw.y & 0xffffu);
    r.w = base + (int)(raw.y >> 16);
    return r;
#else
    (void)base;
    return sd_ldm(reinterpret_cast<const int4 *>(colind + c));
#endif
}

static __device__ __forceinline__ int sd_load_col(const sd_ci_t *SD_RESTRICT colind, long long k,
                                                  int base)
{
#if SD_COLC
    return base + (int)sd_ldm(colind + k);
#else
    (void)base;
    return sd_ldm(colind + k);
#endif
}

/* Inclusive segmented sum over a warp where keys are non-decreasing across lanes: a lane
 * adds the value `off` lanes up only when that lane has the same key (sorted keys make
 * every lane in between part of the same segment). */
static __device__ __forceinline__ float sd_warp_segscan(float v, int key)
{
    const int lane = (int)(threadIdx.x % SD_WARP_SIZE);
#pragma unroll
    for (int off = 1; off < SD_WARP_SIZE; off *= 2) {
        float ov = __shfl_up_sync(SD_FULL_MASK, v, off);
        int ok = __shfl_up_sync(SD_FULL_MASK, key, off);
        if (lane >= off && ok == key)
            v += ov;
    }
    return v;
}

/* Inclusive segmented sum over a CTA of NT threads (keys non-decreasing in thread order).
 * Contains __syncthreads: every thread of the CTA must call it. Deterministic: the
 * summation order depends only on NT. */
template <int NT> static __device__ __forceinline__ float sd_block_segscan(float v, int key)
{
    constexpr int NW = NT / SD_WARP_SIZE;
    __shared__ float s_wval[NW];
    __shared__ int s_wkey[NW];
    const int lane = (int)(threadIdx.x % SD_WARP_SIZE), warp = (int)(threadIdx.x / SD_WARP_SIZE);
    v = sd_warp_segscan(v, key);
    if (NW > 1) {
        if (lane == SD_WARP_SIZE - 1) {
            s_wval[warp] = v;
            s_wkey[warp] = key;
        }
        __syncthreads();
        if (warp == 0) {
            float wv = lane < NW ? s_wval[lane] : 0.0f;
            int wk = lane < NW ? s_wkey[lane] : 0x7fffffff;
            wv = sd_warp_segscan(wv, wk);
            if (lane < NW)
                s_wval[lane] = wv;
        }
        __syncthreads();
        if (warp > 0 && key == s_wkey[warp - 1])
            v += s_wval[warp - 1];
        __syncthreads(); /* s_wval/s_wkey are reused by the next call */
    }
    return v;
}

/* Sum over a CTA of NT threads; the result is valid in every thread. */
template <int NT> static __device__ __forceinline__ float sd_block_sum(float v)
{
    constexpr int NW = NT / SD_WARP_SIZE;
    __shared__ float s_part[NW];
#pragma unroll
    for (int off = SD_WARP_SIZE / 2; off > 0; off /= 2)
        v += __shfl_xor_sync(SD_FULL_MASK, v, off);
    if (NW == 1)
        return v;
    const int lane = (int)(threadIdx.x % SD_WARP_SIZE), warp = (int)(threadIdx.x / SD_WARP_SIZE);
    if (lane == 0)
        s_part[warp] = v;
    __syncthreads();
    float t = 0.0f;
#pragma unroll
    for (int w = 0; w < NW; w++)
        t += s_part[w];
    __syncthreads(); /* s_part is reused by the next call */
    return t;
}

/* Last-CTA-done election: after every thread's global writes, one atomic per CTA; returns
 * true in every thread of the CTA that finished last (which then sees all writes). */
static __device__ __forceinline__ bool sd_last_cta(int *counter, unsigned nctas)
{
    __shared__ int s_last;
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0)
        s_last = atomicAdd(counter, 1) == (int)nctas - 1;
    __syncthreads();
    return s_last != 0;
}

#endif /* SD_SPMV_UTIL_CUH */
