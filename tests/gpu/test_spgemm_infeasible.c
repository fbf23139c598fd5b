/* tests/gpu/test_spgemm_infeasible.c: sd_compile_spgemm on a product whose C cannot fit
 * the device (a 320000 x 320000 arrow: A·A is dense, 819 GB) is refused with
 * SD_ERR_OUT_OF_MEMORY naming the products, C's bounds and the device's memory, within
 * seconds (before any NVRTC work), leaving nothing allocated. Skipped (exit 77) without a
 * device. */
#include "runtime/runtime.h"
#include "sdt.h"

static sd_context *g_ctx;

static void test_arrow_refused(void)
{
    const int32_t n = 320000;
    sd_csr a;
    SDT_OK(sdi_csr_alloc(&a, n, n, 2 * (int64_t)n - 1));
    int64_t at = 0;
    for (int32_t j = 0; j < n; j++)
        a.colind[at++] = j;
    a.rowptr[0] = 0;
    a.rowptr[1] = n;
    for (int32_t i = 1; i < n; i++) {
        a.colind[at++] = 0;
        a.rowptr[i + 1] = at;
    }
    for (int64_t p = 0; p < at; p++)
        a.vals[p] = 1.0f;
    sd_compile_options o = sd_compile_options_default();
    o.use_cache = 0;
    sd_kernel *kern = NULL;
    const long long live = sdi_alloc_live_bytes();
    const long dev_live = sdi_device_alloc_live();
    const double t0 = sdi_now();
    SDT_STATUS(sd_compile_spgemm(g_ctx, &a, NULL, &o, &kern), SD_ERR_OUT_OF_MEMORY);
    const double secs = sdi_now() - t0;
    SDT_CHECK(strstr(sd_last_error(), "SpGEMM A·A does not fit the device: 1.02e+11 products") != NULL &&
                  strstr(sd_last_error(), "819.2 GB") != NULL,
              "message: %s", sd_last_error());
    SDT_CHECK(secs < 10, "refused after %.1f s", secs);
    SDT_CHECK(kern == NULL, "a kernel for a refused product");
    SDT_CHECK(sdi_alloc_live_bytes() == live && sdi_device_alloc_live() == dev_live,
              "%lld host bytes, %ld device allocations left", sdi_alloc_live_bytes() - live,
              sdi_device_alloc_live() - dev_live);
    sd_csr_free(&a);
}

int main(void)
{
    sdt_init("test_spgemm_infeasible");
    int rc = 0;
    if (!sdt_context_open(NULL, &g_ctx, &rc))
        return rc;
    SDT_RUN(test_arrow_refused);
    sdt_context_close(g_ctx, NULL);
    return sdt_finish();
}
