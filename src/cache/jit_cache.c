/* src/cache/jit_cache.c: compiled kernels (NVRTC cubins) on disk, shared across processes
 * (cache.h, "compiled kernels"). The search compiles a few dozen kernel variants per task,
 * 0.05–15 s each; most variants recur from one matrix to the next, so the second task
 * needing a variant loads it here instead of compiling it.
 *
 * File: magic "SDJIT001", then u64 key length, u64 cubin size, the key's second hash (lo,
 * hi), the cubin's hash (lo, hi), then the cubin. The name is the key's first hash.
 *
 * Size: capped at SPARSEDITTO_JIT_CACHE_MB (default 2048 MiB; 0 = no cap). A hit sets the
 * file's time to now, and every 32nd store of a process (its first included) removes the
 * least recently used files until the cache is at 90 % of the cap. */
#define _XOPEN_SOURCE 700
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/io.h"
#include "cache.h"

#define JIT_MAGIC "SDJIT001"
#define JIT_MAX_BYTES (256ull << 20) /* no cubin is larger; a bigger size is corruption */

typedef struct {
    char magic[8];
    uint64_t key_len, size;
    uint64_t key_lo, key_hi;   /* the key's second hash */
    uint64_t data_lo, data_hi; /* the cubin's hash */
} jit_header;

/* "<dir>/sd-<version>/jit/<hh>" into folder and "<folder>/<hex>.cubin" into path. */
static bool jit_paths(const char *dir, const char *key_text, size_t key_len, uint64_t salt, char *folder,
                      size_t fcap, char *path, size_t pcap)
{
    char hex[33];
    sdi_hash_hex(sdi_hash_bytes(key_text, key_len, salt), hex);
    int n = snprintf(folder, fcap, "%s/sd-%s/jit/%.2s", dir, sd_version_string(), hex);
    if (n < 0 || (size_t)n >= fcap)
        return false;
    n = snprintf(path, pcap, "%s/%s.cubin", folder, hex);
    return n >= 0 && (size_t)n < pcap;
}

static sdi_hash128 key_check(const char *key_text, size_t key_len, uint64_t salt)
{
    return sdi_hash_bytes(key_text, key_len, salt ^ 0x6a1c0de5a1d5eedull);
}

sd_status sdi_jit_cache_load(const char *dir, const char *key_text, size_t key_len, uint64_t salt, void **cubin,
                             size_t *size)
{
    *cubin = NULL;
    *size = 0;
    char folder[1100], path[1200];
    if (dir == NULL || dir[0] == '\0' || !jit_paths(dir, key_text, key_len, salt, folder, sizeof folder, path,
                                                    sizeof path))
        return SD_OK;
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return SD_OK; /* absent: a miss */
    jit_header h;
    const char *bad = NULL;
    void *data = NULL;
    sdi_hash128 kc = key_check(key_text, key_len, salt);
    if (fread(&h, sizeof h, 1, f) != 1)
        bad = "truncated header";
    else if (memcmp(h.magic, JIT_MAGIC, sizeof h.magic) != 0)
        bad = "bad magic";
    else if (h.key_len != key_len || h.key_lo != kc.lo || h.key_hi != kc.hi)
        bad = "key mismatch";
    else if (h.size == 0 || h.size > JIT_MAX_BYTES)
        bad = "bad size";
    if (bad == NULL) {
        data = sdi_malloc((size_t)h.size);
        if (data == NULL) {
            fclose(f);
            return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory reading a cached cubin (%llu bytes)",
                           (unsigned long long)h.size);
        }
        sdi_hash128 dh;
        int extra = 0;
        if (fread(data, 1, (size_t)h.size, f) != (size_t)h.size)
            bad = "truncated cubin";
        else if (dh = sdi_hash_bytes(data, (size_t)h.size, 0), dh.lo != h.data_lo || dh.hi != h.data_hi)
            bad = "checksum mismatch";
        else if ((extra = fgetc(f)) != EOF)
            bad = "trailing bytes";
    }
    fclose(f);
    if (bad != NULL) {
        sdi_free(data);
        sdi_log(1, "JIT cache: discarding '%s' (%s)", path, bad);
        unlink(path);
        return SD_OK;
    }
    /* Recency for the size cap (best effort: a read-only cache keeps its times). */
    if (utimensat(AT_FDCWD, path, NULL, 0) != 0)
        errno = 0;
    *cubin = data;
    *size = (size_t)h.size;
    return SD_OK;
}

typedef struct {
    struct timespec t;
    long long size;
    char path[1200];
} jit_file;

static int older_first(const void *x, const void *y)
{
    const jit_file *a = x, *b = y;
    if (a->t.tv_sec != b->t.tv_sec)
        return a->t.tv_sec < b->t.tv_sec ? -1 : 1;
    if (a->t.tv_nsec != b->t.tv_nsec)
        return a->t.tv_nsec < b->t.tv_nsec ? -1 : 1;
    return strcmp(a->path, b->path);
}

