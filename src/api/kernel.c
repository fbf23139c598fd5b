/* src/api/kernel.c: the compile and execute entry points of the public API.
 * The compiler stages (plan synthesis, lowering, tuning, cache) do not exist yet;
 * these entry points check their arguments and then report which stage is missing
 * with SD_ERR_UNSUPPORTED, so that no caller mistakes them for working code. */
#include <string.h>

#include "core/sdi.h"

#define MISSING_COMPILER "the compiler stage (plan synthesis, lowering, tuning, kernel cache) is not built yet"

sd_compile_options sd_compile_options_default(void)
{
    sd_compile_options o;
    memset(&o, 0, sizeof o);
    o.budget = 0; /* the default budget */
    o.use_cache = 1;
    o.allow_vendor = 1;
    o.deterministic = 0;
    o.report_path = NULL;
    return o;
}

sd_status sd_compile(sd_context *ctx, const sd_csr *a, sd_op op, int k,
                     const sd_compile_options *opts, sd_kernel **out)
{
    (void)opts;
    if (out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sd_compile: out is NULL");
    *out = NULL;
    if (ctx == NULL || a == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sd_compile: %s is NULL", ctx == NULL ? "ctx" : "a");
    if (op != SD_OP_SPMV && op != SD_OP_SPMM && op != SD_OP_SPGEMM)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sd_compile: unknown operator %d", (int)op);
    if (op == SD_OP_SPMM && k <= 0)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sd_compile: SpMM needs K >= 1 (got %d)", k);
    if (op == SD_OP_SPMM && k > 65536)
        return SDI_ERR(SD_ERR_UNSUPPORTED, "sd_compile: K = %d is beyond 65536", k);
    sd_status s = sd_csr_check(a);
    if (s != SD_OK)
        return s;
    return SDI_ERR(SD_ERR_UNSUPPORTED, "sd_compile: " MISSING_COMPILER);
}

sd_status sd_compile_spgemm(sd_context *ctx, const sd_csr *a, const sd_csr *b,
                            const sd_compile_options *opts, sd_kernel **out)
{
    (void)opts;
    if (out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sd_compile_spgemm: out is NULL");
    *out = NULL;
    if (ctx == NULL || a == NULL || b == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sd_compile_spgemm: ctx, a or b is NULL");
    if (a->cols != b->rows)
        return SDI_ERR(SD_ERR_INVALID_ARG,
                       "sd_compile_spgemm: A is %dx%d and B is %dx%d: inner sizes differ",
                       a->rows, a->cols, b->rows, b->cols);
    return SDI_ERR(SD_ERR_UNSUPPORTED, "sd_compile_spgemm: " MISSING_COMPILER);
}

sd_status sd_kernel_update_values(sd_kernel *kern, const float *vals_host)
{
    if (kern == NULL || vals_host == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sd_kernel_update_values: kern or vals is NULL");
    return SDI_ERR(SD_ERR_UNSUPPORTED, "sd_kernel_update_values: " MISSING_COMPILER);
}

sd_status sd_spmv(sd_kernel *kern, const float *x, float *y, void *stream)
{
    (void)stream;
    if (kern == NULL || x == NULL || y == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sd_spmv: kern, x or y is NULL");
    return SDI_ERR(SD_ERR_UNSUPPORTED, "sd_spmv: " MISSING_COMPILER);
}

sd_status sd_spmm(sd_kernel *kern, const float *b, float *c, void *stream)
{
    (void)stream;
    if (kern == NULL || b == NULL || c == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sd_spmm: kern, b or c is NULL");
    return SDI_ERR(SD_ERR_UNSUPPORTED, "sd_spmm: " MISSING_COMPILER);
}

sd_status sd_spgemm(sd_kernel *kern, sd_device_csr *c_out, void *stream)
{
    (void)stream;
    if (c_out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sd_spgemm: c_out is NULL");
    memset(c_out, 0, sizeof *c_out);
    if (kern == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sd_spgemm: kern is NULL");
    return SDI_ERR(SD_ERR_UNSUPPORTED, "sd_spgemm: " MISSING_COMPILER);
}

sd_status sd_kernel_describe(const sd_kernel *kern, char *json, size_t cap)
{
    if (kern == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sd_kernel_describe: kern is NULL");
    if (json == NULL || cap == 0)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sd_kernel_describe: json buffer is NULL");
    return SDI_ERR(SD_ERR_UNSUPPORTED, "sd_kernel_describe: " MISSING_COMPILER);
}

/* No sd_kernel can exist yet (sd_compile never returns one), so there is nothing to free. */
void sd_kernel_destroy(sd_kernel *kern) { (void)kern; }
