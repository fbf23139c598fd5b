/* tests/cpu/test_nvrtc.c: the runtime's parts that need no GPU: embedded templates, NVRTC
 * compilation of every variant of the runtime's template for sm_90 (CUBIN out, errors
 * with the log and the kernel name), host fault injection through the JIT, the device
 * allocation hook's injected failures, the roofline bytes, and the context's behaviour
 * without a device. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"
#include "sdt.h"

static char *g_vector_src; /* the test kernel tests/data/spmv_csr_vector.cuh */

static bool is_elf(const sdi_cubin *c)
{
    const unsigned char *p = c->cubin;
    return c->size > 4 && p[0] == 0x7f && p[1] == 'E' && p[2] == 'L' && p[3] == 'F';
}

static void test_embedded_templates(void)
{
    size_t n = 0;
    const char *t = sdi_kernel_template("sd_common.cuh", &n);
    SDT_CHECK(t != NULL && n > 0 && strlen(t) == n, "sd_common.cuh embedded (%zu bytes)", n);
    t = sdi_kernel_template("spmv_csr_vec.cuh", &n);
    SDT_CHECK(t != NULL && strstr(t, "SD_KERNEL") != NULL, "spmv_csr_vec.cuh embedded");
    SDT_CHECK(sdi_kernel_template("spmv_csr_vector.cuh", NULL) == NULL, "the test kernel is not shipped");
    SDT_CHECK(sdi_kernel_template("no_such.cuh", NULL) == NULL, "absent template");
    SDT_CHECK(sdi_kernel_template(NULL, NULL) == NULL, "NULL name");
}

/* Every threads-per-row variant of the runtime's SpMV template compiles for sm_90. */
static void test_spmv_template_variants(void)
{
    const char *tprs[] = {"1", "2", "4", "8", "16", "32"};
    const char *blocks[] = {"128", "256", "512"};
    for (int i = 0; i < 6; i++) {
        sdi_macro m[2] = {{"SD_TPR", tprs[i]}, {"SD_BLOCK", blocks[i % 3]}};
        sdi_jit_request req = {.source = g_vector_src, .macros = m,
                               .nmacros = 2, .arch = "sm_90",
                               .kernel_name = "sd_spmv_csr_vector"};
        sdi_cubin c;
        SDT_OK(sdi_jit_compile(&req, &c));
        SDT_CHECK(is_elf(&c), "TPR=%s: a CUBIN (ELF) of %zu bytes", tprs[i], c.size);
        SDT_CHECK(c.compile_ms > 0, "compile time recorded");
        SDT_CHECK(c.key.lo != 0 || c.key.hi != 0, "key hashed");
        printf("  sm_90 TPR=%-2s BLOCK=%s: %zu bytes in %.0f ms\n", tprs[i], blocks[i % 3],
               c.size, c.compile_ms);
        sdi_cubin_free(&c);
        SDT_CHECK(c.cubin == NULL && c.size == 0, "freed and zeroed");
    }
    /* Another real architecture compiles too (the context passes the device's). */
    sdi_jit_request req = {.source = g_vector_src, .arch = "sm_80"};
    sdi_cubin c;
    SDT_OK(sdi_jit_compile(&req, &c));
    SDT_CHECK(is_elf(&c), "sm_80 CUBIN");
    sdi_cubin_free(&c);
    /* The default architecture is sm_90. */
    sdi_jit_request def = {.source = g_vector_src};
    SDT_OK(sdi_jit_compile(&def, &c));
    SDT_CHECK(is_elf(&c), "default-arch CUBIN");
    sdi_cubin_free(&c);
}

/* Different macros give different keys; the same request the same key. */
static void test_keys(void)
{
    sdi_macro a[1] = {{"SD_TPR", "4"}}, b[1] = {{"SD_TPR", "8"}};
    sdi_jit_request ra = {.source = g_vector_src, .macros = a, .nmacros = 1};
    sdi_jit_request rb = {.source = g_vector_src, .macros = b, .nmacros = 1};
    sdi_cubin ca, ca2, cb;
    SDT_OK(sdi_jit_compile(&ra, &ca));
    SDT_OK(sdi_jit_compile(&ra, &ca2));
    SDT_OK(sdi_jit_compile(&rb, &cb));
    SDT_CHECK(ca.key.lo == ca2.key.lo && ca.key.hi == ca2.key.hi, "same request, same key");
    SDT_CHECK(ca.key.lo != cb.key.lo || ca.key.hi != cb.key.hi, "other macros, other key");
    sdi_cubin_free(&ca);
    sdi_cubin_free(&ca2);
    sdi_cubin_free(&cb);
}

