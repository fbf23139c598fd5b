/* tests/cpu/test_mtx_bad.c: the bad-input suite of the Matrix Market reader, table
 * driven: each malformed file gives its specific status and a message naming the cause
 * (and the 1-based line), leaves *out zeroed and leaks nothing, whatever the read block
 * size; the same through a file (message prefixed with the path), through a pipe and
 * standard input, and through gzip. Pathological line lengths (endless lines, NUL
 * streams, lines past the limit) are built at run time. */
#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include "core/io.h"
#include "sdt.h"
#include "sdt_pipe.h"

#define BANNER "%%MatrixMarket matrix coordinate real general\n"
#define SYM "%%MatrixMarket matrix coordinate real symmetric\n"

typedef struct {
    const char *name;
    const char *text;
    sd_status status;
    const char *frag1; /* both fragments must appear in the message */
    const char *frag2;
} bad_case;

static const bad_case cases[] = {
    /* files without a usable banner */
    {"empty file", "", SD_ERR_PARSE, "line 1", "empty file"},
    {"blank lines only", "\n  \n\t\n", SD_ERR_PARSE, "line 3", "no Matrix Market banner"},
    {"no banner", "3 3 1\n1 1 1\n", SD_ERR_PARSE, "line 1", "not a Matrix Market file"},
    {"comment before banner", "% hello\n" BANNER "1 1 0\n", SD_ERR_PARSE, "line 1",
     "not a Matrix Market file"},
    {"short banner", "%%MatrixMarket matrix\n1 1 0\n", SD_ERR_PARSE, "line 1",
     "incomplete banner"},
    {"banner extra word", "%%MatrixMarket matrix coordinate real general extra\n1 1 0\n",
     SD_ERR_PARSE, "line 1", "unexpected 'extra'"},
    {"unknown format", "%%MatrixMarket matrix sparse real general\n1 1 0\n", SD_ERR_PARSE,
     "line 1", "unknown format 'sparse'"},
    {"unknown field", "%%MatrixMarket matrix coordinate float general\n1 1 0\n", SD_ERR_PARSE,
     "line 1", "unknown field 'float'"},
    {"unknown symmetry", "%%MatrixMarket matrix coordinate real lower\n1 1 0\n", SD_ERR_PARSE,
     "line 1", "unknown symmetry 'lower'"},
    {"complex", "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 2\n",
     SD_ERR_UNSUPPORTED, "line 1", "complex"},
    {"complex hermitian", "%%MatrixMarket matrix coordinate complex hermitian\n1 1 0\n",
     SD_ERR_UNSUPPORTED, "line 1", "complex"},
    {"array", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", SD_ERR_UNSUPPORTED,
     "line 1", "array"},
    {"array complex", "%%MatrixMarket matrix array complex general\n1 1\n1 0\n",
     SD_ERR_UNSUPPORTED, "line 1", "array"},
    {"vector object", "%%MatrixMarket vector coordinate real general\n3 1\n1 1\n",
     SD_ERR_UNSUPPORTED, "line 1", "'vector'"},
    {"pattern skew", "%%MatrixMarket matrix coordinate pattern skew-symmetric\n2 2 1\n2 1\n",
     SD_ERR_PARSE, "line 1", "skew-symmetric"},
    /* the size line */
    {"no size line", BANNER, SD_ERR_PARSE, "line 1", "before the size line"},
    {"no size line after comments", BANNER "% c\n\n", SD_ERR_PARSE, "line 3",
     "before the size line"},
    {"size two numbers", BANNER "3 3\n", SD_ERR_PARSE, "line 2", "needs 3 numbers"},
    {"size four numbers", BANNER "3 3 1 4\n1 1 1\n", SD_ERR_PARSE, "line 2", "unexpected '4'"},
    {"size not a number", BANNER "3 3 x\n", SD_ERR_PARSE, "line 2", "found 'x'"},
    {"size negative", BANNER "-3 3 1\n1 1 1\n", SD_ERR_PARSE, "line 2", "found '-3'"},
    {"size decimal", BANNER "3.0 3 1\n1 1 1\n", SD_ERR_PARSE, "line 2", "found '3.0'"},
    {"rows beyond int32", BANNER "3000000000 3 1\n1 1 1\n", SD_ERR_PARSE, "line 2",
     "3000000000 rows exceed the int32"},
    {"cols beyond int32", BANNER "3 2147483648 1\n1 1 1\n", SD_ERR_PARSE, "line 2",
     "2147483648 columns exceed the int32"},
    {"rows 20 digits", BANNER "99999999999999999999999 3 1\n1 1 1\n", SD_ERR_PARSE, "line 2",
     "exceed the int32"},
    {"nnz beyond int64", BANNER "3 3 9223372036854775808\n1 1 1\n", SD_ERR_PARSE, "line 2",
     "exceed the int64"},
    {"nnz 25 digits", BANNER "3 3 1000000000000000000000000\n1 1 1\n", SD_ERR_PARSE, "line 2",
     "exceed the int64"},
    {"nnz beyond int64 after expansion", SYM "3 3 5000000000000000000\n1 1 1\n", SD_ERR_PARSE,
     "line 2", "after symmetric expansion"},
    {"symmetric not square", SYM "3 4 1\n1 1 1\n", SD_ERR_PARSE, "line 2", "must be square"},
    {"skew not square",
     "%%MatrixMarket matrix coordinate real skew-symmetric\n4 3 1\n2 1 1\n", SD_ERR_PARSE,
     "line 2", "must be square"},
    /* entry counts */
    {"truncated", BANNER "3 3 3\n1 1 1\n2 2 2\n", SD_ERR_PARSE, "line 4", "2 of the 3 declared"},
    {"truncated mid-line", BANNER "3 3 3\n1 1 1\n2 2 2\n3 3", SD_ERR_PARSE, "line 5",
     "missing the value"},
    {"truncated no entries", BANNER "% c\n3 3 2\n", SD_ERR_PARSE, "line 3", "0 of the 2"},
    {"nnz beyond int32, few lines", BANNER "3 3 5000000000\n1 1 1\n", SD_ERR_PARSE, "line 3",
     "1 of the 5000000000"},
    {"nnz near int64 max, few lines", BANNER "3 3 9223372036854775807\n1 1 1\n", SD_ERR_PARSE,
     "line 3", "1 of the 9223372036854775807"},
    {"more entries", BANNER "3 3 1\n1 1 1\n% ok\n\n2 2 2\n", SD_ERR_PARSE, "line 6",
     "more entries than the 1 declared"},
    {"more entries, zero declared", BANNER "3 3 0\n1 1 1\n", SD_ERR_PARSE, "line 3",
     "more entries than the 0"},
    /* indices */
    {"row index 0", BANNER "3 3 2\n1 1 1\n0 1 1\n", SD_ERR_PARSE, "line 4",
     "row index 0 out of range [1, 3]"},
    {"column index 0", BANNER "3 3 1\n1 0 1\n", SD_ERR_PARSE, "line 3",
     "column index 0 out of range"},
    {"row index > rows", BANNER "3 5 1\n4 1 1\n", SD_ERR_PARSE, "line 3",
     "row index 4 out of range [1, 3]"},
    {"column index > cols", BANNER "3 5 1\n1 6 1\n", SD_ERR_PARSE, "line 3",
     "column index 6 out of range [1, 5]"},
    {"row index negative", BANNER "3 3 1\n-1 1 1\n", SD_ERR_PARSE, "line 3",
     "row index -1 out of range"},
    {"column index negative", BANNER "3 3 1\n1 -2 1\n", SD_ERR_PARSE, "line 3",
     "column index -2 out of range"},
    {"row index huge", BANNER "3 3 1\n99999999999999999999999 1 1\n", SD_ERR_PARSE, "line 3",
     "row index"},
    {"row index decimal", BANNER "3 3 1\n1.0 1 1\n", SD_ERR_PARSE, "line 3",
     "bad row index '1.0'"},
    {"column index junk", BANNER "3 3 1\n1 x 1\n", SD_ERR_PARSE, "line 3",
     "bad column index 'x'"},
    {"column index glued", BANNER "3 3 1\n1 2a 1\n", SD_ERR_PARSE, "line 3",
     "bad column index '2a'"},
    {"symmetric index beyond", SYM "3 3 1\n4 1 1\n", SD_ERR_PARSE, "line 3", "row index 4"},
    /* tokens */
    {"missing column", BANNER "3 3 1\n1\n", SD_ERR_PARSE, "line 3", "missing the column index"},
    {"missing value", BANNER "3 3 2\n1 1 1\n1 2\n", SD_ERR_PARSE, "line 4", "missing the value"},
    {"missing value, blanks", BANNER "3 3 1\n1 2 \t \r\n", SD_ERR_PARSE, "line 3",
     "missing the value"},
    {"extra token", BANNER "3 3 1\n1 1 1 2\n", SD_ERR_PARSE, "line 3", "unexpected '2'"},
    {"extra token pattern", "%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 1 1\n",
     SD_ERR_PARSE, "line 3", "unexpected '1'"},
    {"extra token integer", "%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 1 1 x\n",
     SD_ERR_PARSE, "line 3", "unexpected 'x'"},
    {"garbage line", BANNER "3 3 1\nhello\n", SD_ERR_PARSE, "line 3", "expected an entry"},
    {"garbage value", BANNER "3 3 1\n1 1 abc\n", SD_ERR_PARSE, "line 3", "bad value 'abc'"},
    {"value with suffix", BANNER "3 3 1\n1 1 1.5x\n", SD_ERR_PARSE, "line 3",
     "bad value '1.5x'"},
    {"value bare exponent", BANNER "3 3 1\n1 1 1e\n", SD_ERR_PARSE, "line 3", "bad value '1e'"},
    {"value two points", BANNER "3 3 1\n1 1 1.2.3\n", SD_ERR_PARSE, "line 3", "bad value"},
    {"value lone sign", BANNER "3 3 1\n1 1 -\n", SD_ERR_PARSE, "line 3", "bad value '-'"},
    {"vertical tab", BANNER "3 3 1\n1 1\v1\n", SD_ERR_PARSE, "line 3", "column index"},
    {"vertical tab value", BANNER "3 3 2\n1 1 \v \n3 2 1\n", SD_ERR_PARSE, "line 3",
     "bad value"},
    {"form feed value", BANNER "3 3 2\n1 1 \f1\n3 2 1\n", SD_ERR_PARSE, "line 3",
     "bad value"},
    {"NUL byte in a line", BANNER "3 3 1\n1 1 1\0" "5\n", SD_ERR_PARSE, "line 3", "unexpected"},
    /* values */
    {"NaN", BANNER "3 3 2\n1 1 1\n2 2 nan\n", SD_ERR_PARSE, "line 4", "NaN"},
    {"-NaN", BANNER "3 3 1\n2 2 -NaN\n", SD_ERR_PARSE, "line 3", "NaN"},
    {"Inf", BANNER "3 3 1\n1 1 inf\n", SD_ERR_PARSE, "line 3", "infinite"},
    {"-Infinity", BANNER "3 3 1\n1 1 -Infinity\n", SD_ERR_PARSE, "line 3", "infinite"},
    {"1e39 overflows FP32", BANNER "3 3 1\n1 1 1e39\n", SD_ERR_PARSE, "line 3",
     "'1e39' overflows FP32"},
    {"-3.5e38 overflows FP32", BANNER "3 3 1\n1 1 -3.5e38\n", SD_ERR_PARSE, "line 3",
     "overflows FP32"},
    {"just past FLT_MAX", BANNER "3 3 1\n1 1 3.4028236e38\n", SD_ERR_PARSE, "line 3",
     "overflows FP32"},
    {"1e400 overflows double", BANNER "3 3 1\n1 1 1e400\n", SD_ERR_PARSE, "line 3",
     "overflows FP32"},
    {"integer overflows FP32",
     "%%MatrixMarket matrix coordinate integer general\n3 3 1\n"
     "1 1 1000000000000000000000000000000000000000\n",
     SD_ERR_PARSE, "line 3", "overflows FP32"},
    {"decimal in integer field", "%%MatrixMarket matrix coordinate integer general\n3 3 1\n"
                                 "1 1 1.5\n",
     SD_ERR_PARSE, "line 3", "decimal value '1.5' in an integer field"},
    {"exponent in integer field", "%%MatrixMarket matrix coordinate integer symmetric\n3 3 1\n"
                                  "2 1 2e3\n",
     SD_ERR_PARSE, "line 3", "decimal value '2e3'"},
    {"1.0 in integer field", "%%MatrixMarket matrix coordinate integer general\n3 3 1\n"
                             "1 1 1.0\n",
     SD_ERR_PARSE, "line 3", "integer field"},
    {"skew nonzero diagonal",
     "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 1\n2 2 1.5\n",
     SD_ERR_PARSE, "line 4", "nonzero diagonal entry (2, 2)"},
    {"duplicates overflow FP32", BANNER "3 3 2\n1 2 3e38\n1 2 3e38\n", SD_ERR_PARSE, "(1, 2)",
     "FP32"},
    {"symmetric mirror overflows", SYM "3 3 2\n2 1 3e38\n1 2 3e38\n", SD_ERR_PARSE, "(1, 2)",
     "FP32"},
    /* memory follows what is read, not what a header declares */
    {"2e9 rows, one entry", BANNER "2000000000 2 1\n1 1 1\n", SD_ERR_OUT_OF_MEMORY,
     "row pointers", "2000000000 rows"},
    {"int32-max rows, no entry", BANNER "2147483647 1 0\n", SD_ERR_OUT_OF_MEMORY, "row pointers",
     "2147483647 rows"},
};
#define NCASES ((int)(sizeof cases / sizeof cases[0]))

