/* src/core/log.c: verbosity (SPARSEDITTO_VERBOSE), stage logging, a monotonic clock. */
#include <stdio.h>
#include <time.h>

#include "sdi.h"

int sdi_log_level(void) { return sdi_config_get()->verbose; }

void sdi_log(int level, const char *fmt, ...)
{
    if (sdi_log_level() < level)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("sparseditto: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

double sdi_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
