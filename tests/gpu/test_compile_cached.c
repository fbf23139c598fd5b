/* tests/gpu/test_compile_cached.c: a cached-kernel request (`sparseditto run`'s entry)
 * with use_cache = 0 on a live context is refused with SD_ERR_INVALID_ARG and leaves
 * nothing allocated: it once returned after making the kernel, its event and its copy
 * of A, and leaked them. Skipped (exit 77) without a device. */
#include "runtime/runtime.h"
#include "sdt.h"

SDI_HIDDEN sd_status sdi_compile_cached(sd_context *ctx, const sd_csr *a, const sd_csr *b, sd_op op,
                                        int k, const sd_compile_options *opts, sd_kernel **out);

static sd_context *g_ctx;

static void test_cached_without_cache(void)
{
    int64_t rp[3] = {0, 1, 2};
    int32_t col[2] = {0, 1};
    float val[2] = {1, 2};
    sd_csr a = {2, 2, 2, rp, col, val};
    sd_compile_options o = sd_compile_options_default();
    o.use_cache = 0;
    for (int op = 0; op < 3; op++) {
        const sd_op ops[3] = {SD_OP_SPMV, SD_OP_SPMM, SD_OP_SPGEMM};
        sd_kernel *kern = NULL;
        const long long live = sdi_alloc_live_bytes();
        const long dev_live = sdi_device_alloc_live();
        SDT_STATUS(sdi_compile_cached(g_ctx, &a, NULL, ops[op], 8, &o, &kern), SD_ERR_INVALID_ARG);
        SDT_CHECK(strstr(sd_last_error(), "use_cache = 0") != NULL, "'%s'", sd_last_error());
        SDT_CHECK(kern == NULL, "op %d: the kernel of a refused call", op);
        SDT_CHECK(sdi_alloc_live_bytes() == live, "op %d: %lld host bytes left allocated", op,
                  sdi_alloc_live_bytes() - live);
        SDT_CHECK(sdi_device_alloc_live() == dev_live, "op %d: %ld device allocations left", op,
                  sdi_device_alloc_live() - dev_live);
    }
}

int main(void)
{
    sdt_init("test_compile_cached");
    int rc = 0;
    if (!sdt_context_open(NULL, &g_ctx, &rc))
        return rc;
    SDT_RUN(test_cached_without_cache);
    sdt_context_close(g_ctx, NULL);
    return sdt_finish();
}