static void test_compile_errors(void)
{
    sdi_cubin c;
    /* The template's own static_assert rejects a bad macro; the message carries the
     * kernel name, the macro and NVRTC's log. */
    sdi_macro bad[1] = {{"SD_TPR", "3"}};
    sdi_jit_request req = {.source = g_vector_src, .macros = bad, .nmacros = 1,
                           .kernel_name = "sd_spmv_csr_vector"};
    SDT_STATUS(sdi_jit_compile(&req, &c), SD_ERR_COMPILE);
    const char *msg = sd_last_error();
    SDT_CHECK(strstr(msg, "sd_spmv_csr_vector") != NULL, "names the kernel: %s", msg);
    SDT_CHECK(strstr(msg, "SD_TPR") != NULL, "shows the log/macro: %s", msg);
    SDT_CHECK(strstr(msg, "sm_90") != NULL, "names the architecture: %s", msg);
    SDT_CHECK(c.cubin == NULL && c.size == 0, "zeroed on failure");
    /* A syntax error in a raw source: the log's first lines are in the message. */
    sdi_jit_request src = {.source = "#include \"sd_common.cuh\"\n"
                                     "SD_KERNEL void sd_broken(int *p) { p[0] = ; }\n",
                           .kernel_name = "sd_broken"};
    SDT_STATUS(sdi_jit_compile(&src, &c), SD_ERR_COMPILE);
    msg = sd_last_error();
    SDT_CHECK(strstr(msg, "sd_broken") != NULL && strstr(msg, "error") != NULL,
              "log in the message: %s", msg);
    SDT_CHECK(strchr(msg, '\n') == NULL, "one line: %s", msg);
    /* A raw source that includes the shared ABI header compiles. */
    sdi_jit_request ok = {.source = "#include \"sd_common.cuh\"\n"
                                    "SD_KERNEL void sd_fill(float *p, int n) {\n"
                                    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                    "  if (i < n) p[i] = (float)i; }\n",
                          .kernel_name = "sd_fill"};
    SDT_OK(sdi_jit_compile(&ok, &c));
    SDT_CHECK(is_elf(&c), "raw source CUBIN");
    sdi_cubin_free(&c);
    /* Requests that are wrong before NVRTC runs. */
    sdi_jit_request ptx = {.source = g_vector_src, .arch = "compute_90"};
    SDT_STATUS(sdi_jit_compile(&ptx, &c), SD_ERR_INVALID_ARG);
    SDT_CHECK(strstr(sd_last_error(), "compute_90") != NULL, "names the arch: %s",
              sd_last_error());
    sdi_jit_request missing = {.template_name = "nope.cuh"};
    SDT_STATUS(sdi_jit_compile(&missing, &c), SD_ERR_INVALID_ARG);
    SDT_CHECK(strstr(sd_last_error(), "nope.cuh") != NULL, "names the template");
    sdi_macro inj[1] = {{"A B", "1"}};
    sdi_jit_request badname = {.source = g_vector_src, .macros = inj,
                               .nmacros = 1};
    SDT_STATUS(sdi_jit_compile(&badname, &c), SD_ERR_INVALID_ARG);
    sdi_macro nl[1] = {{"SD_TPR", "4\n#error x"}};
    sdi_jit_request badval = {.source = g_vector_src, .macros = nl,
                              .nmacros = 1};
    SDT_STATUS(sdi_jit_compile(&badval, &c), SD_ERR_INVALID_ARG);
    sdi_jit_request empty = {.kernel_name = "x"};
    SDT_STATUS(sdi_jit_compile(&empty, &c), SD_ERR_INVALID_ARG);
    SDT_STATUS(sdi_jit_compile(NULL, &c), SD_ERR_INVALID_ARG);
}

/* The device-side validation kernel compiles for sm_90 (its launches run in the GPU
 * lane: tests/gpu/test_validate_device.c). */
static void test_validate_kernel_compiles(void)
{
    static const char *const kernels[] = {"sd_validate_dense", "sd_validate_spgemm"};
    for (int i = 0; i < 2; i++) {
        sdi_jit_request req = {.template_name = "sd_validate.cuh", .arch = "sm_90",
                               .kernel_name = kernels[i]};
        sdi_cubin c;
        SDT_OK(sdi_jit_compile(&req, &c));
        SDT_CHECK(is_elf(&c), "sd_validate.cuh (%s): a CUBIN", kernels[i]);
        sdi_cubin_free(&c);
    }
}

/* SPARSEDITTO_NVRTC_FAST: each level compiles to a cubin; a bad value is an error that
 * names the variable. */
