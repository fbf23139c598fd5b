/* src/core/mtx_write.c: the Matrix Market writer (coordinate real general, %.9g values
 * that read back bit-exactly), plain or gzip, through an atomic temporary file. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "io.h"

#define SDI_WRITE_BUF (1u << 20)

static char *put_u64(char *p, uint64_t v)
{
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    while (n > 0)
        *p++ = tmp[--n];
    return p;
}

/* %.9g is the shortest fixed precision that round-trips every float. Integer values
 * below 10^9 print the same digits by hand (pattern and integer matrices are all such). */
static char *put_value(char *p, float f)
{
    if (fabsf(f) < 1e9f && f == truncf(f) && !(f == 0.0f && signbit(f))) {
        if (f < 0) {
            *p++ = '-';
            return put_u64(p, (uint64_t)(-(int64_t)f));
        }
        return put_u64(p, (uint64_t)f);
    }
    return p + snprintf(p, 32, "%.9g", (double)f);
}

typedef struct {
    FILE *f;
    gzFile gz;
    char *buf;
    size_t len;
    const char *path;
} wr_t;

static sd_status wr_flush(wr_t *w)
{
    if (w->len == 0)
        return SD_OK;
    if (w->gz != NULL) {
        if (gzwrite(w->gz, w->buf, (unsigned)w->len) != (int)w->len) {
            int errnum = Z_OK;
            const char *msg = gzerror(w->gz, &errnum);
            return SDI_ERR(SD_ERR_IO, "cannot write '%s': %s", w->path,
                           errnum == Z_ERRNO ? strerror(errno) : msg);
        }
    } else if (fwrite(w->buf, 1, w->len, w->f) != w->len) {
        return SDI_ERR(SD_ERR_IO, "cannot write '%s': %s", w->path, strerror(errno));
    }
    w->len = 0;
    return SD_OK;
}

sd_status sdi_mtx_write(const char *path, const sd_csr *a, bool gzip)
{
    sdi_atomic_file af;
    wr_t w;
    memset(&w, 0, sizeof w);
    w.path = path;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        if (w.gz != NULL)                                                                  \
            gzclose(w.gz);                                                                 \
        if (w.f != NULL)                                                                   \
            fclose(w.f);                                                                   \
        sdi_free(w.buf);                                                                   \
        sdi_atomic_abort(&af);                                                             \
    } while (0)
    SD_TRY(sdi_atomic_begin(&af, path));
    w.buf = sdi_malloc(SDI_WRITE_BUF);
    SD_CHECK_ALLOC(w.buf, "a write buffer");
    int fd = dup(af.fd);
    if (fd >= 0) {
        if (gzip)
            w.gz = gzdopen(fd, "wb6");
        else
            w.f = fdopen(fd, "wb");
        if (w.gz == NULL && w.f == NULL)
            close(fd);
    }
    if (w.gz == NULL && w.f == NULL) {
        SD_FREE_ALL;
        return SDI_ERR(SD_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
    }
    if (w.gz != NULL)
        gzbuffer(w.gz, 1u << 18);
    w.len = (size_t)snprintf(w.buf, SDI_WRITE_BUF,
                             "%%%%MatrixMarket matrix coordinate real general\n"
                             "%% written by SparseDitto %s\n%d %d %lld\n",
                             sd_version_string(), a->rows, a->cols, (long long)a->nnz);
    for (int32_t i = 0; i < a->rows; i++) {
        for (int64_t k = a->rowptr[i]; k < a->rowptr[i + 1]; k++) {
            if (w.len > SDI_WRITE_BUF - 96)
                SD_TRY(wr_flush(&w));
            char *p = w.buf + w.len;
            p = put_u64(p, (uint64_t)i + 1);
            *p++ = ' ';
            p = put_u64(p, (uint64_t)a->colind[k] + 1);
            *p++ = ' ';
            p = put_value(p, a->vals[k]);
            *p++ = '\n';
            w.len = (size_t)(p - w.buf);
        }
    }
    SD_TRY(wr_flush(&w));
    int rc;
    if (w.gz != NULL) {
        rc = gzclose(w.gz) == Z_OK ? 0 : -1;
        w.gz = NULL;
    } else {
        rc = fclose(w.f);
        w.f = NULL;
    }
    if (rc != 0) {
        int e = errno;
        SD_FREE_ALL;
        return SDI_ERR(SD_ERR_IO, "cannot write '%s': %s", path, strerror(e));
    }
    sdi_free(w.buf);
    w.buf = NULL;
    return sdi_atomic_commit(&af);
#undef SD_FREE_ALL
}
