// src/kernels/spmm_csr_row.cuh: row-wise CSR SpMM: a group of SD_KL·SD_NZ lanes per row
// (sub-warps for small K, several rows per warp) × K tiles of SD_KL·SD_V·SD_CO columns.
// Sparse entries are loaded once per group and broadcast with __shfl_sync; B is read in
// float2/float4 vectors when K allows; SD_CO vectors per lane (coarsening) stay in
// registers; every output is written once.
//
// Macros: SD_KNAME, SD_WARPS (warps per CTA), SD_KL, SD_NZ, SD_V, SD_CO (and SD_K,
// SD_RP64, SD_BIG: spmm_common.cuh).
// Launch: grid (⌈rows / groups per CTA⌉, K tiles), block SD_WARPS·32.
// Arguments: rowptr, colind, vals, B, C, rows.
#include "spmm_common.cuh"

#define SD_G (SD_KL * SD_NZ)
#define SD_GPC (SD_WARPS * 32 / SD_G)
#define SD_KTILE (SD_KL * SD_V * SD_CO)
#define SD_KTILES ((SD_K + SD_KTILE - 1) / SD_KTILE)

SD_KERNEL void __launch_bounds__(SD_WARPS * 32, SD_MINB)
    SD_KNAME(const sd_rp *__restrict__ rowptr, const int *__restrict__ colind,
             const float *__restrict__ vals, const float *__restrict__ B, float *__restrict__ C,
             int rows)
{
    const int row = (int)blockIdx.x * SD_GPC + (int)threadIdx.x / SD_G;
    if (row >= rows)
        return;
    const int lane = (int)threadIdx.x % SD_G;
    const int k0 = SD_KTILES == 1 ? 0 : (int)blockIdx.y * SD_KTILE;
    const unsigned gmask = sd_gmask<SD_G>((int)threadIdx.x & 31);
    float acc[SD_CO][SD_V];
    sd_zero(acc);
    const sd_rp s = __ldg(rowptr + row), e = __ldg(rowptr + row + 1);
    sd_row_accum<SD_KL, SD_NZ, SD_V, SD_CO>(colind, vals, s, e, B, k0, lane, gmask, acc);
    if (SD_NZ > 1)
        sd_group_reduce<SD_KL, SD_NZ, SD_V, SD_CO>(gmask, acc);
    if (lane < SD_KL)
        sd_store_row<SD_KL, SD_V, SD_CO>(C + (sd_off)row * SD_K, k0, lane, acc);
}
