/* tests/cpu/test_no_driver.c: where no NVIDIA driver is installed, opening a context
 * says so ("no NVIDIA driver found"), not the CUDA runtime's "CUDA driver version is
 * insufficient for CUDA runtime version", which reads as if a driver were there.
 * Skipped (exit 77) where libcuda.so.1 loads. */
#include <dlfcn.h>

#include "runtime/runtime.h"
#include "sdt.h"

static void check_wording(const char *what, const char *msg)
{
    SDT_CHECK(strstr(msg, "no usable CUDA device") != NULL, "%s: '%s'", what, msg);
    SDT_CHECK(strstr(msg, "no NVIDIA driver found (libcuda.so.1 not loadable") != NULL,
              "%s: '%s'", what, msg);
    SDT_CHECK(strstr(msg, "insufficient") == NULL, "%s: '%s'", what, msg);
}

static void test_context_create(void)
{
    sd_context *ctx = NULL;
    sd_context_options co = {0, "", 0};
    SDT_STATUS(sd_context_create(&co, &ctx), SD_ERR_NO_DEVICE);
    SDT_CHECK(ctx == NULL, "a context without a device");
    check_wording("sd_context_create", sd_last_error());
}

static void test_gpu_props(void)
{
    sdi_gpu_props p;
    SDT_STATUS(sdi_runtime_gpu_props(0, &p), SD_ERR_NO_DEVICE);
    check_wording("sdi_runtime_gpu_props", sd_last_error());
}

int main(void)
{
    sdt_init("test_no_driver");
    void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (h != NULL) {
        dlclose(h);
        return sdt_skip("an NVIDIA driver is installed (libcuda.so.1 loads): the no-driver "
                        "message cannot be reached here");
    }
    SDT_RUN(test_context_create);
    SDT_RUN(test_gpu_props);
    return sdt_finish();
}
