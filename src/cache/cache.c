/* src/cache/cache.c: the on-disk kernel cache: layout, entry encoding, atomic store,
 * checked lookup, per-key lock files. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "../core/io.h"
#include "cache.h"

#define ENTRY_MAGIC "SDCACHE"  /* 8 bytes with the NUL */
#define ENTRY_FORMAT 2u
#define ENTRY_MAX_BYTES (1ull << 31) /* no entry is larger; a bigger file is corrupt */
#define GENERATOR_REVISION "g1"

struct sdi_cache {
    char root[1024]; /* <root>/sd-<version> */
};

struct sdi_cache_lock {
    int fd;
};

/* mkdir -p with mode 0700 for what we create (0, or -1 with errno). */
int sdi_cache_mkdirs(const char *path)
{
    char tmp[1024];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof tmp)
        return -1;
    memcpy(tmp, path, n + 1);
    for (char *p = tmp + 1; *p; p++) {
        if (*p == '/') {
            *p = '\0';
            if (mkdir(tmp, 0700) != 0 && errno != EEXIST)
                return -1;
            *p = '/';
        }
    }
    if (mkdir(tmp, 0700) != 0 && errno != EEXIST)
        return -1;
    struct stat st;
    return (stat(tmp, &st) == 0 && S_ISDIR(st.st_mode)) ? 0 : -1;
}

char *sdi_cache_base_dir(const char *given)
{
    const sdi_config *cfg = sdi_config_get();
    const char *env = "", *suffix = "";
    if (given != NULL && given[0] != '\0') {
        env = given;
    } else if (cfg->cache[0] != '\0') {
        env = cfg->cache;
    } else if (cfg->xdg_cache_home[0] != '\0') {
        env = cfg->xdg_cache_home;
        suffix = "/sparseditto";
    } else if (cfg->home[0] != '\0') {
        env = cfg->home;
        suffix = "/.cache/sparseditto";
    }
    size_t n = strlen(env) + strlen(suffix) + 1;
    char *dir = sdi_malloc(n);
    if (dir != NULL)
        snprintf(dir, n, "%s%s", env, suffix);
    return dir;
}

