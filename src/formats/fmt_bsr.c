/* src/formats/fmt_bsr.c: BSR(b) (b ∈ {2, 4, 8, 16}), blocks row-major inside, with the
 * block columns of a block row found by a b-way merge of its sorted rows. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "formats.h"

int64_t sdi_fmt_block_scan(const sd_csr *a, int b, int64_t br, int32_t *out, int32_t *zout, int stride,
                           int64_t dense_min, int64_t *dense_nnz)
{
    /* b is a power of two in the builders (2 … 16): a shift, not a division per entry. */
    int lb = -1;
    for (int k = 0; k <= 4; k++)
        if (b == 1 << k)
            lb = k;
    int64_t cur[16], end[16];
    int32_t bc[16]; /* block column of each row's next entry; INT32_MAX once the row is done */
    int nr = 0;
    for (int64_t r = br * b; r < (br + 1) * b && r < a->rows && nr < 16; r++, nr++) {
        cur[nr] = a->rowptr[r];
        end[nr] = a->rowptr[r + 1];
        bc[nr] = cur[nr] < end[nr] ? (lb >= 0 ? a->colind[cur[nr]] >> lb : a->colind[cur[nr]] / b)
                                   : INT32_MAX;
    }
    int64_t n = 0;
    int32_t last = -1;
    for (;;) {
        int32_t best = INT32_MAX;
        for (int i = 0; i < nr; i++)
            best = bc[i] < best ? bc[i] : best;
        if (best == INT32_MAX)
            break;
        /* Every row's entries in block column best: those below (best + 1)·b. */
        const int64_t lim = ((int64_t)best + 1) * b;
        int64_t z = 0;
        for (int i = 0; i < nr; i++) {
            if (bc[i] != best)
                continue;
            int64_t q = cur[i];
            while (q < end[i] && a->colind[q] < lim)
                q++;
            z += q - cur[i];
            cur[i] = q;
            bc[i] = q < end[i] ? (lb >= 0 ? a->colind[q] >> lb : a->colind[q] / b) : INT32_MAX;
        }
        if (dense_nnz != NULL && z >= dense_min)
            *dense_nnz += z;
        if (best != last) { /* rows out of order could bring a block column back */
            if (out != NULL)
                out[n * stride] = best;
            if (zout != NULL)
                zout[n * stride] = (int32_t)z;
            n++;
            last = best;
        } else if (zout != NULL) {
            zout[(n - 1) * stride] += (int32_t)z;
        }
    }
    return n;
}

int64_t sdi_fmt_block_cols(const sd_csr *a, int b, int64_t br, int32_t *out)
{
    return sdi_fmt_block_scan(a, b, br, out, NULL, 1, 0, NULL);
}

sd_status sdi_fmt_bsr(const sd_csr *a, int b, double max_fill, sdi_devfmt *out)
{
    int32_t *bptr = NULL, *bcol = NULL;
    float *bval = NULL;
    uint8_t *mask = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(bptr);                                                                    \
        sdi_free(bcol);                                                                    \
        sdi_free(bval);                                                                    \
        sdi_free(mask);                                                                    \
        sdi_format_free(out);                                                              \
    } while (0)
    if (out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "bsr: out is NULL");
    memset(out, 0, sizeof *out);
    if (a == NULL || a->rowptr == NULL || (a->nnz > 0 && (a->colind == NULL || a->vals == NULL)))
        return SDI_ERR(SD_ERR_INVALID_ARG, "bsr: matrix or its arrays are NULL");
    if (b != 2 && b != 4 && b != 8 && b != 16)
        return SDI_ERR(SD_ERR_INVALID_ARG, "bsr: block size %d is not 2, 4, 8 or 16", b);
    const int64_t brows = ((int64_t)a->rows + b - 1) / b;
    const int64_t bcols = ((int64_t)a->cols + b - 1) / b;
    const int64_t bb = (int64_t)b * b;
    int64_t *cnt = sdi_malloc_array((size_t)brows + 1, sizeof *cnt);
    if (cnt == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for bsr block counts");
#pragma omp parallel for schedule(dynamic, 256)
    for (int64_t br = 0; br < brows; br++)
        cnt[br] = sdi_fmt_block_cols(a, b, br, NULL);
    int64_t nblocks = 0;
    for (int64_t br = 0; br < brows; br++) {
        int64_t c = cnt[br];
        cnt[br] = nblocks;
        nblocks += c;
    }
    cnt[brows] = nblocks;
    int64_t slots = 0;
    sd_status s = SD_OK;
    if (nblocks > INT32_MAX || __builtin_mul_overflow(nblocks, bb, &slots))
        s = SDI_ERR(SD_ERR_UNSUPPORTED, "bsr(%d): %lld blocks exceed 32-bit block indices", b,
                    (long long)nblocks);
    if (s == SD_OK) {
        char what[32];
        snprintf(what, sizeof what, "bsr(%d)", b);
        s = sdi_format_check_fill(what, slots, a->nnz, max_fill);
    }
    if (s != SD_OK) {
        sdi_free(cnt);
        return s;
    }
    bptr = sdi_malloc_array((size_t)brows + 1, sizeof *bptr);
    bcol = sdi_malloc_array((size_t)(nblocks > 0 ? nblocks : 1), sizeof *bcol);
    bval = sdi_calloc((size_t)(slots > 0 ? slots : 1), sizeof *bval);
    mask = sdi_calloc((size_t)(slots > 0 ? slots : 1), sizeof *mask);
    if (bptr == NULL || bcol == NULL || bval == NULL || mask == NULL) {
        sdi_free(cnt);
        SD_FREE_ALL;
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for bsr(%d) with %lld blocks",
                       b, (long long)nblocks);
    }
#pragma omp parallel for schedule(dynamic, 256)
    for (int64_t br = 0; br < brows; br++) {
        bptr[br] = (int32_t)cnt[br];
        int64_t first = cnt[br], n = sdi_fmt_block_cols(a, b, br, bcol + first);
        for (int64_t r = br * b; r < (br + 1) * b && r < a->rows; r++) {
            int64_t j = first;
            for (int64_t k = a->rowptr[r]; k < a->rowptr[r + 1]; k++) {
                int32_t bc = a->colind[k] / b;
                while (j < first + n && bcol[j] < bc)
                    j++;
                int64_t slot = j * bb + (r - br * b) * b + a->colind[k] % b;
                bval[slot] = a->vals[k];
                mask[slot] = 1;
            }
        }
    }
    bptr[brows] = (int32_t)nblocks;
    sdi_free(cnt);
    out->kind = SDI_FMT_BSR;
    out->rows = a->rows;
    out->cols = a->cols;
    out->nnz = a->nnz;
    out->slots = slots;
    out->bsr_b = b;
    out->bsr_brows = brows;
    out->bsr_bcols = bcols;
    out->bsr_blocks = nblocks;
    s = sdi_format_add(out, "browptr", bptr, brows + 1, brows + 1, 4, SDI_ROLE_META, 1);
    bptr = NULL;
    SD_TRY(s);
    s = sdi_format_add(out, "bcolind", bcol, nblocks, nblocks, 4, SDI_ROLE_META, 1);
    bcol = NULL;
    SD_TRY(s);
    s = sdi_format_add(out, "bvals", bval, slots, slots, 4, SDI_ROLE_VALUE, 1);
    bval = NULL;
    SD_TRY(s);
    s = sdi_format_add(out, "mask", mask, slots, slots, 1, SDI_ROLE_HOST, 1);
    mask = NULL;
    SD_TRY(s);
    return SD_OK;
#undef SD_FREE_ALL
}
