/* src/kernels/spmv_dia.cuh: DIA SpMV for banded and stencil matrices. A thread takes
 * SD_RPT consecutive rows (16-byte value loads for RPT = 4); diagonal d of row i is
 * vals[d·ld + i] with column i + offsets[d]. With SD_XWIN > 0 the CTA first stages its
 * column window of x (rows of the CTA shifted by the smallest and largest offsets, at most
 * SD_XWIN floats) in shared memory; the planner enables it when the band fits. Macros:
 *   SD_BLOCK, SD_RPT (1, 2, 4), SD_XWIN (0 = x from the read-only path), SD_MAXD
 *   (offsets staged in shared memory, ≥ ndiag), SD_STREAM
 * Arguments: offsets, vals, x, y, rows, cols, ndiag, ld, off_min, off_max. */
#include "spmv_util.cuh"

#ifndef SD_BLOCK
#define SD_BLOCK 256
#endif
#ifndef SD_RPT
#define SD_RPT 1
#endif
#ifndef SD_XWIN
#define SD_XWIN 0
#endif
#ifndef SD_MAXD
#define SD_MAXD 64
#endif

static_assert(SD_BLOCK % 32 == 0 && SD_BLOCK >= 32 && SD_BLOCK <= 1024, "SD_BLOCK");
static_assert(SD_RPT == 1 || SD_RPT == 2 || SD_RPT == 4, "SD_RPT must be 1, 2 or 4");

SD_KERNEL SD_LAUNCH_BOUNDS(SD_BLOCK) void sd_spmv_dia(
    const int *SD_RESTRICT offsets, const float *SD_RESTRICT vals, const float *SD_RESTRICT x,
    float *SD_RESTRICT y, int rows, int cols, int ndiag, long long ld, int off_min, int off_max)
{
    __shared__ int s_off[SD_MAXD];
#if SD_XWIN > 0
    __shared__ float s_x[SD_XWIN];
#endif
    const long long cta_row0 = (long long)blockIdx.x * SD_BLOCK * SD_RPT;
    for (int d = threadIdx.x; d < ndiag && d < SD_MAXD; d += SD_BLOCK)
        s_off[d] = __ldg(offsets + d);
#if SD_XWIN > 0
    /* Columns [w0, w0 + SD_XWIN) cover rows [cta_row0, cta_row0 + BLOCK·RPT) of every
     * diagonal when the band off_max − off_min + BLOCK·RPT ≤ SD_XWIN (planner's check). */
    const long long w0 = cta_row0 + off_min;
    for (int t = threadIdx.x; t < SD_XWIN; t += SD_BLOCK) {
        const long long c = w0 + t;
        s_x[t] = (c >= 0 && c < cols) ? __ldg(x + c) : 0.0f;
    }
#else
    (void)off_min;
#endif
    (void)off_max;
    __syncthreads();
    const long long i0 = cta_row0 + (long long)threadIdx.x * SD_RPT;
    if (i0 >= rows)
        return;
    float acc[SD_RPT];
#pragma unroll
    for (int r = 0; r < SD_RPT; r++)
        acc[r] = 0.0f;
    for (int d = 0; d < ndiag; d++) {
        const int off = d < SD_MAXD ? s_off[d] : __ldg(offsets + d);
        float v[SD_RPT];
        if (SD_RPT == 4) {
            const float4 q = sd_ldm(reinterpret_cast<const float4 *>(vals + d * ld + i0));
            v[0] = q.x;
            v[SD_RPT > 1 ? 1 : 0] = q.y;
            v[SD_RPT > 2 ? 2 : 0] = q.z;
            v[SD_RPT > 3 ? 3 : 0] = q.w;
        } else if (SD_RPT == 2) {
            const float2 q = sd_ldm(reinterpret_cast<const float2 *>(vals + d * ld + i0));
            v[0] = q.x;
            v[SD_RPT > 1 ? 1 : 0] = q.y;
        } else {
            v[0] = sd_ldm(vals + d * ld + i0);
        }
#pragma unroll
        for (int r = 0; r < SD_RPT; r++) {
            const long long c = i0 + r + off;
#if SD_XWIN > 0
            /* padding slots hold 0 and the window holds 0 outside [0, cols) */
            acc[r] += v[r] * s_x[c - w0];
#else
            if (c >= 0 && c < cols)
                acc[r] += v[r] * sd_ldx(x, (int)c);
#endif
        }
    }
#pragma unroll
    for (int r = 0; r < SD_RPT; r++)
        if (i0 + r < rows)
            y[i0 + r] = acc[r];
}