static void test_fast_compile_levels(void)
{
    sdi_macro m[2] = {{"SD_TPR", "8"}, {"SD_BLOCK", "256"}};
    sdi_jit_request req = {.source = g_vector_src, .macros = m, .nmacros = 2,
                           .arch = "sm_90", .kernel_name = "sd_spmv_csr_vector"};
    static const char *const levels[] = {"min", "mid", "max", "0"};
    for (int i = 0; i < 4; i++) {
        setenv("SPARSEDITTO_NVRTC_FAST", levels[i], 1);
        sdi_config_reload();
        sdi_cubin c;
        SDT_OK(sdi_jit_compile(&req, &c));
        SDT_CHECK(is_elf(&c), "SPARSEDITTO_NVRTC_FAST=%s: a CUBIN", levels[i]);
        sdi_cubin_free(&c);
    }
    /* A request's own level wins over the environment: -1 is full optimisation, the same
     * cubin as without the variable. */
    sdi_cubin full, forced;
    unsetenv("SPARSEDITTO_NVRTC_FAST");
    sdi_config_reload();
    SDT_OK(sdi_jit_compile(&req, &full));
    setenv("SPARSEDITTO_NVRTC_FAST", "max", 1);
    sdi_config_reload();
    req.fast = -1;
    SDT_OK(sdi_jit_compile(&req, &forced));
    SDT_CHECK(full.size == forced.size && memcmp(full.cubin, forced.cubin, full.size) == 0,
              "fast = -1 compiles as without SPARSEDITTO_NVRTC_FAST");
    const size_t full_size = full.size;
    sdi_cubin_free(&full);
    sdi_cubin_free(&forced);
    req.fast = 5;
    SDT_STATUS(sdi_jit_compile(&req, &full), SD_ERR_INVALID_ARG);
    sdi_error_clear();
    req.fast = 0;
    setenv("SPARSEDITTO_NVRTC_FAST", "mid", 1);
    sdi_config_reload();
    SDT_CHECK(sdi_config_get()->nvrtc_fast == 2, "mid is level 2 (%d)", sdi_config_get()->nvrtc_fast);
    /* a bad level is a configuration error; the compile meanwhile runs at the default */
    setenv("SPARSEDITTO_NVRTC_FAST", "fastest", 1);
    sdi_config_reload();
    SDT_STATUS(sdi_config_status(), SD_ERR_INVALID_ARG);
    SDT_CHECK(strstr(sd_last_error(), "SPARSEDITTO_NVRTC_FAST") != NULL, "the error names the variable: %s",
              sd_last_error());
    sdi_error_clear();
    sdi_cubin c;
    SDT_OK(sdi_jit_compile(&req, &c));
    SDT_CHECK(c.size == full_size, "compiled at full optimisation (%zu vs %zu bytes)", c.size, full_size);
    sdi_cubin_free(&c);
    unsetenv("SPARSEDITTO_NVRTC_FAST");
    sdi_config_reload();
}

/* Every host allocation of the JIT may fail: the status says so and nothing leaks. */
static void test_jit_fault_injection(void)
{
    sdi_macro m[1] = {{"SD_TPR", "8"}};
    sdi_jit_request req = {.source = g_vector_src, .macros = m, .nmacros = 1};
    long long live0 = sdi_alloc_live_bytes();
    int failures = 0;
    for (long n = 0; n < 64; n++) {
        sdi_alloc_fail_after(n);
        sdi_cubin c;
        sd_status s = sdi_jit_compile(&req, &c);
        sdi_alloc_fail_after(-1);
        if (s == SD_OK) {
            SDT_CHECK(is_elf(&c), "CUBIN after %ld allowed allocations", n);
            sdi_cubin_free(&c);
            break;
        }
        failures++;
        SDT_CHECK(s == SD_ERR_OUT_OF_MEMORY, "allocation %ld failing gives %s (%s)", n,
                  sd_status_string(s), sd_last_error());
        SDT_CHECK(c.cubin == NULL, "zeroed output");
        SDT_CHECK(sdi_alloc_live_bytes() == live0, "no leak after failing allocation %ld", n);
    }
    SDT_CHECK(failures >= 3, "the sweep reached %d allocations", failures);
    SDT_CHECK(sdi_alloc_live_bytes() == live0, "no leak at the end");
}

