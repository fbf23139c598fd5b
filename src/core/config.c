/* src/core/config.c: the environment, read once into sdi_config through one table of
 * every variable (docs/ARCHITECTURE.md "Configuration"). The only getenv of the library. */
#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "core.h"

#ifndef SD_NVCC_DEFAULT
#define SD_NVCC_DEFAULT "nvcc"
#endif

typedef enum { K_BOOL, K_INT, K_NUM, K_SIZE, K_ENUM, K_PATH, K_STRING } knob_type;

enum {
    F_KEY = 1,       /* changes plans, lowering or the timings a search decides on: in the cache key */
    F_EMPTY_SET = 2, /* an empty value is a value ("" is not unset) */
    F_SECRET = 4,    /* never printed */
    F_DERIVED = 8    /* the default depends on the task: being set counts in the key */
};

static const char *const fast_words[] = {"0", "min", "mid", "max", NULL};
static const char *const lowering_words[] = {"builtin", "agent", NULL};

typedef struct {
    const char *name;
    knob_type type;
    size_t off;
    double lo, hi, dflt;     /* range and default of numbers, enums (index) and booleans */
    const char *dflt_text;   /* default of paths and strings */
    const char *const *words; /* K_ENUM */
    int flags;
    const char *meaning;
} knob;

#define AT(field) offsetof(sdi_config, field)

/* The table: one row per variable, in the order of the docs' table (docs/ARCHITECTURE.md
 * "Configuration"). */
