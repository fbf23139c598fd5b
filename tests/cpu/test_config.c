/* tests/cpu/test_config.c: the configuration object (docs/ARCHITECTURE.md "Configuration"):
 * defaults, each type's parsing and range errors naming the variable, which knobs reach
 * the kernel-cache key, and sd_context_create reporting a bad value before any device work. */
#include <stdlib.h>
#include <string.h>

#include "cache/cache.h"
#include "sdt.h"

/* The variables these tests set; each test starts with none of them. */
static const char *const touched[] = {
    "SPARSEDITTO_SG_FUSE_MAX", "SPARSEDITTO_TC",          "SPARSEDITTO_VERBOSE",     "SPARSEDITTO_JIT_CACHE",
    "SPARSEDITTO_JIT_CACHE_MB", "SPARSEDITTO_NVRTC_FAST", "SPARSEDITTO_SEARCH_FAST", "SPARSEDITTO_LOWERING",
    "SPARSEDITTO_MODELS",      "SPARSEDITTO_AGENT_KEY",   "OPENAI_API_KEY",          "SPARSEDITTO_AGENT_TIMEOUT_S",
    "SPARSEDITTO_SG_WIDE",     "SPARSEDITTO_GRAPHS",      "SPARSEDITTO_NCU",         "SPARSEDITTO_HOST_MEM_LIMIT",
};

static void clean(void)
{
    for (size_t i = 0; i < sizeof touched / sizeof touched[0]; i++)
        unsetenv(touched[i]);
    sdi_config_reload();
    sdi_error_clear();
}

/* Sets (value NULL: unsets) one variable and re-reads the environment. */
static void with(const char *name, const char *value)
{
    if (value != NULL)
        setenv(name, value, 1);
    else
        unsetenv(name);
    sdi_config_reload();
}

/* The value is refused: a named error with the value and what is accepted. */
static void expect_bad(const char *name, const char *value, const char *accepted)
{
    with(name, value);
    SDT_STATUS(sdi_config_status(), SD_ERR_INVALID_ARG);
    const char *m = sd_last_error();
    SDT_CHECK(strstr(m, name) != NULL, "%s=%s: the message names the variable: %s", name, value, m);
    SDT_CHECK(strlen(value) > 100 || strstr(m, value) != NULL, "%s=%s: the message quotes the value: %s", name,
              value, m);
    SDT_CHECK(strstr(m, accepted) != NULL, "%s=%s: the message says '%s': %s", name, value, accepted, m);
    SDT_CHECK(!sdi_config_is_set(name), "%s=%s: not taken", name, value);
    sdi_error_clear();
    with(name, NULL);
    SDT_OK(sdi_config_status());
}

static void test_defaults(void)
{
    clean();
    const sdi_config *c = sdi_config_get();
    SDT_OK(sdi_config_status());
    SDT_CHECK(c->jit_cache && c->jit_cache_mb == 2048 && c->verbose == 0 && sdi_log_level() == 0, "caches, log");
    SDT_CHECK(!c->tc && c->graphs && c->nvrtc_fast == 0 && c->sg_wide && c->sg_fuse_max == SDI_CONFIG_SG_FUSE_MAX,
              "plan knobs");
    SDT_CHECK(c->lowering == SDI_LOWERING_BUILTIN && c->agent_budget == 4 && c->agent_tokens == 200000 &&
                  c->agent_wall_s == 900 && c->agent_timeout_s == 180 && c->worker_timeout_s == 300,
              "agent defaults");
    SDT_CHECK(strcmp(c->ncu, "ncu") == 0 && c->nvcc[0] != '\0' && c->agent_key[0] == '\0', "paths");
    SDT_CHECK(!sdi_config_is_set("SPARSEDITTO_MODELS") && !sdi_config_is_set("SPARSEDITTO_SEARCH_FAST") &&
                  !sdi_config_is_set("NO_SUCH_VARIABLE"),
              "nothing set");
    SDT_CHECK(sdi_config_key_hash() == 0, "the key's hash at the defaults: %llx",
              (unsigned long long)sdi_config_key_hash());
}

