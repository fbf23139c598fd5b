/* tests/cpu/test_jit_cache.c: the on-disk JIT cache (src/cache/jit_cache.c) without a GPU:
 * store/load round trip, a different key or salt misses, corrupt and truncated files are
 * discarded (deleted, reported as misses), the switch SPARSEDITTO_JIT_CACHE; and through
 * sdi_jit_get on a host-only context: the first call compiles with NVRTC and stores, a
 * second call after the in-process memo is cleared loads the identical cubin from disk; the
 * context-free compile of the offline pipeline does the same under the default directory;
 * the size cap (SPARSEDITTO_JIT_CACHE_MB) removes the least recently used files first. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache/cache.h"
#include "runtime/runtime.h"
#include "sdt.h"

SDI_HIDDEN void sdi_memo_clear(sd_context *ctx);

static char *g_vector_src; /* the test kernel tests/data/spmv_csr_vector.cuh */
static char g_dir[] = "/tmp/sd-test-jit-XXXXXX";

/* The one .cubin file under the cache (there is exactly one in the round-trip test). */
static int find_cubin(char *path, size_t cap)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "find '%s' -name '*.cubin' | head -1", g_dir);
    FILE *p = popen(cmd, "r");
    if (p == NULL)
        return -1;
    int ok = fgets(path, (int)cap, p) != NULL;
    pclose(p);
    if (!ok)
        return -1;
    path[strcspn(path, "\n")] = '\0';
    return 0;
}

static void test_round_trip_and_damage(void)
{
    const char key[] = "sm_90\0-DX=1\0source text";
    const unsigned char blob[] = {0x7f, 'E', 'L', 'F', 1, 2, 3, 4, 5, 6, 7, 8, 9};
    void *got = NULL;
    size_t size = 0;
    SDT_OK(sdi_jit_cache_load(g_dir, key, sizeof key, 42, &got, &size));
    SDT_CHECK(got == NULL && size == 0, "empty cache: a miss");
    SDT_OK(sdi_jit_cache_store(g_dir, key, sizeof key, 42, blob, sizeof blob));
    SDT_OK(sdi_jit_cache_load(g_dir, key, sizeof key, 42, &got, &size));
    SDT_CHECK(got != NULL && size == sizeof blob && memcmp(got, blob, size) == 0, "round trip");
    sdi_free(got);
    /* Another salt (templates or NVRTC changed) or another key: misses. */
    SDT_OK(sdi_jit_cache_load(g_dir, key, sizeof key, 43, &got, &size));
    SDT_CHECK(got == NULL, "other salt: a miss");
    SDT_OK(sdi_jit_cache_load(g_dir, key, sizeof key - 1, 42, &got, &size));
    SDT_CHECK(got == NULL, "other key: a miss");
    /* A flipped byte in the cubin: discarded and deleted. */
    char path[1024];
    SDT_CHECK(find_cubin(path, sizeof path) == 0, "the stored file exists");
    FILE *f = fopen(path, "r+b");
    SDT_CHECK(f != NULL, "open %s", path);
    if (f != NULL) {
        fseek(f, -3, SEEK_END);
        fputc(0x55, f);
        fclose(f);
    }
    SDT_OK(sdi_jit_cache_load(g_dir, key, sizeof key, 42, &got, &size));
    SDT_CHECK(got == NULL && access(path, F_OK) != 0, "corrupt file: a miss, deleted");
    /* Truncated: the same. */
    SDT_OK(sdi_jit_cache_store(g_dir, key, sizeof key, 42, blob, sizeof blob));
    SDT_CHECK(truncate(path, 30) == 0, "truncate");
    SDT_OK(sdi_jit_cache_load(g_dir, key, sizeof key, 42, &got, &size));
    SDT_CHECK(got == NULL && access(path, F_OK) != 0, "truncated file: a miss, deleted");
    /* Bad arguments are statuses. */
    SDT_STATUS(sdi_jit_cache_store(g_dir, key, sizeof key, 42, blob, 0), SD_ERR_INVALID_ARG);
    SDT_STATUS(sdi_jit_cache_store("", key, sizeof key, 42, blob, sizeof blob), SD_ERR_CACHE);
    SDT_STATUS(sdi_jit_cache_store("/proc/no-such-place", key, sizeof key, 42, blob, sizeof blob), SD_ERR_CACHE);
    sdi_error_clear();
}

