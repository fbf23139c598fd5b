/* tests/data/spmv_csr_vector.cuh: the kernel the JIT and runtime tests compile, given to
 * a request as its `source` (sdt_data_text, tests/sdt.h): a test fixture, not a shipped
 * template. CSR SpMV y = A·x with a group of SD_TPR threads per row (SD_TPR = 32 is
 * warp-per-row). Rows are visited with a grid-stride loop, so any grid size is correct.
 * Macros:
 *   SD_TPR         threads per row: 1, 2, 4, 8, 16 or 32 (default 32)
 *   SD_BLOCK       threads per CTA, a multiple of 32 and of SD_TPR (default 256)
 *   SD_KERNEL_NAME the symbol (default sd_spmv_csr_vector)
 * Arguments: rowptr (rows + 1), colind, vals (nnz), x (cols), y (rows), rows. */
#include "sd_common.cuh"

#ifndef SD_TPR
#define SD_TPR 32
#endif
#ifndef SD_BLOCK
#define SD_BLOCK 256
#endif
#ifndef SD_KERNEL_NAME
#define SD_KERNEL_NAME sd_spmv_csr_vector
#endif

static_assert(SD_TPR == 1 || SD_TPR == 2 || SD_TPR == 4 || SD_TPR == 8 || SD_TPR == 16 ||
                  SD_TPR == 32,
              "SD_TPR must be a power of two between 1 and 32");
static_assert(SD_BLOCK % SD_WARP_SIZE == 0 && SD_BLOCK >= SD_WARP_SIZE && SD_BLOCK <= 1024,
              "SD_BLOCK must be a multiple of 32 in [32, 1024]");

SD_KERNEL SD_LAUNCH_BOUNDS(SD_BLOCK) void SD_KERNEL_NAME(
    const sd_offset *SD_RESTRICT rowptr, const sd_index *SD_RESTRICT colind,
    const sd_value *SD_RESTRICT vals, const sd_value *SD_RESTRICT x, sd_value *SD_RESTRICT y,
    int rows)
{
    const int lane = (int)(threadIdx.x % SD_TPR);
    const long long groups_per_cta = SD_BLOCK / SD_TPR;
    const long long first = (long long)blockIdx.x * groups_per_cta + threadIdx.x / SD_TPR;
    const long long stride = (long long)gridDim.x * groups_per_cta;
    /* Every lane of a group takes the same rows, so the group stays converged for the
     * shuffles even when neighbouring groups of the warp have already finished. */
    for (long long row = first; row < rows; row += stride) {
        const sd_offset begin = rowptr[row];
        const sd_offset end = rowptr[row + 1];
        float sum = 0.0f;
        for (sd_offset k = begin + lane; k < end; k += SD_TPR)
            sum += vals[k] * sd_load_ro(x + colind[k]);
        sum = sd_group_sum(sum, SD_TPR);
        if (lane == 0)
            y[row] = sum;
    }
}