static const knob knobs[] = {
    {"SPARSEDITTO_CACHE", K_PATH, AT(cache), 0, 0, 0, "", NULL, 0, "kernel and JIT cache root"},
    {"SPARSEDITTO_JIT_CACHE", K_BOOL, AT(jit_cache), 0, 1, 1, NULL, NULL, 0, "0: no on-disk JIT cache"},
    {"SPARSEDITTO_JIT_CACHE_MB", K_SIZE, AT(jit_cache_mb), 0, 1 << 24, 2048, NULL, NULL, 0,
     "JIT cache cap in MiB (fractions allowed; 0 = no cap)"},
    {"SPARSEDITTO_VERBOSE", K_INT, AT(verbose), 0, 3, 0, NULL, NULL, 0,
     "log level: 0 quiet, 1 stages, 2 candidates, 3 debug"},
    {"SPARSEDITTO_MODELS", K_PATH, AT(models), 0, 0, 0, "", NULL, F_KEY | F_EMPTY_SET,
     "folder searched first for energy.json and paramspmm.json; empty: no model"},
    /* Off: bsr_tc validates on the H200 but is rarely the fastest (src/model/rank.c gives the
     * figures); the GPU lane and benchmarks force the template directly either way. */
    {"SPARSEDITTO_TC", K_BOOL, AT(tc), 0, 1, 0, NULL, NULL, F_KEY, "1: the search tries the tensor-core SpMM template"},
    {"SPARSEDITTO_GRAPHS", K_BOOL, AT(graphs), 0, 1, 1, NULL, NULL, F_KEY, "0: no CUDA-graph replay"},
    {"SPARSEDITTO_PARALLEL_JIT", K_BOOL, AT(parallel_jit), 0, 1, 0, NULL, NULL, 0,
     "1: compile a round's SpMV/SpMM candidates in parallel first"},
    {"SPARSEDITTO_NVRTC_FAST", K_ENUM, AT(nvrtc_fast), 0, 3, 0, NULL, fast_words, F_KEY,
     "NVRTC --Ofast-compile level of every request that sets none"},
    {"SPARSEDITTO_SEARCH_FAST", K_ENUM, AT(search_fast), 0, 3, 0, NULL, fast_words, F_KEY | F_DERIVED,
     "fast-compile level of SpGEMM candidates"},
    {"SPARSEDITTO_SG_WIDE", K_BOOL, AT(sg_wide), 0, 1, 1, NULL, NULL, F_KEY, "0: no wide CTA dense stripes"},
    {"SPARSEDITTO_SG_FUSE_MAX", K_INT, AT(sg_fuse_max), 1, SDI_CONFIG_SG_FUSE_MAX, SDI_CONFIG_SG_FUSE_MAX, NULL,
     NULL, F_KEY, "segments per fused SpGEMM launch at most"},
    /* 0 also keeps the search from trying the path */
    {"SPARSEDITTO_SG_WARP_BROW", K_BOOL, AT(sg_warp_brow), 0, 1, 1, NULL, NULL, F_KEY,
     "0: SpGEMM units without the warp-per-B-row path"},
    /* Off: on the H200 the linked units halve the quick set's median SpGEMM compile
     * (5.3 -> 2.9 s) but their kernels run slower (SpGEMM geomean 2.32x -> 1.73x:
     * `SPARSEDITTO_SG_LINK=1 sparseditto bench --set quick --ops spgemm` against the default;
     * Belcastro_human_gene1's twin 420 -> 551 ms), and kernel speed ranks before compile time
     * (docs/ARCHITECTURE.md "Overview"). */
    {"SPARSEDITTO_SG_LINK", K_BOOL, AT(sg_link), 0, 1, 0, NULL, NULL, F_KEY, "1: SpGEMM units linked from parts"},
    {"SPARSEDITTO_SG_FINALISTS", K_BOOL, AT(sg_finalists), 0, 1, 1, NULL, NULL, F_KEY,
     "0: no re-timing of SpGEMM finalists"},
    {"SPARSEDITTO_SG_GRAPH", K_BOOL, AT(sg_graph), 0, 1, 1, NULL, NULL, F_KEY,
     "0: the SpGEMM executor launches plainly"},
    {"SPARSEDITTO_SG_STREAMS", K_BOOL, AT(sg_streams), 0, 1, 1, NULL, NULL, F_KEY, "0: no SpGEMM side streams"},
    {"SPARSEDITTO_HOST_VALIDATION", K_BOOL, AT(host_validation), 0, 1, 0, NULL, NULL, 0,
     "1: validate on the host only"},
    {"SPARSEDITTO_STREAMED_MIRROR", K_BOOL, AT(streamed_mirror), 0, 1, 0, NULL, NULL, 0,
     "1: stream the SpGEMM validation mirror"},
    {"SPARSEDITTO_HOST_MEM_LIMIT", K_SIZE, AT(host_mem_limit), 0, 1e18, 0, NULL, NULL, 0,
     "bytes: caps the host memory the guards see"},
    {"SPARSEDITTO_LOWERING", K_ENUM, AT(lowering), 0, 1, SDI_LOWERING_BUILTIN, NULL, lowering_words, 0,
     "agent: the agent round after the built-in rounds (keyed by a flag)"},
    {"SPARSEDITTO_AGENT_URL", K_STRING, AT(agent_url), 0, 0, 0, "", NULL, 0, "chat-completions endpoint"},
    {"SPARSEDITTO_AGENT_MODEL", K_STRING, AT(agent_model), 0, 0, 0, "", NULL, 0, "model name"},
    {"SPARSEDITTO_AGENT_KEY", K_STRING, AT(agent_key), 0, 0, 0, "", NULL, F_SECRET, "API key"},
    {"SPARSEDITTO_AGENT_BUDGET", K_INT, AT(agent_budget), 1, 1000, 4, NULL, NULL, 0, "model calls per task"},
    {"SPARSEDITTO_AGENT_TOKENS", K_INT, AT(agent_tokens), 1, 1e9, 200000, NULL, NULL, 0, "tokens per task"},
    {"SPARSEDITTO_AGENT_WALL_S", K_NUM, AT(agent_wall_s), 1, 1e6, 900, NULL, NULL, 0, "wall time of the agent round"},
    {"SPARSEDITTO_AGENT_TIMEOUT_S", K_NUM, AT(agent_timeout_s), 0.05, 1e5, 180, NULL, NULL, 0, "one HTTP request"},
    {"SPARSEDITTO_AGENT_PROFILE", K_BOOL, AT(agent_profile), 0, 1, 0, NULL, NULL, 0,
     "1: profile validated agent candidates with ncu"},
    {"SPARSEDITTO_AGENT_KEEP", K_BOOL, AT(agent_keep), 0, 1, 0, NULL, NULL, 0, "1: keep the agent's scratch folder"},
    {"SPARSEDITTO_ISOLATE", K_BOOL, AT(isolate), 0, 1, 0, NULL, NULL, 0,
     "1: re-check the built-in winner in a worker process"},
    {"SPARSEDITTO_WORKER", K_PATH, AT(worker), 0, 0, 0, "", NULL, 0, "the sparseditto command run as worker"},
    /* one request: nvcc + load + validate + time */
    {"SPARSEDITTO_WORKER_TIMEOUT_S", K_NUM, AT(worker_timeout_s), 0.05, 1e6, 300, NULL, NULL, 0,
     "one worker request"},
    {"SPARSEDITTO_NVCC", K_PATH, AT(nvcc), 0, 0, 0, SD_NVCC_DEFAULT, NULL, 0, "nvcc for agent candidates"},
    {"SPARSEDITTO_NCU", K_PATH, AT(ncu), 0, 0, 0, "ncu", NULL, 0, "Nsight Compute"},
    {"HOME", K_PATH, AT(home), 0, 0, 0, "", NULL, 0, "cache root fallback"},
    {"XDG_CACHE_HOME", K_PATH, AT(xdg_cache_home), 0, 0, 0, "", NULL, 0, "cache root fallback"},
    {"TMPDIR", K_PATH, AT(tmpdir), 0, 0, 0, "/tmp", NULL, 0, "the agent's scratch folders"},
    {"CUDA_VISIBLE_DEVICES", K_STRING, AT(cuda_visible_devices), 0, 0, 0, "", NULL, F_EMPTY_SET,
     "quoted when no GPU is found"},
    {"OPENAI_API_KEY", K_STRING, AT(openai_api_key), 0, 0, 0, "", NULL, F_SECRET,
     "API key when SPARSEDITTO_AGENT_KEY is not set"},
};
#define NKNOBS ((int)(sizeof knobs / sizeof knobs[0]))
_Static_assert(sizeof knobs / sizeof knobs[0] <= SDI_CONFIG_MAX_KNOBS, "sdi_config.set is too small");