/* The device hook fails on demand before it ever reaches CUDA. */
static void test_device_hook_injection(void)
{
    void *p = (void *)1;
    long live = sdi_device_alloc_live();
    sdi_device_alloc_fail_after(0);
    SDT_STATUS(sdi_device_malloc(NULL, &p, 1024, "a test buffer"), SD_ERR_OUT_OF_MEMORY);
    SDT_CHECK(p == NULL, "pointer cleared");
    SDT_CHECK(strstr(sd_last_error(), "a test buffer") != NULL &&
                  strstr(sd_last_error(), "injected") != NULL,
              "message: %s", sd_last_error());
    long made = sdi_device_alloc_fail_after(-1);
    SDT_CHECK(made == 1, "one attempt counted (%ld)", made);
    SDT_OK(sdi_device_malloc(NULL, &p, 0, "nothing"));
    SDT_CHECK(p == NULL, "0 bytes allocate nothing");
    SDT_CHECK(sdi_device_alloc_live() == live, "live count unchanged");
    sdi_device_free(NULL);
}

static void test_roofline_bytes(void)
{
    /* SpMV: nnz·8 + (rows+1)·4 + cols·4 + rows·4 */
    double b = sdi_roofline_bytes(SD_OP_SPMV, 10, 20, 100, 1);
    SDT_CHECK(b == 100 * 8 + 11 * 4 + 20 * 4 + 10 * 4, "SpMV bytes %g", b);
    /* SpMM adds cols·K·4 + rows·K·4 − cols·4 − rows·4 */
    b = sdi_roofline_bytes(SD_OP_SPMM, 10, 20, 100, 8);
    SDT_CHECK(b == 100 * 8 + 11 * 4 + 20 * 8 * 4 + 10 * 8 * 4, "SpMM bytes %g", b);
    SDT_CHECK(sdi_roofline_bytes(SD_OP_SPGEMM, 10, 10, 100, 0) == 0, "no SpGEMM roofline");
}

/* Without a GPU (CI) the context reports SD_ERR_NO_DEVICE with the cause; with one it
 * opens. Either way bad arguments are rejected first. */
static void test_context_without_device(void)
{
    sd_context *ctx = (sd_context *)1;
    sd_context_options o = {.device = -1};
    SDT_STATUS(sd_context_create(&o, &ctx), SD_ERR_INVALID_ARG);
    SDT_CHECK(ctx == NULL, "NULL after failure");
    SDT_STATUS(sd_context_create(NULL, NULL), SD_ERR_INVALID_ARG);
    sd_status s = sd_context_create(NULL, &ctx);
    if (s == SD_OK) {
        printf("  a device is present: %s\n", ctx->props.name);
        SDT_CHECK(ctx->cache_dir != NULL, "cache dir resolved");
        sd_context_destroy(ctx);
    } else {
        SDT_CHECK(s == SD_ERR_NO_DEVICE, "no device gives %s (%s)", sd_status_string(s),
                  sd_last_error());
        SDT_CHECK(ctx == NULL, "NULL after failure");
        SDT_CHECK(strstr(sd_last_error(), "device") != NULL, "says why: %s", sd_last_error());
        printf("  without a device: %s\n", sd_last_error());
        sdi_gpu_props g;
        SDT_STATUS(sdi_runtime_gpu_props(0, &g), SD_ERR_NO_DEVICE);
        SDT_CHECK(g.from_device == 0 && g.sm_count == 0, "props zeroed");
    }
    sd_context_destroy(NULL);
    sd_context_options big = {.device = 4096};
    s = sd_context_create(&big, &ctx);
    SDT_CHECK(s == SD_ERR_NO_DEVICE && ctx == NULL, "device 4096 gives %s",
              sd_status_string(s));
}

static void test_nvrtc_version(void)
{
    int major = 0, minor = 0;
    SDT_OK(sdi_nvrtc_version(&major, &minor));
    SDT_CHECK(major >= 12, "NVRTC %d.%d", major, minor);
}

int main(void)
{
    sdt_init("test_nvrtc");
    /* These checks time NVRTC itself: the on-disk JIT cache (on by default) would serve
     * the kernels a previous run compiled. */
    setenv("SPARSEDITTO_JIT_CACHE", "0", 1);
    g_vector_src = sdt_data_text("spmv_csr_vector.cuh");
    sdi_config_reload();
    SDT_RUN(test_embedded_templates);
    SDT_RUN(test_nvrtc_version);
    SDT_RUN(test_spmv_template_variants);
    SDT_RUN(test_keys);
    SDT_RUN(test_compile_errors);
    SDT_RUN(test_validate_kernel_compiles);
    SDT_RUN(test_fast_compile_levels);
    SDT_RUN(test_jit_fault_injection);
    SDT_RUN(test_device_hook_injection);
    SDT_RUN(test_roofline_bytes);
    SDT_RUN(test_context_without_device);
    free(g_vector_src);
    return sdt_finish();
}
