// src/kernels/spmm_bsr_tc.cuh: BSR SpMM on tensor cores (mma.sync m16n8k8 TF32) with FP32
// accuracy through the 3×TF32 split, on tiles of SD_BM × 8 (SD_BM ∈ {8, 16}).
//
// The product is computed transposed, Cᵀ = Bᵀ·Aᵀ, one 8-row half of a tile at a time:
// the mma's m16 side is 16 columns of K (dense Bᵀ, operand A), its n8 side the 8 rows
// of the half (sparse Aᵀ, operand B), its k8 side the 8 columns of the tile. So 8×8
// tiles fill the mma without padding rows, and a 16-row tile reuses each B fragment for
// its two halves. Fragment ownership (g = lane / 4, t = lane % 4):
//   operand A (Bᵀ, 16×8):  a0 = B[c0+t][kb+g]    a1 = B[c0+t][kb+g+8]
//                          a2 = B[c0+t+4][kb+g]  a3 = B[c0+t+4][kb+g+8]
//   operand B (Aᵀ, 8×8):   b0 = A[r0+8h+g][c0+t] b1 = A[r0+8h+g][c0+t+4]
//   result (Cᵀ, 16×8):     d0 = C[r0+8h+2t][kb+g]    d1 = C[r0+8h+2t+1][kb+g]
//                          d2 = C[r0+8h+2t][kb+g+8]  d3 = C[r0+8h+2t+1][kb+g+8]
// The format builder stores each tile in lane order (sdi_spmm_tc_slot_rows): lane L's
// SD_BM/4 values are contiguous, value h is (8h+g, t) and value SD_BM/8 + h is
// (8h+g, t+4), so a lane reads its operand with one float2 / float4 load. Every B load
// of a warp touches 4 rows × 32 consecutive bytes (full sectors), as does every store.
//
// 3×TF32: x = hi + lo with hi = rna_tf32(x), lo = rna_tf32(x − hi) (x − hi is exact in
// FP32), and a·b ≈ hi·hi + (hi·lo + lo·hi); the dropped lo·lo and the rounding of lo
// are ≈ 2⁻²² relative. The two small products go into their own accumulator, added to
// the hi·hi accumulator once at the end, so the tensor core's truncating accumulation
// of small terms happens at their own scale, not at the scale of the running sum.
// Products of TF32 values are exact in FP32; accumulation is in FP32 registers and C
// is written once (no atomics: bitwise reproducible).
//
// Macros: SD_KNAME, SD_WARPS (one warp per block row), SD_BM (tile rows, 8 or 16),
// SD_NT (16-column K sub-tiles per warp), plus SD_K, SD_RP64, SD_BIG, SD_MINB.
// Launch: grid (⌈brows / SD_WARPS⌉, ⌈K / (16·SD_NT)⌉), block SD_WARPS·32.
// Arguments: browptr, bcolidx, bval, B, C, rows, cols, brows.
#include "spmm_common.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#error "spmm_bsr_tc.cuh needs sm_80 or newer (mma.sync with TF32 operands)"
#endif
#if SD_BM != 8 && SD_BM != 16
#error "SD_BM must be 8 or 16"
#endif

#define SD_TC_H (SD_BM / 8)        // 8-row halves of a tile
#define SD_TC_PER_LANE (SD_BM / 4) // tile values per lane
#define SD_TC_KT (16 * SD_NT)
#define SD_TC_KTILES ((SD_K + SD_TC_KT - 1) / SD_TC_KT)

// Round to TF32 (nearest, ties away from zero): the low 13 mantissa bits become 0.
__device__ __forceinline__ unsigned sd_tf32(float x)
{
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return r;
}

__device__ __forceinline__ void sd_tf32_split(float x, unsigned &hi, unsigned &lo)
{
    hi = sd_tf32(x);
    lo = sd_tf32(x - __uint_as_float(hi));
}

