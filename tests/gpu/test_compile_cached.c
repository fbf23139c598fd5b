/* tests/gpu/test_compile_cached.c: a cached-kernel request (`sparseditto run`'s entry)
 * with use_cache = 0 on a live context is refused with SD_ERR_INVALID_ARG and leaves
 * nothing allocated: it once returned after making the kernel, its event and its copy
 * of A, and leaked them. An entry whose record is of the old format (1: "impl") is
 * searched again and replaced, never read. Skipped (exit 77) without a device. */
#include <stdlib.h>
#include <unistd.h>

#include "cache/tiers.h"
#include "core/json_parse.h"
#include "gen/gen.h"
#include "runtime/runtime.h"
#include "sdt.h"
#include "tune/agent_round.h"

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

/* Whether kern came from the cache (sd_kernel_describe's "from_cache"). */
static bool from_cache(const sd_kernel *kern)
{
    static char buf[1 << 22];
    bool r = false;
    sdi_jvalue v;
    if (sd_kernel_describe(kern, buf, sizeof buf) == SD_OK && sdi_json_parse(buf, -1, &v) == SD_OK) {
        const sdi_jvalue *fc = sdi_jget(&v, "from_cache");
        r = fc != NULL && fc->type == SDI_JBOOL && fc->boolean;
        sdi_jvalue_free(&v);
    }
    return r;
}

static void test_old_record_rebuilt(void)
{
    char dir[] = "/tmp/sd-test-record-XXXXXX";
    SDT_CHECK(mkdtemp(dir) != NULL, "a cache folder");
    sd_context *ctx = NULL;
    sd_context_options co = {0, dir, 0};
    SDT_OK(sd_context_create(&co, &ctx));
    sd_csr a;
    SDT_OK(sdi_gen("stencil2d:n=64", 3, &a));
    sd_compile_options o = sd_compile_options_default();
    o.budget = 1;
    sd_kernel *kern = NULL;
    SDT_OK(sd_compile(ctx, &a, SD_OP_SPMV, 1, &o, &kern));
    SDT_CHECK(!from_cache(kern), "the first compile searches");
    sd_kernel_destroy(kern);

    /* The entry as the old build wrote it: the same key and blobs, the record "impl" of
     * format 1. */
    sdi_cache_key key;
    sdi_tune_task_key(ctx, &a, NULL, SD_OP_SPMV, 1, 1 /* allow_vendor */, &key);
    sdi_cache *c = NULL;
    SDT_OK(sdi_cache_open(dir, &c));
    sdi_cache_entry e;
    bool hit = false;
    SDT_OK(sdi_cache_lookup(c, &key, &e, &hit));
    SDT_CHECK(hit, "the entry is stored");
    if (!hit) {
        sdi_cache_close(c);
        sd_context_destroy(ctx);
        sd_csr_free(&a);
        return;
    }
    SDT_CHECK(strstr(e.plan_json, "\"record\":{\"format\":2") != NULL, "a record of format 2: %.200s",
              e.plan_json);
    char *plan = e.plan_json;
    e.plan_json = "{\"family\":\"spmv.csr_vec\",\"impl\":{\"format\":1,\"kind\":\"spmv\",\"op\":\"spmv\","
                  "\"k\":1,\"config\":{\"family\":\"csr_vec\"},\"vendor\":null,\"vendor_plain\":false,"
                  "\"aat\":0,\"general_b\":false}}";
    SDT_OK(sdi_cache_store(c, &key, &e));
    e.plan_json = plan;
    sdi_cache_entry_free(&e);
    sdi_cache_memory_clear();

    /* Rebuilt: searched again and stored in the new format... */
    kern = NULL;
    SDT_OK(sd_compile(ctx, &a, SD_OP_SPMV, 1, &o, &kern));
    SDT_CHECK(kern != NULL && !from_cache(kern), "an old entry is searched again");
    sd_kernel_destroy(kern);
    hit = false;
    SDT_OK(sdi_cache_lookup(c, &key, &e, &hit));
    SDT_CHECK(hit && strstr(e.plan_json, "\"record\":{\"format\":2") != NULL, "the entry is replaced");
    if (hit)
        sdi_cache_entry_free(&e);
    /* ... and read from then on. */
    sdi_cache_memory_clear();
    kern = NULL;
    SDT_OK(sd_compile(ctx, &a, SD_OP_SPMV, 1, &o, &kern));
    SDT_CHECK(kern != NULL && from_cache(kern), "the new entry is a hit");
    sd_kernel_destroy(kern);
    sdi_cache_close(c);
    sd_context_destroy(ctx);
    sd_csr_free(&a);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

int main(void)
{
    sdt_init("test_compile_cached");
    int rc = 0;
    if (!sdt_context_open(NULL, &g_ctx, &rc))
        return rc;
    SDT_RUN(test_cached_without_cache);
    SDT_RUN(test_old_record_rebuilt);
    sdt_context_close(g_ctx, NULL);
    return sdt_finish();
}
