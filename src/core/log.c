/* src/core/log.c: verbosity from SPARSEDITTO_VERBOSE, stage logging, a monotonic clock. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "sdi.h"

int sdi_log_level(void)
{
    static _Atomic int level = -1;
    int l = level;
    if (l < 0) {
        const char *v = getenv("SPARSEDITTO_VERBOSE");
        l = (v != NULL) ? atoi(v) : 0;
        if (l < 0)
            l = 0;
        level = l;
    }
    return l;
}

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
