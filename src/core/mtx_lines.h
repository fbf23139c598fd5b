/* src/core/mtx_lines.h: the Matrix Market reader's buffered input (plain or gzip, from an
 * opened input or from memory), handed to the parser as whole lines; private to
 * mtx_lines.c and mtx_read.c. */
#ifndef SDI_MTX_LINES_H
#define SDI_MTX_LINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <zlib.h>

#include "io.h"

typedef struct {
    sdi_input *in; /* NULL: the bytes are mem[0, mem_len) */
    const unsigned char *mem;
    size_t mem_len, mem_pos;
    bool gzip; /* inflated on the way: the bytes started with the gzip magic */
    z_stream zs;
    bool zs_live, zs_done, raw_eof;
    unsigned char *zin; /* compressed bytes read from in */
    /* The buffer holds [0, len) read so far plus a NUL at len; [pos, chunk_end) are
     * whole lines not yet parsed; [chunk_end, len) is an incomplete last line. */
    char *buf;
    size_t cap, len, pos, chunk_end, block;
    bool eof;
    int skip;      /* the line in progress is longer than SDI_MTX_LINE_MAX (mtx_lines.c) */
    bool comments; /* past the banner: a line starting with '%' is a comment */
    int64_t line;  /* lines consumed */
    int64_t text_bytes;
} sdi_mtx_reader;

/* Inline: the tokenizer calls these per byte. */
static inline bool is_digit(char c) { return (unsigned char)(c - '0') < 10; }
static inline bool is_blank(char c) { return c == ' ' || c == '\t'; }
static inline bool is_eol(char c) { return c == '\n' || c == '\r'; }
static inline bool is_end(char c) { return is_blank(c) || is_eol(c) || c == '\0'; }

/* The first line end in [p, q), or q. strcspn is quick on long lines; it stops at NUL
 * bytes too (the buffer ends with one), which are stepped over. */
static inline const char *find_eol(const char *p, const char *q)
{
    while (p < q) {
        p += strcspn(p, "\n\r");
        if (p >= q || *p != '\0')
            break;
        p++;
    }
    return p < q ? p : q;
}

/* Starts reading from the source already set in r (in, or mem and mem_len) in blocks of
 * r->block bytes, inflating when gzip. r is closed by the caller whatever this returns. */
SDI_HIDDEN sd_status sdi_mtx_reader_open(sdi_mtx_reader *r, bool gzip);
/* Makes [pos, chunk_end) hold whole lines (the rest of the input at its end); *more is
 * false when nothing is left. */
SDI_HIDDEN sd_status sdi_mtx_reader_refill(sdi_mtx_reader *r, bool *more);
/* The next line [*ls, *le) without its terminator; *got false at the end of input. */
SDI_HIDDEN sd_status sdi_mtx_reader_line(sdi_mtx_reader *r, const char **ls, const char **le,
                                         bool *got);
/* Frees what r holds and zeroes it. */
SDI_HIDDEN void sdi_mtx_reader_close(sdi_mtx_reader *r);
/* The error for line ln (other than a comment) longer than SDI_MTX_LINE_MAX; [ls, ls +
 * avail) holds its first bytes (at least the limit's worth, or none). */
SDI_HIDDEN sd_status sdi_mtx_line_too_long(long long ln, const char *ls, size_t avail);

#endif /* SDI_MTX_LINES_H */
