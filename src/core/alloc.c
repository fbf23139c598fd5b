/* src/core/alloc.c: the host allocation hooks (one pair for the whole library) with
 * fault injection and a live-byte count for leak tests. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sdi.h"

/* Each block carries a 16-byte header holding its size, so the live-byte count is exact
 * and alignment stays at 16 bytes (what malloc guarantees on x86-64). */
#define SDI_ALLOC_HEADER 16

static atomic_long g_fail_after = -1; /* < 0: no injection */
static atomic_long g_count = 0;       /* allocations since the last sdi_alloc_fail_after */
static atomic_llong g_live = 0;

static int should_fail(void)
{
    long n = atomic_fetch_add(&g_count, 1);
    long limit = atomic_load(&g_fail_after);
    return limit >= 0 && n >= limit;
}

long sdi_alloc_fail_after(long n)
{
    long made = atomic_exchange(&g_count, 0);
    atomic_store(&g_fail_after, n);
    return made;
}

long long sdi_alloc_live_bytes(void) { return atomic_load(&g_live); }

void *sdi_malloc(size_t size)
{
    if (size > SIZE_MAX - SDI_ALLOC_HEADER || should_fail())
        return NULL;
    unsigned char *p = malloc(size + SDI_ALLOC_HEADER);
    if (p == NULL)
        return NULL;
    memcpy(p, &size, sizeof size);
    atomic_fetch_add(&g_live, (long long)size);
    return p + SDI_ALLOC_HEADER;
}

void *sdi_calloc(size_t n, size_t size)
{
    size_t total;
    if (!sdi_mul_ok(n, size, &total))
        return NULL;
    void *p = sdi_malloc(total);
    if (p != NULL)
        memset(p, 0, total);
    return p;
}

void *sdi_malloc_array(size_t n, size_t size)
{
    size_t total;
    if (!sdi_mul_ok(n, size, &total))
        return NULL;
    return sdi_malloc(total == 0 ? 1 : total);
}

void *sdi_realloc_array(void *p, size_t n, size_t size)
{
    size_t total;
    if (!sdi_mul_ok(n, size, &total) || total > SIZE_MAX - SDI_ALLOC_HEADER)
        return NULL;
    if (p == NULL)
        return sdi_malloc(total);
    if (should_fail())
        return NULL;
    unsigned char *base = (unsigned char *)p - SDI_ALLOC_HEADER;
    size_t old;
    memcpy(&old, base, sizeof old);
    unsigned char *q = realloc(base, total + SDI_ALLOC_HEADER);
    if (q == NULL)
        return NULL;
    memcpy(q, &total, sizeof total);
    atomic_fetch_add(&g_live, (long long)total - (long long)old);
    return q + SDI_ALLOC_HEADER;
}

void sdi_free(void *p)
{
    if (p == NULL)
        return;
    unsigned char *base = (unsigned char *)p - SDI_ALLOC_HEADER;
    size_t size;
    memcpy(&size, base, sizeof size);
    atomic_fetch_sub(&g_live, (long long)size);
    free(base);
}

long long sdi_host_mem_available(void)
{
    long long avail = -1;
    FILE *f = fopen("/proc/meminfo", "r");
    if (f != NULL) {
        char line[256];
        long long kib;
        while (fgets(line, sizeof line, f) != NULL)
            if (sscanf(line, "MemAvailable: %lld kB", &kib) == 1) {
                avail = kib * 1024;
                break;
            }
        fclose(f);
    }
    if (avail < 0) {
        long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
        if (pages > 0 && page > 0)
            avail = (long long)pages * page;
    }
    const double cap = sdi_config_get()->host_mem_limit;
    if (sdi_config_is_set("SPARSEDITTO_HOST_MEM_LIMIT") && (avail < 0 || cap < (double)avail))
        avail = (long long)cap;
    return avail;
}

bool sdi_host_mem_fits(double need, long long *avail)
{
    const long long a = sdi_host_mem_available();
    if (avail != NULL)
        *avail = a;
    return a < 0 || need <= 0.9 * (double)a;
}
