/* src/cache/tiers.c: memory → disk → compile (tiers.h). */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "tiers.h"

/* The memory tier holds at most this much; the oldest copies go first. A single entry
 * larger than an eighth of it is not kept (it is read from disk each time). */
#define MEMORY_CAP_BYTES (64ll << 20)

typedef struct mem_entry {
    char path[1200];
    sdi_cache_key key;
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
    long long bytes;
    sdi_cache_entry e;
    struct mem_entry *next; /* newest first */
} mem_entry;

static pthread_mutex_t g_mem_lock = PTHREAD_MUTEX_INITIALIZER;
static mem_entry *g_mem;
static long long g_mem_bytes;
static int g_mem_count;

static long long entry_bytes(const sdi_cache_entry *e)
{
    long long n = (e->plan_json ? (long long)strlen(e->plan_json) + 1 : 0) +
                  (e->record_json ? (long long)strlen(e->record_json) + 1 : 0);
    for (int i = 0; i < e->nblobs; i++)
        n += (long long)e->blobs[i].size + (long long)sizeof e->blobs[i];
    return n;
}

static char *copy_text(const char *s)
{
    if (s == NULL)
        return NULL;
    size_t n = strlen(s) + 1;
    char *d = sdi_malloc(n);
    if (d != NULL)
        memcpy(d, s, n);
    return d;
}

/* A deep copy (false when out of memory; *out is then empty). */
static bool entry_copy(const sdi_cache_entry *src, sdi_cache_entry *out)
{
    memset(out, 0, sizeof *out);
    out->plan_json = copy_text(src->plan_json);
    out->record_json = copy_text(src->record_json);
    bool ok = (src->plan_json == NULL || out->plan_json != NULL) &&
              (src->record_json == NULL || out->record_json != NULL);
    if (ok && src->nblobs > 0) {
        out->blobs = sdi_calloc((size_t)src->nblobs, sizeof *out->blobs);
        ok = out->blobs != NULL;
        for (int i = 0; ok && i < src->nblobs; i++) {
            out->blobs[i] = src->blobs[i];
            out->blobs[i].data = sdi_malloc(src->blobs[i].size > 0 ? src->blobs[i].size : 1);
            ok = out->blobs[i].data != NULL;
            if (ok)
                memcpy(out->blobs[i].data, src->blobs[i].data, src->blobs[i].size);
            out->nblobs = i + 1;
        }
    }
    if (!ok) {
        sdi_cache_entry_free(out);
        sdi_error_clear();
    }
    return ok;
}

