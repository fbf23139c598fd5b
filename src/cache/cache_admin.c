/* src/cache/cache_admin.c: what the on-disk caches hold and clearing them (cache.h,
 * "administration"): kernel entries under entries/ (+ lock/), compiled variants under
 * jit/, and the folders other library versions left beside the current one. */
#define _XOPEN_SOURCE 700
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache.h"

/* nftw has no user argument: one walk at a time (the CLI's), under this lock. */
static pthread_mutex_t g_walk_lock = PTHREAD_MUTEX_INITIALIZER;
static long long g_count, g_bytes, g_matching;
static const char *g_suffix; /* files ending so are also counted apart (NULL: none) */
static int g_remove, g_failed;
static char g_fail_path[1024];

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int visit(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    if (type == FTW_F || type == FTW_SL) {
        g_matching += g_suffix != NULL && ends_with(path, g_suffix);
        g_count++;
        g_bytes += (long long)st->st_size;
        if (g_remove && unlink(path) != 0 && errno != ENOENT && !g_failed) {
            g_failed = 1;
            snprintf(g_fail_path, sizeof g_fail_path, "%s", path);
        }
    } else if (g_remove && type == FTW_DP && ftw->level > 0) {
        rmdir(path); /* a folder still holding what the suffix spared stays */
    }
    return 0;
}

/* Files under path: count and bytes, and (suffix given) how many end in suffix; all
 * removed when asked. */
static sd_status walk(const char *path, const char *suffix, int remove, long long *count, long long *bytes,
                      long long *matching)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return errno == ENOENT ? SD_OK : SDI_ERR(SD_ERR_CACHE, "cannot read '%s' (%s)", path, strerror(errno));
    pthread_mutex_lock(&g_walk_lock);
    g_count = g_bytes = g_matching = 0;
    g_suffix = suffix;
    g_remove = remove;
    g_failed = 0;
    int rc = nftw(path, visit, 16, FTW_PHYS | (remove ? FTW_DEPTH : 0));
    long long c = g_count, b = g_bytes, m = g_matching;
    int failed = g_failed;
    char fp[1024];
    snprintf(fp, sizeof fp, "%s", g_fail_path);
    pthread_mutex_unlock(&g_walk_lock);
    if (count)
        *count += c;
    if (bytes)
        *bytes += b;
    if (matching)
        *matching += m;
    if (rc != 0)
        return SDI_ERR(SD_ERR_CACHE, "cannot walk '%s' (%s)", path, strerror(errno));
    if (failed)
        return SDI_ERR(SD_ERR_CACHE, "cannot remove '%s'", fp);
    return SD_OK;
}

/* <base> and <base>/sd-<version> of dir. A directory named by the caller must exist: a
 * mistyped --dir is an error, not an empty cache (only the default places may not exist
 * yet: the first compile creates them). */
static sd_status roots(const char *dir, char *base, size_t bcap, char *root, size_t rcap)
{
    char *b = sdi_cache_base_dir(dir);
    if (b == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory resolving the cache directory");
    if (b[0] == '\0') {
        sdi_free(b);
        return SDI_ERR(SD_ERR_CACHE, "no cache directory: set SPARSEDITTO_CACHE or HOME");
    }
    int n1 = snprintf(base, bcap, "%s", b);
    int n2 = snprintf(root, rcap, "%s/sd-%s", b, sd_version_string());
    sdi_free(b);
    if (n1 < 0 || (size_t)n1 >= bcap || n2 < 0 || (size_t)n2 >= rcap)
        return SDI_ERR(SD_ERR_CACHE, "cache directory path is too long");
    struct stat st;
    if (dir != NULL && dir[0] != '\0') {
        if (stat(base, &st) != 0)
            return SDI_ERR(SD_ERR_CACHE, "cache directory '%s': %s", base, strerror(errno));
        if (!S_ISDIR(st.st_mode))
            return SDI_ERR(SD_ERR_CACHE, "cache directory '%s' is not a directory", base);
    }
    return SD_OK;
}

/* Every sd-<version> folder of base other than root: counted (folders, files, bytes),
 * removed when asked. files may be NULL. */
static sd_status stale(const char *base, const char *root, int remove, long long *dirs, long long *files,
                       long long *bytes)
{
    DIR *d = opendir(base);
    if (d == NULL)
        return errno == ENOENT ? SD_OK : SDI_ERR(SD_ERR_CACHE, "cannot read '%s' (%s)", base, strerror(errno));
    const char *mine = strrchr(root, '/') + 1;
    sd_status s = SD_OK;
    struct dirent *e;
    while (s == SD_OK && (e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, "sd-", 3) != 0 || strcmp(e->d_name, mine) == 0)
            continue;
        char p[1300];
        snprintf(p, sizeof p, "%s/%s", base, e->d_name);
        struct stat st;
        if (lstat(p, &st) != 0 || !S_ISDIR(st.st_mode))
            continue;
        (*dirs)++;
        s = walk(p, NULL, remove, files, bytes, NULL);
        if (s == SD_OK && remove)
            rmdir(p);
    }
    closedir(d);
    return s;
}

