// src/kernels/spmm_csr_window.cuh: row-window CSR SpMM. A CTA takes one window of at most
// SD_WR consecutive rows (host-built, nonzero-balanced: at most SD_CAP entries, or one
// longer row staged in rounds). The window's entries are copied into shared memory once
// per round (coalesced, whole CTA) and reused by every K tile of every row of the window:
// groups of SD_KL lanes own (row, K tile) pairs and read the staged entries as shared-
// memory broadcasts (no shuffles, no per-group index loads).
// Macros: SD_KNAME, SD_WARPS, SD_KL, SD_V, SD_CO, SD_WR, SD_CAP.
// Launch: grid = number of windows, block SD_WARPS·32.
// Arguments: win_ptr, rowptr, colind, vals, B, C.
#include "spmm_common.cuh"

#define SD_NG (SD_WARPS * 32 / SD_KL) // groups per CTA
#define SD_KTILE (SD_KL * SD_V * SD_CO)
#define SD_KTILES ((SD_K + SD_KTILE - 1) / SD_KTILE)
#define SD_PPG ((SD_WR * SD_KTILES + SD_NG - 1) / SD_NG) // pairs per group

SD_KERNEL void __launch_bounds__(SD_WARPS * 32, SD_MINB)
    SD_KNAME(const int *__restrict__ win_ptr, const sd_rp *__restrict__ rowptr,
             const int *__restrict__ colind, const float *__restrict__ vals,
             const float *__restrict__ B, float *__restrict__ C)
{
    __shared__ int s_col[SD_CAP];
    __shared__ float s_val[SD_CAP];
    __shared__ sd_rp s_rp[SD_WR + 1];
    const int r0 = __ldg(win_ptr + blockIdx.x);
    const int nr = __ldg(win_ptr + blockIdx.x + 1) - r0;
    for (int i = (int)threadIdx.x; i <= nr; i += SD_WARPS * 32)
        s_rp[i] = __ldg(rowptr + r0 + i);
    __syncthreads();
    const sd_rp e0 = s_rp[0], e1 = s_rp[nr];
    const int g = (int)threadIdx.x / SD_KL, kl = (int)threadIdx.x % SD_KL;
    const int npairs = nr * SD_KTILES;
    float acc[SD_PPG][SD_CO][SD_V];
#pragma unroll
    for (int q = 0; q < SD_PPG; q++)
        sd_zero(acc[q]);
    for (sd_rp rb = e0; rb < e1; rb += SD_CAP) {
        const sd_rp left = e1 - rb;
        const int n = left < (sd_rp)SD_CAP ? (int)left : SD_CAP;
        if (rb != e0)
            __syncthreads(); // the previous round is consumed
        for (int i = (int)threadIdx.x; i < n; i += SD_WARPS * 32) {
            s_col[i] = __ldg(colind + rb + i);
            s_val[i] = __ldg(vals + rb + i);
        }
        __syncthreads();
#pragma unroll
        for (int q = 0; q < SD_PPG; q++) {
            const int p = g + q * SD_NG;
            if (p < npairs) {
                const int r = p / SD_KTILES, t = p % SD_KTILES;
                const sd_rp a = s_rp[r] > rb ? s_rp[r] : rb;
                const sd_rp b = s_rp[r + 1] < rb + n ? s_rp[r + 1] : rb + n;
                const int js = (int)(a - rb), je = (int)(b - rb);
                const int k0 = t * SD_KTILE;
#pragma unroll 4
                for (int j = js; j < je; j++)
                    sd_fma_row<SD_KL, SD_V, SD_CO>(B, s_col[j], s_val[j], k0, kl, acc[q]);
            }
        }
    }
#pragma unroll
    for (int q = 0; q < SD_PPG; q++) {
        const int p = g + q * SD_NG;
        if (p < npairs) {
            const int r = p / SD_KTILES, t = p % SD_KTILES;
            sd_store_row<SD_KL, SD_V, SD_CO>(C + (sd_off)(r0 + r) * SD_K, t * SD_KTILE, kl,
                                            acc[q]);
        }
    }
}
