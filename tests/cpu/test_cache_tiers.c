/* tests/cpu/test_cache_tiers.c: memory → disk → compile (src/cache/tiers.h) with hooks
 * standing in for a kernel: which tier serves, when the search runs, what is stored, and
 * that a removed, replaced or damaged entry is never served from memory. */
#include <stdbool.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cache/tiers.h"
#include "sdt.h"

static char root[256];

typedef struct {
    int loads, compiles, others, stores;
    bool refuse_load;  /* load answers "unusable" */
    bool other_serves; /* load_other serves */
    char got[64];      /* the payload the last load saw */
    char payload[64];  /* what the next compile produces */
    sdi_cache_blob blob;
} fake_kernel;

static sd_status fk_load(void *arg, const sdi_cache_entry *e, bool *used)
{
    fake_kernel *k = arg;
    k->loads++;
    *used = !k->refuse_load && e->nblobs == 1 && strcmp(e->blobs[0].name, "payload") == 0;
    if (*used)
        snprintf(k->got, sizeof k->got, "%.*s", (int)e->blobs[0].size, (const char *)e->blobs[0].data);
    return SD_OK;
}

static sd_status fk_other(void *arg, bool *used)
{
    fake_kernel *k = arg;
    k->others++;
    *used = k->other_serves;
    return SD_OK;
}

static sd_status fk_compile(void *arg)
{
    fake_kernel *k = arg;
    k->compiles++;
    return SD_OK;
}

static sd_status fk_entry(void *arg, sdi_cache_entry *e, bool *store)
{
    fake_kernel *k = arg;
    k->stores++;
    snprintf(k->blob.name, sizeof k->blob.name, "payload");
    k->blob.data = k->payload;
    k->blob.size = strlen(k->payload);
    e->plan_json = "{\"impl\":null}";
    e->record_json = "{}";
    e->nblobs = 1;
    e->blobs = &k->blob;
    *store = true;
    return SD_OK;
}

static void fk_done(void *arg, sdi_cache_entry *e)
{
    (void)arg;
    memset(e, 0, sizeof *e);
}

static void make_key(sdi_cache_key *k, int salt)
{
    sdi_cache_key_init(k);
    k->pattern_lo = 0xabcdef00ull + (uint64_t)salt;
    k->rows = k->cols = 100;
    k->nnz = 500;
    snprintf(k->gpu_name, sizeof k->gpu_name, "NVIDIA H200");
}

static sdi_tier get(fake_kernel *k, const sdi_cache_key *key, bool use_cache, bool cache_only)
{
    const sdi_cache_hooks h = {k, fk_load, fk_other, fk_compile, fk_entry, fk_done};
    sdi_tier from = 0;
    SDT_OK(sdi_cache_tiers_get(root, use_cache, cache_only, key, &h, &from));
    return from;
}

static void entry_path(const sdi_cache_key *key, char *path, size_t cap)
{
    sdi_cache *c = NULL;
    SDT_OK(sdi_cache_open(root, &c));
    if (c != NULL)
        SDT_OK(sdi_cache_entry_path(c, key, path, cap));
    sdi_cache_close(c);
}

static void test_tiers_in_order(void)
{
    sdi_cache_memory_clear();
    sdi_cache_key key;
    make_key(&key, 1);
    fake_kernel k;
    memset(&k, 0, sizeof k);
    snprintf(k.payload, sizeof k.payload, "first");
    SDT_CHECK(get(&k, &key, true, false) == SDI_TIER_COMPILED, "an empty cache compiles");
    SDT_CHECK(k.compiles == 1 && k.stores == 1 && k.others == 1, "compiled %d, stored %d, other %d", k.compiles,
              k.stores, k.others);
    int n = 0;
    sdi_cache_memory_usage(NULL, &n);
    SDT_CHECK(n == 1, "the stored entry is kept in memory (%d)", n);
    SDT_CHECK(get(&k, &key, true, false) == SDI_TIER_MEMORY && strcmp(k.got, "first") == 0,
              "the second get is served from memory (%s)", k.got);
    sdi_cache_memory_clear();
    SDT_CHECK(get(&k, &key, true, false) == SDI_TIER_DISK && strcmp(k.got, "first") == 0,
              "without the memory copy the disk serves");
    SDT_CHECK(get(&k, &key, true, false) == SDI_TIER_MEMORY, "and the disk hit is kept in memory");
    SDT_CHECK(k.compiles == 1, "no second search (%d)", k.compiles);
}