static void test_parsing(void)
{
    clean();
    const sdi_config *c = sdi_config_get();
    /* bool */
    with("SPARSEDITTO_TC", "1");
    SDT_CHECK(c->tc && sdi_config_is_set("SPARSEDITTO_TC"), "TC=1");
    with("SPARSEDITTO_GRAPHS", "0");
    SDT_CHECK(!c->graphs, "GRAPHS=0");
    with("SPARSEDITTO_GRAPHS", "");
    SDT_CHECK(c->graphs && !sdi_config_is_set("SPARSEDITTO_GRAPHS"), "empty is unset");
    expect_bad("SPARSEDITTO_TC", "yes", "0 or 1");
    SDT_CHECK(!c->tc, "the default meanwhile");
    /* int with a range */
    with("SPARSEDITTO_SG_FUSE_MAX", "3");
    SDT_CHECK(c->sg_fuse_max == 3, "SG_FUSE_MAX=3: %d", c->sg_fuse_max);
    with("SPARSEDITTO_SG_FUSE_MAX", "abc");
    SDT_CHECK(c->sg_fuse_max == SDI_CONFIG_SG_FUSE_MAX, "abc: the default (%d)", c->sg_fuse_max);
    expect_bad("SPARSEDITTO_SG_FUSE_MAX", "abc", "an integer in 1..24");
    expect_bad("SPARSEDITTO_SG_FUSE_MAX", "0", "1..24");
    expect_bad("SPARSEDITTO_SG_FUSE_MAX", "25", "1..24");
    expect_bad("SPARSEDITTO_SG_FUSE_MAX", "3.5", "1..24");
    expect_bad("SPARSEDITTO_SG_FUSE_MAX", " 3", "1..24");
    with("SPARSEDITTO_VERBOSE", "2");
    SDT_CHECK(sdi_log_level() == 2, "VERBOSE=2: %d", sdi_log_level());
    expect_bad("SPARSEDITTO_VERBOSE", "-1", "0..3");
    /* numbers and sizes */
    with("SPARSEDITTO_AGENT_TIMEOUT_S", "1.5");
    SDT_CHECK(c->agent_timeout_s == 1.5, "AGENT_TIMEOUT_S=1.5");
    expect_bad("SPARSEDITTO_AGENT_TIMEOUT_S", "0.01", "a number in 0.05..100000");
    expect_bad("SPARSEDITTO_AGENT_TIMEOUT_S", "nan", "a number");
    expect_bad("SPARSEDITTO_AGENT_TIMEOUT_S", "0x10", "a number");
    with("SPARSEDITTO_JIT_CACHE_MB", "0.1");
    SDT_CHECK(c->jit_cache_mb == 0.1, "JIT_CACHE_MB=0.1");
    expect_bad("SPARSEDITTO_JIT_CACHE_MB", "-1", "a number in 0..");
    with("SPARSEDITTO_HOST_MEM_LIMIT", "1e9");
    SDT_CHECK(c->host_mem_limit == 1e9 && sdi_config_is_set("SPARSEDITTO_HOST_MEM_LIMIT"), "HOST_MEM_LIMIT=1e9");
    SDT_CHECK(sdi_host_mem_available() <= 1000000000ll, "the guard sees the cap: %lld", sdi_host_mem_available());
    with("SPARSEDITTO_HOST_MEM_LIMIT", NULL);
    /* enum */
    with("SPARSEDITTO_NVRTC_FAST", "max");
    SDT_CHECK(c->nvrtc_fast == 3, "NVRTC_FAST=max: %d", c->nvrtc_fast);
    with("SPARSEDITTO_NVRTC_FAST", "0");
    SDT_CHECK(c->nvrtc_fast == 0 && sdi_config_is_set("SPARSEDITTO_NVRTC_FAST"), "NVRTC_FAST=0 is set");
    expect_bad("SPARSEDITTO_NVRTC_FAST", "fastest", "one of 0, min, mid or max");
    with("SPARSEDITTO_LOWERING", "agent");
    SDT_CHECK(c->lowering == SDI_LOWERING_AGENT, "LOWERING=agent");
    expect_bad("SPARSEDITTO_LOWERING", "llm", "builtin or agent");
    /* paths: empty means "no model" for SPARSEDITTO_MODELS; too long is refused */
    with("SPARSEDITTO_MODELS", "");
    SDT_CHECK(sdi_config_is_set("SPARSEDITTO_MODELS") && c->models[0] == '\0', "MODELS= is set and empty");
    with("SPARSEDITTO_MODELS", NULL);
    char *long_path = malloc(SDI_CONFIG_PATH_MAX + 10);
    SDT_CHECK(long_path != NULL, "malloc");
    if (long_path != NULL) {
        memset(long_path, 'a', SDI_CONFIG_PATH_MAX + 9);
        long_path[SDI_CONFIG_PATH_MAX + 9] = '\0';
        expect_bad("SPARSEDITTO_NCU", long_path, "at most 4095 bytes");
        /* a secret is never quoted */
        with("SPARSEDITTO_AGENT_KEY", long_path);
        SDT_STATUS(sdi_config_status(), SD_ERR_INVALID_ARG);
        SDT_CHECK(strstr(sd_last_error(), "SPARSEDITTO_AGENT_KEY") != NULL && strstr(sd_last_error(), "aaaa") == NULL,
                  "names the key, not its value: %s", sd_last_error());
        sdi_error_clear();
        free(long_path);
    }
    with("SPARSEDITTO_AGENT_KEY", NULL);
    /* OPENAI_API_KEY stands in for the agent key */
    with("OPENAI_API_KEY", "sk-test");
    SDT_CHECK(strcmp(c->agent_key, "sk-test") == 0, "OPENAI_API_KEY as the agent key");
    with("SPARSEDITTO_AGENT_KEY", "mine");
    SDT_CHECK(strcmp(c->agent_key, "mine") == 0, "SPARSEDITTO_AGENT_KEY first");
    /* two bad values: the first named, the count given */
    setenv("SPARSEDITTO_TC", "2", 1);
    with("SPARSEDITTO_SG_FUSE_MAX", "x");
    SDT_STATUS(sdi_config_status(), SD_ERR_INVALID_ARG);
    SDT_CHECK(strstr(sd_last_error(), "and 1 more") != NULL, "counts the others: %s", sd_last_error());
    clean();
}