static bool same_file(const mem_entry *m, const struct stat *st)
{
    return m->dev == st->st_dev && m->ino == st->st_ino && m->size == st->st_size &&
           m->mtime.tv_sec == st->st_mtim.tv_sec && m->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

static void mem_unlink(mem_entry **link)
{
    mem_entry *m = *link;
    *link = m->next;
    g_mem_bytes -= m->bytes;
    g_mem_count--;
    sdi_cache_entry_free(&m->e);
    sdi_free(m);
}

/* The memory copy of key at path when the file is the one it was taken from: a copy into
 * *out (true), else false (a stale copy is dropped). */
static bool memory_get(const char *path, const sdi_cache_key *key, sdi_cache_entry *out)
{
    struct stat st;
    const bool exists = stat(path, &st) == 0;
    bool found = false;
    pthread_mutex_lock(&g_mem_lock);
    for (mem_entry **link = &g_mem; *link != NULL; link = &(*link)->next) {
        mem_entry *m = *link;
        if (strcmp(m->path, path) != 0 || memcmp(&m->key, key, sizeof *key) != 0)
            continue;
        if (exists && same_file(m, &st))
            found = entry_copy(&m->e, out);
        else
            mem_unlink(link);
        break;
    }
    pthread_mutex_unlock(&g_mem_lock);
    return found;
}

/* Keeps a copy of e, the contents of the file at path (best effort: nothing on failure). */
static void memory_put(const char *path, const sdi_cache_key *key, const sdi_cache_entry *e)
{
    struct stat st;
    const long long bytes = entry_bytes(e);
    if (bytes > MEMORY_CAP_BYTES / 8 || strlen(path) >= sizeof(((mem_entry *)0)->path) || stat(path, &st) != 0)
        return;
    mem_entry *m = sdi_calloc(1, sizeof *m);
    if (m == NULL || !entry_copy(e, &m->e)) {
        sdi_free(m);
        sdi_error_clear();
        return;
    }
    snprintf(m->path, sizeof m->path, "%s", path);
    m->key = *key;
    m->dev = st.st_dev;
    m->ino = st.st_ino;
    m->size = st.st_size;
    m->mtime = st.st_mtim;
    m->bytes = bytes;
    pthread_mutex_lock(&g_mem_lock);
    for (mem_entry **link = &g_mem; *link != NULL;) {
        if (strcmp((*link)->path, path) == 0)
            mem_unlink(link);
        else
            link = &(*link)->next;
    }
    m->next = g_mem;
    g_mem = m;
    g_mem_bytes += bytes;
    g_mem_count++;
    /* Over the cap: drop from the oldest end. */
    while (g_mem_bytes > MEMORY_CAP_BYTES && g_mem != NULL) {
        mem_entry **link = &g_mem;
        while ((*link)->next != NULL)
            link = &(*link)->next;
        mem_unlink(link);
    }
    pthread_mutex_unlock(&g_mem_lock);
}

void sdi_cache_memory_usage(long long *bytes, int *entries)
{
    pthread_mutex_lock(&g_mem_lock);
    if (bytes != NULL)
        *bytes = g_mem_bytes;
    if (entries != NULL)
        *entries = g_mem_count;
    pthread_mutex_unlock(&g_mem_lock);
}

void sdi_cache_memory_clear(void)
{
    pthread_mutex_lock(&g_mem_lock);
    while (g_mem != NULL)
        mem_unlink(&g_mem);
    pthread_mutex_unlock(&g_mem_lock);
}

/* ------------------------------------------------------------------ the tiers */

/* Stores the compiled kernel's entry (failures logged, never fatal) and keeps its copy. */
static sd_status store(sdi_cache *cache, const char *path, const sdi_cache_key *key, const sdi_cache_hooks *h)
{
    sdi_cache_entry e;
    memset(&e, 0, sizeof e);
    bool want = false;
    sd_status s = h->entry(h->arg, &e, &want);
    if (s == SD_OK && want) {
        if (sdi_cache_store(cache, key, &e) == SD_OK)
            memory_put(path, key, &e);
        else {
            sdi_log(1, "could not store the kernel in the cache: %s", sd_last_error());
            sdi_error_clear();
        }
    }
    if (h->entry_done != NULL)
        h->entry_done(h->arg, &e);
    return s;
}

sd_status sdi_cache_tiers_get(const char *dir, bool use_cache, bool cache_only, const sdi_cache_key *key,
                              const sdi_cache_hooks *h, sdi_tier *from)
{
    *from = SDI_TIER_ABSENT;
    sdi_cache *cache = NULL;
    sdi_cache_lock *lock = NULL;
    sdi_cache_entry entry;
    memset(&entry, 0, sizeof entry);
    char path[1200] = "";
    bool used = false;
    sd_status s = SD_OK;
    if (use_cache && sdi_cache_open(dir, &cache) != SD_OK) {
        /* An unusable cache degrades to no cache; the user still gets a kernel. */
        sdi_log(1, "kernel cache unusable (%s): compiling without it", sd_last_error());
        sdi_error_clear();
        cache = NULL;
    }
    if (cache != NULL && (s = sdi_cache_entry_path(cache, key, path, sizeof path)) != SD_OK)
        goto done;
    if (cache != NULL && memory_get(path, key, &entry)) {
        s = h->load(h->arg, &entry, &used);
        sdi_cache_entry_free(&entry);
        if (s != SD_OK)
            goto done;
        if (used) {
            *from = SDI_TIER_MEMORY;
            goto done;
        }
    }
    if (cache != NULL) {
        bool hit = false;
        if ((s = sdi_cache_lookup(cache, key, &entry, &hit)) != SD_OK)
            goto done;
        if (!hit && !cache_only) {
            /* Miss: one process compiles, the others wait and then hit. */
            if ((s = sdi_cache_lock_acquire(cache, key, 3600.0, &lock)) != SD_OK ||
                (s = sdi_cache_lookup(cache, key, &entry, &hit)) != SD_OK)
                goto done;
        }
        if (hit) {
            if ((s = h->load(h->arg, &entry, &used)) != SD_OK)
                goto done;
            if (used) {
                memory_put(path, key, &entry);
                *from = SDI_TIER_DISK;
                goto done;
            }
        }
        if (h->load_other != NULL) {
            if ((s = h->load_other(h->arg, &used)) != SD_OK)
                goto done;
            if (used) {
                *from = SDI_TIER_OTHER;
                goto done;
            }
        }
    }
    if (cache_only)
        goto done;
    if ((s = h->compile(h->arg)) != SD_OK)
        goto done;
    *from = SDI_TIER_COMPILED;
    if (cache != NULL)
        s = store(cache, path, key, h);
done:
    sdi_cache_entry_free(&entry);
    sdi_cache_lock_release(lock);
    sdi_cache_close(cache);
    return s;
}