// d += A·B for one m16n8k8 TF32 product (FP32 accumulate).
__device__ __forceinline__ void sd_mma_tf32(float (&d)[4], const unsigned (&a)[4], unsigned b0,
                                            unsigned b1)
{
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

SD_KERNEL void __launch_bounds__(SD_WARPS * 32, SD_MINB)
    SD_KNAME(const sd_rp *__restrict__ browptr, const int *__restrict__ bcolidx,
             const float *__restrict__ bval, const float *__restrict__ B,
             float *__restrict__ C, int rows, int cols, int brows)
{
    const int br = (int)blockIdx.x * SD_WARPS + (int)threadIdx.x / 32;
    if (br >= brows)
        return; // uniform per warp: the mma below always runs with all 32 lanes
    const int lane = (int)threadIdx.x % 32, g = lane / 4, t = lane % 4;
    const int k0 = SD_TC_KTILES == 1 ? 0 : (int)blockIdx.y * SD_TC_KT;
    float hh[SD_TC_H][SD_NT][4], sm[SD_TC_H][SD_NT][4];
#pragma unroll
    for (int h = 0; h < SD_TC_H; h++)
#pragma unroll
        for (int j = 0; j < SD_NT; j++)
#pragma unroll
            for (int i = 0; i < 4; i++)
                hh[h][j][i] = sm[h][j][i] = 0.0f;
    const sd_rp q0 = __ldg(browptr + br), q1 = __ldg(browptr + br + 1);
    for (sd_rp q = q0; q < q1; q++) {
        const int c0 = __ldg(bcolidx + q) * 8;
        // This lane's tile values, split once and reused for every K sub-tile.
        const float *tv = bval + (long long)q * (SD_BM * 8) + lane * SD_TC_PER_LANE;
        float v[SD_TC_PER_LANE];
#if SD_BM == 16
        const float4 tx = __ldg(reinterpret_cast<const float4 *>(tv));
        v[0] = tx.x;
        v[1] = tx.y;
        v[2] = tx.z;
        v[3] = tx.w;
#else
        const float2 tx = __ldg(reinterpret_cast<const float2 *>(tv));
        v[0] = tx.x;
        v[1] = tx.y;
#endif
        unsigned ah[SD_TC_PER_LANE], al[SD_TC_PER_LANE];
#pragma unroll
        for (int i = 0; i < SD_TC_PER_LANE; i++)
            sd_tf32_split(v[i], ah[i], al[i]);
        // Rows c0+t and c0+t+4 of B; beyond the matrix (edge tile) they read as zero.
        const bool in0 = c0 + t < cols, in1 = c0 + t + 4 < cols;
        const float *b0 = B + (sd_off)(in0 ? c0 + t : 0) * SD_K;
        const float *b1 = B + (sd_off)(in1 ? c0 + t + 4 : 0) * SD_K;
        float x[SD_NT][4];
#pragma unroll
        for (int j = 0; j < SD_NT; j++) {
            const int kb = k0 + 16 * j;
            const bool klo = SD_K % SD_TC_KT == 0 || kb + g < SD_K;
            const bool khi = SD_K % SD_TC_KT == 0 || kb + g + 8 < SD_K;
            x[j][0] = in0 && klo ? __ldg(b0 + kb + g) : 0.0f;
            x[j][1] = in0 && khi ? __ldg(b0 + kb + g + 8) : 0.0f;
            x[j][2] = in1 && klo ? __ldg(b1 + kb + g) : 0.0f;
            x[j][3] = in1 && khi ? __ldg(b1 + kb + g + 8) : 0.0f;
        }
#pragma unroll
        for (int j = 0; j < SD_NT; j++) {
            unsigned xh[4], xl[4];
#pragma unroll
            for (int i = 0; i < 4; i++)
                sd_tf32_split(x[j][i], xh[i], xl[i]);
#pragma unroll
            for (int h = 0; h < SD_TC_H; h++) {
                // small terms first, into their own accumulator; then hi·hi
                sd_mma_tf32(sm[h][j], xl, ah[h], ah[SD_TC_H + h]);
                sd_mma_tf32(sm[h][j], xh, al[h], al[SD_TC_H + h]);
                sd_mma_tf32(hh[h][j], xh, ah[h], ah[SD_TC_H + h]);
            }
        }
    }
#pragma unroll
    for (int h = 0; h < SD_TC_H; h++) {
        const int r = br * SD_BM + 8 * h + 2 * t;
        float *c0p = C + (sd_off)r * SD_K, *c1p = c0p + SD_K;
#pragma unroll
        for (int j = 0; j < SD_NT; j++) {
            const int kb = k0 + 16 * j;
            const bool klo = SD_K % SD_TC_KT == 0 || kb + g < SD_K;
            const bool khi = SD_K % SD_TC_KT == 0 || kb + g + 8 < SD_K;
            if (r < rows) {
                if (klo)
                    c0p[kb + g] = hh[h][j][0] + sm[h][j][0];
                if (khi)
                    c0p[kb + g + 8] = hh[h][j][2] + sm[h][j][2];
            }
            if (r + 1 < rows) {
                if (klo)
                    c1p[kb + g] = hh[h][j][1] + sm[h][j][1];
                if (khi)
                    c1p[kb + g + 8] = hh[h][j][3] + sm[h][j][3];
            }
        }
    }
}