sd_status sdi_cache_open(const char *dir, sdi_cache **out)
{
    *out = NULL;
    char base[900];
    char *resolved = sdi_cache_base_dir(dir);
    if (resolved == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory opening the cache");
    if (resolved[0] == '\0') {
        sdi_free(resolved);
        return SDI_ERR(SD_ERR_CACHE, "no cache directory: set SPARSEDITTO_CACHE");
    }
    snprintf(base, sizeof base, "%s", resolved);
    bool too_long = strlen(resolved) >= sizeof base;
    sdi_free(resolved);
    if (too_long)
        return SDI_ERR(SD_ERR_CACHE, "cache directory path is too long");
    if (strlen(base) + 32 >= sizeof base)
        return SDI_ERR(SD_ERR_CACHE, "cache directory path is too long (%zu bytes)",
                       strlen(base));
    sdi_cache *c = sdi_calloc(1, sizeof *c);
    if (c == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory opening the cache");
    snprintf(c->root, sizeof c->root, "%s/sd-%s", base, sd_version_string());
    char probe[1100];
    snprintf(probe, sizeof probe, "%s/entries", c->root);
    int ok = sdi_cache_mkdirs(probe) == 0;
    snprintf(probe, sizeof probe, "%s/lock", c->root);
    ok = ok && sdi_cache_mkdirs(probe) == 0;
    if (!ok || access(c->root, W_OK) != 0) {
        int e = errno;
        sdi_free(c);
        return SDI_ERR(SD_ERR_CACHE, "cache directory '%s' is not a writable directory (%s)",
                       base, strerror(e));
    }
    *out = c;
    return SD_OK;
}

void sdi_cache_close(sdi_cache *c) { sdi_free(c); }

const char *sdi_cache_root(const sdi_cache *c) { return c->root; }

void sdi_cache_key_init(sdi_cache_key *key)
{
    memset(key, 0, sizeof *key);
    snprintf(key->lib_version, sizeof key->lib_version, "%s", sd_version_string());
    snprintf(key->generator, sizeof key->generator, "%s", GENERATOR_REVISION);
    key->config = sdi_config_key_hash();
}

void sdi_cache_key_pattern(sdi_cache_key *key, const sd_csr *a, const sd_csr *b)
{
    sdi_hash128 h = sdi_pattern_hash(a);
    if (b != NULL) {
        /* A·B: both patterns and B's shape, folded into the one pattern hash. */
        sdi_hash128 hb = sdi_pattern_hash(b);
        uint64_t both[7] = {h.lo, h.hi, hb.lo, hb.hi, (uint64_t)b->rows, (uint64_t)b->cols,
                            (uint64_t)b->nnz};
        h = sdi_hash_bytes(both, sizeof both, 0x5d5067e3);
        key->flags |= SDI_CACHE_FLAG_GENERAL_B;
    }
    key->pattern_lo = h.lo;
    key->pattern_hi = h.hi;
    key->rows = a->rows;
    key->cols = a->cols;
    key->nnz = a->nnz;
}

void sdi_cache_key_hex(const sdi_cache_key *key, char out[33])
{
    sdi_hash_hex(sdi_hash_bytes(key, sizeof *key, 0x5d17c0de), out);
}

static sd_status key_paths(const sdi_cache *c, const sdi_cache_key *key, const char *sub,
                           const char *ext, char *out, size_t cap, bool create_dir)
{
    char hex[33];
    sdi_cache_key_hex(key, hex);
    char dir[1100];
    snprintf(dir, sizeof dir, "%s/%s/%.2s", c->root, sub, hex);
    if (create_dir && sdi_cache_mkdirs(dir) != 0)
        return SDI_ERR(SD_ERR_CACHE, "cannot create cache directory '%s' (%s)", dir,
                       strerror(errno));
    int n = snprintf(out, cap, "%s/sd_%s%s", dir, hex, ext);
    if (n < 0 || (size_t)n >= cap)
        return SDI_ERR(SD_ERR_CACHE, "cache path too long");
    return SD_OK;
}

sd_status sdi_cache_entry_path(const sdi_cache *c, const sdi_cache_key *key, char *out,
                               size_t cap)
{
    return key_paths(c, key, "entries", ".sde", out, cap, false);
}

/* ------------------------------------------------------------------ encoding */

typedef struct {
    unsigned char *p;
    size_t len, cap;
    bool failed;
} buf;

static void put(buf *b, const void *data, size_t n)
{
    if (b->failed)
        return;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (b->len + n > cap)
            cap *= 2;
        unsigned char *q = sdi_realloc_array(b->p, cap, 1);
        if (q == NULL) {
            b->failed = true;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->len, data, n);
    b->len += n;
}

static void put_u32(buf *b, uint32_t v) { put(b, &v, sizeof v); }
static void put_u64(buf *b, uint64_t v) { put(b, &v, sizeof v); }

sd_status sdi_cache_store(sdi_cache *c, const sdi_cache_key *key, const sdi_cache_entry *e)
{
    char path[1200];
    buf b = {0};
#define SD_FREE_ALL sdi_free(b.p)
    SD_TRY(key_paths(c, key, "entries", ".sde", path, sizeof path, true));
    const char magic[8] = ENTRY_MAGIC;
    size_t plan_len = e->plan_json ? strlen(e->plan_json) : 0;
    size_t rec_len = e->record_json ? strlen(e->record_json) : 0;
    put(&b, magic, 8);
    put_u32(&b, ENTRY_FORMAT);
    put_u32(&b, (uint32_t)sizeof *key);
    put(&b, key, sizeof *key);
    put_u64(&b, plan_len);
    put_u64(&b, rec_len);
    put_u32(&b, (uint32_t)e->nblobs);
    put(&b, e->plan_json ? e->plan_json : "", plan_len);
    put(&b, e->record_json ? e->record_json : "", rec_len);
    for (int i = 0; i < e->nblobs; i++) {
        put(&b, e->blobs[i].name, sizeof e->blobs[i].name);
        put_u64(&b, e->blobs[i].size);
        put(&b, e->blobs[i].data, e->blobs[i].size);
    }
    if (b.failed) {
        SD_FREE_ALL;
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory encoding a cache entry");
    }
    put_u64(&b, XXH3_64bits(b.p, b.len));
    sd_status s = sdi_write_file(path, b.p, b.len);
    SD_FREE_ALL;
    if (s != SD_OK) {
        sdi_error_prefix("cache entry");
        return SD_ERR_CACHE;
    }
    return SD_OK;
#undef SD_FREE_ALL
}

void sdi_cache_entry_free(sdi_cache_entry *e)
{
    if (e == NULL)
        return;
    sdi_free(e->plan_json);
    sdi_free(e->record_json);
    for (int i = 0; i < e->nblobs && e->blobs; i++)
        sdi_free(e->blobs[i].data);
    sdi_free(e->blobs);
    memset(e, 0, sizeof *e);
}

/* ------------------------------------------------------------------ decoding */

typedef struct {
    const unsigned char *p;
    size_t len, pos;
} reader;

static bool take(reader *r, void *dst, size_t n)
{
    if (n > r->len - r->pos)
        return false;
    memcpy(dst, r->p + r->pos, n);
    r->pos += n;
    return true;
}

static char *take_string(reader *r, uint64_t n)
{
    if (n > r->len - r->pos)
        return NULL;
    char *s = sdi_malloc((size_t)n + 1);
    if (s == NULL)
        return NULL;
    memcpy(s, r->p + r->pos, (size_t)n);
    s[n] = '\0';
    r->pos += (size_t)n;
    return s;
}

/* Decodes and checks an entry; on failure returns a reason (static string). */
static const char *decode(const unsigned char *data, size_t len, const sdi_cache_key *key,
                          sdi_cache_entry *e)
{
    memset(e, 0, sizeof *e);
    if (len < 8 + 8 + sizeof *key + 20 + 8)
        return "truncated";
    uint64_t stored;
    memcpy(&stored, data + len - 8, 8);
    if (XXH3_64bits(data, len - 8) != stored)
        return "checksum mismatch";
    reader r = {data, len - 8, 0};
    char magic[8] = {0};
    uint32_t format = 0, keysize = 0, nblobs = 0;
    uint64_t plan_len = 0, rec_len = 0;
    sdi_cache_key k;
    if (!take(&r, magic, 8) || memcmp(magic, ENTRY_MAGIC, 8) != 0)
        return "bad magic";
    if (!take(&r, &format, 4) || format != ENTRY_FORMAT)
        return "format version mismatch";
    if (!take(&r, &keysize, 4) || keysize != sizeof k || !take(&r, &k, sizeof k))
        return "key layout mismatch";
    if (memcmp(&k, key, sizeof k) != 0)
        return "key mismatch (hash collision or version change)";
    if (!take(&r, &plan_len, 8) || !take(&r, &rec_len, 8) || !take(&r, &nblobs, 4))
        return "truncated header";
    if (nblobs > 1024)
        return "implausible blob count";
    e->plan_json = take_string(&r, plan_len);
    e->record_json = e->plan_json ? take_string(&r, rec_len) : NULL;
    if (e->plan_json == NULL || e->record_json == NULL)
        return "truncated or out of memory (texts)";
    if (nblobs > 0) {
        e->blobs = sdi_calloc(nblobs, sizeof *e->blobs);
        if (e->blobs == NULL)
            return "out of memory (blobs)";
    }
    e->nblobs = (int)nblobs;
    for (uint32_t i = 0; i < nblobs; i++) {
        uint64_t size;
        if (!take(&r, e->blobs[i].name, sizeof e->blobs[i].name) || !take(&r, &size, 8))
            return "truncated blob header";
        e->blobs[i].name[sizeof e->blobs[i].name - 1] = '\0';
        if (size > r.len - r.pos)
            return "truncated blob";
        e->blobs[i].data = sdi_malloc(size ? (size_t)size : 1);
        if (e->blobs[i].data == NULL)
            return "out of memory (blob)";
        take(&r, e->blobs[i].data, (size_t)size);
        e->blobs[i].size = (size_t)size;
    }
    if (r.pos != r.len)
        return "trailing bytes";
    return NULL;
}

sd_status sdi_cache_lookup(sdi_cache *c, const sdi_cache_key *key, sdi_cache_entry *out,
                           bool *hit)
{
    char path[1200];
    unsigned char *data = NULL;
    FILE *f = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(data);                                                                    \
        if (f)                                                                             \
            fclose(f);                                                                     \
    } while (0)
    memset(out, 0, sizeof *out);
    *hit = false;
    SD_TRY(sdi_cache_entry_path(c, key, path, sizeof path));
    f = fopen(path, "rb");
    if (f == NULL) {
        if (errno == ENOENT)
            return SD_OK;
        return SDI_ERR(SD_ERR_CACHE, "cannot read cache entry '%s' (%s)", path, strerror(errno));
    }
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || (unsigned long long)st.st_size > ENTRY_MAX_BYTES) {
        SD_FREE_ALL;
        unlink(path);
        sdi_log(1, "cache: discarded '%s': unreadable or implausibly large", path);
        return SD_OK;
    }
    size_t len = (size_t)st.st_size;
    data = sdi_malloc(len ? len : 1);
    SD_CHECK_ALLOC(data, "a cache entry");
    if (fread(data, 1, len, f) != len) {
        SD_FREE_ALL;
        return SDI_ERR(SD_ERR_CACHE, "cannot read cache entry '%s'", path);
    }
    fclose(f);
    f = NULL;
    const char *why = decode(data, len, key, out);
    if (why != NULL) {
        sdi_cache_entry_free(out);
        SD_FREE_ALL;
        /* A bad entry is never trusted: delete it so it is rebuilt. */
        unlink(path);
        sdi_log(1, "cache: discarded '%s': %s", path, why);
        return SD_OK;
    }
    *hit = true;
    SD_FREE_ALL;
    return SD_OK;
#undef SD_FREE_ALL
}