static sdi_config g_cfg, g_next;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t g_reload = PTHREAD_MUTEX_INITIALIZER;

static void put_default(sdi_config *c, const knob *k)
{
    char *f = (char *)c + k->off;
    switch (k->type) {
    case K_BOOL: *(bool *)f = k->dflt != 0; break;
    case K_INT:
    case K_ENUM: *(int *)f = (int)k->dflt; break;
    case K_NUM:
    case K_SIZE: *(double *)f = k->dflt; break;
    case K_PATH:
    case K_STRING: snprintf(f, SDI_CONFIG_PATH_MAX, "%s", k->dflt_text); break;
    }
}

/* A decimal number and nothing else (no spaces, no inf/nan, no hex). */
static bool parse_number(const char *v, double *out)
{
    if (!(isdigit((unsigned char)v[0]) || v[0] == '.' || v[0] == '-' || v[0] == '+'))
        return false;
    for (const char *p = v; *p; p++)
        if (*p == 'x' || *p == 'X')
            return false;
    char *end = NULL;
    double d = strtod(v, &end);
    if (end == v || *end != '\0' || !isfinite(d))
        return false;
    *out = d;
    return true;
}

/* What the knob accepts, for messages. */
static void accepted(const knob *k, char *buf, size_t cap)
{
    switch (k->type) {
    case K_BOOL: snprintf(buf, cap, "0 or 1"); break;
    case K_INT: snprintf(buf, cap, "an integer in %.0f..%.0f", k->lo, k->hi); break;
    case K_NUM:
    case K_SIZE: snprintf(buf, cap, "a number in %.15g..%.15g", k->lo, k->hi); break;
    case K_ENUM: {
        size_t n = 0;
        buf[0] = '\0';
        for (int i = 0; k->words[i] != NULL && n < cap; i++)
            n += (size_t)snprintf(buf + n, cap - n, "%s%s",
                                  i ? (k->words[i + 1] ? ", " : " or ") : (k->words[2] ? "one of " : ""),
                                  k->words[i]);
        break;
    }
    case K_PATH:
    case K_STRING: snprintf(buf, cap, "at most %d bytes", SDI_CONFIG_PATH_MAX - 1); break;
    }
}

/* Parses v into the knob's field; false when v is not an accepted value. */
static bool parse_value(sdi_config *c, const knob *k, const char *v)
{
    char *f = (char *)c + k->off;
    double d = 0;
    switch (k->type) {
    case K_BOOL:
        if (strcmp(v, "0") != 0 && strcmp(v, "1") != 0)
            return false;
        *(bool *)f = v[0] == '1';
        return true;
    case K_INT:
        if (!parse_number(v, &d) || d != floor(d) || strchr(v, '.') || strchr(v, 'e') || strchr(v, 'E') ||
            d < k->lo || d > k->hi)
            return false;
        *(int *)f = (int)d;
        return true;
    case K_NUM:
    case K_SIZE:
        if (!parse_number(v, &d) || d < k->lo || d > k->hi)
            return false;
        *(double *)f = d;
        return true;
    case K_ENUM:
        for (int i = 0; k->words[i] != NULL; i++)
            if (strcmp(v, k->words[i]) == 0) {
                *(int *)f = i;
                return true;
            }
        return false;
    case K_PATH:
    case K_STRING:
        if (strlen(v) >= SDI_CONFIG_PATH_MAX)
            return false;
        memcpy(f, v, strlen(v) + 1);
        return true;
    }
    return false;
}

