/* src/cache/tiers.h: where a compiled kernel comes from (docs/ARCHITECTURE.md "Cache"):
 * memory → disk → compile. The memory tier keeps, per process, a copy of each entry read or
 * written, served while the entry's file on disk is unchanged (same inode, size and
 * modification time: a cleared, replaced or damaged entry is never served from memory).
 * The disk tier is the entry store (cache.h): lookup, then on a miss the key's lock and a
 * second lookup, so that one process compiles and the others wait and hit. The compile
 * tier is the caller's search, stored afterwards.
 *
 * The kernel's own parts (rebuilding from an entry, searching, the entry's contents) are
 * the caller's hooks: this room knows entries, not implementations. */
#ifndef SDI_CACHE_TIERS_H
#define SDI_CACHE_TIERS_H

#include "cache.h"

typedef struct {
    void *arg;
    /* Rebuild from e; *used = false when the entry does not serve (a search follows). */
    sd_status (*load)(void *arg, const sdi_cache_entry *e, bool *used);
    /* Another place that may hold the kernel when no entry served (NULL: none). */
    sd_status (*load_other)(void *arg, bool *used);
    /* The search. */
    sd_status (*compile)(void *arg);
    /* The entry of the compiled kernel (*store = false: nothing to store). What it points
     * to stays valid until entry_done. */
    sd_status (*entry)(void *arg, sdi_cache_entry *e, bool *store);
    void (*entry_done)(void *arg, sdi_cache_entry *e);
} sdi_cache_hooks;

typedef enum {
    SDI_TIER_MEMORY = 1, /* rebuilt from the process's copy of the entry */
    SDI_TIER_DISK,       /* rebuilt from the entry file */
    SDI_TIER_OTHER,      /* load_other served */
    SDI_TIER_COMPILED,   /* searched (and stored when the cache is usable) */
    SDI_TIER_ABSENT      /* cache_only and nothing cached: neither searched nor stored */
} sdi_tier;

/* Gets the kernel for key through the tiers. dir: the cache root as sdi_cache_open takes
 * it (NULL: the default). use_cache = false: straight to compile, nothing stored.
 * cache_only: never compile (SDI_TIER_ABSENT instead). A cache that cannot be opened
 * degrades to no cache (logged); a failure to store is logged and the kernel kept.
 * Errors: those of the hooks and of the disk tier's I/O and lock. */
SDI_HIDDEN sd_status sdi_cache_tiers_get(const char *dir, bool use_cache, bool cache_only,
                                         const sdi_cache_key *key, const sdi_cache_hooks *h,
                                         sdi_tier *from);

/* The memory tier's bytes and entries (tests); sdi_cache_memory_clear empties it. */
SDI_HIDDEN void sdi_cache_memory_usage(long long *bytes, int *entries);
SDI_HIDDEN void sdi_cache_memory_clear(void);

#endif /* SDI_CACHE_TIERS_H */
