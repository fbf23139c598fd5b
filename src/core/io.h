/* src/core/io.h: matrix file I/O inside the library: the Matrix Market reader and
 * writer, the binary .sdm format, output files and the read summary the CLI's
 * `info` prints. The public entry points are sd_csr_read / sd_csr_write (csr_io.c). */
#ifndef SDI_IO_H
#define SDI_IO_H

#include "core.h"

/* ------------------------------------------------------------------ read summary */
typedef enum { SDI_FORMAT_MTX = 0, SDI_FORMAT_SDM } sdi_format;
typedef enum { SDI_MTX_REAL = 0, SDI_MTX_INTEGER, SDI_MTX_PATTERN } sdi_mtx_field;
typedef enum {
    SDI_MTX_GENERAL = 0,
    SDI_MTX_SYMMETRIC,
    SDI_MTX_SKEW_SYMMETRIC,
    SDI_MTX_HERMITIAN /* real hermitian: read as symmetric */
} sdi_mtx_symmetry;

/* What a read found. For .sdm input: field real, symmetry general, nnz_stored = nnz. */
typedef struct {
    sdi_format format;
    bool gzip;                 /* the text was gzip-compressed */
    sdi_mtx_field field;
    sdi_mtx_symmetry symmetry; /* as the banner says (hermitian stays hermitian) */
    int32_t rows, cols;
    int64_t nnz_declared;      /* the size line's count */
    int64_t nnz_stored;        /* entry lines in the file */
    int64_t nnz;               /* after symmetric expansion and duplicate summation */
    int64_t n_duplicates;      /* entries summed into an earlier one */
    int64_t text_bytes;        /* bytes parsed (decompressed; the file size for .sdm) */
    int64_t lines;             /* lines in the file (0 for .sdm) */
    double parse_seconds;      /* reading + tokenising (+ decompression) */
    double build_seconds;      /* canonicalisation into CSR */
} sdi_mtx_info;

SDI_HIDDEN const char *sdi_mtx_field_name(sdi_mtx_field f);       /* "real", … */
SDI_HIDDEN const char *sdi_mtx_symmetry_name(sdi_mtx_symmetry s); /* "skew-symmetric", … */

/* ------------------------------------------------------------------ inputs
 * A matrix input opened once and read front to back, never rewound: regular files,
 * pipes, FIFOs, process substitutions and standard input (path "-") read alike. The
 * first bytes, which tell the format, are read by sdi_input_open and handed out again
 * by sdi_input_read. */
typedef struct {
    int fd;
    bool own_fd;             /* false for standard input, which stays open */
    bool eof;                /* the descriptor has reported its end */
    bool regular;            /* a regular file: size is known */
    int64_t size;            /* regular files: bytes from the first one read */
    const char *stream_kind; /* otherwise "a pipe", "a character device", … */
    const char *name;        /* for messages: the path, or "standard input" */
    unsigned char head[8];
    size_t head_len, head_pos; /* head_len < 8 only for a shorter input */
} sdi_input;

/* Errors: SD_ERR_IO (cannot open or read; a directory). On failure in is closed. */
SDI_HIDDEN sd_status sdi_input_open(sdi_input *in, const char *path);
/* Reads n bytes; *got < n only at the end of the input. */
SDI_HIDDEN sd_status sdi_input_read(sdi_input *in, void *dst, size_t n, size_t *got);
/* Safe on a closed or zeroed input; standard input is left open. */
SDI_HIDDEN void sdi_input_close(sdi_input *in);

/* ------------------------------------------------------------------ Matrix Market */
/* Default block read from the file or the decompressor at once. */
#define SDI_MTX_BLOCK (8u << 20)

/* The longest line accepted other than a comment. A coordinate entry needs under 100
 * bytes (two int32 indices, a value of 17 significant digits), but entries padded with
 * blanks or written with thousands of digits are legal: 1 MiB leaves ample room for them
 * and is below the read block, so the buffer stays bounded by the block, and an endless
 * line (a stream of NUL bytes, a file without line ends) ends with an error naming the
 * line after a megabyte. Comment lines of any length are skipped without being kept. */
#define SDI_MTX_LINE_MAX (1u << 20)

/* Reads a Matrix Market coordinate matrix from an opened input (gzip recognised by its
 * magic bytes on the stream itself). Errors name the 1-based line; the caller prefixes
 * them with the input's name. On failure *out is zeroed. info may be NULL. Memory stays
 * bounded by the read block and SDI_MTX_LINE_MAX (plus the matrix), whatever the lines. */
SDI_HIDDEN sd_status sdi_mtx_read_input(sdi_input *in, sd_csr *out, sdi_mtx_info *info);
/* The same from memory (the fuzzer, tests); gzip data is recognised here too.
 * block_size 0 means SDI_MTX_BLOCK; tiny blocks exercise tokens straddling blocks. */
SDI_HIDDEN sd_status sdi_mtx_read_mem(const char *buf, size_t len, size_t block_size,
                                      sd_csr *out, sdi_mtx_info *info);

/* The value tokeniser of the reader, exposed for tests. It parses the number starting
 * at p (ended by a space, tab, CR, LF or NUL; the text must be NUL-terminated beyond
 * it) into *out exactly as (float)strtod would, and sets *end after the characters it
 * used. Integer mode accepts only [+-]digits. */
