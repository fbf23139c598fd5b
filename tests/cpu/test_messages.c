/* tests/cpu/test_messages.c: messages say what happened and name the cause. A
 * cached-kernel request with the cache off refused before anything is allocated. */
#include "runtime/runtime.h"
#include "sdt.h"

SDI_HIDDEN sd_status sdi_compile_cached(sd_context *ctx, const sd_csr *a, const sd_csr *b, sd_op op,
                                        int k, const sd_compile_options *opts, sd_kernel **out);

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
    SDT_RUN(test_cached_without_cache);
    return sdt_finish();
}
