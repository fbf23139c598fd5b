/* src/core/config.h: the one configuration object, read from the environment once per
 * process (docs/ARCHITECTURE.md "Configuration"). Every environment variable the library
 * reads is a typed, range-checked field here; config.c's table is the only list. */
#ifndef SDI_CONFIG_H
#define SDI_CONFIG_H

#include "sdi.h"

#define SDI_CONFIG_PATH_MAX 4096 /* a path or string longer than this is a bad value */
#define SDI_CONFIG_MAX_KNOBS 64
#define SDI_CONFIG_SG_FUSE_MAX 24 /* SD_SG_MAX_SEGS (src/plan/spgemm_schedule.c checks they agree) */

enum { SDI_LOWERING_BUILTIN = 0, SDI_LOWERING_AGENT = 1 };

/* Field names follow the variables (SPARSEDITTO_SG_FUSE_MAX → sg_fuse_max). Fast-compile
 * levels: 0 full optimisation, 1 min, 2 mid, 3 max. A bad value leaves the default. */
typedef struct {
    char cache[SDI_CONFIG_PATH_MAX];
    bool jit_cache;
    double jit_cache_mb; /* 0: no cap */
    int verbose;
    char models[SDI_CONFIG_PATH_MAX]; /* set and empty: no model (sdi_config_is_set) */
    bool tc, graphs, parallel_jit;
    int nvrtc_fast, search_fast; /* search_fast: derived when not set (src/plan/spgemm_config.c) */
    bool sg_wide;
    int sg_fuse_max;
    bool sg_warp_brow, sg_link, sg_finalists, sg_graph, sg_streams;
    bool host_validation, streamed_mirror;
    double host_mem_limit; /* bytes; only when set */
    int lowering;          /* SDI_LOWERING_* */
    char agent_url[SDI_CONFIG_PATH_MAX], agent_model[SDI_CONFIG_PATH_MAX];
    char agent_key[SDI_CONFIG_PATH_MAX]; /* SPARSEDITTO_AGENT_KEY, else OPENAI_API_KEY */
    int agent_budget, agent_tokens;
    double agent_wall_s, agent_timeout_s;
    bool agent_profile, agent_keep, isolate;
    char worker[SDI_CONFIG_PATH_MAX];
    double worker_timeout_s;
    char nvcc[SDI_CONFIG_PATH_MAX], ncu[SDI_CONFIG_PATH_MAX];
    char home[SDI_CONFIG_PATH_MAX], xdg_cache_home[SDI_CONFIG_PATH_MAX], tmpdir[SDI_CONFIG_PATH_MAX];
    char cuda_visible_devices[SDI_CONFIG_PATH_MAX]; /* only when set */
    char openai_api_key[SDI_CONFIG_PATH_MAX];
    /* derived at load */
    uint64_t key_hash; /* sdi_config_key_hash */
    sd_status status;  /* SD_ERR_INVALID_ARG when a variable had a bad value */
    char error[512];   /* the first bad value: variable, value, what is accepted */
    int nerrors;
    bool set[SDI_CONFIG_MAX_KNOBS]; /* per table row: given in the environment and valid */
} sdi_config;

/* The configuration, read on first use (thread-safe). Never NULL. */
SDI_HIDDEN const sdi_config *sdi_config_get(void);
/* Re-reads the environment (tests and the CLI change it in-process). Not while other
 * threads use the library: readers hold no lock. */
SDI_HIDDEN void sdi_config_reload(void);
/* SD_OK, or SD_ERR_INVALID_ARG with sd_last_error() naming the first bad variable, its
 * value and the accepted values (sd_context_create returns it). */
SDI_HIDDEN sd_status sdi_config_status(void);
/* Whether the variable was given (non-empty, or empty where empty means something) with a
 * valid value. false for a name the table does not hold. */
SDI_HIDDEN bool sdi_config_is_set(const char *name);
/* A hash of the knobs that change plans, lowering or the timings a search decides on,
 * over those that differ from their defaults: 0 when all are at their defaults. Part of
 * the kernel-cache key (sdi_cache_key_init). */
SDI_HIDDEN uint64_t sdi_config_key_hash(void);

#endif /* SDI_CONFIG_H */