typedef enum {
    SDI_NUM_OK = 0,
    SDI_NUM_SYNTAX,      /* not a number */
    SDI_NUM_DECIMAL,     /* a decimal point or exponent where an integer is required */
    SDI_NUM_NONFINITE,   /* NaN or Inf written as such */
    SDI_NUM_OVERFLOW     /* finite text beyond the FP32 range */
} sdi_num_status;
SDI_HIDDEN sdi_num_status sdi_parse_value(const char *p, bool integer, const char **end,
                                          float *out);

/* Writes a as "matrix coordinate real general", values with %.9g (exact round trip),
 * gzip-compressed when gzip is true; through the output-file routine below. a must
 * satisfy sd_csr_check. */
SDI_HIDDEN sd_status sdi_mtx_write(const char *path, const sd_csr *a, bool gzip);

/* ------------------------------------------------------------------ .sdm
 * Little-endian: magic "SDMATRX\0", u32 version (1), u32 flags (0), i64 rows, i64 cols,
 * i64 nnz, then rowptr (i64 × rows+1), colind (i32 × nnz), vals (f32 × nnz), then the
 * XXH3-64 (seed 0) of every byte before it. */
#define SDI_SDM_MAGIC "SDMATRX"  /* 7 characters + the NUL = 8 bytes */
#define SDI_SDM_VERSION 1u
#define SDI_SDM_HEADER_BYTES 40

/* From an opened input, which must be a regular file: its length is checked against
 * the header before anything is allocated (SD_ERR_UNSUPPORTED for a pipe or other
 * stream). Errors are not prefixed with the input's name. */
SDI_HIDDEN sd_status sdi_sdm_read_input(sdi_input *in, sd_csr *out);
SDI_HIDDEN sd_status sdi_sdm_read_mem(const void *buf, size_t len, sd_csr *out);
SDI_HIDDEN sd_status sdi_sdm_write(const char *path, const sd_csr *a);

/* ------------------------------------------------------------------ dispatch */
/* sd_csr_read with the summary: .sdm by its magic bytes, Matrix Market otherwise. The
 * input is opened once (path "-": standard input), so streams work. */
SDI_HIDDEN sd_status sdi_csr_read_info(const char *path, sd_csr *out, sdi_mtx_info *info);

/* Row-length statistics (CV = population standard deviation / mean, 0 when the mean
 * is 0; all 0 for a matrix without rows). */
typedef struct {
    int64_t min, max, empty_rows;
    double mean, cv;
} sdi_row_stats;
SDI_HIDDEN void sdi_csr_row_stats(const sd_csr *a, sdi_row_stats *out);

/* ------------------------------------------------------------------ output files
 * Every file a user names (matrices, permutations, models, reports) and every file of the
 * caches is written through these (out_file.c). What the path is decides how:
 *  - a regular file or a new name: written under a temporary name in the destination's
 *    directory, flushed to disk, renamed over it: it appears complete or not at all. An
 *    existing file keeps its permission bits (and owner and group where allowed); a new
 *    one gets 0666 less the umask. A file without any write bit (0444) is refused, root
 *    included, as is one the caller may not write. The new file is a new inode: other
 *    hard links to the old one keep the old content;
 *  - a symbolic link: followed (to its target, existing or not); the link stays a link;
 *  - a character or block device or a FIFO (/dev/null, /dev/full, a named pipe): opened
 *    and written in place, never replaced; a socket is refused;
 *  - /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N: that descriptor of the
 *    process, in place (offset and append mode kept).
 * Errors are SD_ERR_IO naming the path and strerror; a failure leaves no temporary file
 * and an existing file intact (what reached a device or pipe in place is gone). */
typedef struct {
    char *final_path; /* as given (messages; opened when written in place) */
    char *dest_path;  /* the name the rename replaces (links followed); NULL in place */
    char *tmp_path;   /* the temporary; NULL when written in place */
    int fd;           /* open until commit or abort; -1 otherwise */
    FILE *f;          /* sdi_atomic_stream's stream writing through fd, or NULL */
    int err;          /* the first write error's errno (0: none) */
    bool discard;     /* aborting: the stream's last bytes are dropped */
    bool no_sync;     /* set after begin: no fsync (a cache file whose checksum catches a torn
                         write, written many times a compile) */
} sdi_atomic_file;

SDI_HIDDEN sd_status sdi_atomic_begin(sdi_atomic_file *af, const char *path);
/* A stdio stream on af (made once; closed by commit or abort); NULL with errno set. Its
 * write errors (and their cause) are reported by the commit. */
SDI_HIDDEN FILE *sdi_atomic_stream(sdi_atomic_file *af);
/* Writes len bytes (through the stream when there is one); on failure af is aborted. */
SDI_HIDDEN sd_status sdi_atomic_write(sdi_atomic_file *af, const void *data, size_t len);
/* Flush (a stream's error is reported here), fsync, close, rename; on failure the
 * temporary is removed and af released. */
SDI_HIDDEN sd_status sdi_atomic_commit(sdi_atomic_file *af);
/* Closes and removes the temporary; safe on a zeroed or finished af. */
SDI_HIDDEN void sdi_atomic_abort(sdi_atomic_file *af);
/* The whole of data to path as above. */
SDI_HIDDEN sd_status sdi_write_file(const char *path, const void *data, size_t len);

#endif /* SDI_IO_H */