static void key_hex(char out[33])
{
    sdi_cache_key k;
    sdi_cache_key_init(&k);
    sdi_cache_key_hex(&k, out);
}

/* A knob that changes plans changes the key; logging and paths do not; a knob set to its
 * default is the default. */
static void test_cache_key(void)
{
    static const struct {
        const char *name, *value;
        bool keyed;
    } cases[] = {
        {"SPARSEDITTO_SG_FUSE_MAX", "3", true},
        {"SPARSEDITTO_TC", "1", true},
        {"SPARSEDITTO_SEARCH_FAST", "min", true}, /* its default depends on the task */
        {"SPARSEDITTO_MODELS", "", true},         /* no model */
        {"SPARSEDITTO_VERBOSE", "3", false},
        {"SPARSEDITTO_NCU", "/opt/ncu", false},
        {"SPARSEDITTO_SG_WIDE", "1", false}, /* the default */
    };
    clean();
    char base[33], prev[33] = "", hex[33];
    key_hex(base);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        with(cases[i].name, cases[i].value);
        key_hex(hex);
        with(cases[i].name, NULL);
        SDT_CHECK((strcmp(hex, base) != 0) == cases[i].keyed, "%s=%s %s the key", cases[i].name, cases[i].value,
                  cases[i].keyed ? "changes" : "leaves");
        SDT_CHECK(!cases[i].keyed || strcmp(hex, prev) != 0, "%s: a key of its own", cases[i].name);
        memcpy(prev, hex, sizeof hex);
    }
    key_hex(hex);
    SDT_CHECK(strcmp(hex, base) == 0, "back to the defaults' key");
}

/* sd_context_create names a bad variable, before it touches a device (so also here). */
static void test_context_reports(void)
{
    clean();
    with("SPARSEDITTO_SG_FUSE_MAX", "abc");
    sd_context *ctx = NULL;
    SDT_STATUS(sd_context_create(NULL, &ctx), SD_ERR_INVALID_ARG);
    SDT_CHECK(ctx == NULL, "no context");
    SDT_CHECK(strstr(sd_last_error(), "sd_context_create") != NULL &&
                  strstr(sd_last_error(), "SPARSEDITTO_SG_FUSE_MAX='abc'") != NULL,
              "the error names the variable: %s", sd_last_error());
    clean();
    sd_status s = sd_context_create(NULL, &ctx);
    SDT_CHECK(s != SD_ERR_INVALID_ARG, "a good configuration passes the check (%s)", sd_status_string(s));
    sd_context_destroy(ctx);
    sdi_error_clear();
}

int main(void)
{
    sdt_init("test_config");
    SDT_RUN(test_defaults);
    SDT_RUN(test_parsing);
    SDT_RUN(test_cache_key);
    SDT_RUN(test_context_reports);
    return sdt_finish();
}
