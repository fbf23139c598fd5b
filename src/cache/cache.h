/* src/cache/cache.h: the on-disk kernel cache (docs/ARCHITECTURE.md "Cache"): entries keyed by
 * pattern ⊕ operator ⊕ K ⊕ GPU ⊕ NVRTC/driver ⊕ library version, written atomically,
 * guarded by a per-key lock file, checked on read and discarded when bad. */
#ifndef SDI_CACHE_H
#define SDI_CACHE_H

#include <stdbool.h>

#include "../core/core.h"

/* The full key: memset to zero, then filled (binary reproducible), hashed, and
 * compared in full on a hit. */
typedef struct {
    uint64_t pattern_lo, pattern_hi; /* sdi_pattern_hash of the operand(s) */
    int32_t rows, cols;
    int64_t nnz;
    int32_t op; /* sd_op */
    int32_t k;  /* dense width for SpMM, else 0 */
    int32_t flags; /* options that change the winner: bit 0 allow_vendor, bit 1 deterministic;
                      bit 2 (SDI_CACHE_FLAG_GENERAL_B) SpGEMM A·B with a general B;
                      bit 3 (SDI_CACHE_FLAG_AGENT) an agent kernel's entry; bit 4
                      (SDI_CACHE_FLAG_AGENT_SEARCHED) a winner whose search had the agent round */
    char gpu_name[64];
    int32_t cc_major, cc_minor;
    int32_t nvrtc_major, nvrtc_minor;
    int32_t driver_version; /* cudaDriverGetVersion, 0 when unknown */
    char lib_version[16];   /* sd_version_string() */
    char generator[16];     /* code generator revision: "g1" from sdi_cache_key_init; a task's
                               key (sdi_tune_task_key) names the embedded templates' hash */
    uint64_t config;        /* sdi_config_key_hash: the knobs that change plans, lowering or
                               timings (docs/ARCHITECTURE.md "Configuration"); 0 at defaults */
} sdi_cache_key;

/* A named binary blob of an entry (a cubin, a format descriptor, ...). */
typedef struct {
    char name[64];
    void *data;
    size_t size;
} sdi_cache_blob;

/* Entry = plan JSON + measured record JSON + blobs. Owned by whoever filled it. */
typedef struct {
    char *plan_json;
    char *record_json;
    int nblobs;
    sdi_cache_blob *blobs;
} sdi_cache_entry;

typedef struct sdi_cache sdi_cache;

/* The cache's base directory: given, else $SPARSEDITTO_CACHE, else
 * $XDG_CACHE_HOME/sparseditto, else $HOME/.cache/sparseditto; "" when none is set.
 * sdi_malloc'ed (NULL when out of memory). Creates nothing. */
SDI_HIDDEN char *sdi_cache_base_dir(const char *given);
/* Resolves the root (dir, else $SPARSEDITTO_CACHE, else $XDG_CACHE_HOME/sparseditto,
 * else $HOME/.cache/sparseditto), creates <root>/sd-<version>/ and checks it is a
 * writable directory. SD_ERR_CACHE names the path and the cause. */
SDI_HIDDEN sd_status sdi_cache_open(const char *dir, sdi_cache **out);
SDI_HIDDEN void sdi_cache_close(sdi_cache *c);
SDI_HIDDEN const char *sdi_cache_root(const sdi_cache *c);

/* Fills key fields that do not depend on the task (library version, generator, the
 * configuration's hash). */
SDI_HIDDEN void sdi_cache_key_init(sdi_cache_key *key);
#define SDI_CACHE_FLAG_GENERAL_B 4
#define SDI_CACHE_FLAG_AGENT 8
#define SDI_CACHE_FLAG_AGENT_SEARCHED 16
/* The pattern part of the key: A's pattern hash and sizes, or for SpGEMM A·B (b not
 * NULL) a hash of both patterns and B's shape, with SDI_CACHE_FLAG_GENERAL_B set. */
SDI_HIDDEN void sdi_cache_key_pattern(sdi_cache_key *key, const sd_csr *a, const sd_csr *b);
/* 32 hex digits of the key's hash. */
SDI_HIDDEN void sdi_cache_key_hex(const sdi_cache_key *key, char out[33]);
/* The entry's path: "<root>/sd-<version>/entries/<2 hex>/sd_<32 hex>.sde". */
SDI_HIDDEN sd_status sdi_cache_entry_path(const sdi_cache *c, const sdi_cache_key *key,
                                          char *out, size_t cap);

/* Looks key up. *hit = false when absent; a corrupt, truncated or mismatched entry
 * (magic, format version, key, sizes, checksum) is deleted, logged, and reported as a
 * miss (never trusted). Errors only for I/O failures other than absence. No lock. */
SDI_HIDDEN sd_status sdi_cache_lookup(sdi_cache *c, const sdi_cache_key *key,
                                      sdi_cache_entry *out, bool *hit);
/* Stores an entry atomically (temporary file + rename in the same directory). */
SDI_HIDDEN sd_status sdi_cache_store(sdi_cache *c, const sdi_cache_key *key,
                                     const sdi_cache_entry *e);
