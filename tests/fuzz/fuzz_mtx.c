/* tests/fuzz/fuzz_mtx.c: libFuzzer target for the matrix readers. Each input is read as
 * Matrix Market (plain or gzip, from memory) with the default block and with a tiny
 * block, which must agree (exactly for plain text); then from a pipe through the
 * library's entry point, which must agree with memory (an .sdm refused by name); a
 * success must be a valid canonical CSR; nothing may leak. An input holding '~' is also
 * read stretched: the first "~c" becomes a run of c just around the line-length limit,
 * so that long comments, blank runs and over-long lines are reached from small inputs.
 * The same bytes also go through the .sdm reader. Any disagreement aborts. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/io.h"

static bool same_csr(const sd_csr *a, const sd_csr *b)
{
    return sdi_csr_same_pattern(a, b) &&
           (a->nnz == 0 || memcmp(a->vals, b->vals, (size_t)a->nnz * sizeof(float)) == 0);
}

static void fail(const char *what)
{
    fprintf(stderr, "fuzz_mtx: %s (last error: %s)\n", what, sd_last_error());
    abort();
}

typedef struct {
    int fd;
    const uint8_t *data;
    size_t len;
} feed_t;

/* Writes the input into the pipe and closes it; stops when the reader has gone. */
static void *feed(void *arg)
{
    feed_t *f = arg;
    size_t done = 0;
    while (done < f->len) {
        ssize_t k = write(f->fd, f->data + done, f->len - done);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        done += (size_t)k;
    }
    close(f->fd);
    return NULL;
}

/* sdi_csr_read_info on a pipe fed with the input; *name receives the pipe's name. */
static sd_status read_pipe(const uint8_t *data, size_t size, sd_csr *out, sdi_mtx_info *info,
                           char *name, size_t cap)
{
    int fds[2];
    if (pipe(fds) != 0)
        fail("pipe");
    feed_t f = {fds[1], data, size};
    pthread_t t;
    if (pthread_create(&t, NULL, feed, &f) != 0)
        fail("pthread_create");
    snprintf(name, cap, "/dev/fd/%d", fds[0]);
    sd_status s = sdi_csr_read_info(name, out, info);
    close(fds[0]); /* a writer still blocked gets EPIPE */
    pthread_join(t, NULL);
    return s;
}

/* Reads one text every way; block is the small block size. */
static void check_text(const uint8_t *data, size_t size, size_t block)
{
    sd_csr a, b, c;
    sdi_mtx_info ia, ib, ic;
    sd_status sa = sdi_mtx_read_mem((const char *)data, size, 0, &a, &ia);
    char msg[2048];
    snprintf(msg, sizeof msg, "%s", sd_last_error());
    sd_status sb = sdi_mtx_read_mem((const char *)data, size, block, &b, &ib);
    /* Reading streams: with gzip, a parse error early in the text or damage later in
     * the compressed stream may be met first depending on the block size; success and
     * failure must still agree. Plain text must agree exactly. */
    bool gzip = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
    if ((sa == SD_OK) != (sb == SD_OK) || (!gzip && sa != sb))
        fail("status depends on the block size");
    if (sa == SD_OK) {
        if (!same_csr(&a, &b) || ia.nnz_stored != ib.nnz_stored || ia.lines != ib.lines)
            fail("result depends on the block size");
        if (sd_csr_check(&a) != SD_OK)
            fail("a successful read is not a valid CSR");
        if (a.nnz != ia.nnz || ia.nnz_stored > ia.nnz_declared)
            fail("inconsistent read summary");
    } else {
        if (!gzip && strcmp(msg, sd_last_error()) != 0)
            fail("message depends on the block size");
        if (a.rowptr != NULL || a.colind != NULL || a.vals != NULL || a.rows || a.nnz)
            fail("output not zeroed after a failure");
        if (msg[0] == '\0')
            fail("failure without a message");
    }
    /* From a pipe: the format is told by the first bytes, read once. */
    char name[64];
    sd_status sc = read_pipe(data, size, &c, &ic, name, sizeof name);
    if (size >= 8 && memcmp(data, SDI_SDM_MAGIC, 8) == 0) {
        if (sc != SD_ERR_UNSUPPORTED || strstr(sd_last_error(), ".sdm files must be") == NULL)
            fail("an .sdm from a pipe is not refused by name");
    } else if ((sa == SD_OK) != (sc == SD_OK) || (!gzip && sa != sc)) {
        fail("a pipe reads differently from memory");
    } else if (sc == SD_OK) {
        if (!same_csr(&a, &c) || ia.lines != ic.lines || ia.text_bytes != ic.text_bytes ||
            ia.gzip != ic.gzip)
            fail("a pipe gives a different result");
    } else if (!gzip) {
        char want[2200];
        snprintf(want, sizeof want, "%s: %s", name, msg);
        if (strcmp(want, sd_last_error()) != 0)
            fail("a pipe gives a different message");
    }
    sd_csr_free(&a);
    sd_csr_free(&b);
    sd_csr_free(&c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool once;
    if (!once) {
        signal(SIGPIPE, SIG_IGN); /* the feeder learns of an early stop by EPIPE */
        once = true;
    }
    long long live0 = sdi_alloc_live_bytes();
    /* A block size from the input's length: 1 to 13 bytes. */
    check_text(data, size, 1 + size % 13);
    const uint8_t *tilde = memchr(data, '~', size);
    if (tilde != NULL && tilde + 1 < data + size) {
        size_t at = (size_t)(tilde - data), run = SDI_MTX_LINE_MAX - 1 + size % 4;
        uint8_t *s = malloc(size - 2 + run);
        if (s == NULL)
            fail("malloc");
        memcpy(s, data, at);
        memset(s + at, tilde[1], run);
        memcpy(s + at + run, tilde + 2, size - at - 2);
        /* Blocks of a few kB: tiny ones would take a million reads per input. */
        check_text(s, size - 2 + run, 1 + (size % 13) * 4099);
        free(s);
    }
    sd_csr c;
    if (sdi_sdm_read_mem(data, size, &c) == SD_OK) {
        if (sd_csr_check(&c) != SD_OK)
            fail("a successful .sdm read is not a valid CSR");
        sd_csr_free(&c);
    } else if (c.rowptr != NULL) {
        fail(".sdm output not zeroed after a failure");
    }
    if (sdi_alloc_live_bytes() != live0)
        fail("leak");
    return 0;
}