/* The table holds C strings; "NUL byte" cases carry their length through sizeof. */
static size_t case_len(const bad_case *c)
{
    if (strcmp(c->name, "NUL byte in a line") == 0)
        return sizeof(BANNER "3 3 1\n1 1 1\0" "5\n") - 1;
    return strlen(c->text);
}

static void check_one(const bad_case *c, const char *data, size_t len, size_t block,
                      const char *how)
{
    long long live0 = sdi_alloc_live_bytes();
    sd_csr a;
    memset(&a, 0xab, sizeof a);
    sdi_mtx_info in;
    sd_status s = sdi_mtx_read_mem(data, len, block, &a, &in);
    const char *m = sd_last_error();
    SDT_CHECK(s == c->status, "%s (%s): got %s, expected %s: %s", c->name, how,
              sd_status_string(s), sd_status_string(c->status), m);
    SDT_CHECK(strstr(m, c->frag1) != NULL && strstr(m, c->frag2) != NULL,
              "%s (%s): message '%s' lacks '%s' / '%s'", c->name, how, m, c->frag1, c->frag2);
    SDT_CHECK(strchr(m, '\n') == NULL, "%s: message is not one line", c->name);
    SDT_CHECK(a.rows == 0 && a.cols == 0 && a.nnz == 0 && a.rowptr == NULL &&
                  a.colind == NULL && a.vals == NULL,
              "%s (%s): *out not zeroed", c->name, how);
    SDT_CHECK(sdi_alloc_live_bytes() == live0, "%s (%s): leaked %lld bytes", c->name, how,
              sdi_alloc_live_bytes() - live0);
    if (s == SD_OK)
        sd_csr_free(&a);
}