static void test_switch(void)
{
    unsetenv("SPARSEDITTO_JIT_CACHE");
    sdi_config_reload();
    SDT_CHECK(sdi_config_get()->jit_cache, "on by default");
    setenv("SPARSEDITTO_JIT_CACHE", "1", 1);
    sdi_config_reload();
    SDT_CHECK(sdi_config_get()->jit_cache, "on with SPARSEDITTO_JIT_CACHE=1");
    setenv("SPARSEDITTO_JIT_CACHE", "0", 1);
    sdi_config_reload();
    SDT_CHECK(!sdi_config_get()->jit_cache, "off with =0");
}

/* sdi_jit_get needs only the context's JIT state: a host-only context stands in. */
static void test_through_jit_get(void)
{
    sd_context ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.magic = SDI_CONTEXT_MAGIC;
    snprintf(ctx.arch, sizeof ctx.arch, "sm_90");
    ctx.cache_dir = g_dir;
    pthread_mutex_init(&ctx.memo_lock, NULL);
    setenv("SPARSEDITTO_JIT_CACHE", "1", 1);
    sdi_config_reload();
    sdi_macro m[2] = {{"SD_TPR", "4"}, {"SD_BLOCK", "128"}};
    sdi_jit_request req = {.source = g_vector_src, .macros = m, .nmacros = 2,
                           .kernel_name = "sd_spmv_csr_vector"};
    const sdi_cubin *c1 = NULL, *c2 = NULL;
    bool hit = true;
    SDT_OK(sdi_jit_get(&ctx, &req, &c1, &hit));
    SDT_CHECK(c1 != NULL && !hit && c1->compile_ms > 0, "first: compiled by NVRTC");
    void *first = NULL;
    size_t first_size = c1 ? c1->size : 0;
    if (c1 != NULL) {
        first = malloc(first_size);
        memcpy(first, c1->cubin, first_size);
    }
    sdi_memo_clear(&ctx); /* a new process: nothing in memory */
    SDT_OK(sdi_jit_get(&ctx, &req, &c2, &hit));
    SDT_CHECK(c2 != NULL && hit && c2->size == first_size && first != NULL &&
                  memcmp(c2->cubin, first, first_size) == 0,
              "second: the same cubin from disk");
    /* Switched off: compiled again, never read. */
    sdi_memo_clear(&ctx);
    setenv("SPARSEDITTO_JIT_CACHE", "0", 1);
    sdi_config_reload();
    SDT_OK(sdi_jit_get(&ctx, &req, &c2, &hit));
    SDT_CHECK(c2 != NULL && !hit, "off: compiled");
    free(first);
    sdi_memo_clear(&ctx);
    pthread_mutex_destroy(&ctx.memo_lock);
    unsetenv("SPARSEDITTO_JIT_CACHE");
    sdi_config_reload();
}

/* The context-free compile (the offline pipeline) uses the default cache directory. */
static void test_offline_compile(void)
{
    setenv("SPARSEDITTO_CACHE", g_dir, 1);
    setenv("SPARSEDITTO_JIT_CACHE", "1", 1);
    sdi_config_reload();
    sdi_macro m[2] = {{"SD_TPR", "8"}, {"SD_BLOCK", "256"}};
    sdi_jit_request req = {.source = g_vector_src, .macros = m, .nmacros = 2, .arch = "sm_90",
                           .kernel_name = "sd_spmv_csr_vector"};
    sdi_cubin c1, c2;
    SDT_OK(sdi_jit_compile(&req, &c1));
    SDT_OK(sdi_jit_compile(&req, &c2));
    SDT_CHECK(c1.compile_ms > 0 && c2.compile_ms == 0 && c1.size == c2.size &&
                  memcmp(c1.cubin, c2.cubin, c1.size) == 0,
              "second offline compile from disk (%.1f ms, then %.1f ms)", c1.compile_ms, c2.compile_ms);
    sdi_cubin_free(&c1);
    sdi_cubin_free(&c2);
    setenv("SPARSEDITTO_JIT_CACHE", "0", 1);
    sdi_config_reload();
    SDT_OK(sdi_jit_compile(&req, &c1));
    SDT_CHECK(c1.compile_ms > 0, "switched off: compiled again");
    unsetenv("SPARSEDITTO_JIT_CACHE");
    sdi_config_reload();
    sdi_cubin_free(&c1);
    unsetenv("SPARSEDITTO_CACHE");
    sdi_config_reload();
}

