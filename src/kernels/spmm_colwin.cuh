// src/kernels/spmm_colwin.cuh: column-window SpMM (Sextans-style packing). A CTA owns one
// panel of SD_PR consecutive rows and one K tile; the panel's entries are grouped by
// column window of SD_CW columns (host-packed, spmm_formats.c). For each non-empty window
// the CTA stages the slice B[window, K tile] in shared memory once (coalesced vectors),
// then every group (SD_KL lanes, one per panel row) multiplies its row's entries of that
// window against the staged slice: B is read from global memory once per (panel, window)
// instead of once per entry. Worth it where the windows are dense (many entries per
// staged B row), which the plan family checks.
// Macros: SD_KNAME, SD_WARPS, SD_KL, SD_V, SD_CO, SD_PR (= SD_WARPS·32 / SD_KL), SD_CW.
// Launch: grid (panels, K tiles), block SD_WARPS·32.
// Arguments: panel_seg, seg_col0, seg_start, seg_rowoff, colidx, val, B, C, rows, cols.
#include "spmm_common.cuh"

#define SD_KTILE (SD_KL * SD_V * SD_CO)
#define SD_KTILES ((SD_K + SD_KTILE - 1) / SD_KTILE)
#define SD_SROW (SD_KTILE + 4) // staged row stride in floats (padding against bank conflicts)

SD_KERNEL void __launch_bounds__(SD_WARPS * 32, SD_MINB)
    SD_KNAME(const int *__restrict__ panel_seg, const int *__restrict__ seg_col0,
             const sd_rp *__restrict__ seg_start, const int *__restrict__ seg_rowoff,
             const int *__restrict__ colidx, const float *__restrict__ val,
             const float *__restrict__ B, float *__restrict__ C, int rows, int cols)
{
    __shared__ __align__(16) float sB[SD_CW * SD_SROW];
    const int p = (int)blockIdx.x;
    const int k0 = SD_KTILES == 1 ? 0 : (int)blockIdx.y * SD_KTILE;
    const int g = (int)threadIdx.x / SD_KL, kl = (int)threadIdx.x % SD_KL;
    const int row = p * SD_PR + g;
    float acc[SD_CO][SD_V];
    sd_zero(acc);
    const int s0 = __ldg(panel_seg + p), s1 = __ldg(panel_seg + p + 1);
    for (int s = s0; s < s1; s++) {
        const int col0 = __ldg(seg_col0 + s);
        __syncthreads(); // the previous slice is consumed
        constexpr int VPR = SD_KTILE / SD_V; // vectors per staged row
        for (int idx = (int)threadIdx.x; idx < SD_CW * VPR; idx += SD_WARPS * 32) {
            const int r = idx / VPR, cv = idx % VPR;
            const int col = col0 + r, k = k0 + cv * SD_V;
            float x[SD_V];
            if (col < cols && (SD_K % SD_KTILE == 0 || k < SD_K)) {
                sd_load<SD_V>(B + (sd_off)col * SD_K + k, x);
            } else {
#pragma unroll
                for (int i = 0; i < SD_V; i++)
                    x[i] = 0.0f;
            }
            sd_store<SD_V>(sB + r * SD_SROW + cv * SD_V, x);
        }
        __syncthreads();
        if (row < rows) {
            const sd_rp base = __ldg(seg_start + s);
            const int *off = seg_rowoff + (long long)s * (SD_PR + 1);
            const sd_rp js = base + __ldg(off + g), je = base + __ldg(off + g + 1);
#pragma unroll 4
            for (sd_rp j = js; j < je; j++) {
                const int c = __ldg(colidx + j) - col0;
                const float v = __ldg(val + j);
#pragma unroll
                for (int t = 0; t < SD_CO; t++) {
                    const int kk = (t * SD_KL + kl) * SD_V;
                    if (SD_K % SD_KTILE == 0 || k0 + kk < SD_K) {
                        const float *src = sB + c * SD_SROW + kk;
#pragma unroll
                        for (int i = 0; i < SD_V; i++)
                            acc[t][i] = fmaf(v, src[i], acc[t][i]);
                    }
                }
            }
        }
    }
    if (row < rows)
        sd_store_row<SD_KL, SD_V, SD_CO>(C + (sd_off)row * SD_K, k0, kl, acc);
}