static void test_table(void)
{
    for (int k = 0; k < NCASES; k++) {
        const bad_case *c = &cases[k];
        size_t len = case_len(c);
        check_one(c, c->text, len, 0, "default block");
        for (size_t b = 1; b <= 9; b += 4)
            check_one(c, c->text, len, b, "tiny blocks");
    }
}

static size_t gz_compress(const char *text, size_t len, unsigned char *out, size_t cap)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
    zs.next_in = (unsigned char *)(uintptr_t)text;
    zs.avail_in = (uInt)len;
    zs.next_out = out;
    zs.avail_out = (uInt)cap;
    deflate(&zs, Z_FINISH);
    size_t n = cap - zs.avail_out;
    deflateEnd(&zs);
    return n;
}

/* The same table through gzip (in memory) and through files: same status; a file's
 * message starts with its path. */
static void test_table_gzip_and_files(void)
{
    char dir[] = "/tmp/sd_test_mtx_bad_XXXXXX";
    SDT_CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    unsigned char gz[4096];
    for (int k = 0; k < NCASES; k++) {
        const bad_case *c = &cases[k];
        size_t len = case_len(c);
        if (len > 0) { /* an empty gzip stream is not an empty file */
            size_t n = gz_compress(c->text, len, gz, sizeof gz);
            check_one(c, (const char *)gz, n, 0, "gzip");
            check_one(c, (const char *)gz, n, 5, "gzip, tiny blocks");
        }
        char path[128];
        snprintf(path, sizeof path, "%s/case%d.mtx", dir, k);
        FILE *f = fopen(path, "wb");
        fwrite(c->text, 1, len, f);
        fclose(f);
        long long live0 = sdi_alloc_live_bytes();
        sd_csr a;
        memset(&a, 0xab, sizeof a);
        sd_status s = sd_csr_read(path, &a);
        const char *m = sd_last_error();
        SDT_CHECK(s == c->status && strncmp(m, path, strlen(path)) == 0 &&
                      strstr(m, c->frag1) && strstr(m, c->frag2),
                  "%s (file): %s: %s", c->name, sd_status_string(s), m);
        SDT_CHECK(a.rowptr == NULL && a.rows == 0 && a.nnz == 0, "%s (file): not zeroed",
                  c->name);
        SDT_CHECK(sdi_alloc_live_bytes() == live0, "%s (file): leak", c->name);
        unlink(path);
    }
    rmdir(dir);
}

