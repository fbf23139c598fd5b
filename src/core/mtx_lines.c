/* src/core/mtx_lines.c: the Matrix Market reader's input: blocks read plain or inflated
 * (gzip, from an opened input or from memory) into a bounded buffer that hands the parser
 * whole lines, dropping comments too long to keep. */
#include <limits.h>
#include <string.h>
#include <zlib.h>

#include "mtx_lines.h"

/* Compressed bytes read from an input at once (memory is inflated in place). */
#define SDI_ZIN_BYTES (256u << 10)

/* A long line in progress that is being dropped rather than kept (rd_skip). */
enum { SKIP_NONE, SKIP_BLANKS, SKIP_COMMENT };

/* Makes at least want (1 or 2) compressed bytes available to inflate unless the raw
 * bytes end first; the one byte that may be left over is kept. */
static sd_status z_fill(sdi_mtx_reader *r, uInt want)
{
    while (r->zs.avail_in < want && !r->raw_eof) {
        uInt keep = r->zs.avail_in;
        if (r->in == NULL) {
            size_t off = r->mem_pos - keep, k = r->mem_len - off;
            if (k > UINT_MAX)
                k = UINT_MAX;
            if (k <= keep) {
                r->raw_eof = true;
                break;
            }
            r->zs.next_in = (unsigned char *)(uintptr_t)(r->mem + off);
            r->zs.avail_in = (uInt)k;
            r->mem_pos = off + k;
        } else {
            if (keep > 0) /* next_in is NULL before the first read */
                memmove(r->zin, r->zs.next_in, keep);
            size_t got = 0;
            sd_status s = sdi_input_read(r->in, r->zin + keep, SDI_ZIN_BYTES - keep, &got);
            if (s != SD_OK)
                return s;
            r->zs.next_in = r->zin;
            r->zs.avail_in = keep + (uInt)got;
            r->raw_eof = got == 0;
        }
    }
    return SD_OK;
}

/* Inflates up to n bytes, continuing over concatenated members; bytes after the last
 * member that do not start another one are ignored, as gzip -d does. */
static sd_status z_read(sdi_mtx_reader *r, char *dst, size_t n, size_t *got)
{
    size_t produced = 0;
    while (produced < n && !r->zs_done) {
        if (r->zs.avail_in == 0) {
            sd_status s = z_fill(r, 1);
            if (s != SD_OK)
                return s;
            if (r->zs.avail_in == 0)
                return SDI_ERR(SD_ERR_PARSE,
                               "the gzip data is truncated after %lld bytes of text",
                               (long long)(r->text_bytes + (int64_t)produced));
        }
        size_t room = n - produced;
        if (room > UINT_MAX)
            room = UINT_MAX;
        r->zs.next_out = (unsigned char *)dst + produced;
        r->zs.avail_out = (uInt)room;
        int ret = inflate(&r->zs, Z_NO_FLUSH);
        produced += room - r->zs.avail_out;
        if (ret == Z_STREAM_END) {
            sd_status s = z_fill(r, 2);
            if (s != SD_OK)
                return s;
            if (r->zs.avail_in >= 2 && r->zs.next_in[0] == 0x1f && r->zs.next_in[1] == 0x8b)
                inflateReset(&r->zs);
            else
                r->zs_done = true;
        } else if (ret == Z_MEM_ERROR) {
            return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory inflating gzip data");
        } else if (ret != Z_OK) { /* input was given: Z_BUF_ERROR means no progress */
            return SDI_ERR(SD_ERR_PARSE, "corrupt gzip data (%s) after %lld bytes of text",
                           r->zs.msg ? r->zs.msg : "inflate failed",
                           (long long)(r->text_bytes + (int64_t)produced));
        }
    }
    *got = produced;
    return SD_OK;
}

static sd_status src_read(sdi_mtx_reader *r, char *dst, size_t n, size_t *got)
{
    *got = 0;
    if (r->gzip)
        return z_read(r, dst, n, got);
    if (r->in != NULL)
        return sdi_input_read(r->in, dst, n, got);
    size_t k = r->mem_len - r->mem_pos;
    if (k > n)
        k = n;
    memcpy(dst, r->mem + r->mem_pos, k);
    r->mem_pos += k;
    *got = k;
    return SD_OK;
}

