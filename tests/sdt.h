/* tests/sdt.h: the tiny test harness every test program uses. A program registers test
 * functions with SDT_RUN; checks record failures with their file:line and the seed in
 * use; the program ends with "N passed, N failed" and exit 0 only if none failed.
 * Exit 77 marks a skipped program (ctest SKIP_RETURN_CODE), e.g. the GPU lane
 * without a device. */
#ifndef SDT_H
#define SDT_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int sdt_failures_in_test;
static int sdt_passed, sdt_failed;
static unsigned long long sdt_seed = 12345;

#define SDT_CHECK(cond, ...)                                                               \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            fprintf(stderr, "  %s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);     \
            fprintf(stderr, __VA_ARGS__);                                                  \
            fprintf(stderr, " (seed %llu)\n", sdt_seed);                                   \
            sdt_failures_in_test++;                                                        \
        }                                                                                  \
    } while (0)

/* Checks a library call returned the expected status; prints sd_last_error otherwise. */
#define SDT_STATUS(call, expected)                                                         \
    do {                                                                                   \
        sd_status sdt_s_ = (call);                                                         \
        SDT_CHECK(sdt_s_ == (expected), "%s returned %s, expected %s (last error: %s)",    \
                  #call, sd_status_string(sdt_s_), sd_status_string(expected),            \
                  sd_last_error());                                                        \
    } while (0)
#define SDT_OK(call) SDT_STATUS(call, SD_OK)

#define SDT_RUN(fn)                                                                        \
    do {                                                                                   \
        sdt_failures_in_test = 0;                                                          \
        fn();                                                                              \
        if (sdt_failures_in_test == 0) {                                                   \
            sdt_passed++;                                                                  \
            printf("ok   %s\n", #fn);                                                      \
        } else {                                                                           \
            sdt_failed++;                                                                  \
            printf("FAIL %s (%d checks)\n", #fn, sdt_failures_in_test);                    \
        }                                                                                  \
        fflush(stdout);                                                                    \
    } while (0)

/* Reads SDT_SEED from the environment (to replay a failure) and prints the seed. */
static inline void sdt_init(const char *program)
{
    const char *s = getenv("SDT_SEED");
    if (s != NULL)
        sdt_seed = strtoull(s, NULL, 10);
    printf("# %s (seed %llu; SDT_SEED=n to replay)\n", program, sdt_seed);
}

static inline int sdt_finish(void)
{
    printf("%d passed, %d failed\n", sdt_passed, sdt_failed);
    return sdt_failed == 0 ? 0 : 1;
}

static inline int sdt_skip(const char *why)
{
    printf("SKIPPED: %s\n", why);
    return 77;
}

#ifdef SD_TEST_DATA_DIR
/* The text of the fixture tests/data/NAME, NUL-terminated (free it); NULL, saying why,
 * when it cannot be read. */
static inline char *sdt_data_text(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", SD_TEST_DATA_DIR, name);
    FILE *f = fopen(path, "rb");
    long n = -1;
    if (f != NULL && fseek(f, 0, SEEK_END) == 0)
        n = ftell(f);
    char *text = n >= 0 && fseek(f, 0, SEEK_SET) == 0 ? malloc((size_t)n + 1) : NULL;
    if (text != NULL && fread(text, 1, (size_t)n, f) == (size_t)n) {
        text[n] = '\0';
    } else {
        printf("cannot read %s\n", path);
        free(text);
        text = NULL;
    }
    if (f != NULL)
        fclose(f);
    return text;
}
#endif /* SD_TEST_DATA_DIR */

#ifdef SPARSEDITTO_H
/* The context of a GPU test program through the public API (cache_dir "" or NULL: no disk
 * cache). Returns 1 with *ctx open; otherwise 0 with the program's exit code in *rc: 77
 * (skipped) without a device, 1 after printing the reason. */
static inline int sdt_context_open(const char *cache_dir, sd_context **ctx, int *rc)
{
    sd_context_options co = {0, cache_dir != NULL ? cache_dir : "", 0};
    sd_status s = sd_context_create(&co, ctx);
    if (s == SD_OK)
        return 1;
    if (s == SD_ERR_NO_DEVICE) {
        *rc = sdt_skip(sd_last_error());
    } else {
        printf("context: %s\n", sd_last_error());
        *rc = 1;
    }
    return 0;
}

/* Destroys the context and removes the test's cache folder (cache_dir NULL: none). */
static inline void sdt_context_close(sd_context *ctx, const char *cache_dir)
{
    sd_context_destroy(ctx);
    if (cache_dir == NULL)
        return;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache_dir);
    if (system(cmd) != 0)
        printf("could not remove %s\n", cache_dir);
}
#endif /* SPARSEDITTO_H */

#endif /* SDT_H */