/* Damaged gzip data: truncated streams and flipped bytes are parse errors, not crashes. */
static void test_bad_gzip(void)
{
    static char text[20000];
    size_t len = (size_t)snprintf(text, sizeof text, "%s100 100 1000\n", BANNER);
    for (int k = 0; k < 1000; k++)
        len += (size_t)snprintf(text + len, sizeof text - len, "%d %d %d.5\n", k % 100 + 1,
                                (k * 7) % 100 + 1, k);
    unsigned char gz[20000];
    size_t n = gz_compress(text, len, gz, sizeof gz);
    long long live0 = sdi_alloc_live_bytes();
    sd_csr a;
    SDT_OK(sdi_mtx_read_mem((const char *)gz, n, 0, &a, NULL));
    SDT_CHECK(a.nnz > 0, "reads");
    sd_csr_free(&a);
    /* every truncation of the compressed stream */
    for (size_t cut = 2; cut < n; cut += 1 + cut / 50) {
        sd_status s = sdi_mtx_read_mem((const char *)gz, cut, 0, &a, NULL);
        SDT_CHECK(s == SD_ERR_PARSE && (strstr(sd_last_error(), "truncated") ||
                                        strstr(sd_last_error(), "line")),
                  "cut %zu: %s: %s", cut, sd_status_string(s), sd_last_error());
        SDT_CHECK(a.rowptr == NULL, "cut %zu: not zeroed", cut);
    }
    SDT_CHECK(sdi_mtx_read_mem((const char *)gz, n / 2, 0, &a, NULL) == SD_ERR_PARSE &&
                  strstr(sd_last_error(), "gzip data is truncated"),
              "half: %s", sd_last_error());
    /* a file truncated the same way, read from its descriptor */
    char path[] = "/tmp/sd_test_mtx_badgz_XXXXXX";
    int fd = mkstemp(path);
    SDT_CHECK(fd >= 0, "mkstemp");
    SDT_CHECK(write(fd, gz, n / 2) == (ssize_t)(n / 2), "write");
    close(fd);
    sd_status s = sd_csr_read(path, &a);
    SDT_CHECK(s == SD_ERR_PARSE && strstr(sd_last_error(), "truncated"), "file: %s: %s",
              sd_status_string(s), sd_last_error());
    /* flipped bytes inside the deflate data (header and CRC damage included) */
    unsigned char bad[20000];
    for (size_t pos = 10; pos < n; pos += 1 + pos / 20) {
        memcpy(bad, gz, n);
        bad[pos] ^= 0x5a;
        s = sdi_mtx_read_mem((const char *)bad, n, 0, &a, NULL);
        SDT_CHECK(s == SD_OK || s == SD_ERR_PARSE, "flip %zu: %s", pos, sd_status_string(s));
        if (s == SD_OK)
            sd_csr_free(&a);
        fd = open(path, O_WRONLY | O_TRUNC);
        SDT_CHECK(write(fd, bad, n) == (ssize_t)n, "write");
        close(fd);
        sd_status s2 = sd_csr_read(path, &a);
        SDT_CHECK(s2 == SD_OK || s2 == SD_ERR_PARSE, "flip %zu (file): %s: %s", pos,
                  sd_status_string(s2), sd_last_error());
        if (s2 == SD_OK)
            sd_csr_free(&a);
    }
    unlink(path);
    SDT_CHECK(sdi_alloc_live_bytes() == live0, "leak");
}