/* The error for line ln (other than a comment) longer than SDI_MTX_LINE_MAX; [ls, ls +
 * avail) holds its first bytes (at least the limit's worth, or none). */
sd_status sdi_mtx_line_too_long(long long ln, const char *ls, size_t avail)
{
    bool nul = memchr(ls, '\0', avail < SDI_MTX_LINE_MAX ? avail : SDI_MTX_LINE_MAX) != NULL;
    return SDI_ERR(SD_ERR_PARSE, "line %lld: longer than %u bytes, the limit for a line that "
                                 "is not a comment%s", ln, SDI_MTX_LINE_MAX,
                   nul ? " (it holds NUL bytes: binary data, not Matrix Market text)" : "");
}

/* Whether [p, e) is a comment line: '%' after optional blanks, once past the banner. */
static bool is_comment(const sdi_mtx_reader *r, const char *p, const char *e)
{
    while (p < e && is_blank(*p))
        p++;
    return r->comments && p < e && *p == '%';
}

/* Position just after the last complete line in [from, len), 0 if none. A CR as the
 * very last byte may be the first half of a CRLF: it ends a line only at end of input.
 * Callers start at the first byte not yet scanned (less one, for such a CR), so that
 * every byte is scanned once however long its line. */
static size_t last_eol(const sdi_mtx_reader *r, size_t from)
{
    /* Backwards over the last bytes first: a line end is usually near the end. */
    size_t stop = r->len - from > 4096 ? r->len - 4096 : from;
    for (size_t i = r->len; i > stop; i--) {
        char c = r->buf[i - 1];
        if (c == '\n' || (c == '\r' && (i < r->len || r->eof)))
            return i;
    }
    /* Within a long line: forwards at library speed to the last line end before it. */
    size_t last = 0;
    const char *b = r->buf, *q = b + stop;
    for (const char *p = find_eol(b + from, q); p < q; p = find_eol(p + 1, q))
        last = (size_t)(p - b) + 1;
    return last;
}

static sd_status rd_grow(sdi_mtx_reader *r, size_t cap)
{
    char *nb = sdi_realloc_array(r->buf, cap + 1, 1);
    if (nb == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for a %zu-byte read buffer",
                       cap);
    r->buf = nb;
    r->cap = cap;
    return SD_OK;
}

/* The line in progress, [0, len) without a line end, has outgrown SDI_MTX_LINE_MAX. A
 * comment (or what may still become one: blanks so far) is dropped from here on, so it
 * costs no memory; anything else is an error. */
static sd_status rd_long_line(sdi_mtx_reader *r)
{
    size_t i = 0;
    while (i < r->len && is_blank(r->buf[i]))
        i++;
    if (r->comments && i == r->len) {
        r->skip = SKIP_BLANKS;
        r->len = 0;
        return SD_OK;
    }
    if (r->comments && r->buf[i] == '%') {
        /* A CR as the last byte may end the comment: kept, it is judged by what follows. */
        bool cr = r->buf[r->len - 1] == '\r';
        r->buf[0] = '%';
        r->len = 1;
        if (cr)
            r->buf[r->len++] = '\r';
        else
            r->skip = SKIP_COMMENT;
        return SD_OK;
    }
    return sdi_mtx_line_too_long((long long)r->line + 1, r->buf, r->len);
}

/* Drops the bytes [from, len) just read that belong to the long line being skipped. The
 * comment stays in the buffer as the one byte "%" followed by its line end, so lines
 * are counted as usual. */
static sd_status rd_skip(sdi_mtx_reader *r, size_t from)
{
    char *b = r->buf;
    size_t k = from;
    if (r->skip == SKIP_BLANKS) {
        while (k < r->len && is_blank(b[k]))
            k++;
        if (k == r->len) {
            r->len = 0;
            return r->eof ? sdi_mtx_line_too_long((long long)r->line + 1, b, 0) : SD_OK;
        }
        if (b[k] != '%') /* a long blank line, or blanks before an entry */
            return sdi_mtx_line_too_long((long long)r->line + 1, b, 0);
        r->skip = SKIP_COMMENT;
        b[0] = '%';
        k++;
    }
    k = (size_t)(find_eol(b + k, b + r->len) - b);
    if (k == r->len) {
        r->len = 1;
        if (r->eof)
            r->skip = SKIP_NONE;
        return SD_OK;
    }
    memmove(b + 1, b + k, r->len - k);
    r->len = 1 + (r->len - k);
    r->skip = SKIP_NONE;
    return SD_OK;
}