SDI_HIDDEN void sdi_cache_entry_free(sdi_cache_entry *e);

/* Cross-process lock for one key (fcntl write lock on "<...>.lock"), waiting at most
 * timeout_s seconds (SD_ERR_CACHE on timeout). The miss path: lock, re-check, build,
 * store, unlock. */
typedef struct sdi_cache_lock sdi_cache_lock;
SDI_HIDDEN sd_status sdi_cache_lock_acquire(sdi_cache *c, const sdi_cache_key *key,
                                            double timeout_s, sdi_cache_lock **out);
SDI_HIDDEN void sdi_cache_lock_release(sdi_cache_lock *l);

/* A sidecar file beside the entry (e.g. the agent's transcript): "<entry path without
 * .sde><suffix>", written atomically; its path into path_out (may be NULL). Not part of
 * the entry's checksum: it documents the entry and is never read back to build one. */
SDI_HIDDEN sd_status sdi_cache_write_sidecar(sdi_cache *c, const sdi_cache_key *key,
                                             const char *suffix, const char *text,
                                             char *path_out, size_t cap);

/* ------------------------------------------------------------------ administration
 * (cache_admin.c, `sparseditto cache`): what the cache holds and clearing it. Nothing
 * evicts on its own: entries and compiled variants accumulate until cleared. */
typedef struct {
    char root[1024];           /* <base>/sd-<version> */
    long long entries, entry_bytes;    /* kernel entries (.sde) and their sidecars */
    long long jit, jit_bytes;          /* compiled kernel variants (.cubin) */
    long long other, other_bytes;      /* locks, temporaries, anything else in root */
    long long stale_dirs, stale_bytes; /* sd-<other version> folders beside root */
} sdi_cache_stats;
/* Walks the cache under dir (as sdi_cache_base_dir resolves it). A missing cache in a
 * default place is empty, not an error; a dir given that does not exist or is not a
 * folder is SD_ERR_CACHE, as is no directory set or one that cannot be read. */
SDI_HIDDEN sd_status sdi_cache_stats_read(const char *dir, sdi_cache_stats *out);
#define SDI_CACHE_CLEAR_ENTRIES 1 /* kernel entries, sidecars and locks */
#define SDI_CACHE_CLEAR_JIT 2     /* compiled kernel variants */
#define SDI_CACHE_CLEAR_STALE 4   /* the folders of other library versions */
/* What a clear did, and what it left because the cache did not write it (a file of the
 * user's beside entries/, lock/ and jit/, or beside the sd-* folders): never removed. */
typedef struct {
    long long removed_files, removed_bytes;
    long long removed_dirs;          /* sd-<other version> folders */
    long long left_items, left_bytes; /* names under root and in base; bytes */
    char left_first[1300];           /* the first of them ("" when none) */
} sdi_cache_clear_report;
/* Removes what `what` names; rep (may be NULL) receives what went and what was left. Files
 * in use by another process are removed too (readers verify what they read; a writer's
 * rename recreates its file). SD_ERR_CACHE names the first path that could not go. */
SDI_HIDDEN sd_status sdi_cache_clear(const char *dir, unsigned what, sdi_cache_clear_report *rep);

/* mkdir -p (mode 0700 for what it creates): 0, or -1 with errno set. */
SDI_HIDDEN int sdi_cache_mkdirs(const char *path);

/* ------------------------------------------------------------------ compiled kernels
 * The JIT cache (src/cache/jit_cache.c): NVRTC's cubins on disk, shared by every process
 * using the same cache root, so a kernel variant compiled once is not compiled again for
 * the next matrix. File "<root>/sd-<version>/jit/<2 hex>/<32 hex>.cubin", keyed by the
 * full JIT key (architecture, options, source), the embedded templates, the library and
 * NVRTC versions; written atomically; verified (key and content hashes) on every read, a
 * bad file deleted and reported as a miss. */
/* Looks the key up under dir (a cache base as given to sdi_cache_open); salt folds in what
 * the key text does not say (the caller's templates and compiler version). *cubin is NULL
 * on a miss; on a hit it is an sdi_malloc'ed copy of *size bytes. Errors only for host
 * memory; I/O problems are misses. */
SDI_HIDDEN sd_status sdi_jit_cache_load(const char *dir, const char *key_text, size_t key_len, uint64_t salt,
                                        void **cubin, size_t *size);
/* Removes the least recently used cubins under dir until the JIT cache holds 90 % of its
 * cap (SPARSEDITTO_JIT_CACHE_MB, default 2048 MiB; 0 = none) when it holds more than the
 * cap; a store calls it every 32nd time. Best effort: errors only for host memory. */
SDI_HIDDEN sd_status sdi_jit_cache_evict(const char *dir);
/* Stores a cubin (best effort: SD_ERR_CACHE names the cause; callers may ignore it). */
SDI_HIDDEN sd_status sdi_jit_cache_store(const char *dir, const char *key_text, size_t key_len, uint64_t salt,
                                         const void *cubin, size_t size);

#endif /* SDI_CACHE_H */
