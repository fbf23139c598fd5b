/* tests/cpu/test_messages.c: messages say what happened and name the cause. The
 * no-device cause by case (no driver, a driver older than the runtime, no GPU); a
 * cached-kernel request with the cache off refused before anything is allocated. */
#include "runtime/runtime.h"
#include "sdt.h"

SDI_HIDDEN sd_status sdi_compile_cached(sd_context *ctx, const sd_csr *a, const sd_csr *b, sd_op op,
                                        int k, const sd_compile_options *opts, sd_kernel **out);

static void test_no_device_cause(void)
{
    char buf[320];
    sdi_no_device_cause(cudaErrorInsufficientDriver,
                        "libcuda.so.1: cannot open shared object file: No such file or directory",
                        0, 13000, buf, sizeof buf);
    SDT_CHECK(strcmp(buf, "no NVIDIA driver found (libcuda.so.1 not loadable: cannot open "
                          "shared object file: No such file or directory)") == 0,
              "no driver: '%s'", buf);
    /* A driver that loads but is older than the runtime: both versions. */
    sdi_no_device_cause(cudaErrorInsufficientDriver, NULL, 12040, 13000, buf, sizeof buf);
    SDT_CHECK(strstr(buf, "the NVIDIA driver supports CUDA 12.4, older than this build's "
                          "CUDA 13.0 runtime") != NULL,
              "old driver: '%s'", buf);
    SDT_CHECK(strstr(buf, "cudaErrorInsufficientDriver") != NULL, "old driver: '%s'", buf);
    sdi_no_device_cause(cudaErrorNoDevice, "libcuda.so.1: cannot open", 0, 13000, buf, sizeof buf);
    SDT_CHECK(strncmp(buf, "no NVIDIA driver found", 22) == 0, "no device, no driver: '%s'", buf);
    sdi_no_device_cause(cudaErrorNoDevice, NULL, 12080, 13000, buf, sizeof buf);
    SDT_CHECK(strstr(buf, "the NVIDIA driver (CUDA 12.8) reports no GPU") != NULL,
              "no device: '%s'", buf);
    /* Other causes keep CUDA's own words. */
    sdi_no_device_cause(cudaErrorDevicesUnavailable, NULL, 12080, 13000, buf, sizeof buf);
    SDT_CHECK(strstr(buf, "cudaErrorDevicesUnavailable") != NULL, "busy device: '%s'", buf);
}

/* `sparseditto run` asks for a cached kernel only; with use_cache = 0 that is a bad
 * argument, refused before the kernel, its event and its copy of A exist (it returned
 * after making them once, and they leaked). The check comes before the context is
 * touched, so a zeroed context (no device needed) reaches it. */
static void test_cached_without_cache(void)
{
    sd_context fake;
    memset(&fake, 0, sizeof fake);
    int64_t rp[3] = {0, 1, 2};
    int32_t col[2] = {0, 1};
    float val[2] = {1, 2};
    sd_csr a = {2, 2, 2, rp, col, val};
    sd_compile_options o = sd_compile_options_default();
    o.use_cache = 0;
    sd_kernel *kern = (sd_kernel *)&fake; /* must come back NULL */
    const long long live = sdi_alloc_live_bytes();
    SDT_STATUS(sdi_compile_cached(&fake, &a, NULL, SD_OP_SPMV, 1, &o, &kern), SD_ERR_INVALID_ARG);
    SDT_CHECK(strstr(sd_last_error(), "use_cache = 0") != NULL, "'%s'", sd_last_error());
    SDT_CHECK(kern == NULL, "the kernel of a refused call");
    SDT_CHECK(sdi_alloc_live_bytes() == live, "%lld bytes left allocated",
              sdi_alloc_live_bytes() - live);
}

int main(void)
{
    sdt_init("test_messages");
    SDT_RUN(test_no_device_cause);
    SDT_RUN(test_cached_without_cache);
    return sdt_finish();
}
