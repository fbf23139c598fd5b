/* src/runtime/validate_device.c: CPU references for the operators (src/ref, double
 * accumulation) kept per task, and the check of a device output against them: the
 * output is copied back and DESIGN.md's rule applied (src/ref/validate.c). */
#include <stdio.h>
#include <string.h>

#include "runtime.h"

void sdi_reference_free(sdi_reference *r)
{
    if (r == NULL)
        return;
    sdi_free(r->want);
    sdi_free(r->count);
    sdi_free(r->absum);
    sdi_ref_csr_free(&r->c);
    memset(r, 0, sizeof *r);
}

sd_status sdi_reference_dense(const sd_csr *a, sd_op op, const float *xb, int k, int exact,
                              sdi_reference *out)
{
    if (out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sdi_reference_dense: out is NULL");
    memset(out, 0, sizeof *out);
    if (a == NULL || xb == NULL || (op != SD_OP_SPMV && op != SD_OP_SPMM) ||
        (op == SD_OP_SPMM && k < 1))
        return SDI_ERR(SD_ERR_INVALID_ARG, "sdi_reference_dense: bad arguments");
    if (op == SD_OP_SPMV)
        k = 1;
    sdi_reference r;
    memset(&r, 0, sizeof r);
#define SD_FREE_ALL sdi_reference_free(&r)
    r.op = op;
    r.k = k;
    r.exact = exact;
    r.rows = a->rows;
    size_t n = (size_t)a->rows * (size_t)k;
    r.want = sdi_malloc_array(n, sizeof *r.want);
    r.absum = sdi_malloc_array(n, sizeof *r.absum);
    r.count = sdi_malloc_array((size_t)a->rows, sizeof *r.count);
    SD_CHECK_ALLOC(r.want, "reference output");
    SD_CHECK_ALLOC(r.absum, "reference bounds");
    SD_CHECK_ALLOC(r.count, "reference counts");
    if (op == SD_OP_SPMV)
        SD_TRY(sdi_ref_spmv(a, xb, r.want, r.count, r.absum));
    else
        SD_TRY(sdi_ref_spmm(a, xb, k, r.want, r.count, r.absum));
    *out = r;
    return SD_OK;
#undef SD_FREE_ALL
}

sd_status sdi_reference_spgemm(const sd_csr *a, const sd_csr *b, sdi_reference *out)
{
    if (out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sdi_reference_spgemm: out is NULL");
    memset(out, 0, sizeof *out);
    if (a == NULL || b == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sdi_reference_spgemm: a or b is NULL");
    out->op = SD_OP_SPGEMM;
    out->k = 0;
    out->rows = a->rows;
    sd_status s = sdi_ref_spgemm(a, b, &out->c);
    if (s != SD_OK)
        memset(out, 0, sizeof *out);
    return s;
}

sd_status sdi_check_dense_output(sd_context *ctx, const sdi_reference *r, const float *d_out,
                                 sdi_validation *val)
{
    sdi_validation local;
    if (val == NULL)
        val = &local;
    memset(val, 0, sizeof *val);
    if (r == NULL || d_out == NULL || (r->op != SD_OP_SPMV && r->op != SD_OP_SPMM))
        return SDI_ERR(SD_ERR_INVALID_ARG, "sdi_check_dense_output: bad arguments");
    size_t n = (size_t)r->rows * (size_t)r->k;
    float *got = sdi_malloc_array(n, sizeof *got);
    if (got == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for the device output "
                       "(%zu floats)", n);
    sd_status s = sdi_copy_to_host(ctx, got, d_out, n * sizeof *got, "the device output");
    if (s == SD_OK) {
        if (r->exact)
            s = sdi_validate_dense_exact(got, r->want, r->rows, r->k, val);
        else
            s = sdi_validate_dense(got, r->want, r->count, r->absum, r->rows, r->k, val);
    }
    sdi_free(got);
    return s;
}

sd_status sdi_check_spgemm_output(sd_context *ctx, const sdi_reference *r, int32_t rows,
                                  int32_t cols, int64_t nnz, const void *d_rowptr,
                                  int rowptr_bytes, const int32_t *d_colind,
                                  const float *d_vals, sdi_validation *val)
{
    sdi_validation local;
    if (val == NULL)
        val = &local;
    memset(val, 0, sizeof *val);
    if (r == NULL || r->op != SD_OP_SPGEMM || d_rowptr == NULL || rows < 0 || nnz < 0 ||
        (rowptr_bytes != 4 && rowptr_bytes != 8) ||
        (nnz > 0 && (d_colind == NULL || d_vals == NULL)))
        return SDI_ERR(SD_ERR_INVALID_ARG, "sdi_check_spgemm_output: bad arguments");
    sd_csr got;
    memset(&got, 0, sizeof got);
    int32_t *rp32 = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sd_csr_free(&got);                                                                 \
        sdi_free(rp32);                                                                    \
    } while (0)
    SD_TRY(sdi_csr_alloc(&got, rows, cols, nnz));
    if (rowptr_bytes == 8) {
        SD_TRY(sdi_copy_to_host(ctx, got.rowptr, d_rowptr, ((size_t)rows + 1) * 8,
                                "the output row pointers"));
    } else {
        rp32 = sdi_malloc_array((size_t)rows + 1, sizeof *rp32);
        SD_CHECK_ALLOC(rp32, "output row pointers");
        SD_TRY(sdi_copy_to_host(ctx, rp32, d_rowptr, ((size_t)rows + 1) * 4,
                                "the output row pointers"));
        for (int64_t i = 0; i <= rows; i++)
            got.rowptr[i] = rp32[i];
    }
    SD_TRY(sdi_copy_to_host(ctx, got.colind, d_colind, (size_t)nnz * sizeof(int32_t),
                            "the output column indices"));
    SD_TRY(sdi_copy_to_host(ctx, got.vals, d_vals, (size_t)nnz * sizeof(float),
                            "the output values"));
    /* The rule needs a consistent structure before it can compare anything. */
    if (got.rowptr[0] != 0 || got.rowptr[rows] != nnz) {
        int64_t first = got.rowptr[0], last = got.rowptr[rows];
        SD_FREE_ALL;
        val->ok = false;
        snprintf(val->reason, sizeof val->reason,
                 "row pointers run from %lld to %lld, expected 0 to nnz = %lld",
                 (long long)first, (long long)last, (long long)nnz);
        return SDI_ERR(SD_ERR_VALIDATION, "SpGEMM output: %s", val->reason);
    }
    for (int32_t i = 0; i < rows; i++)
        if (got.rowptr[i + 1] < got.rowptr[i]) {
            SD_FREE_ALL;
            val->ok = false;
            snprintf(val->reason, sizeof val->reason, "row pointers decrease at row %d", i);
            return SDI_ERR(SD_ERR_VALIDATION, "SpGEMM output: %s", val->reason);
        }
    for (int64_t e = 0; e < nnz; e++)
        if (got.colind[e] < 0 || got.colind[e] >= cols) {
            SD_FREE_ALL;
            val->ok = false;
            snprintf(val->reason, sizeof val->reason,
                     "column index %d of entry %lld is outside [0, %d)", got.colind[e],
                     (long long)e, cols);
            return SDI_ERR(SD_ERR_VALIDATION, "SpGEMM output: %s", val->reason);
        }
    sd_status s = sdi_validate_spgemm(&got, &r->c, val);
    SD_FREE_ALL;
    return s;
#undef SD_FREE_ALL
}