/* sd_csr_read of a stream holding [text, text + len): through a pipe named /dev/fd/N
 * (stdin false) or as standard input "-". *prefix receives the name errors start with. */
static sd_status read_stream(const char *text, size_t len, bool stdin_, sd_csr *a,
                             char *prefix, size_t cap)
{
    sdt_pipe p = sdt_pipe_from(text, len);
    SDT_CHECK(p.fd >= 0, "pipe: %s", strerror(errno));
    sd_status s = SD_ERR_INTERNAL;
    if (stdin_) {
        SDT_WITH_STDIN(p, s = sd_csr_read("-", a));
        snprintf(prefix, cap, "standard input: ");
    } else {
        s = sd_csr_read(p.path, a);
        snprintf(prefix, cap, "%s: ", p.path);
    }
    sdt_pipe_done(&p);
    return s;
}

/* The table through a pipe and through standard input: nothing may depend on the
 * reader being able to rewind (the format is told by the first bytes). */
static void test_table_streams(void)
{
    for (int k = 0; k < NCASES; k++) {
        const bad_case *c = &cases[k];
        for (int via = 0; via < 2; via++) {
            long long live0 = sdi_alloc_live_bytes();
            sd_csr a;
            memset(&a, 0xab, sizeof a);
            char prefix[640];
            sd_status s = read_stream(c->text, case_len(c), via == 1, &a, prefix, sizeof prefix);
            const char *m = sd_last_error();
            SDT_CHECK(s == c->status && strncmp(m, prefix, strlen(prefix)) == 0 &&
                          strstr(m, c->frag1) && strstr(m, c->frag2),
                      "%s (%s): %s: %s", c->name, via ? "stdin" : "pipe", sd_status_string(s), m);
            SDT_CHECK(a.rowptr == NULL && a.rows == 0 && a.nnz == 0, "%s (stream): not zeroed",
                      c->name);
            SDT_CHECK(sdi_alloc_live_bytes() == live0, "%s (stream): leak", c->name);
        }
    }
}