/* ------------------------------------------------------------------ locks */

sd_status sdi_cache_lock_acquire(sdi_cache *c, const sdi_cache_key *key, double timeout_s,
                                 sdi_cache_lock **out)
{
    *out = NULL;
    char path[1200];
    sd_status s = key_paths(c, key, "lock", ".lock", path, sizeof path, true);
    if (s != SD_OK)
        return s;
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return SDI_ERR(SD_ERR_CACHE, "cannot open lock file '%s' (%s)", path, strerror(errno));
    double deadline = sdi_now() + timeout_s;
    for (;;) {
        struct flock fl;
        memset(&fl, 0, sizeof fl);
        fl.l_type = F_WRLCK;
        fl.l_whence = SEEK_SET;
        if (fcntl(fd, F_SETLK, &fl) == 0)
            break;
        if (errno != EACCES && errno != EAGAIN && errno != EINTR) {
            int e = errno;
            close(fd);
            return SDI_ERR(SD_ERR_CACHE, "cannot lock '%s' (%s)", path, strerror(e));
        }
        if (sdi_now() > deadline) {
            close(fd);
            return SDI_ERR(SD_ERR_CACHE, "timed out after %.0f s waiting for lock '%s'",
                           timeout_s, path);
        }
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    sdi_cache_lock *l = sdi_malloc(sizeof *l);
    if (l == NULL) {
        close(fd);
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for a lock");
    }
    l->fd = fd;
    *out = l;
    return SD_OK;
}

void sdi_cache_lock_release(sdi_cache_lock *l)
{
    if (l == NULL)
        return;
    close(l->fd); /* closing drops the fcntl lock */
    sdi_free(l);
}

/* ------------------------------------------------------------------ sidecars */

sd_status sdi_cache_write_sidecar(sdi_cache *c, const sdi_cache_key *key, const char *suffix,
                                  const char *text, char *path_out, size_t cap)
{
    char path[1200];
    sd_status s = key_paths(c, key, "entries", suffix, path, sizeof path, true);
    if (s != SD_OK)
        return s;
    s = sdi_write_file(path, text, strlen(text));
    if (s == SD_OK && path_out != NULL)
        snprintf(path_out, cap, "%s", path);
    return s;
}
