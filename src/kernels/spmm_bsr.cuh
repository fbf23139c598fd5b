// src/kernels/spmm_bsr.cuh: BSR and blocked-ELL SpMM on CUDA cores with SD_BM × SD_BN
// blocks. A group of SD_KL lanes owns one block row for a K tile of SD_KL·SD_V·SD_CO
// columns and keeps SD_BM output rows × SD_CO vectors in registers; for each column of a
// block it loads one B vector per coarsening step and reuses it for the SD_BM rows, whose
// block values are contiguous (column-major blocks) and read as float4 broadcasts.
// ell = 0: BSR (browptr used); ell > 0: blocked-ELL with ell blocks per block row,
// padding blocks have column −1 (they sit at the end of a block row).
// Macros: SD_KNAME, SD_WARPS, SD_KL, SD_V, SD_CO, SD_BM, SD_BN.
// Launch: grid (⌈brows / groups per CTA⌉, K tiles), block SD_WARPS·32.
// Arguments: browptr, bcolidx, bval, B, C, rows, cols, brows, ell.
#include "spmm_common.cuh"

#define SD_GPC (SD_WARPS * 32 / SD_KL)
#define SD_KTILE (SD_KL * SD_V * SD_CO)
#define SD_KTILES ((SD_K + SD_KTILE - 1) / SD_KTILE)

SD_KERNEL void __launch_bounds__(SD_WARPS * 32, SD_MINB)
    SD_KNAME(const sd_rp *__restrict__ browptr, const int *__restrict__ bcolidx,
             const float *__restrict__ bval, const float *__restrict__ B,
             float *__restrict__ C, int rows, int cols, int brows, int ell)
{
    const int br = (int)blockIdx.x * SD_GPC + (int)threadIdx.x / SD_KL;
    if (br >= brows)
        return;
    const int kl = (int)threadIdx.x % SD_KL;
    const int k0 = SD_KTILES == 1 ? 0 : (int)blockIdx.y * SD_KTILE;
    float acc[SD_BM][SD_CO][SD_V];
#pragma unroll
    for (int r = 0; r < SD_BM; r++)
        sd_zero(acc[r]);
    sd_rp q0, q1;
    if (ell > 0) {
        q0 = (sd_rp)br * ell;
        q1 = q0 + ell;
    } else {
        q0 = __ldg(browptr + br);
        q1 = __ldg(browptr + br + 1);
    }
    for (sd_rp q = q0; q < q1; q++) {
        const int bc = __ldg(bcolidx + q);
        if (bc < 0)
            break; // padding blocks close the block row
        const float *bv = bval + (long long)q * (SD_BM * SD_BN);
#pragma unroll
        for (int c = 0; c < SD_BN; c++) {
            const int col = bc * SD_BN + c;
            if (col >= cols)
                break;
            float b[SD_CO][SD_V];
            const float *brow = B + (sd_off)col * SD_K;
#pragma unroll
            for (int t = 0; t < SD_CO; t++) {
                const int k = k0 + (t * SD_KL + kl) * SD_V;
                if (SD_K % SD_KTILE == 0 || k < SD_K)
                    sd_load<SD_V>(brow + k, b[t]);
                else
#pragma unroll
                    for (int i = 0; i < SD_V; i++)
                        b[t][i] = 0.0f;
            }
            float a[SD_BM];
            if (SD_BM % 4 == 0) {
#pragma unroll
                for (int r = 0; r < SD_BM; r += 4) {
                    const float4 a4 = __ldg(reinterpret_cast<const float4 *>(bv + c * SD_BM + r));
                    a[r] = a4.x;
                    a[r + 1] = a4.y;
                    a[r + 2] = a4.z;
                    a[r + 3] = a4.w;
                }
            } else {
#pragma unroll
                for (int r = 0; r < SD_BM; r++)
                    a[r] = __ldg(bv + c * SD_BM + r);
            }
#pragma unroll
            for (int r = 0; r < SD_BM; r++)
#pragma unroll
                for (int t = 0; t < SD_CO; t++)
#pragma unroll
                    for (int i = 0; i < SD_V; i++)
                        acc[r][t][i] = fmaf(a[r], b[t][i], acc[r][t][i]);
        }
    }
#pragma unroll
    for (int r = 0; r < SD_BM; r++) {
        const int row = br * SD_BM + r;
        if (row < rows)
            sd_store_row<SD_KL, SD_V, SD_CO>(C + (sd_off)row * SD_K, k0, kl, acc[r]);
    }
}