/* ------------------------------------------------------------------ line lengths
 * Built at run time: head, count copies of fill, tail. No line other than a comment may
 * exceed SDI_MTX_LINE_MAX bytes: the error names the line (and NUL bytes when there are
 * some), comes after at most that many bytes of an endless line, and does not depend on
 * the block size, on gzip or on the input being a file or a stream. */
typedef struct {
    const char *name, *head;
    char fill;
    size_t count;
    const char *tail;
    const char *frag1, *frag2;
} long_case;

#define MB2 ((size_t)2 << 20)
#define PAST ((size_t)SDI_MTX_LINE_MAX + 1) /* one byte too long */
#define TOO_LONG "longer than 1048576 bytes"

static const long_case long_cases[] = {
    {"NUL bytes without a line end", "", '\0', MB2, "", "line 1: " TOO_LONG, "NUL bytes"},
    {"no line end at all", "", 'y', MB2, "", "line 1: " TOO_LONG, "not a comment"},
    {"long banner", "%%MatrixMarket matrix coordinate real general", ' ', MB2, "\n3 3 0\n",
     "line 1: " TOO_LONG, "not a comment"},
    {"long comment before the banner", "%", 'c', MB2, "\n" BANNER "3 3 0\n",
     "line 1: " TOO_LONG, ""},
    {"long size line", BANNER "3", ' ', MB2, "3 1\n1 1 1\n", "line 2: " TOO_LONG, ""},
    {"endless line after the size line", BANNER "3 3 1\n", 'y', MB2, "", "line 3: " TOO_LONG,
     ""},
    {"endless NUL bytes after the size line", BANNER "3 3 1\n", '\0', MB2, "",
     "line 3: " TOO_LONG, "NUL bytes"},
    {"long value", BANNER "3 3 1\n1 1 ", '0', MB2, "1\n", "line 3: " TOO_LONG, ""},
    {"entry padded past the limit", BANNER "3 3 1\n1", ' ', MB2, "1 1\n", "line 3: " TOO_LONG,
     ""},
    {"one byte past the limit", BANNER "3 3 1\n1 1 ", '0', PAST - 4, "\n", "line 3: " TOO_LONG,
     ""},
    {"one byte past the limit, CRLF", BANNER "3 3 1\r\n1 1 ", '0', PAST - 4, "\r\n",
     "line 3: " TOO_LONG, ""},
    {"one byte past the limit, last line", BANNER "3 3 1\n1 1 ", '0', PAST - 4, "",
     "line 3: " TOO_LONG, ""},
    {"long blank line", BANNER "3 3 1\n", ' ', MB2, "\n1 1 1\n", "line 3: " TOO_LONG, ""},
    {"long blank last line", BANNER "3 3 1\n1 1 1\n", '\t', MB2, "", "line 4: " TOO_LONG, ""},
    {"long blanks before an entry", BANNER "3 3 1\n", '\t', MB2, "1 1 1\n",
     "line 3: " TOO_LONG, ""},
    {"long junk after an entry", BANNER "3 3 1\n1 1 1 ", 'x', MB2, "\n", "line 3: " TOO_LONG,
     ""},
    {"too many entries on a long line", BANNER "3 3 0\n1 1 1", ' ', MB2, "\n",
     "line 3: " TOO_LONG, ""},
    /* comments of any length are fine: what follows them keeps its line number */
    {"an error after a long comment", BANNER "3 3 1\n%", 'c', MB2, "\n\n1 1 x\n",
     "line 5: bad value 'x'", ""},
    {"an error after a long indented comment", BANNER "3 3 1\n", ' ', MB2, "% c\r\n1 1 x\n",
     "line 4: bad value 'x'", ""},
    {"an error after a comment ending in CR", BANNER "%", 'c', MB2, "\r3 3 1\r1 1 x\r",
     "line 4: bad value 'x'", ""},
};
#define NLONG ((int)(sizeof long_cases / sizeof long_cases[0]))