sd_status sdi_cache_stats_read(const char *dir, sdi_cache_stats *out)
{
#define SD_FREE_ALL ((void)0) /* nothing is allocated here */
    memset(out, 0, sizeof *out);
    char base[1024], p[1100];
    SD_TRY(roots(dir, base, sizeof base, out->root, sizeof out->root));
    /* Entries are counted by their .sde files; their bytes include the sidecars. */
    long long entry_files = 0;
    snprintf(p, sizeof p, "%s/entries", out->root);
    SD_TRY(walk(p, ".sde", 0, &entry_files, &out->entry_bytes, &out->entries));
    snprintf(p, sizeof p, "%s/jit", out->root);
    SD_TRY(walk(p, NULL, 0, &out->jit, &out->jit_bytes, NULL));
    long long all = 0, all_bytes = 0;
    SD_TRY(walk(out->root, NULL, 0, &all, &all_bytes, NULL));
    out->other = all - entry_files - out->jit;
    out->other_bytes = all_bytes - out->entry_bytes - out->jit_bytes;
    return stale(base, out->root, 0, &out->stale_dirs, NULL, &out->stale_bytes);
#undef SD_FREE_ALL
}

/* What no clear removes: under root, any name but entries/, lock/ and jit/ (its bytes
 * counted through folders); beside root in base, any name not sd-* (not walked: base may
 * be any folder the user named). Counted by name; the first into rep. */
static sd_status strays(const char *base, const char *root, sdi_cache_clear_report *rep)
{
    static const char *const own[] = {"entries", "lock", "jit"};
    const char *dirs[2] = {root, base};
    for (int k = 0; k < 2; k++) {
        DIR *d = opendir(dirs[k]);
        if (d == NULL) {
            if (errno == ENOENT)
                continue;
            return SDI_ERR(SD_ERR_CACHE, "cannot read '%s' (%s)", dirs[k], strerror(errno));
        }
        sd_status s = SD_OK;
        struct dirent *e;
        while (s == SD_OK && (e = readdir(d)) != NULL) {
            const char *n = e->d_name;
            bool ours = strcmp(n, ".") == 0 || strcmp(n, "..") == 0;
            for (int i = 0; k == 0 && i < 3; i++)
                ours |= strcmp(n, own[i]) == 0;
            ours |= k == 1 && strncmp(n, "sd-", 3) == 0;
            if (ours)
                continue;
            char p[1300];
            snprintf(p, sizeof p, "%s/%s", dirs[k], n);
            if (rep->left_items++ == 0)
                snprintf(rep->left_first, sizeof rep->left_first, "%s", p);
            struct stat st;
            if (lstat(p, &st) != 0)
                continue;
            if (k == 0 && S_ISDIR(st.st_mode))
                s = walk(p, NULL, 0, NULL, &rep->left_bytes, NULL);
            else if (!S_ISDIR(st.st_mode))
                rep->left_bytes += (long long)st.st_size;
        }
        closedir(d);
        if (s != SD_OK)
            return s;
    }
    return SD_OK;
}

sd_status sdi_cache_clear(const char *dir, unsigned what, sdi_cache_clear_report *rep)
{
    char base[1024], root[1024], p[1100];
    sdi_cache_clear_report local;
    if (rep == NULL)
        rep = &local;
    memset(rep, 0, sizeof *rep);
    sd_status s = roots(dir, base, sizeof base, root, sizeof root);
    if (s != SD_OK)
        return s;
    if (what & SDI_CACHE_CLEAR_ENTRIES) {
        snprintf(p, sizeof p, "%s/entries", root);
        s = walk(p, NULL, 1, &rep->removed_files, &rep->removed_bytes, NULL);
        snprintf(p, sizeof p, "%s/lock", root);
        if (s == SD_OK)
            s = walk(p, NULL, 1, &rep->removed_files, &rep->removed_bytes, NULL);
    }
    if (s == SD_OK && (what & SDI_CACHE_CLEAR_JIT)) {
        snprintf(p, sizeof p, "%s/jit", root);
        s = walk(p, NULL, 1, &rep->removed_files, &rep->removed_bytes, NULL);
    }
    if (s == SD_OK && (what & SDI_CACHE_CLEAR_STALE))
        s = stale(base, root, 1, &rep->removed_dirs, &rep->removed_files, &rep->removed_bytes);
    if (s == SD_OK)
        s = strays(base, root, rep);
    return s;
}