/* Makes [pos, chunk_end) hold whole lines (the rest of the input at its end); *more is
 * false when nothing is left. The buffer holds at most a block plus one line of up to
 * SDI_MTX_LINE_MAX bytes, and every byte read is scanned a bounded number of times. */
sd_status sdi_mtx_reader_refill(sdi_mtx_reader *r, bool *more)
{
    size_t tail = r->len - r->pos;
    if (r->pos > 0 && tail > 0)
        memmove(r->buf, r->buf + r->pos, tail);
    r->len = tail;
    r->pos = 0;
    size_t scan = tail > 0 ? tail - 1 : 0; /* the tail has no line end but maybe a CR */
    for (;;) {
        if (!r->eof && r->len < r->cap) {
            size_t want = r->cap - r->len;
            if (want > r->block)
                want = r->block;
            size_t got = 0, from = r->len;
            sd_status s = src_read(r, r->buf + r->len, want, &got);
            if (s != SD_OK)
                return s;
            if (got == 0)
                r->eof = true;
            r->len += got;
            r->text_bytes += (int64_t)got;
            r->buf[r->len] = '\0';
            if (r->skip != SKIP_NONE) {
                if ((s = rd_skip(r, from)) != SD_OK)
                    return s;
                scan = 0;
            }
        }
        r->buf[r->len] = '\0';
        size_t q = last_eol(r, scan);
        if (q > 0 || r->eof) {
            r->chunk_end = q > 0 ? q : r->len;
            *more = r->chunk_end > 0;
            /* Large inputs earn large blocks: small files keep a small buffer. */
            if (r->len == r->cap && r->cap < r->block && !r->eof) {
                size_t cap = r->cap * 8 < r->block ? r->cap * 8 : r->block;
                return rd_grow(r, cap);
            }
            return SD_OK;
        }
        scan = r->len > 0 ? r->len - 1 : 0;
        size_t n = r->len - (r->len > 0 && r->buf[r->len - 1] == '\r');
        if (n > SDI_MTX_LINE_MAX) {
            sd_status s = rd_long_line(r);
            if (s != SD_OK)
                return s;
            scan = 0;
        } else if (r->len == r->cap) {
            sd_status s = rd_grow(r, r->cap * 2);
            if (s != SD_OK)
                return s;
        }
    }
}

/* The next line [*ls, *le) without its terminator; *got false at the end of input. */
sd_status sdi_mtx_reader_line(sdi_mtx_reader *r, const char **ls, const char **le, bool *got)
{
    *got = false;
    if (r->pos >= r->chunk_end) {
        bool more = false;
        sd_status s = sdi_mtx_reader_refill(r, &more);
        if (s != SD_OK)
            return s;
        if (!more)
            return SD_OK;
    }
    const char *p = r->buf + r->pos, *q = r->buf + r->chunk_end, *e = find_eol(p, q);
    if ((size_t)(e - p) > SDI_MTX_LINE_MAX && !is_comment(r, p, e))
        return sdi_mtx_line_too_long((long long)r->line + 1, p, (size_t)(e - p));
    *ls = p;
    *le = e;
    if (e < q)
        e += (*e == '\r' && e + 1 < q && e[1] == '\n') ? 2 : 1;
    r->pos = (size_t)(e - r->buf);
    r->line++;
    *got = true;
    return SD_OK;
}

sd_status sdi_mtx_reader_open(sdi_mtx_reader *r, bool gzip)
{
    r->gzip = gzip;
    if (gzip) {
        if (inflateInit2(&r->zs, 15 + 16) != Z_OK)
            return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "cannot initialise zlib");
        r->zs_live = true;
        if (r->in != NULL && (r->zin = sdi_malloc(SDI_ZIN_BYTES)) == NULL)
            return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for a gzip read buffer");
    }
    /* A small first buffer: small files stay small (sdi_mtx_reader_refill grows it). */
    return rd_grow(r, r->block < (64u << 10) ? r->block : (64u << 10));
}

void sdi_mtx_reader_close(sdi_mtx_reader *r)
{
    if (r->zs_live)
        inflateEnd(&r->zs);
    sdi_free(r->zin);
    sdi_free(r->buf);
    memset(r, 0, sizeof *r);
}
