/* src/core/sdi.h: internal conventions shared by every room: visibility, errors,
 * allocation hooks, checked arithmetic. Internal symbols are sdi_* and hidden. */
#ifndef SDI_H
#define SDI_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sparseditto.h"

#define SDI_HIDDEN __attribute__((visibility("hidden")))

#if defined(__GNUC__)
#define SDI_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define SDI_PRINTF(a, b)
#endif

/* ------------------------------------------------------------------ errors
 * sdi_error records a status and a one-line cause in thread-local storage and returns
 * the status, so a failure site reads `return SDI_ERR(SD_ERR_PARSE, "line %ld: ...", n);`.
 * The location (file:line) is kept apart from the message: the message is for users,
 * the location for bug reports (sdi_error_location). */
SDI_HIDDEN sd_status sdi_error(sd_status s, const char *file, int line, const char *fmt, ...)
    SDI_PRINTF(4, 5);
SDI_HIDDEN sd_status sdi_verror(sd_status s, const char *file, int line, const char *fmt,
                                va_list ap);
#define SDI_ERR(status, ...) sdi_error((status), __FILE__, __LINE__, __VA_ARGS__)
/* Prepends "context: " to the current message (keeps status and location). */
SDI_HIDDEN void sdi_error_prefix(const char *fmt, ...) SDI_PRINTF(1, 2);
SDI_HIDDEN void sdi_error_clear(void);
SDI_HIDDEN const char *sdi_error_location(void);

/* One cleanup path per function: define SD_FREE_ALL before use, NULL-initialise every
 * owned pointer, and write SD_TRY(call) for calls that return sd_status. */
#define SD_TRY(call)                                                                       \
    do {                                                                                   \
        sd_status sd_try_status_ = (call);                                                 \
        if (sd_try_status_ != SD_OK) {                                                     \
            SD_FREE_ALL;                                                                   \
            return sd_try_status_;                                                         \
        }                                                                                  \
    } while (0)

/* Fails with SD_ERR_OUT_OF_MEMORY (message names what) when p is NULL. */
#define SD_CHECK_ALLOC(p, what)                                                            \
    do {                                                                                   \
        if ((p) == NULL) {                                                                 \
            SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory allocating %s", (what));     \
            SD_FREE_ALL;                                                                   \
            return SD_ERR_OUT_OF_MEMORY;                                                   \
        }                                                                                  \
    } while (0)

/* ------------------------------------------------------------------ allocation
 * Every host allocation goes through these hooks so tests can inject failures
 * (sdi_alloc_fail_after). sdi_malloc_array checks n*size for overflow. */
SDI_HIDDEN void *sdi_malloc(size_t size);
SDI_HIDDEN void *sdi_calloc(size_t n, size_t size);
SDI_HIDDEN void *sdi_malloc_array(size_t n, size_t size);
SDI_HIDDEN void *sdi_realloc_array(void *p, size_t n, size_t size);
SDI_HIDDEN void sdi_free(void *p);
/* Fault injection: the n-th allocation from now (0 = the next) and every later one
 * fails; n < 0 turns injection off. Returns the number of allocations made since the
 * last call (to size a sweep). Process-wide; tests only. */
SD_API long sdi_alloc_fail_after(long n);
/* Bytes currently held through the hooks (leak checks in tests). */
SD_API long long sdi_alloc_live_bytes(void);
/* Host memory available to new allocations (MemAvailable of /proc/meminfo, else free
 * physical pages), or -1 when unknown. A guard before an allocation that Linux would
 * overcommit and later kill the process for: large outputs check it and fail with a status.
 * SPARSEDITTO_HOST_MEM_LIMIT (bytes) caps it (tests). */
SDI_HIDDEN long long sdi_host_mem_available(void);
/* Whether `need` bytes fit in the host memory available, with a tenth of it left over (the
 * guard of the large CPU references); *avail receives sdi_host_mem_available()'s figure
 * (may be NULL). Unknown availability fits. */
SDI_HIDDEN bool sdi_host_mem_fits(double need, long long *avail);

#define SDI_FREE(p)                                                                        \
    do {                                                                                   \
        sdi_free(p);                                                                       \
        (p) = NULL;                                                                        \
    } while (0)

/* ------------------------------------------------------------------ arithmetic */
/* a*b into *out; 0 on overflow (size_t). */
static inline int sdi_mul_ok(size_t a, size_t b, size_t *out)
{
    return !__builtin_mul_overflow(a, b, out);
}

/* ------------------------------------------------------------------ logging */
/* Level from SPARSEDITTO_VERBOSE (0 quiet, 1 stages, 2 candidates, 3 debug). */
SDI_HIDDEN int sdi_log_level(void);
SDI_HIDDEN void sdi_log(int level, const char *fmt, ...) SDI_PRINTF(2, 3);

/* Wall-clock seconds from a monotonic clock (host-side timings of stages). */
SDI_HIDDEN double sdi_now(void);

#include "config.h" /* the environment, typed: every room reads its knobs there */

#endif /* SDI_H */