static char *build_long(const long_case *c, size_t *len)
{
    size_t h = strlen(c->head), t = strlen(c->tail);
    char *b = malloc(h + c->count + t + 1);
    if (b == NULL)
        return NULL;
    memcpy(b, c->head, h);
    memset(b + h, c->fill, c->count);
    memcpy(b + h + c->count, c->tail, t + 1);
    *len = h + c->count + t;
    return b;
}

static bool long_message_ok(const long_case *c, const char *m)
{
    return strstr(m, c->frag1) != NULL && strstr(m, c->frag2) != NULL &&
           strchr(m, '\n') == NULL;
}

static void test_long_lines(void)
{
    char dir[] = "/tmp/sd_test_mtx_long_XXXXXX";
    SDT_CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    const size_t blocks[] = {0, 1, 7, 4093, SDI_MTX_LINE_MAX, SDI_MTX_LINE_MAX + 2};
    for (int k = 0; k < NLONG; k++) {
        const long_case *c = &long_cases[k];
        size_t len = 0;
        char *text = build_long(c, &len);
        SDT_CHECK(text != NULL, "malloc");
        if (text == NULL)
            continue;
        long long live0 = sdi_alloc_live_bytes();
        char first[1024] = "";
        for (size_t b = 0; b < sizeof blocks / sizeof *blocks; b++) {
            sd_csr a;
            memset(&a, 0xab, sizeof a);
            sd_status s = sdi_mtx_read_mem(text, len, blocks[b], &a, NULL);
            const char *m = sd_last_error();
            SDT_CHECK(s == SD_ERR_PARSE && long_message_ok(c, m), "%s (block %zu): %s: %s",
                      c->name, blocks[b], sd_status_string(s), m);
            if (b == 0)
                snprintf(first, sizeof first, "%s", m);
            else
                SDT_CHECK(strcmp(first, m) == 0, "%s: block %zu says '%s', the default '%s'",
                          c->name, blocks[b], m, first);
            SDT_CHECK(a.rowptr == NULL && a.rows == 0 && a.nnz == 0, "%s: not zeroed", c->name);
            if (s == SD_OK)
                sd_csr_free(&a);
        }
        /* gzip in memory */
        uLong zcap = compressBound((uLong)len) + 64;
        unsigned char *gz = malloc(zcap);
        SDT_CHECK(gz != NULL, "malloc");
        if (gz != NULL) {
            size_t n = gz_compress(text, len, gz, zcap);
            sd_csr a;
            sd_status s = sdi_mtx_read_mem((const char *)gz, n, 0, &a, NULL);
            SDT_CHECK(s == SD_ERR_PARSE && strcmp(sd_last_error(), first) == 0, "%s (gzip): %s",
                      c->name, sd_last_error());
            free(gz);
        }
        /* a file, a pipe, standard input: the same message behind the input's name */
        char path[128];
        snprintf(path, sizeof path, "%s/long%d.mtx", dir, k);
        FILE *f = fopen(path, "wb");
        SDT_CHECK(f != NULL && fwrite(text, 1, len, f) == len && fclose(f) == 0, "write");
        sd_csr a;
        char want[2048];
        sd_status s = sd_csr_read(path, &a);
        snprintf(want, sizeof want, "%s: %s", path, first);
        SDT_CHECK(s == SD_ERR_PARSE && strcmp(sd_last_error(), want) == 0, "%s (file): %s",
                  c->name, sd_last_error());
        unlink(path);
        for (int via = 0; via < 2; via++) {
            char prefix[640];
            s = read_stream(text, len, via == 1, &a, prefix, sizeof prefix);
            snprintf(want, sizeof want, "%s%s", prefix, first);
            SDT_CHECK(s == SD_ERR_PARSE && strcmp(sd_last_error(), want) == 0, "%s (%s): %s",
                      c->name, via ? "stdin" : "pipe", sd_last_error());
        }
        SDT_CHECK(sdi_alloc_live_bytes() == live0, "%s: leaked %lld bytes", c->name,
                  sdi_alloc_live_bytes() - live0);
        free(text);
    }
    rmdir(dir);
}

int main(void)
{
    sdt_init("test_mtx_bad");
    SDT_RUN(test_table);
    SDT_RUN(test_table_gzip_and_files);
    SDT_RUN(test_bad_gzip);
    SDT_RUN(test_table_streams);
    SDT_RUN(test_long_lines);
    return sdt_finish();
}
