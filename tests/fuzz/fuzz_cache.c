/* tests/fuzz/fuzz_cache.c: libFuzzer target for the cache readers (docs/ARCHITECTURE.md
 * "Testing lanes":
 * the cache reader under a fuzzer). Each input becomes the bytes of a kernel-cache entry
 * file and of a JIT-cache file for fixed keys, then both are read back:
 *   - raw input, or (first byte odd) a valid entry patched at input-chosen offsets and cut
 *     at an input-chosen length, with (second bit) its checksum recomputed so the decoder
 *     behind the checksum is reached;
 *   - a read never crashes, never leaks, and either hits with a well-formed entry or misses
 *     and deletes the file (a bad entry is never trusted).
 * Any violation aborts. The caches live in a private temporary directory. */
#define XXH_INLINE_ALL
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "cache/cache.h"

static char g_dir[] = "/tmp/sd-fuzz-cache-XXXXXX";
static sdi_cache *g_cache;
static sdi_cache_key g_key;
static unsigned char *g_valid;
static size_t g_valid_len;
static char g_entry[1200], g_jit[1300];
static const char g_jit_key[] = "sm_90\0-DSD_X=1\0fuzzed source";
#define JIT_SALT 0x5eedull

static void fail(const char *what)
{
    fprintf(stderr, "fuzz_cache: %s (last error: %s)\n", what, sd_last_error());
    abort();
}

static void write_file(const char *path, const unsigned char *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL || (n > 0 && fwrite(p, 1, n, f) != n))
        fail("cannot write the fuzzed file");
    fclose(f);
}

static void remove_dir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "fuzz_cache: could not remove %s\n", g_dir);
}

/* One valid entry (its bytes are the seed of the structured mutations) and the paths. */
static void setup(void)
{
    if (mkdtemp(g_dir) == NULL)
        fail("mkdtemp");
    atexit(remove_dir);
    if (sdi_cache_open(g_dir, &g_cache) != SD_OK)
        fail("cache open");
    sdi_cache_key_init(&g_key);
    g_key.rows = g_key.cols = 7;
    g_key.nnz = 19;
    g_key.op = 1;
    g_key.k = 32;
    char blob0[40] = "a cubin stands here", blob1[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    sdi_cache_blob blobs[2] = {{"cubin", blob0, sizeof blob0}, {"format", blob1, sizeof blob1}};
    sdi_cache_entry e = {"{\"plan\":1}", "{\"record\":2}", 2, blobs};
    if (sdi_cache_store(g_cache, &g_key, &e) != SD_OK)
        fail("store");
    if (sdi_cache_entry_path(g_cache, &g_key, g_entry, sizeof g_entry) != SD_OK)
        fail("entry path");
    FILE *f = fopen(g_entry, "rb");
    if (f == NULL)
        fail("reading the valid entry");
    fseek(f, 0, SEEK_END);
    g_valid_len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    g_valid = malloc(g_valid_len);
    if (g_valid == NULL || fread(g_valid, 1, g_valid_len, f) != g_valid_len)
        fail("reading the valid entry");
    fclose(f);
    /* The JIT file's path, as jit_cache.c names it. */
    char hex[33];
    sdi_hash_hex(sdi_hash_bytes(g_jit_key, sizeof g_jit_key, JIT_SALT), hex);
    char folder[1100];
    snprintf(folder, sizeof folder, "%s/sd-%s/jit/%.2s", g_dir, sd_version_string(), hex);
    if (sdi_cache_mkdirs(folder) != 0)
        fail("jit folder");
    snprintf(g_jit, sizeof g_jit, "%s/%s.cubin", folder, hex);
}

static void check_entry_read(void)
{
    sdi_cache_entry e;
    bool hit = false;
    if (sdi_cache_lookup(g_cache, &g_key, &e, &hit) != SD_OK)
        fail("lookup returned an error for a readable file");
    if (hit) {
        if (e.plan_json == NULL || e.record_json == NULL || e.nblobs < 0 || (e.nblobs > 0 && e.blobs == NULL))
            fail("a hit with a malformed entry");
        for (int i = 0; i < e.nblobs; i++)
            if (e.blobs[i].data == NULL || strnlen(e.blobs[i].name, sizeof e.blobs[i].name) == sizeof e.blobs[i].name)
                fail("a hit with a malformed blob");
        sdi_cache_entry_free(&e);
    } else {
        if (access(g_entry, F_OK) == 0)
            fail("a rejected entry was left on disk");
        if (e.plan_json != NULL || e.blobs != NULL)
            fail("a miss that returned data");
    }
    unlink(g_entry);
}

static void check_jit_read(void)
{
    void *cubin = NULL;
    size_t size = 0;
    if (sdi_jit_cache_load(g_dir, g_jit_key, sizeof g_jit_key, JIT_SALT, &cubin, &size) != SD_OK)
        fail("JIT load returned an error");
    if (cubin != NULL) {
        if (size == 0)
            fail("a JIT hit of 0 bytes");
        sdi_free(cubin);
    } else if (access(g_jit, F_OK) == 0) {
        fail("a rejected JIT file was left on disk");
    }
    unlink(g_jit);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (g_cache == NULL)
        setup();
    long long live0 = sdi_alloc_live_bytes();
    unsigned char *buf = NULL;
    size_t n = size;
    if (size >= 2 && (data[0] & 1)) {
        /* Structured: the valid entry, patched (offset 16 bits, value 8 bits) and cut. */
        n = g_valid_len;
        if (data[1] & 4)
            n = (size_t)data[1] * g_valid_len / 255;
        buf = malloc(n ? n : 1);
        if (buf == NULL)
            fail("malloc");
        memcpy(buf, g_valid, n);
        for (size_t i = 2; i + 2 < size && n > 0; i += 3)
            buf[(((size_t)data[i] << 8) | data[i + 1]) % n] = data[i + 2];
        if ((data[0] & 2) && n >= 8) {
            uint64_t h = XXH3_64bits(buf, n - 8);
            memcpy(buf + n - 8, &h, 8);
        }
    } else {
        buf = malloc(size ? size : 1);
        if (buf == NULL)
            fail("malloc");
        memcpy(buf, data, size);
    }
    write_file(g_entry, buf, n);
    check_entry_read();
    write_file(g_jit, buf, n);
    check_jit_read();
    free(buf);
    sdi_error_clear();
    if (sdi_alloc_live_bytes() != live0)
        fail("leak");
    return 0;
}