/* Bytes of the .cubin files under dir (a fresh folder of this test). */
static long long cubin_bytes(const char *dir)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "find '%s' -name '*.cubin' -printf '%%s\\n' | awk '{s += $1} END {print s + 0}'", dir);
    FILE *p = popen(cmd, "r");
    long long b = -1;
    if (p != NULL) {
        if (fscanf(p, "%lld", &b) != 1)
            b = -1;
        pclose(p);
    }
    return b;
}

/* Ten 20 KB cubins against a cap of 100 KB: after a trim the cache holds at most 90 KB, the
 * first stored (least recently used) is gone and the one just read (most recent) stays. */
static void test_size_cap(void)
{
    char dir[64];
    snprintf(dir, sizeof dir, "%s/cap", g_dir); /* a cache of its own, removed with g_dir */
    SDT_CHECK(mkdir(dir, 0700) == 0, "folder %s", dir);
    static unsigned char blob[20000];
    for (size_t i = 0; i < sizeof blob; i++)
        blob[i] = (unsigned char)(i * 7);
    setenv("SPARSEDITTO_JIT_CACHE_MB", "0", 1); /* no cap while filling */
    sdi_config_reload();
    char key[10][32];
    for (int i = 0; i < 10; i++) {
        snprintf(key[i], sizeof key[i], "sm_90 cap test %d", i);
        SDT_OK(sdi_jit_cache_store(dir, key[i], strlen(key[i]), 7, blob, sizeof blob));
        usleep(20000); /* distinct modification times */
    }
    void *got = NULL;
    size_t size = 0;
    SDT_OK(sdi_jit_cache_load(dir, key[1], strlen(key[1]), 7, &got, &size)); /* key 1: most recent */
    SDT_CHECK(got != NULL, "entry 1 loads");
    sdi_free(got);
    SDT_CHECK(cubin_bytes(dir) > 200000, "%lld bytes stored", cubin_bytes(dir));
    setenv("SPARSEDITTO_JIT_CACHE_MB", "0.1", 1);
    sdi_config_reload();
    SDT_OK(sdi_jit_cache_evict(dir));
    const long long left = cubin_bytes(dir);
    SDT_CHECK(left > 0 && left <= 94372, "%lld bytes left (cap 104857, goal 90 %%)", left);
    SDT_OK(sdi_jit_cache_load(dir, key[0], strlen(key[0]), 7, &got, &size));
    SDT_CHECK(got == NULL, "the least recently used entry was removed");
    SDT_OK(sdi_jit_cache_load(dir, key[1], strlen(key[1]), 7, &got, &size));
    SDT_CHECK(got != NULL, "the most recently read entry stayed");
    sdi_free(got);
    SDT_OK(sdi_jit_cache_load(dir, key[9], strlen(key[9]), 7, &got, &size));
    SDT_CHECK(got != NULL, "the last stored entry stayed");
    sdi_free(got);
    setenv("SPARSEDITTO_JIT_CACHE_MB", "bogus", 1); /* not a number: an error, the default cap */
    sdi_config_reload();
    SDT_STATUS(sdi_config_status(), SD_ERR_INVALID_ARG);
    SDT_CHECK(strstr(sd_last_error(), "SPARSEDITTO_JIT_CACHE_MB") != NULL, "names the variable: %s", sd_last_error());
    sdi_error_clear();
    SDT_OK(sdi_jit_cache_evict(dir));
    SDT_CHECK(cubin_bytes(dir) == left, "an unparsable cap removes nothing");
    unsetenv("SPARSEDITTO_JIT_CACHE_MB");
    sdi_config_reload();
}

int main(void)
{
    sdt_init("test_jit_cache");
    if (mkdtemp(g_dir) == NULL) {
        printf("cannot create a temporary directory\n");
        return 1;
    }
    g_vector_src = sdt_data_text("spmv_csr_vector.cuh");
    SDT_RUN(test_round_trip_and_damage);
    SDT_RUN(test_switch);
    SDT_RUN(test_through_jit_get);
    SDT_RUN(test_offline_compile);
    SDT_RUN(test_size_cap);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    if (system(cmd) != 0)
        printf("could not remove %s\n", g_dir);
    free(g_vector_src);
    return sdt_finish();
}