static void test_memory_follows_disk(void)
{
    sdi_cache_memory_clear();
    sdi_cache_key key;
    make_key(&key, 2);
    char path[1200] = "";
    entry_path(&key, path, sizeof path);
    fake_kernel k;
    memset(&k, 0, sizeof k);
    snprintf(k.payload, sizeof k.payload, "old");
    SDT_CHECK(get(&k, &key, true, false) == SDI_TIER_COMPILED, "compiled");
    /* Removed on disk (`sparseditto cache clear` from another process): searched again. */
    SDT_CHECK(unlink(path) == 0, "remove %s", path);
    snprintf(k.payload, sizeof k.payload, "new");
    SDT_CHECK(get(&k, &key, true, false) == SDI_TIER_COMPILED, "a removed entry is not served from memory");
    SDT_CHECK(get(&k, &key, true, false) == SDI_TIER_MEMORY && strcmp(k.got, "new") == 0,
              "the new entry is served (%s)", k.got);
    /* Damaged on disk: the memory copy is dropped, the disk tier deletes the file, a search. */
    FILE *f = fopen(path, "r+b");
    SDT_CHECK(f != NULL, "open %s", path);
    if (f != NULL) {
        fseek(f, 40, SEEK_SET);
        fputc('#', f);
        fclose(f);
    }
    struct timespec later[2] = {{0, UTIME_OMIT}, {time(NULL) + 5, 0}};
    SDT_CHECK(utimensat(AT_FDCWD, path, later, 0) == 0, "touch"); /* the same second otherwise */
    const int before = k.compiles;
    SDT_CHECK(get(&k, &key, true, false) == SDI_TIER_COMPILED && k.compiles == before + 1,
              "a damaged entry is searched again");
}

static void test_cache_only_and_no_cache(void)
{
    sdi_cache_memory_clear();
    sdi_cache_key key;
    make_key(&key, 3);
    fake_kernel k;
    memset(&k, 0, sizeof k);
    snprintf(k.payload, sizeof k.payload, "x");
    SDT_CHECK(get(&k, &key, true, true) == SDI_TIER_ABSENT && k.compiles == 0 && k.stores == 0,
              "cache_only never searches");
    k.other_serves = true;
    SDT_CHECK(get(&k, &key, true, true) == SDI_TIER_OTHER, "cache_only takes another tier's kernel");
    k.other_serves = false;
    SDT_CHECK(get(&k, &key, false, false) == SDI_TIER_COMPILED && k.stores == 0,
              "use_cache = 0 searches and stores nothing");
    SDT_CHECK(get(&k, &key, true, true) == SDI_TIER_ABSENT, "still nothing cached");
    /* An entry the kernel cannot use: searched and stored again. */
    SDT_CHECK(get(&k, &key, true, false) == SDI_TIER_COMPILED, "compiled");
    k.refuse_load = true;
    const int before = k.compiles;
    SDT_CHECK(get(&k, &key, true, false) == SDI_TIER_COMPILED && k.compiles == before + 1,
              "an unusable entry is rebuilt");
}

static void test_memory_cap(void)
{
    sdi_cache_memory_clear();
    fake_kernel k;
    memset(&k, 0, sizeof k);
    snprintf(k.payload, sizeof k.payload, "p");
    for (int i = 0; i < 50; i++) {
        sdi_cache_key key;
        make_key(&key, 100 + i);
        (void)get(&k, &key, true, false);
    }
    long long bytes = 0;
    int n = 0;
    sdi_cache_memory_usage(&bytes, &n);
    SDT_CHECK(n == 50 && bytes > 0 && bytes < (64ll << 20), "%d entries, %lld bytes", n, bytes);
    sdi_cache_memory_clear();
    sdi_cache_memory_usage(&bytes, &n);
    SDT_CHECK(n == 0 && bytes == 0, "cleared: %d entries, %lld bytes", n, bytes);
}

int main(void)
{
    sdt_init("test_cache_tiers");
    snprintf(root, sizeof root, "%s/sd-test-tiers-%ld", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
             (long)getpid());
    SDT_RUN(test_tiers_in_order);
    SDT_RUN(test_memory_follows_disk);
    SDT_RUN(test_cache_only_and_no_cache);
    SDT_RUN(test_memory_cap);
    sdi_cache_memory_clear();
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", root);
    return sdt_finish();
}