sd_status sdi_jit_cache_evict(const char *dir)
{
    const long long cap = (long long)(sdi_config_get()->jit_cache_mb * 1048576.0); /* 0: no cap */
    if (dir == NULL || dir[0] == '\0' || cap <= 0)
        return SD_OK;
    char root[1100];
    int n = snprintf(root, sizeof root, "%s/sd-%s/jit", dir, sd_version_string());
    if (n < 0 || (size_t)n >= sizeof root)
        return SDI_ERR(SD_ERR_CACHE, "JIT cache: path too long under '%s'", dir);
    DIR *top = opendir(root);
    if (top == NULL)
        return SD_OK; /* nothing stored yet */
    jit_file *files = NULL;
    size_t nf = 0, capf = 0;
    long long total = 0;
    sd_status s = SD_OK;
    struct dirent *e;
    while (s == SD_OK && (e = readdir(top)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char sub[1200];
        int ns = snprintf(sub, sizeof sub, "%s/%s", root, e->d_name);
        if (ns < 0 || (size_t)ns >= sizeof sub)
            continue; /* not one of ours (two hex digits): a truncated path names another */
        DIR *d = opendir(sub);
        if (d == NULL)
            continue;
        struct dirent *f;
        while (s == SD_OK && (f = readdir(d)) != NULL) {
            const size_t len = strlen(f->d_name);
            if (len < 6 || strcmp(f->d_name + len - 6, ".cubin") != 0)
                continue; /* temporaries of a store in flight stay */
            if (nf == capf) {
                size_t nc = capf ? 2 * capf : 256;
                jit_file *g = sdi_realloc_array(files, nc, sizeof *files);
                if (g == NULL) {
                    s = SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory listing the JIT cache");
                    break;
                }
                files = g;
                capf = nc;
            }
            jit_file *jf = &files[nf];
            int np = snprintf(jf->path, sizeof jf->path, "%s/%s", sub, f->d_name);
            if (np < 0 || (size_t)np >= sizeof jf->path)
                continue; /* too long to be ours; never remove a truncated path */
            struct stat st;
            if (stat(jf->path, &st) != 0)
                continue; /* removed meanwhile */
            jf->t = st.st_mtim;
            jf->size = (long long)st.st_size;
            total += jf->size;
            nf++;
        }
        closedir(d);
    }
    closedir(top);
    if (s == SD_OK && total > cap) {
        qsort(files, nf, sizeof *files, older_first);
        const long long goal = cap / 10 * 9;
        for (size_t i = 0; i < nf && total > goal; i++)
            if (unlink(files[i].path) == 0 || errno == ENOENT)
                total -= files[i].size;
        sdi_log(1, "JIT cache: trimmed to %lld bytes (cap %lld)", total, cap);
    }
    sdi_free(files);
    return s;
}

sd_status sdi_jit_cache_store(const char *dir, const char *key_text, size_t key_len, uint64_t salt,
                              const void *cubin, size_t size)
{
    char folder[1100], path[1200];
    if (dir == NULL || dir[0] == '\0')
        return SDI_ERR(SD_ERR_CACHE, "JIT cache: no cache directory");
    if (cubin == NULL || size == 0 || size > JIT_MAX_BYTES)
        return SDI_ERR(SD_ERR_INVALID_ARG, "JIT cache: bad cubin (%zu bytes)", size);
    if (!jit_paths(dir, key_text, key_len, salt, folder, sizeof folder, path, sizeof path))
        return SDI_ERR(SD_ERR_CACHE, "JIT cache: path too long under '%s'", dir);
    if (sdi_cache_mkdirs(folder) != 0)
        return SDI_ERR(SD_ERR_CACHE, "JIT cache: cannot create '%s' (%s)", folder, strerror(errno));
    jit_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, JIT_MAGIC, sizeof h.magic);
    h.key_len = key_len;
    h.size = size;
    sdi_hash128 kc = key_check(key_text, key_len, salt), dh = sdi_hash_bytes(cubin, size, 0);
    h.key_lo = kc.lo, h.key_hi = kc.hi, h.data_lo = dh.lo, h.data_hi = dh.hi;
    /* Written atomically (core/io.h): readers see the old file or the whole new one. */
    sdi_atomic_file af;
    sd_status s = sdi_atomic_begin(&af, path);
    af.no_sync = true; /* a compile stores many; a torn one fails its checksum and is rebuilt */
    if (s == SD_OK)
        s = sdi_atomic_write(&af, &h, sizeof h);
    if (s == SD_OK)
        s = sdi_atomic_write(&af, cubin, size);
    if (s == SD_OK)
        s = sdi_atomic_commit(&af);
    if (s != SD_OK) { /* af released by the failing call */
        sdi_error_prefix("JIT cache");
        return SD_ERR_CACHE;
    }
    static atomic_ulong stores;
    if (atomic_fetch_add(&stores, 1) % 32 == 0)
        return sdi_jit_cache_evict(dir);
    return SD_OK;
}