static void record_error(sdi_config *c, const knob *k, const char *v)
{
    if (c->nerrors++ > 0)
        return;
    char acc[96];
    accepted(k, acc, sizeof acc);
    c->status = SD_ERR_INVALID_ARG;
    if (k->flags & F_SECRET)
        snprintf(c->error, sizeof c->error, "%s (%zu bytes): expected %s", k->name, strlen(v), acc);
    else
        snprintf(c->error, sizeof c->error, "%s='%.120s': expected %s", k->name, v, acc);
}

/* The canonical bytes of a knob's value, folded into h. */
static uint64_t fold_value(uint64_t h, const sdi_config *c, const knob *k)
{
    const char *f = (const char *)c + k->off;
    double num = 0;
    switch (k->type) {
    case K_BOOL: num = *(const bool *)f; break;
    case K_INT:
    case K_ENUM: num = *(const int *)f; break;
    case K_NUM:
    case K_SIZE: num = *(const double *)f; break;
    case K_PATH:
    case K_STRING: return sdi_hash_bytes(f, strlen(f) + 1, h).lo;
    }
    return sdi_hash_bytes(&num, sizeof num, h).lo;
}

static bool at_default(const sdi_config *c, const knob *k)
{
    const char *f = (const char *)c + k->off;
    switch (k->type) {
    case K_BOOL: return *(const bool *)f == (k->dflt != 0);
    case K_INT:
    case K_ENUM: return *(const int *)f == (int)k->dflt;
    case K_NUM:
    case K_SIZE: return *(const double *)f == k->dflt;
    case K_PATH:
    case K_STRING: return false; /* being set is what counts */
    }
    return false;
}

static void load(sdi_config *c)
{
    memset(c, 0, sizeof *c);
    for (int i = 0; i < NKNOBS; i++) {
        const knob *k = &knobs[i];
        put_default(c, k);
        const char *v = getenv(k->name);
        if (v == NULL || (v[0] == '\0' && !(k->flags & F_EMPTY_SET)))
            continue;
        if (parse_value(c, k, v))
            c->set[i] = true;
        else
            record_error(c, k, v);
    }
    if (c->agent_key[0] == '\0')
        memcpy(c->agent_key, c->openai_api_key, sizeof c->agent_key);
    /* The key: each knob that changes plans and is set off its default, by name and value. */
    uint64_t h = 0;
    for (int i = 0; i < NKNOBS; i++) {
        const knob *k = &knobs[i];
        if (!(k->flags & F_KEY) || !c->set[i] || (!(k->flags & F_DERIVED) && at_default(c, k)))
            continue;
        h = sdi_hash_bytes(k->name, strlen(k->name) + 1, h ^ 0x5dc0f1a9ull).lo;
        h = fold_value(h, c, k);
    }
    c->key_hash = h;
    if (c->nerrors > 1) {
        size_t n = strlen(c->error);
        snprintf(c->error + n, sizeof c->error - n, " (and %d more)", c->nerrors - 1);
    }
    /* Seen once per read, also by commands that never create a context (logging is not
     * available here: its level is one of these knobs). */
    if (c->nerrors > 0)
        fprintf(stderr, "sparseditto: warning: %s; the defaults apply\n", c->error);
}

static void load_once(void) { load(&g_cfg); }

const sdi_config *sdi_config_get(void)
{
    pthread_once(&g_once, load_once);
    return &g_cfg;
}

void sdi_config_reload(void)
{
    pthread_once(&g_once, load_once);
    pthread_mutex_lock(&g_reload);
    load(&g_next);
    memcpy(&g_cfg, &g_next, sizeof g_cfg);
    pthread_mutex_unlock(&g_reload);
}

sd_status sdi_config_status(void)
{
    const sdi_config *c = sdi_config_get();
    if (c->status != SD_OK)
        return SDI_ERR(c->status, "%s", c->error);
    return SD_OK;
}

bool sdi_config_is_set(const char *name)
{
    const sdi_config *c = sdi_config_get();
    for (int i = 0; i < NKNOBS; i++)
        if (strcmp(knobs[i].name, name) == 0)
            return c->set[i];
    return false;
}

uint64_t sdi_config_key_hash(void) { return sdi_config_get()->key_hash; }
