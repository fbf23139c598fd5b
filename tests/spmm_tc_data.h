/* tests/spmm_tc_data.h: an SpMM input on which plain TF32 breaks the validation rule
 * (docs/ARCHITECTURE.md "Validation")
 * while 3×TF32 keeps it (shared by tests/cpu/test_spmm_tc.c, which proves both on an
 * emulation, and tests/gpu/test_spmm.c, which runs the tensor-core template on it).
 *
 * A has dense tiles of bm × 8 (each entry present with probability 7/8, about half of the
 * tiles of a block row occupied, every fifth block row empty). Each row's entries come in
 * pairs +m, −m with m = 2^e·(1 + u), e ∈ [−6, 10], u of full FP32 precision; B = 1 + 2⁻⁶·r
 * with r ∈ [−1, 1). The products cancel down to the 2⁻⁶·r parts, so |y| is far below
 * S = Σ|a·b| and the allowance 1e-3·|y| + γ_{n+1}·S is ≈ 2⁻²⁰·S, while TF32's rounding of
 * B (2⁻¹¹ relative) leaves errors of ≈ 2⁻¹²·S. */
#ifndef SD_TEST_SPMM_TC_DATA_H
#define SD_TEST_SPMM_TC_DATA_H

#include "core/core.h"
#include "core/rng.h"

static inline sd_status tc_cancel_matrix(int32_t rows, int32_t cols, int bm, uint64_t seed,
                                         sd_csr *out)
{
    sdi_coo c;
    memset(out, 0, sizeof *out);
    sd_status s = sdi_coo_init(&c, rows, cols, 1024);
    if (s != SD_OK)
        return s;
    sdi_rng r;
    sdi_rng_seed(&r, seed, 0x7c, 0);
    int32_t bcols = (cols + 7) / 8;
    for (int32_t br = 0; br * bm < rows && s == SD_OK; br++) {
        if (br % 5 == 3)
            continue; /* an empty block row */
        for (int32_t i = br * bm; i < (br + 1) * bm && i < rows && s == SD_OK; i++) {
            int pending = 0; /* the partner of the last +m is still to come */
            float m = 0;
            for (int32_t bc = 0; bc < bcols && s == SD_OK; bc++) {
                /* the same tiles for every row of a block row: a hash of (br, bc) */
                if (sdi_hash3(seed, (uint64_t)br, (uint64_t)bc) % 2 == 0)
                    continue;
                for (int32_t j = bc * 8; j < bc * 8 + 8 && j < cols && s == SD_OK; j++) {
                    if (sdi_rng_next(&r) % 8 == 0)
                        continue;
                    if (!pending) {
                        int e = (int)(sdi_rng_next(&r) % 17) - 6;
                        m = ldexpf(1.0f + (float)sdi_rng_uniform(&r), e);
                        s = sdi_coo_push(&c, i, j, m);
                    } else {
                        s = sdi_coo_push(&c, i, j, -m);
                    }
                    pending = !pending;
                }
            }
        }
    }
    if (s == SD_OK)
        s = sdi_coo_to_csr(&c, out, NULL);
    sdi_coo_free(&c);
    return s;
}

static inline void tc_cancel_dense(float *b, int64_t n, uint64_t seed)
{
    sdi_rng r;
    sdi_rng_seed(&r, seed, 0x7d, 0);
    for (int64_t i = 0; i < n; i++)
        b[i] = 1.0f + ldexpf((float)(2.0 * sdi_rng_uniform(&r) - 1.0), -6);
}

#endif /* SD_TEST_SPMM_TC_DATA_H */
