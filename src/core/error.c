/* src/core/error.c: statuses, the thread-local last-error message and its location. */
#include <stdio.h>
#include <string.h>

#include "sdi.h"

#define SDI_ERROR_CAP 2048

static _Thread_local char tls_message[SDI_ERROR_CAP];
static _Thread_local char tls_location[256];

const char *sd_status_string(sd_status s)
{
    switch (s) {
    case SD_OK: return "success";
    case SD_ERR_INVALID_ARG: return "invalid argument";
    case SD_ERR_IO: return "I/O error";
    case SD_ERR_PARSE: return "parse error";
    case SD_ERR_UNSUPPORTED: return "unsupported";
    case SD_ERR_OUT_OF_MEMORY: return "out of memory";
    case SD_ERR_NO_DEVICE: return "no CUDA device";
    case SD_ERR_CUDA: return "CUDA error";
    case SD_ERR_COMPILE: return "compilation failed";
    case SD_ERR_VALIDATION: return "validation failed";
    case SD_ERR_CACHE: return "kernel cache error";
    case SD_ERR_INTERNAL: return "internal error";
    }
    return "unknown status";
}

const char *sd_last_error(void) { return tls_message; }

const char *sd_version_string(void)
{
#define SDI_STR2(x) #x
#define SDI_STR(x) SDI_STR2(x)
    return SDI_STR(SD_VERSION_MAJOR) "." SDI_STR(SD_VERSION_MINOR) "." SDI_STR(SD_VERSION_PATCH);
}

sd_status sdi_verror(sd_status s, const char *file, int line, const char *fmt, va_list ap)
{
    vsnprintf(tls_message, sizeof tls_message, fmt, ap);
    const char *base = strrchr(file, '/');
    snprintf(tls_location, sizeof tls_location, "%s:%d", base ? base + 1 : file, line);
    if (sdi_log_level() >= 3)
        fprintf(stderr, "sparseditto: [%s] %s: %s\n", tls_location, sd_status_string(s),
                tls_message);
    return s;
}

sd_status sdi_error(sd_status s, const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sdi_verror(s, file, line, fmt, ap);
    va_end(ap);
    return s;
}

void sdi_error_prefix(const char *fmt, ...)
{
    char prefix[512], old[SDI_ERROR_CAP];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, tls_message, sizeof old);
    size_t n = strlen(prefix);
    if (n + 2 >= sizeof tls_message)
        n = sizeof tls_message - 3;
    memcpy(tls_message, prefix, n);
    memcpy(tls_message + n, ": ", 2);
    size_t room = sizeof tls_message - n - 3;
    size_t m = strlen(old);
    if (m > room)
        m = room;
    memcpy(tls_message + n + 2, old, m);
    tls_message[n + 2 + m] = '\0';
}

void sdi_error_clear(void)
{
    tls_message[0] = '\0';
    tls_location[0] = '\0';
}

const char *sdi_error_location(void) { return tls_location; }
